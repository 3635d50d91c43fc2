"""The corpus lock file: ``<dir>/<name>.lock.json``.

Small and reviewable: a version, the render callable and rules it was made
with, and one entry per fixture sorted by id with the sha256 and size of the
rendered bytes.  The rendered bytes themselves live in the content-addressed
blob store (``<dir>/blobs/``) so that a drift can print both documents.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import msgspec

from lockstep import canon
from lockstep.errors import DataError
from lockstep.rules import RuleRecord
from lockstep.store import atomic_write, display_path, pretty_json, read_json

LOCK_VERSION: Final = 1


class Entry(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """One fixture's frozen output."""

    id: str
    sha256: str
    nbytes: int
    raised: canon.FrozenException | None = None
    """Set when the render raised: the frozen exception is the behaviour."""


class Lock(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The whole ``*.lock.json`` document."""

    version: int
    oracle: str
    render: str
    loose: bool = False
    rules: list[RuleRecord] = []
    entries: list[Entry]


class _Header(msgspec.Struct):
    """Just enough of a lock to check its version before trusting the rest."""

    version: Any = None


def read_lock(path: Path) -> Lock:
    """Read and validate a lock: version, sorted unique ids; errors name the file."""
    shown = display_path(path)
    header = read_json(path, _Header)
    if header.version != LOCK_VERSION:
        raise DataError(
            f"{shown}: unknown lock version {header.version!r} (this lockstep reads {LOCK_VERSION})"
        )
    lock = read_json(path, Lock)
    seen: set[str] = set()
    for entry in lock.entries:
        if entry.id in seen:
            raise DataError(f"{shown}: duplicate fixture id {entry.id!r}")
        seen.add(entry.id)
    return lock


def write_lock(path: Path, lock: Lock) -> None:
    entries = sorted(lock.entries, key=lambda e: e.id)
    atomic_write(path, pretty_json(msgspec.structs.replace(lock, entries=entries)))
