"""The corpus lock file: ``<dir>/<name>.lock.json``.

Small and reviewable: a version, the render callable and rules it was made
with, and one entry per fixture sorted by id with the sha256 and size of the
rendered bytes.  The rendered bytes themselves live in the content-addressed
blob store (``<dir>/blobs/``) so that a drift can print both documents.

**Reading streams.**  A lock of ten million fixtures is a 1 GB file: decoding it
whole took 4.5 GB.  The writer's layout (sorted keys, two-space indent, so
``"entries"`` comes first and each entry opens with ``    {`` and closes with
``    }``) lets :func:`read_lock` walk the entries a batch at a time: one pass checks
the whole file (version, order, digests, sizes) keeping only the previous id, and
``lock.entries`` is then a re-iterable view (:class:`LockEntries`) that decodes the
entries again, from the same open file, each time it is walked.  A lock in any other
layout (edited by hand, re-indented) is read whole, as before.  The format is unchanged.
"""

from __future__ import annotations

import io
import itertools
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Final, overload

import msgspec

from lockstep import canon
from lockstep.errors import DataError
from lockstep.rules import RuleRecord
from lockstep.store import AtomicLines, atomic_write, display_path, pretty_json, read_json
from lockstep.store.reading import open_file

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
    entries: Sequence[Entry]
    """A list when made in memory; a :class:`LockEntries` view when read from a file."""


class _Header(msgspec.Struct):
    """Just enough of a lock to check its version before trusting the rest."""

    version: Any = None


class _Fields(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A lock's fields other than its entries (what follows them in the writer's layout)."""

    version: Any = None
    oracle: str
    render: str
    loose: bool = False
    rules: list[RuleRecord] = []


_OPEN: Final = b'{\n  "entries": [\n'
_NO_ENTRIES: Final = b'{\n  "entries": [],\n'
_BETWEEN: Final = b"\n    },\n"
"""Between two entries: a newline, four spaces and a brace are never inside a JSON string
(a string holds no raw newline), and a nested object closes deeper."""
_LAST: Final = b"\n    }\n  ],\n"
_BLOCK: Final = 1 << 20
_ENTRY_LIST: Final = msgspec.json.Decoder(list[Entry])


class _OtherLayout(Exception):
    """The file is not in the writer's layout: read it whole."""


def _batches(fh: IO[bytes]) -> Iterator[list[Entry] | msgspec.ValidationError]:
    """The entries of a lock in the writer's layout, about a megabyte at a time (a batch that
    does not validate is yielded as its error); ``fh`` is left just after the entries, at
    the ``"loose"`` line.  Raises :class:`_OtherLayout` on any other layout."""
    fh.seek(0)
    head = fh.read(len(_NO_ENTRIES))
    if head == _NO_ENTRIES:
        return
    if not head.startswith(_OPEN):
        raise _OtherLayout
    fh.seek(len(_OPEN))
    buffer = b""
    while True:
        block = fh.read(_BLOCK)
        buffer += block
        last = buffer.find(_LAST)
        if last >= 0:
            yield _decode(buffer[: last + 6])
            fh.seek(fh.tell() - (len(buffer) - last - len(_LAST)))
            return
        cut = buffer.rfind(_BETWEEN)
        if cut >= 0:
            yield _decode(buffer[: cut + 6])
            buffer = buffer[cut + len(_BETWEEN) :]
        if not block:
            raise _OtherLayout


def _decode(entries: bytes) -> list[Entry] | msgspec.ValidationError:
    try:
        return _ENTRY_LIST.decode(b"[" + entries + b"]")
    except msgspec.ValidationError as e:
        return e
    except msgspec.DecodeError:
        raise _OtherLayout from None


class LockEntries(Sequence[Entry]):
    """A read lock's entries, decoded from the file each time they are walked.

    The file stays open, so a lock replaced on disk meanwhile (a concurrent record renames
    a new file into place) does not change what this view reads."""

    def __init__(self, fh: IO[bytes], count: int) -> None:
        self._fh = fh
        self._count = count

    def __iter__(self) -> Iterator[Entry]:
        for batch in _batches(self._fh):
            assert isinstance(batch, list)  # checked when the lock was read
            yield from batch

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Entry: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Entry]: ...
    def __getitem__(self, index: int | slice) -> Entry | Sequence[Entry]:
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        return next(itertools.islice(iter(self), index, None))

    def __del__(self) -> None:
        self._fh.close()


def read_lock(path: Path) -> Lock:
    """Read and validate a lock: version, sorted unique ids; errors name the file.

    Streams a lock in the writer's layout (memory flat in the number of entries);
    reads any other layout whole."""
    shown = display_path(path)
    try:
        fh = open_file(path, buffering=io.DEFAULT_BUFFER_SIZE * 16)  # kept open by the view
    except OSError:
        fh = None
    if fh is not None:
        try:
            return _read_streaming(fh, shown)
        except (_OtherLayout, RecursionError):  # too deeply nested: said by the whole read
            fh.close()
        except BaseException:
            fh.close()
            raise
    return _read_whole(path, shown)


def _read_whole(path: Path, shown: str) -> Lock:
    header = read_json(path, _Header)
    _check_version(shown, header.version)
    lock = read_json(path, Lock)
    entries = list(lock.entries)
    if not _well_formed(entries):
        fault = first_fault(shown, entries)
        if fault is not None:
            raise fault
    return lock


def _check_version(shown: str, version: Any) -> None:
    if version != LOCK_VERSION:
        raise DataError(
            f"{shown}: unknown lock version {version!r} (this lockstep reads {LOCK_VERSION})"
        )


def _read_streaming(fh: IO[bytes], shown: str) -> Lock:
    """One checking pass over a lock in the writer's layout (see the module docstring).

    A lock that fails a check is read again whole (:class:`_OtherLayout`), so its error
    is said exactly as for any other lock."""
    count = 0
    previous: list[Entry] = []
    for batch in _batches(fh):
        if isinstance(batch, msgspec.ValidationError) or not _well_formed(previous + batch):
            raise _OtherLayout
        count += len(batch)
        previous = batch[-1:]
    try:
        fields = msgspec.json.decode(b"{\n" + fh.read(), type=_Fields)  # the rest: a few lines
    except msgspec.MsgspecError:
        raise _OtherLayout from None
    _check_version(shown, fields.version)
    return Lock(
        version=fields.version,
        oracle=fields.oracle,
        render=fields.render,
        loose=fields.loose,
        rules=fields.rules,
        entries=LockEntries(fh, count),
    )


def first_fault(shown: str, entries: Sequence[Entry]) -> DataError | None:
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


def _well_formed(entries: Sequence[Entry]) -> bool:
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


_WRITE_BATCH: Final = 4096
"""Entries encoded at a time by :func:`lock_chunks`."""


def lock_chunks(header: Lock, entries: Iterable[Entry]) -> Iterator[bytes]:
    """The bytes :func:`write_lock` writes for ``header`` with ``entries`` (already sorted by
    id), a batch of entries at a time, so a lock of any size is written in flat memory.

    Each batch is encoded as a list with the writer's formatting and shifted two spaces to
    its place inside ``"entries"``: a JSON string holds no raw newline, so every newline of
    the batch starts a line of layout."""
    document = pretty_json(msgspec.structs.replace(header, entries=[]))
    rest = document[len(_NO_ENTRIES) :]
    first = True
    walked = iter(entries)
    while batch := list(itertools.islice(walked, _WRITE_BATCH)):
        listed = msgspec.json.format(msgspec.json.encode(batch, order="sorted"), indent=2)
        body = listed[2:-2].replace(b"\n", b"\n  ")  # within "[\n" ... "\n]"
        yield (_OPEN if first else b",\n") + b"  " + body
        first = False
    yield (_NO_ENTRIES if first else b"\n  ],\n") + rest


def write_lock_streaming(
    path: Path, header: Lock, entries: Iterable[Entry], *, keep: Callable[[], bool]
) -> bool:
    """Write ``header`` with ``entries`` (sorted by id, walked once) atomically, in flat memory.

    ``keep`` is asked once every entry is written (it may depend on what walking them
    found): when it says False the old file is left as it was.  Returns whether the lock
    was replaced.  The bytes are :func:`write_lock`'s."""
    out = AtomicLines(path)
    try:
        for chunk in lock_chunks(header, entries):
            out.write_bytes(chunk)
        kept = keep()
    except BaseException:
        out.abort()
        raise
    if kept:
        out.commit()
    else:
        out.abort()
    return kept
