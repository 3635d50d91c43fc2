"""The corpus lock file: ``<dir>/<name>.lock.json``.

Small and reviewable: a version, the render callable and rules it was made
with, and one entry per fixture sorted by id with the sha256 and size of the
rendered bytes.  The rendered bytes themselves live in the content-addressed
blob store (``<dir>/blobs/``) so that a drift can print both documents.
"""

from __future__ import annotations

import itertools
import operator
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
_HEX: Final = re.compile(r"[0-9a-f]*")


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
    if not _well_formed(lock.entries):
        fault = first_fault(shown, lock.entries)
        if fault is not None:
            raise fault
    return lock


def first_fault(shown: str, entries: list[Entry]) -> DataError | None:
    """The first entry that is not as lockstep writes it, as the error naming it."""
    previous: str | None = None
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        where = f"{shown}: entries[{i}]"
        if entry.id in seen:
            return DataError(f"{where}: duplicate fixture id {entry.id!r}")
        seen.add(entry.id)
        if previous is not None and entry.id < previous:
            return DataError(
                f"{where}: fixture id {entry.id!r} is out of order (entries are written sorted "
                "by id; the file was edited by hand or merged badly): re-record it"
            )
        if not _SHA256.fullmatch(entry.sha256):
            return DataError(f"{where}.sha256: not a sha256 hex digest: {entry.sha256[:80]!r}")
        if not 0 <= entry.nbytes <= MAX_NBYTES:
            return DataError(f"{where}.nbytes: {entry.nbytes} is not a size lockstep wrote")
        previous = entry.id
    return None


def _well_formed(entries: list[Entry]) -> bool:
    """Whether every entry passes :func:`read_lock`'s checks, tested a column at a time
    (ids strictly increasing: sorted and unique; every digest 64 lowercase hex digits;
    sizes in range): about a third of the time of :func:`first_fault`'s walk, which runs
    only on a lock that fails, to name the first fault."""
    ids = [e.id for e in entries]
    digests = [e.sha256 for e in entries]
    sizes = [e.nbytes for e in entries]
    return (
        all(map(operator.lt, ids, itertools.islice(ids, 1, None)))
        and all(len(d) == 64 for d in digests)
        and _HEX.fullmatch("".join(digests)) is not None
        and (not sizes or (min(sizes) >= 0 and max(sizes) <= MAX_NBYTES))
    )


def write_lock(path: Path, lock: Lock) -> None:
    entries = sorted(lock.entries, key=lambda e: e.id)
    atomic_write(path, pretty_json(msgspec.structs.replace(lock, entries=entries)))
