"""The ledger file: ``<dir>/<name>.ledger.jsonl``, read streaming and written whole.

Line 1 is the header (the target, its frozen signature, the stem length);
every further line is one distinct call, sorted by id (see
:mod:`lockstep.oracles.ledger.format`).  Every reader of rows — listing,
replay, worker processes — goes through :func:`parse_row`, so a bad line is
reported the same way everywhere: ``FILE:LINE: reason``.  Writing goes through
the shared record sequence and its one merge (:mod:`lockstep.oracles.lifecycle`,
:func:`record_rows`), whether rows come from ``lockstep record``, ``lockstep accept``,
``pytest --lockstep-record`` or ``@record_io`` at exit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from pathlib import Path
from typing import BinaryIO, Final

import msgspec

from lockstep import canon
from lockstep.canon.shared import SAME_KEY
from lockstep.errors import CanonError, DataError, Rejected
from lockstep.model import RecordMode, RecordReport
from lockstep.oracles.ledger.format import (
    CLOCK_VERSION,
    ENCODER,
    FORMAT_VERSION,
    HEADER_DECODER,
    PRINTED_VERSION,
    RECEIVER_VERSION,
    ROOT_VERSION,
    ROW_DECODER,
    ROW_ENCODER,
    SHARED_VERSION,
    STATE_VERSION,
    LedgerHeader,
    LedgerRow,
    Param,
    call_text,
    describe_signature,
    outcome_text,
    row_id,
    row_key,
    signature_changes,
)
from lockstep.oracles.ledger.printed import PRINTED
from lockstep.oracles.ledger.relocation import relocated, relocation, root_marker
from lockstep.oracles.ledger.spec import LedgerSpec
from lockstep.oracles.ledger.spool import SPILL_AT, RowFile
from lockstep.oracles.lifecycle import ModeWords, StreamHooks, record
from lockstep.store import (
    AtomicLines,
    ScratchLines,
    decode_line,
    display_path,
    iter_lines,
    lock_for,
)
from lockstep.store.reading import open_file


class SignatureChanged(Rejected):
    """The target's signature is not the one the ledger was recorded against.

    A finding about the rewrite (exit 1), not bad input: the body rewrite changed
    more than the body, so the recorded rows cannot vouch for it."""


def read_header(path: Path) -> LedgerHeader:
    """Line 1 of a ledger, checked against the body it states (row count and digest).

    A missing, empty or malformed header names ``FILE:1``; a body that does not
    match its header (truncated, reordered, duplicated, edited) is corrupt.
    """
    shown = display_path(path)
    for lineno, line in iter_lines(path):
        header = decode_line(HEADER_DECODER, line, f"{shown}:{lineno}", "not a ledger header: ")
        _check_body(path, shown, lineno, header)
        return header
    raise DataError(f"{shown}: empty file; expected a ledger header on line 1")


def _check_body(path: Path, shown: str, header_line: int, header: LedgerHeader) -> None:
    digest = hashlib.sha256()
    rows = 0
    for lineno, line in iter_lines(path):
        if lineno <= header_line:
            continue
        digest.update(line)
        digest.update(b"\n")
        rows += 1
    if rows != header.rows or digest.hexdigest() != header.digest:
        _first_bad_row(path, shown, header_line, header)  # a precise FILE:LINE when there is one
        raise DataError(
            f"{shown}:{header_line}: the rows do not match the header ({header.rows} rows "
            f"stated, {rows} found; digest {'matches' if digest.hexdigest() == header.digest else 'differs'}): "
            "the file was truncated, reordered or edited by hand; restore it or re-record with --force"
        )


def _first_bad_row(path: Path, shown: str, header_line: int, header: LedgerHeader) -> None:
    """Raise the error of the first malformed, foreign or misplaced row, if any."""
    order = RowOrder(shown)
    for lineno, line in iter_lines(path):
        if lineno > header_line:
            order.check(lineno, parse_row(line, lineno, shown, header.fn))


def body_digest(lines: Iterable[bytes]) -> tuple[int, str]:
    """``(rows, digest)`` of row lines as the header states them."""
    digest = hashlib.sha256()
    rows = 0
    for line in lines:
        digest.update(line)
        digest.update(b"\n")
        rows += 1
    return rows, digest.hexdigest()


def iter_rows(path: Path, header: LedgerHeader) -> Iterator[tuple[int, LedgerRow]]:
    """Stream the rows after the header; a bad line raises ``FILE:LINE: reason``."""
    shown = display_path(path)
    lines = iter_lines(path)
    next(lines, None)
    order = RowOrder(shown)
    for lineno, line in lines:
        row = parse_row(line, lineno, shown, header.fn)
        order.check(lineno, row)
        yield lineno, row


class RowOrder:
    """Row ids strictly increase through a file (sorted, no duplicates)."""

    __slots__ = ("last", "shown")

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.last = ""

    def check(self, lineno: int, row: LedgerRow) -> None:
        if row.id <= self.last:
            what = "duplicate" if row.id == self.last else "out of order"
            raise DataError(
                f"{self.shown}:{lineno}: row {row.id} is {what} (rows are written sorted by id)"
            )
        self.last = row.id


def parse_row(line: bytes, lineno: int, shown: str, fn: str) -> LedgerRow:
    """One row line, or ``FILE:LINE: reason`` (bad JSON, a field missing or unknown, a row
    for another function).  Every reader of rows -- listing, replay, worker -- uses this."""
    row = decode_line(ROW_DECODER, line, f"{shown}:{lineno}")
    if row.fn != fn:
        raise DataError(
            f"{shown}:{lineno}: row {row.id} is for {row.fn!r}, but the header names {fn!r}"
        )
    try:
        expected = row_id(row_key(row))
    except CanonError as e:
        raise DataError(f"{shown}:{lineno}: row {row.id}: {e}") from None
    if row.id != expected:
        raise DataError(
            f"{shown}:{lineno}: row id {row.id} does not match its input (its input's id is "
            f"{expected}): the row was edited by hand"
        )
    return row


def check_header_target(path: Path, header: LedgerHeader, spec: LedgerSpec) -> None:
    """A ledger file must belong to the configured target."""
    if header.fn != spec.target:
        raise DataError(
            f"{display_path(path)}:1: ledger was recorded for {header.fn!r}, "
            f"but ledger {spec.name!r} targets {spec.target!r}"
        )


def check_signature(path: Path, header: LedgerHeader, current: list[Param]) -> None:
    """Rows recorded against another signature prove nothing about this one."""
    changes = signature_changes(header.signature, current)
    if changes:
        raise SignatureChanged(
            f"{display_path(path)}:1: recorded against {header.fn}"
            f"{describe_signature(header.signature)}, the target is now "
            f"{describe_signature(current)}: {'; '.join(changes)} "
            "(a body rewrite keeps the signature; "
            "re-record with --force if this change is intended)"
        )


def open_ledger(path: Path) -> BinaryIO:
    """Open a ledger for streaming, with the same one-line errors as :func:`iter_lines`."""
    try:
        return open_file(path)
    except FileNotFoundError:
        raise DataError(f"{display_path(path)}: file not found") from None
    except OSError as e:
        raise DataError(f"{display_path(path)}: cannot read: {e.strerror}") from None


def outcome_of(row: LedgerRow) -> bytes:
    """A row's outcome as canonical bytes: two rows with equal bytes behaved alike.

    The recorder computes the same bytes for a call it sees, so an input whose
    outcome varies between calls is found by comparing these.
    """
    unset = msgspec.UNSET
    return canon.canonical_json(
        [
            row.ok,
            None if (kept := row.result if row.ok else row.exc_state) is unset else kept,
            "" if row.exc_type is unset else row.exc_type,
            "" if row.exc_stem is unset else row.exc_stem,
            None if row.mutated is unset else row.mutated,
        ]
    )


def _kept_note(rid: str, _old: LedgerRow, row: LedgerRow) -> str:
    return (
        f"row {rid} {call_text(row.fn, row.args, row.kwargs)} now "
        f"{outcome_text(row.ok, row.result, row.exc_type, row.exc_stem, row.mutated)}; "
        "kept the recorded outcome (re-record with --force to replace it)"
    )


MODE_WORDS: Final = ModeWords(
    new_only="add rows for new inputs",
    force="re-record every row",
    trim="drop rows no call made",
)


def record_rows(
    report: RecordReport,
    root: Path,
    fn: str,
    rows: Mapping[str, LedgerRow],
    signature: list[Param],
    stem_length: int,
    only: Container[str] | None = None,
) -> RecordReport:
    """Merge the rows recorded now into the ledger ``report.path`` in ``report.mode`` and
    write it whole, through :func:`~lockstep.oracles.lifecycle.record` and its one merge.

    ``report``: the one the recording began (its notes and refusals).  ``only``: the ids
    re-recorded (``--force`` narrowed): the ledger's other rows are kept, and one of them
    not in ``rows`` (refused, or no longer made) is dropped.  Every mode but
    ``--force`` keeps the file's header, and so needs the target's signature to be the
    recorded one; ``--new-only`` also needs the same stem length (one contract per file).
    The rows on disk and ``rows`` are both walked in id order; when either side is large,
    the merge goes into a scratch file, so a million rows are never all in memory.
    """
    path, mode = report.path, report.mode

    def contract(recorded: LedgerHeader) -> tuple[object, object]:
        if mode is not RecordMode.FORCE:
            check_signature(path, recorded, signature)
        return recorded.stem_length, stem_length

    def write(recorded: LedgerHeader | None, merged: Iterator[LedgerRow], _: RecordReport) -> None:
        head = (fn, signature, stem_length)
        if recorded is not None and mode is not RecordMode.FORCE:
            head = (recorded.fn, recorded.signature, recorded.stem_length)
        if isinstance(rows, RowFile) or (recorded is not None and recorded.rows > SPILL_AT):
            write_rows(path, *head, RowFile.from_rows(merged))
            return
        kept = list(merged)  # small enough to hold: no scratch file
        if not _as_on_disk(recorded, mode, report):
            write_rows(path, *head, kept)

    hooks: StreamHooks[LedgerHeader, LedgerRow] = StreamHooks(
        read=lambda: _checked_header(path),
        cases=lambda recorded: _rows_here(path, recorded),
        key=_by_id,
        present=lambda: rows,
        freeze=lambda _todo, _old, _report: _in_order(rows),
        write=write,
        contract=contract,
        what="stem length",
        same=_same_outcome,
        kept=_kept_note,
        listed=True,
        unfrozen_dropped=True,
    )
    return record(report.oracle, path, root, mode, MODE_WORDS, hooks, only=only, report=report)


def _rows_here(path: Path, recorded: LedgerHeader) -> Iterator[LedgerRow]:
    """The ledger's rows on disk, as this checkout's: recorded in another folder (its
    header's ``root``), each text naming that folder names this one (as replay reads
    them, :mod:`.relocation`).  Written back as they were, a refresh in a clone dropped the
    header's ``root`` (no row named the clone) and kept the rows naming the first
    checkout: replay read that checkout's files, green for a change to the clone's."""
    rows = (row for _, row in iter_rows(path, recorded))
    folder = _project_folder(path)
    recorded_root = recorded.root if isinstance(recorded.root, str) else None
    moved = relocation(recorded_root, folder) if folder is not None else None
    if moved is None:
        return rows
    # a row's id is its input's: moved, each is another input (sorted again by its id, as
    # the merge walks them; one the clone recorded already stays once)
    here: dict[str, LedgerRow] = {}
    for row in rows:
        again = relocated(row, *moved)
        again = msgspec.structs.replace(again, id=row_id(row_key(again)))
        here.setdefault(again.id, again)
    return iter([here[rid] for rid in sorted(here)])


def _as_on_disk(recorded: LedgerHeader | None, mode: RecordMode, report: RecordReport) -> bool:
    """Whether the merge kept the ledger on disk row for row: ``--new-only`` or ``--trim``
    (both keep its header and its rows as they are) adding, replacing and trimming
    nothing.  Writing it again would give the same bytes, so it is left as it is."""
    return (
        recorded is not None
        and mode in (RecordMode.NEW_ONLY, RecordMode.TRIM)
        and not (report.added or report.replaced or report.trimmed)
    )


def _same_outcome(old: LedgerRow, row: LedgerRow) -> bool:
    return outcome_of(old) == outcome_of(row)


def _checked_header(path: Path) -> LedgerHeader:
    """The header of a ledger whose every line was checked before any is used."""
    header = read_header(path)
    for _ in iter_rows(path, header):
        pass
    return header


def _in_order(rows: Mapping[str, LedgerRow]) -> Iterator[LedgerRow]:
    if isinstance(rows, RowFile):
        return rows.values()
    return (rows[rid] for rid in sorted(rows))


def write_rows(
    path: Path,
    fn: str,
    signature: list[Param],
    stem_length: int,
    rows: Iterable[LedgerRow] | RowFile,
    *,
    scratch: bool = False,
) -> None:
    """Write a whole ledger (header stating its body, then ``rows`` sorted by id), atomically.

    The header (line 1) states the body's digest.  Rows held in memory are encoded once
    and their lines kept until written; a
    :class:`~lockstep.oracles.ledger.spool.RowFile` is copied line by line from disk (its
    lines are the ledger's, already in id order), read once for the digest and once to
    write it, so a ledger too large to hold is never held.  ``scratch``: a candidate in
    this process's own temp folder (:class:`~lockstep.store.ScratchLines`), not a ledger.
    """
    lines: Callable[[], Iterable[bytes]]
    if isinstance(rows, RowFile):
        spooled = rows

        def lines() -> Iterator[bytes]:
            return (line for _, line in spooled.lines())

    else:
        encoded = list(map(ROW_ENCODER.encode, sorted(rows, key=_by_id)))

        def lines() -> list[bytes]:
            return encoded

    folder = _project_folder(path, scratch)
    marker = root_marker(folder) if folder is not None else None
    named: list[bool] = []
    count, digest = body_digest(_noting(lines(), marker, named) if marker else lines())
    version = _version_of(lines())
    header = LedgerHeader(
        lockstep_ledger=max(version, ROOT_VERSION) if named else version,
        fn=fn,
        signature=signature,
        stem_length=stem_length,
        rows=count,
        digest=digest,
        root=str(folder) if named else msgspec.UNSET,
    )
    with ScratchLines(path) if scratch else AtomicLines(path) as out:
        out.write(ENCODER.encode(header))
        for line in lines():
            out.write(line)


def _project_folder(path: Path, scratch: bool = False) -> Path | None:
    """The folder of the configuration a ledger at ``path`` belongs to (None: none found,
    a ``@record_io`` ledger outside any project).  A ``scratch`` candidate lies in a
    folder of its own this process made in the oracle folder, which holds no
    configuration: it belongs to the oracle folder's project."""
    from lockstep.config import find_config

    found = find_config(path.parent.parent if scratch else path.parent)
    return found.parent if found is not None else None


def _noting(lines: Iterable[bytes], marker: bytes, named: list[bool]) -> Iterator[bytes]:
    """``lines`` as they are, noting in ``named`` whether one holds ``marker``."""
    for line in lines:
        if not named and marker in line:
            named.append(True)
        yield line


def _version_of(lines: Iterable[bytes]) -> int:
    """The oldest format version that holds every row line: 8 when a row kept what its
    call printed, 7 when one has an ``exc_state``, 6 when one holds a ``$same``, 4 when
    one has an ``on``, 3 when one has a ``clock``, else 2 (so a ledger keeps its bytes
    until it needs more)."""
    version = FORMAT_VERSION
    for line in lines:
        if _PRINTED_KEY in line and _printed(line):
            return PRINTED_VERSION
        if version < STATE_VERSION and _holds(line, b'"exc_state":', "exc_state"):
            version = STATE_VERSION
            continue
        if version >= STATE_VERSION:
            continue
        if SAME_KEY in line:
            version = SHARED_VERSION
        if version < RECEIVER_VERSION and _holds(line, b'"on":{', "on"):
            version = RECEIVER_VERSION
        elif version < CLOCK_VERSION and _holds(line, b'"clock":{', "clock"):
            version = CLOCK_VERSION
    return version


_PRINTED_KEY: Final = f'"{PRINTED}":'.encode()


def _printed(line: bytes) -> bool:
    """Whether the row ``line`` kept what its call printed (its ``mutated`` has the key)."""
    mutated = ROW_DECODER.decode(line).mutated
    return isinstance(mutated, dict) and PRINTED in mutated


def _holds(line: bytes, key: bytes, field: str) -> bool:
    """Whether the row ``line`` has ``field`` (its ``key`` is there, and is the row's)."""
    return key in line and getattr(ROW_DECODER.decode(line), field) is not msgspec.UNSET


def _by_id(row: LedgerRow) -> str:
    return row.id


def merge_into_file(
    path: Path,
    fn: str,
    rows: Mapping[str, LedgerRow],
    signature: list[Param],
    stem_length: int,
) -> RecordReport:
    """Add new rows to ``path`` (creating it), under its lock: what ``@record_io`` does at exit.

    Returns the report: its notes, and a refusal for each row left out because it holds
    a secret (``@record_io`` runs inside the user's program: it tells them on stderr).
    """
    from lockstep.oracles.ledger.secret_rows import without_secrets  # (a replay never scans)
    from lockstep.secrets import policy_near

    secrets = RecordReport(path.name, path, RecordMode.NEW_ONLY)
    rows = without_secrets(policy_near(path), dict(rows), secrets, signature)
    with lock_for(path):
        mode = RecordMode.NEW_ONLY if path.exists() else RecordMode.CREATE
        if path.exists():
            header = read_header(path)
            if header.fn != fn:
                raise DataError(
                    f"{display_path(path)}:1: ledger was recorded for {header.fn!r}, not {fn!r}"
                )
        report = RecordReport(path.name, path, mode, refused=secrets.refused)
        return record_rows(report, path.parent, fn, rows, signature, stem_length)
