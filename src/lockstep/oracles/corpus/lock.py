"""The corpus lock file: ``<dir>/<name>.lock.json``.

Small and reviewable: a version, the render callable and rules it was made
with, and one entry per fixture sorted by id with the sha256 and size of the
rendered bytes.  The rendered bytes themselves live in the content-addressed
blob store (``<dir>/blobs/``) so that a drift can print both documents.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

import msgspec

from lockstep import canon
from lockstep.errors import DataError
from lockstep.rules import RuleRecord
from lockstep.store import atomic_write, display_path, pretty_json, read_json

LOCK_VERSION: Final = 1
MAX_NBYTES: Final = 2**48
"""The largest rendered document a lock can name (256 TiB): anything above is a corrupt lock."""
_SHA256: Final = re.compile(r"[0-9a-f]{64}")


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
    previous: str | None = None
    seen: set[str] = set()
    for i, entry in enumerate(lock.entries):
        where = f"{shown}: entries[{i}]"
        if entry.id in seen:
            raise DataError(f"{where}: duplicate fixture id {entry.id!r}")
        seen.add(entry.id)
        if previous is not None and entry.id < previous:
            raise DataError(
                f"{where}: fixture id {entry.id!r} is out of order (entries are written sorted "
                "by id; the file was edited by hand or merged badly): re-record it"
            )
        if not _SHA256.fullmatch(entry.sha256):
            raise DataError(f"{where}.sha256: not a sha256 hex digest: {entry.sha256[:80]!r}")
        if not 0 <= entry.nbytes <= MAX_NBYTES:
            raise DataError(f"{where}.nbytes: {entry.nbytes} is not a size lockstep wrote")
        previous = entry.id
    return lock


def write_lock(path: Path, lock: Lock) -> None:
    entries = sorted(lock.entries, key=lambda e: e.id)
    atomic_write(path, pretty_json(msgspec.structs.replace(lock, entries=entries)))
