"""The file an xdist recording's workers append their parts to, removed once merged.

Each worker appends one line per ledger at its end (its recording part, and the scratch
files of rows it spilled); the controller merges them (:mod:`.pytest_recording`) and
then removes the file, or, for a run that writes nothing, removes it unread with every
scratch file its lines name.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from lockstep.errors import LockstepError
from lockstep.store import iter_jsonl, lock_for


class _Line(msgspec.Struct):
    """A spool line, read for its part alone (its other fields are ignored)."""

    part: msgspec.Raw = msgspec.Raw(b"{}")


class _PartRuns(msgspec.Struct):
    """Just the scratch files of a recording part (its other fields are ignored)."""

    runs: list[str] = []


def discard_spool(spool: Path) -> None:
    """Remove the spool unread, and the scratch files its parts name (best effort: a
    line this version cannot read names none it knows of)."""
    from lockstep.oracles.ledger.spool import remove_run

    try:
        for _, line in iter_jsonl(spool, _Line):
            for run in msgspec.json.decode(line.part, type=_PartRuns).runs:
                remove_run(run)
    except (LockstepError, msgspec.DecodeError, OSError):
        pass
    remove_spool(spool)


def remove_spool(spool: Path) -> None:
    """The spool and its lock file, whichever exist."""
    spool.unlink(missing_ok=True)
    Path(lock_for(spool).lock_file).unlink(missing_ok=True)
