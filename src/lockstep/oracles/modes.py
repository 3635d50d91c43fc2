"""The preconditions of the explicit record modes, worded the same for every oracle kind.

Updating an oracle is never implicit: a plain ``record`` over an existing file
refuses and names the three modes; a mode over a file that does not exist yet
says to record it plainly first.  Each kind describes what its modes mean in
its own words (fixtures, cases, rows), the sentence around them is shared.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lockstep.errors import UsageError
from lockstep.model import RecordMode
from lockstep.store import display_path


@dataclass(frozen=True)
class ModeWords:
    """What ``--new-only``, ``--force`` and ``--trim`` do for one oracle kind."""

    new_only: str
    force: str
    trim: str


def check_record_mode(
    path: Path, root: Path, name: str, mode: RecordMode, words: ModeWords
) -> bool:
    """Refuse a mode that cannot apply to the file on disk; return whether the file exists."""
    exists = path.exists()
    shown = display_path(path, root)
    if mode is RecordMode.CREATE and exists:
        raise UsageError(
            f"{shown} already exists; say what you want: --new-only ({words.new_only}), "
            f"--force ({words.force}) or --trim ({words.trim})"
        )
    if mode is not RecordMode.CREATE and not exists:
        raise UsageError(
            f"{shown} does not exist yet; run 'lockstep record {name}' without a mode first"
        )
    return exists
