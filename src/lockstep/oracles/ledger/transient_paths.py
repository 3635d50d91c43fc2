"""Rows whose input names a path in pytest's temporary folder: refused before verifying.

A test hands a function ``tmp_path / "out.sql"``; the row records that path.  Verified at
the session's end, the folder is still there and the row reproduces; pytest keeps only
its last few session folders, so the next week's replay calls the function with a path
that no longer exists, and an unchanged tree is red (sqlparse's ``cli.main(["in.sql",
"-o", "/tmp/pytest-of-root/pytest-662/out.sql"])`` returned 0 when recorded, 1 later).
No fresh interpreter can show that at record time, so such rows are refused by what
they hold: a string argument under the folder pytest makes its ``tmp_path`` in.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from lockstep.model import RecordReport
from lockstep.oracles.ledger.format import LedgerRow
from lockstep.oracles.ledger.refused_rows import refused_where

_ENCODE = msgspec.json.Encoder().encode

CAUSE = (
    "it names a path in pytest's temporary folder ({root}), which pytest removes after a "
    "few sessions: the replay would call it with a path that is gone (hand the function "
    "a file the repository keeps, or record the test with a path that stays)"
)


def pytest_temporary_roots(config: Any) -> tuple[str, ...]:
    """The folders pytest makes ``tmp_path`` in for this session, as the strings a test
    would pass: ``--basetemp`` when given (pytest empties it at each session's start), else
    the parent of this session's numbered folder (``/tmp/pytest-of-USER``, which holds the
    sessions pytest has not removed yet).  Empty when no test asked for a temporary folder
    in this process (no row can name one made now)."""
    factory = getattr(config, "_tmp_path_factory", None)
    given = getattr(getattr(config, "option", None), "basetemp", None)
    roots: list[Path] = []
    if given:
        roots.append(Path(given))
    made = getattr(factory, "_basetemp", None)
    if isinstance(made, Path):
        roots.append(made if given else made.parent)
    if not roots:
        return ()
    out: list[str] = []
    for root in roots:
        for form in (root, root.resolve(), Path(os.path.abspath(root))):
            text = str(form)
            if len(text) > len(tempfile.gettempdir()) and text not in out:
                out.append(text)  # never the system's temp folder itself: too wide
    return tuple(out)


def without_transient_paths(
    rows: Mapping[str, LedgerRow], report: RecordReport, roots: Sequence[str]
) -> Mapping[str, LedgerRow]:
    """``rows`` without those whose arguments name a path under one of ``roots`` (each
    refused in ``report``, with the cause)."""
    if not roots:
        return rows
    needles = [(root, _ENCODE(root)[1:-1]) for root in roots]  # as a JSON string holds it

    def why(row: LedgerRow) -> tuple[str, str] | None:
        written = _ENCODE([row.args, row.kwargs])
        root = next((root for root, needle in needles if needle in written), None)
        if root is None:
            return None
        return "names a path that will be gone at replay", CAUSE.format(root=root)

    return refused_where(rows, report, why)
