"""Rows naming paths inside the checkout they were recorded in, replayed from another.

A suite hands its functions paths built from ``Path(__file__).parent`` (sqlparse's
``cli.main`` reads ``tests/files/*.sql``): the rows hold the absolute path of the checkout
that recorded them.  Replayed from a clone elsewhere (a CI runner's workspace), the call
read the recording checkout's files while it still existed, and once it did not, drifted
on unchanged code.  A ledger whose rows hold the project's folder says so in its header
(``"root"``, format version 5, written only then); replay from another folder puts
today's folder in place of that one in every text of each such row, its input and its
recorded outcome alike, so the call reads this checkout's files and an error naming a
path is compared with this checkout's path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

import msgspec

from lockstep.oracles.ledger.format import LedgerRow

MIN_ROOT: Final = 8
"""A folder shorter than this (``/app/``) is never written as a ledger's root: replacing
it inside texts could reach a text that names it by chance (a URL's path)."""

_FIELDS: Final = ("args", "kwargs", "result", "mutated", "exc_stem", "exc_state", "on")


def root_marker(root: Path) -> bytes | None:
    """The project folder as it shows inside a row's JSON text (with a trailing separator,
    so ``/src/app`` never matches ``/src/application``), or None when it is too short to
    stand for the folder alone."""
    text = str(root) + os.sep
    if len(text) < MIN_ROOT or text.count(os.sep) < 3:
        return None
    return msgspec.json.encode(text)[1:-1]


def relocation(recorded_root: str | None, root: Path) -> tuple[str, str] | None:
    """``(then, now)``: the folder a ledger was recorded in and today's, each with a
    trailing separator, when they differ; else None (nothing to put in place)."""
    if not recorded_root or root_marker(Path(recorded_root)) is None:
        return None  # none, or not a folder that could have been written (edited by hand)
    if not os.path.isabs(recorded_root):
        return None
    then, now = recorded_root.rstrip(os.sep) + os.sep, str(root) + os.sep
    return (then, now) if then != now else None


def relocated(row: LedgerRow, then: str, now: str) -> LedgerRow:
    """``row`` with ``now`` in place of ``then`` in every text (and dict key) it holds."""

    def move(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(then, now) if then in value else value
        if isinstance(value, list):
            return [move(v) for v in value]
        if isinstance(value, dict):
            return {move(k): move(v) for k, v in value.items()}
        return value

    changes = {
        name: move(value)
        for name in _FIELDS
        if (value := getattr(row, name, msgspec.UNSET)) is not msgspec.UNSET and value is not None
    }
    return msgspec.structs.replace(row, **changes)
