"""Rows on disk while a large recording is merged, checked and written.

A recording of a million distinct calls does not fit the memory a gate should take
if every row stays a Python object from the first call to the final write.  So a
recorder that holds :data:`SPILL_AT` rows writes them out as one *run* (a scratch
file sorted by row id) and starts an empty table; :func:`merged_runs` later reads
every run of every process in id order at once (``heapq.merge``, an external merge
sort), which is also where an input seen in two windows or two processes with two
outcomes is found.  What survives goes to a :class:`RowFile`: ledger lines sorted by
id, read back as often as the writer needs (secret scan, verification candidate,
final write) and searched by bisection, so a lookup by id costs a few reads, not a
table in memory.

These are scratch files in the system's temporary folder, never oracle files: a
:class:`RowFile` removes its file when it is garbage collected, and a run is removed
by the merge that reads it.
"""

from __future__ import annotations

import contextlib
import heapq
import mmap
import os
import tempfile
import warnings
import weakref
from collections.abc import Iterable, Iterator, KeysView, Mapping
from pathlib import Path
from typing import Final

from lockstep.errors import DataError
from lockstep.oracles.ledger.format import ROW_DECODER, ROW_ENCODER, LedgerRow

SPILL_AT: Final = 50_000
"""Distinct rows a recorder holds in memory before it writes them out as a run."""

SPILL_AT_VARIABLE: Final = "LOCKSTEP_SPILL_AT"
"""Environment variable that sets another threshold (a positive number of rows)."""


def spill_threshold() -> int:
    """:data:`SPILL_AT`, or the positive number in ``$LOCKSTEP_SPILL_AT``.

    Anything else is said in one warning and ignored: a recorder runs inside the user's
    process (``@record_io``, a test run) and must not fail it.
    """
    raw = os.environ.get(SPILL_AT_VARIABLE, "").strip()
    if not raw:
        return SPILL_AT
    if raw.isdigit() and int(raw) > 0 and len(raw) < 10:
        return int(raw)
    warnings.warn(
        f"lockstep: {SPILL_AT_VARIABLE}={raw!r} is not a whole number of rows from 1 to "
        f"999999999; rows are written to disk every {SPILL_AT:,}",
        UserWarning,
        stacklevel=2,
    )
    return SPILL_AT


_SEP: Final = b"\t"


def scratch_file(prefix: str) -> tuple[int, Path]:
    """A new empty scratch file (descriptor and path) in the system's temporary folder."""
    fd, name = tempfile.mkstemp(prefix=f"lockstep-{prefix}-", suffix=".spool")
    return fd, Path(name)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


# --------------------------------------------------------------------------- runs


def remove_runs(runs: list[str], owner: int) -> None:
    """Remove ``runs`` in the process ``owner`` that wrote them (not in a forked child)."""
    if os.getpid() == owner:
        for run in runs:
            remove_run(run)
        runs.clear()


def run_record(rid: str, first_call: int, outcome: bytes, line: bytes) -> bytes:
    """One line of a run: the row's id, the call that first gave ``outcome``, the
    outcome's canonical bytes and the row's ledger line (empty for an outcome other
    than the row's first).  JSON escapes tabs and newlines, so neither occurs inside
    a field."""
    return b"%s\t%d\t%s\t%s\n" % (rid.encode("ascii"), first_call, outcome, line)


def write_run(records: list[tuple[str, int, bytes, bytes]]) -> str:
    """Write ``records`` sorted by (id, call) to a new run; its path."""
    records.sort(key=lambda r: (r[0], r[1]))
    fd, path = scratch_file("run")
    try:
        with os.fdopen(fd, "wb") as out:
            out.writelines(run_record(*r) for r in records)
    except BaseException:
        _remove(path)
        raise
    return str(path)


RunRecord = tuple[str, int, int, bytes, bytes]
"""``(id, part, first_call, outcome, ledger line)`` as :func:`merged_runs` yields them."""


def is_run(path: str) -> bool:
    """Whether ``path`` names a run as :func:`write_run` names them: a part's list of runs
    travels between processes, and nothing else is ever read or removed as one."""
    name = os.path.basename(path)
    return name.startswith("lockstep-run-") and name.endswith(".spool") and not os.path.islink(path)


def remove_run(path: str) -> None:
    if is_run(path):
        _remove(Path(path))


def read_run(path: str, part: int, *, remove: bool = True) -> Iterator[RunRecord]:
    """The records of one run, in its order; the file is removed once read through
    (or given up on) unless ``remove`` is False."""
    if not is_run(path):
        raise DataError(f"{path}: not a lockstep scratch file of recorded rows")
    try:
        with open(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    rid, call, outcome, line = raw.rstrip(b"\n").split(_SEP, 3)
                    record = (rid.decode("ascii"), part, int(call), outcome, line)
                except ValueError:
                    raise DataError(
                        f"{path}:{lineno}: a scratch file of rows was altered"
                    ) from None
                yield record
    finally:
        if remove:
            remove_run(path)


def merged_runs(
    runs: Iterable[tuple[int, str]],
    extra: Iterable[Iterator[RunRecord]] = (),
    *,
    remove: bool = True,
) -> Iterator[RunRecord]:
    """Every record of ``runs`` (``(part, path)``) and of the sorted iterators ``extra``,
    in (id, part, call) order.  Each run file is removed once read through, unless
    ``remove`` is False (the caller reads the runs again, then removes them)."""
    streams = [read_run(path, part, remove=remove) for part, path in runs]
    return heapq.merge(*streams, *extra, key=lambda r: (r[0], r[1], r[2]))


# --------------------------------------------------------------------------- row files


class RowFile(Mapping[str, LedgerRow]):
    """Ledger rows sorted by id in a scratch file: a read-only mapping from id to row.

    Iterating reads the file again each time (nothing is cached); ``row_id in rows``
    and ``rows[row_id]`` bisect the file through ``mmap``.  Each line is
    ``<id>\\t<ledger line>``, the ledger line exactly as the ledger file holds it, so
    writing a ledger from here copies bytes without decoding a row.
    """

    def __init__(self, path: Path, count: int) -> None:
        self.path = path
        self._count = count
        self._mapped: list[mmap.mmap] = []
        """The file mapped once for lookups (kept: a caller may ask about every id)."""
        self._finalizer = weakref.finalize(self, _close_and_remove, self._mapped, path)

    # -- building -------------------------------------------------------------------

    @classmethod
    def from_lines(cls, lines: Iterable[tuple[str, bytes]]) -> RowFile:
        """A row file of ``(id, ledger line)`` pairs given in strictly increasing id order.

        A scratch file that cannot be written (no space, no temporary folder) stops the
        record with one line; the oracle on disk is not touched.
        """
        try:
            fd, path = scratch_file("rows")
        except OSError as e:
            raise DataError(_cannot_write(Path(tempfile.gettempdir()), e)) from None
        count = 0
        last = ""
        try:
            with os.fdopen(fd, "wb") as out:
                for rid, line in lines:
                    if rid <= last:
                        raise ValueError(f"row {rid} is not after row {last}")
                    last = rid
                    out.write(b"%s\t%s\n" % (rid.encode("ascii"), line))
                    count += 1
        except OSError as e:
            _remove(path)
            raise DataError(_cannot_write(path, e)) from None
        except BaseException:
            _remove(path)
            raise
        return cls(path, count)

    @classmethod
    def from_rows(cls, rows: Iterable[LedgerRow]) -> RowFile:
        """A row file of ``rows`` in any order (ids distinct; a later duplicate is dropped).

        Rows already in id order stream straight to disk; the few that arrive out of
        order (a row whose id changed when a secret was scrubbed from its input) are
        held back and merged in at the end.
        """
        encode = ROW_ENCODER.encode
        strays: list[LedgerRow] = []

        def in_order() -> Iterator[LedgerRow]:
            last = ""
            for row in rows:
                if row.id > last:
                    last = row.id
                    yield row
                else:
                    strays.append(row)

        first = cls.from_lines((row.id, encode(row)) for row in in_order())
        if not strays:
            return first
        strays.sort(key=lambda r: r.id)
        merged = heapq.merge(  # stable: at an id both hold, the row first given comes first
            first.lines(), ((row.id, encode(row)) for row in strays), key=_by_id
        )
        return cls.from_lines(_first_per_id(merged))

    # -- reading --------------------------------------------------------------------

    def __len__(self) -> int:
        return self._count

    def lines(self) -> Iterator[tuple[str, bytes]]:
        """``(id, ledger line)`` in id order."""
        with self.path.open("rb") as fh:
            for raw in fh:
                rid, line = raw.rstrip(b"\n").split(_SEP, 1)
                yield rid.decode("ascii"), line

    def __iter__(self) -> Iterator[str]:
        return (rid for rid, _ in self.lines())

    def values(self) -> Iterator[LedgerRow]:  # type: ignore[override]
        decode = ROW_DECODER.decode
        return (decode(line) for _, line in self.lines())

    def items(self) -> Iterator[tuple[str, LedgerRow]]:  # type: ignore[override]
        decode = ROW_DECODER.decode
        return ((rid, decode(line)) for rid, line in self.lines())

    def keys(self) -> KeysView[str]:
        return KeysView(self)

    def __getitem__(self, rid: str) -> LedgerRow:
        line = self._find(rid)
        if line is None:
            raise KeyError(rid)
        return ROW_DECODER.decode(line)

    def __contains__(self, rid: object) -> bool:
        return isinstance(rid, str) and self._find(rid) is not None

    def _find(self, rid: str) -> bytes | None:
        """The ledger line of ``rid``, by bisecting the file's bytes."""
        if not self._count:
            return None
        want = rid.encode("ascii", "replace")
        if not self._mapped:
            with self.path.open("rb") as fh:
                self._mapped.append(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
        m = self._mapped[0]
        lo, hi = 0, len(m)  # invariant: a line starting in [lo, hi) may hold ``rid``
        while lo < hi:
            mid = (lo + hi) // 2
            start = m.rfind(b"\n", 0, mid) + 1
            end = m.find(b"\n", start)
            tab = m.find(_SEP, start, end)
            key = m[start:tab]
            if key == want:
                return m[tab + 1 : end]
            if key < want:
                lo = end + 1
            else:
                hi = start
        return None

    def without(self, ids: set[str]) -> RowFile:
        """A new row file holding every row but ``ids``."""
        return RowFile.from_lines((rid, line) for rid, line in self.lines() if rid not in ids)


def _close_and_remove(mapped: list[mmap.mmap], path: Path) -> None:
    for m in mapped:
        m.close()
    mapped.clear()
    _remove(path)


def _cannot_write(path: Path, e: OSError) -> str:
    return (
        f"{path}: cannot write the recording's rows to a scratch file: "
        f"{e.strerror or e}; set TMPDIR to a folder with room"
    )


def _by_id(pair: tuple[str, bytes]) -> str:
    return pair[0]


def _first_per_id(pairs: Iterable[tuple[str, bytes]]) -> Iterator[tuple[str, bytes]]:
    """The first ``(id, line)`` of each id, from pairs in id order."""
    last = None
    for rid, line in pairs:
        if rid != last:
            last = rid
            yield rid, line
