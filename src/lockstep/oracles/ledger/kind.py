"""The ledger oracle: a function's real calls, frozen, replayed against the current body.

``record`` wraps the ``[[ledger]]`` target in-process, runs the configured
``driver`` (a script path or ``pkg.mod:func``) and writes the distinct calls it
saw (:mod:`lockstep.oracles.ledger.recorder`); ``pytest --lockstep-record`` feeds the same
writer from a test run (:mod:`lockstep.pytest.ledger_recording`).  ``replay`` streams the
file (:mod:`lockstep.oracles.ledger.format`), thaws each row's arguments, calls the
current target and compares canonical outcomes:

* the return value *and its type* (a list where a tuple was is drift), or the
  exception's qualified type and message stem;
* every argument the call mutated, frozen after the call.

Comparison is exact.  Two opt-ins per ``[[ledger]]`` relax it, each documented
where a reviewer reads the config: ``float_tolerance = 1e-9`` accepts floats
(anywhere inside the result or a mutated argument) that differ by at most that
absolute amount -- types must still match -- and ``loose = true`` treats tuples
and lists as the same sequence.

Replay refuses a ledger whose header names another function, or whose
recorded signature differs from the current target's, naming the parameters
that changed: a body rewrite keeps the signature, and rows recorded against
another signature prove nothing.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import runpy
import sys
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final

import msgspec

from lockstep import canon, diff
from lockstep.canon import JSON
from lockstep.config import LedgerSpec, OracleSpec, Project
from lockstep.errors import (
    CanonError,
    DataError,
    LockstepError,
    Rejected,
    TargetError,
    UsageError,
)
from lockstep.model import (
    Drift,
    OracleStatus,
    Outcome,
    RecordMode,
    RecordReport,
    ReplayOptions,
    Status,
)
from lockstep.oracles.ledger.format import (
    ENCODER,
    FORMAT_VERSION,
    HEADER_DECODER,
    ROW_DECODER,
    LedgerHeader,
    LedgerRow,
    Param,
    call_text,
    describe_signature,
    outcome_text,
    signature_changes,
    signature_of,
)
from lockstep.oracles.ledger.recorder import Installation, Recording, merge_parts, outcome_of
from lockstep.oracles.modes import ModeWords, check_record_mode
from lockstep.oracles.status import file_status
from lockstep.store import AtomicLines, display_path, iter_lines, lock_for
from lockstep.targets import resolve_callable, root_on_path

BATCH: Final = 2000
"""Rows per work unit when replaying with several processes."""


class SignatureChanged(Rejected):
    """The target's signature is not the one the ledger was recorded against.

    A finding about the rewrite (exit 1), not bad input: the body rewrite changed
    more than the body, so the recorded rows cannot vouch for it."""


# --------------------------------------------------------------------------- paths and keys


def _ledger_spec(spec: OracleSpec) -> LedgerSpec:
    if not isinstance(spec, LedgerSpec):
        raise UsageError(f"oracle {spec.name!r} is a {spec.kind}, not a ledger")
    return spec


def oracle_path(project: Project, spec: OracleSpec) -> Path:
    """``<dir>/<name>.ledger.jsonl``."""
    return project.oracle_dir / f"{spec.name}.ledger.jsonl"


def config_key(project: Project, spec: LedgerSpec, field: str) -> str:
    """``lockstep.toml: ledger[0].target``: where a user fixes a bad value."""
    index = next((i for i, s in enumerate(project.config.ledger) if s.name == spec.name), 0)
    return f"{project.config_name}: ledger[{index}].{field}"


# --------------------------------------------------------------------------- reading


def read_header(path: Path) -> LedgerHeader:
    """Line 1 of a ledger; a missing, empty or malformed header names ``FILE:1``."""
    shown = display_path(path)
    for lineno, line in iter_lines(path):
        try:
            return HEADER_DECODER.decode(line)
        except msgspec.ValidationError as e:
            raise DataError(f"{shown}:{lineno}: not a ledger header: {_describe(e)}") from None
        except msgspec.DecodeError as e:
            raise DataError(f"{shown}:{lineno}: not valid JSON ({e})") from None
    raise DataError(f"{shown}: empty file; expected a ledger header on line 1")


def _describe(err: Exception) -> str:
    text = str(err)
    return text.replace("Object contains", "has").replace("Object missing", "misses")


def iter_rows(path: Path, header: LedgerHeader) -> Iterator[tuple[int, LedgerRow]]:
    """Stream the rows after the header; a bad line raises ``FILE:LINE: reason``."""
    shown = display_path(path)
    lines = iter_lines(path)
    next(lines, None)
    for lineno, line in lines:
        yield lineno, parse_row(line, lineno, shown, header.fn)


def parse_row(line: bytes, lineno: int, shown: str, fn: str) -> LedgerRow:
    """One row line, or ``FILE:LINE: reason`` (bad JSON, a field missing or unknown, a row
    for another function).  Every reader of rows -- listing, replay, worker -- uses this."""
    try:
        row = ROW_DECODER.decode(line)
    except msgspec.ValidationError as e:
        raise DataError(f"{shown}:{lineno}: {_describe(e)}") from None
    except msgspec.DecodeError as e:
        raise DataError(f"{shown}:{lineno}: not valid JSON ({e})") from None
    if row.fn != fn:
        raise DataError(
            f"{shown}:{lineno}: row {row.id} is for {row.fn!r}, but the header names {fn!r}"
        )
    return row


def _check_header_target(path: Path, header: LedgerHeader, spec: LedgerSpec) -> None:
    if header.fn != spec.target:
        raise DataError(
            f"{display_path(path)}:1: ledger was recorded for {header.fn!r}, "
            f"but ledger {spec.name!r} targets {spec.target!r}"
        )


def _check_signature(path: Path, header: LedgerHeader, current: list[Param]) -> None:
    changes = signature_changes(header.signature, current)
    if changes:
        raise SignatureChanged(
            f"{display_path(path)}:1: recorded against {header.fn}"
            f"{describe_signature(header.signature)}, the target is now "
            f"{describe_signature(current)}: {'; '.join(changes)} "
            "(a body rewrite keeps the signature; "
            "re-record with --force if this change is intended)"
        )


def case_ids(project: Project, spec: OracleSpec) -> Iterator[str]:
    """Row ids in file order (sorted), streaming."""
    spec = _ledger_spec(spec)
    path = oracle_path(project, spec)
    header = read_header(path)
    _check_header_target(path, header, spec)
    for _, row in iter_rows(path, header):
        yield row.id


def status(project: Project, spec: OracleSpec) -> OracleStatus:
    """Present, readable, and how many rows."""
    ledger = _ledger_spec(spec)
    path = oracle_path(project, ledger)
    return file_status(ledger, path, lambda: (sum(1 for _ in case_ids(project, ledger)), ""))


# --------------------------------------------------------------------------- recording


def record(project: Project, spec: OracleSpec, mode: RecordMode) -> RecordReport:
    """Run the driver with the target wrapped and write the distinct calls it made."""
    spec = _ledger_spec(spec)
    check_mode(project, spec, mode)
    if spec.driver is None:
        raise UsageError(
            f"{config_key(project, spec, 'driver')}: ledger {spec.name!r} has no driver; set one, "
            f"or record from your tests with pytest --lockstep-record={spec.name}"
        )
    stem = project.config.lockstep.stem_length
    installation = Installation()
    try:
        wrapped = installation.wrap(
            spec.target, project.root, where=config_key(project, spec, "target"), stem_length=stem
        )
        run_driver(project, spec)
    finally:
        installation.undo()
    recording = merge_parts(spec.target, [wrapped.recorder.part()])
    return write_recording(project, spec, mode, recording, wrapped.signature)


_MODE_WORDS: Final = ModeWords(
    new_only="add rows for new inputs",
    force="re-record every row",
    trim="drop rows no call made",
)


def check_mode(project: Project, spec: LedgerSpec, mode: RecordMode) -> None:
    """Refuse early (before running anything) a mode that cannot apply to the file on disk.

    The shared record-mode precondition, plus the ledger's own: a mode that keeps
    rows needs the file to be a ledger of this very target.
    """
    path = oracle_path(project, spec)
    if check_record_mode(path, project.root, spec.name, mode, _MODE_WORDS):
        _check_header_target(path, read_header(path), spec)


def _driver_failure(driver: str, exc: BaseException, root: Path) -> TargetError:
    frames = traceback.extract_tb(exc.__traceback__)
    where = driver
    for frame in reversed(frames):
        try:
            Path(frame.filename).resolve().relative_to(root.resolve())
        except ValueError:
            continue
        where = f"{display_path(Path(frame.filename), root)}:{frame.lineno}"
        break
    message = " ".join(str(exc).split())
    return TargetError(
        f"{where}: driver {driver!r} raised {type(exc).__name__}: {message}; nothing was written"
    )


def run_driver(project: Project, spec: LedgerSpec) -> None:
    """Run ``spec.driver`` in this process.

    ``pkg.mod:func`` is imported (after the wrap, so its imports bind the wrapper)
    and called; a ``.py`` path is run as ``__main__`` from the project root.
    """
    driver = spec.driver
    assert driver is not None
    key = config_key(project, spec, "driver")
    if driver.endswith(".py") or "/" in driver or ":" not in driver:
        script = project.resolve(driver, key=key.split(": ", 1)[1])
        if not script.is_file():
            raise TargetError(f"{key}: driver script {driver!r} not found")

        def call() -> None:
            old_argv = sys.argv
            sys.argv = [str(script)]
            try:
                runpy.run_path(str(script), run_name="__main__")
            finally:
                sys.argv = old_argv

    else:
        func = resolve_callable(driver, project.root, where=key)

        def call() -> None:
            result = func()
            if inspect.iscoroutine(result):
                asyncio.run(result)

    cwd = os.getcwd()
    try:
        with root_on_path(project.root):
            os.chdir(project.root)
            call()
    except SystemExit as e:
        if e.code not in (None, 0):
            raise TargetError(
                f"{key}: driver {driver!r} exited with status {e.code}; nothing was written"
            ) from None
    except LockstepError:
        raise
    except Exception as e:
        raise _driver_failure(driver, e, project.root) from None
    finally:
        os.chdir(cwd)


def _header_line(fn: str, signature: list[Param], stem_length: int) -> bytes:
    header = LedgerHeader(
        lockstep_ledger=FORMAT_VERSION, fn=fn, signature=signature, stem_length=stem_length
    )
    return ENCODER.encode(header)


def write_recording(
    project: Project,
    spec: LedgerSpec,
    mode: RecordMode,
    recording: Recording,
    signature: list[Param],
) -> RecordReport:
    """Write ``recording`` to the ledger according to ``mode``; every category is reported."""
    path = oracle_path(project, spec)
    check_mode(project, spec, mode)
    report = RecordReport(spec.name, path, mode)
    report.notes.extend(recording.notes())
    report.refused = [f"{r.call} [{r.id}]" for r in recording.refused]
    _write(path, recording, signature, project.config.lockstep.stem_length, mode, report)
    return report


def _write(
    path: Path,
    recording: Recording,
    signature: list[Param],
    stem_length: int,
    mode: RecordMode,
    report: RecordReport,
) -> None:
    existing: dict[str, LedgerRow] = {}
    header_line = _header_line(recording.fn, signature, stem_length)
    if mode is not RecordMode.CREATE and path.exists():
        header = read_header(path)
        if mode is not RecordMode.FORCE:
            _check_signature(path, header, signature)
            header_line = _header_line(header.fn, header.signature, header.stem_length)
        existing = {row.id: row for _, row in iter_rows(path, header)}
    new = recording.rows
    rows: dict[str, LedgerRow] = {}
    if mode is RecordMode.FORCE or not existing:
        rows = dict(new)
        for rid, row in new.items():
            old = existing.get(rid)
            if old is None:
                report.added.append(rid)
            elif outcome_of(old) != outcome_of(row):
                report.replaced.append(rid)
            else:
                report.unchanged.append(rid)
        report.trimmed.extend(rid for rid in existing if rid not in new)
    elif mode is RecordMode.TRIM:
        for rid, row in existing.items():
            if rid in new:
                rows[rid] = row
                report.unchanged.append(rid)
            else:
                report.trimmed.append(rid)
    else:  # NEW_ONLY
        rows = dict(existing)
        report.unchanged.extend(existing)
        for rid, row in new.items():
            old = existing.get(rid)
            if old is None:
                rows[rid] = row
                report.added.append(rid)
            elif outcome_of(old) != outcome_of(row):
                report.notes.append(
                    f"row {rid} {call_text(row.fn, row.args, row.kwargs)} now "
                    f"{outcome_text(row.ok, row.result, row.exc_type, row.exc_stem, row.mutated)}; "
                    "kept the recorded outcome (re-record with --force to replace it)"
                )
    with AtomicLines(path) as out:
        out.write(header_line)
        for rid in sorted(rows):
            out.write(ENCODER.encode(rows[rid]))


def merge_into_file(
    path: Path, recording: Recording, signature: list[Param], stem_length: int
) -> list[str]:
    """Add new rows to ``path`` (creating it), under its lock: what ``@record_io`` does at exit."""
    with lock_for(path):
        mode = RecordMode.NEW_ONLY if path.exists() else RecordMode.CREATE
        if path.exists():
            header = read_header(path)
            if header.fn != recording.fn:
                raise DataError(
                    f"{display_path(path)}:1: ledger was recorded for {header.fn!r}, "
                    f"not {recording.fn!r}"
                )
        report = RecordReport(path.name, path, mode)
        report.notes.extend(recording.notes())
        _write(path, recording, signature, stem_length, mode, report)
    return report.notes


# --------------------------------------------------------------------------- replay


def _close(expected: Any, actual: Any, tol: float) -> bool:
    """Structural equality of two frozen values with an absolute tolerance on floats."""
    if type(expected) is not type(actual):
        return False
    if type(expected) is float:
        return bool(abs(expected - actual) <= tol)
    if type(expected) is list:
        return len(expected) == len(actual) and all(
            _close(e, a, tol) for e, a in zip(expected, actual, strict=True)
        )
    if type(expected) is dict:
        return expected.keys() == actual.keys() and all(
            _close(expected[k], actual[k], tol) for k in expected
        )
    return bool(expected == actual)


_SELF_FROZEN: Final = frozenset({str, int, bool, type(None)})
"""Types whose frozen form is the value itself and which cannot change in place.

A thawed value of one of these is the very object the ledger holds, so freezing it
again gives the recorded bytes: replay compares such values without freezing them.
(Not float: ``-0.0 == 0.0``, and a non-finite float freezes to a tag.)
"""

_decode = canon.decode


def _expected_text(row: LedgerRow) -> str:
    return outcome_text(row.ok, row.result, row.exc_type, row.exc_stem)


@dataclass(slots=True)
class _Replayer:
    """Calls the current target for each row and compares the canonical outcome."""

    oracle: str
    shown: str
    target: Callable[..., Any]
    loose: bool
    tolerance: float
    stem_length: int
    loop: asyncio.AbstractEventLoop | None = None

    def same(self, expected: JSON, actual: JSON) -> bool:
        if canon.canonical_json(expected) == canon.canonical_json(actual):
            return True
        if self.loose:
            try:
                expected = canon.encode(canon.decode(expected), loose=True)
                actual = canon.encode(canon.decode(actual), loose=True)
            except CanonError:
                return False
            if canon.canonical_json(expected) == canon.canonical_json(actual):
                return True
        return self.tolerance > 0 and _close(expected, actual, self.tolerance)

    def run(self, lineno: int, row: LedgerRow) -> Outcome:
        args: list[Any] = row.args
        kwargs: dict[str, Any] = row.kwargs
        # Scalars thaw to themselves: such rows (the usual kind) need no decoding at all.
        scalar = _SELF_FROZEN.issuperset(map(type, args)) and (
            not kwargs or _SELF_FROZEN.issuperset(map(type, kwargs.values()))
        )
        if not scalar:
            try:
                args = _decode(args, path="args")
                kwargs = _decode(kwargs, path="kwargs") if kwargs else {}
            except CanonError as e:
                raise DataError(f"{self.shown}:{lineno}: row {row.id}: {e}") from None
        ok = True
        result: Any = None
        exc: BaseException | None = None
        try:
            result = self.target(*args, **kwargs)
            if self.loop is not None and inspect.isawaitable(result):
                result = self.loop.run_until_complete(result)
        except Exception as e:
            ok = False
            exc = e
        expected: Any = row.result
        # The common case, decided without freezing anything: a scalar result whose frozen
        # form is itself, of exactly the recorded type (so ``==`` cannot confuse 1, 1.0 and
        # True), and arguments that cannot have changed in place.
        if (
            scalar
            and ok
            and row.ok
            and type(result) is type(expected)
            and type(result) in _SELF_FROZEN
            and result == expected
            and not row.mutated
        ):
            return Outcome(self.oracle, row.id, Status.PASS)
        return self._compare(lineno, row, args, kwargs, ok, result, exc)

    def _check_recorded(self, lineno: int, row: LedgerRow) -> None:
        """A recorded value that does not thaw is a corrupt line, never a drift to show."""
        try:
            if row.ok and not isinstance(row.result, msgspec.UnsetType):
                _decode(row.result, path="result")
            if isinstance(row.mutated, dict):
                _decode(row.mutated, path="mutated")
        except CanonError as e:
            raise DataError(f"{self.shown}:{lineno}: row {row.id}: {e}") from None

    def _compare(
        self,
        lineno: int,
        row: LedgerRow,
        args: list[Any],
        kwargs: dict[str, Any],
        ok: bool,
        result: Any,
        exc: BaseException | None,
    ) -> Outcome:
        drifts: list[Drift] = []
        if ok and row.ok:
            try:
                actual = canon.encode(result, path="result")
            except CanonError as e:
                drifts.append(Drift("result", _expected_text(row), f"returned a value that {e}"))
            else:
                expected: JSON = row.result  # type: ignore[assignment]
                if not self.same(expected, actual):
                    actual_text = outcome_text(True, actual, None, None)
                    drifts.append(
                        Drift(
                            "result",
                            _expected_text(row),
                            actual_text,
                            _value_diff(expected, actual),
                        )
                    )
        elif not ok and not row.ok:
            assert exc is not None
            frozen = canon.freeze_exception(exc, stem_length=self.stem_length)
            if (frozen.exc_type, frozen.exc_stem) != (row.exc_type, row.exc_stem):
                drifts.append(
                    Drift(
                        "exception",
                        _expected_text(row),
                        outcome_text(False, None, frozen.exc_type, frozen.exc_stem),
                    )
                )
        else:
            if exc is not None:
                frozen = canon.freeze_exception(exc, stem_length=self.stem_length)
                actual_text = outcome_text(False, None, frozen.exc_type, frozen.exc_stem)
            else:
                try:
                    actual_text = outcome_text(True, canon.encode(result), None, None)
                except CanonError as e:
                    actual_text = f"returned a value that {e}"
            drifts.append(Drift("outcome", _expected_text(row), actual_text))
        mutation = self._mutation_drift(row, args, kwargs)
        if mutation is not None:
            drifts.append(mutation)
        if not drifts:
            return Outcome(self.oracle, row.id, Status.PASS)
        self._check_recorded(lineno, row)
        return Outcome(
            self.oracle,
            row.id,
            Status.DRIFT,
            tuple(drifts),
            note=call_text(row.fn, row.args, row.kwargs),
        )

    def _mutation_drift(
        self, row: LedgerRow, args: list[Any], kwargs: dict[str, Any]
    ) -> Drift | None:
        actual: dict[str, JSON] = {}
        try:
            for i, value in enumerate(args):
                if value is row.args[i] and type(value) in _SELF_FROZEN:
                    continue  # thawed to the recorded object itself, and it cannot change
                after = canon.encode(value)
                if canon.canonical_json(after) != canon.canonical_json(row.args[i]):
                    actual[str(i)] = after
            for name, value in kwargs.items():
                if value is row.kwargs[name] and type(value) in _SELF_FROZEN:
                    continue
                after = canon.encode(value)
                if canon.canonical_json(after) != canon.canonical_json(row.kwargs[name]):
                    actual[name] = after
        except CanonError as e:
            return Drift("mutation", "arguments frozen after the call", f"an argument {e}")
        expected = row.mutated if isinstance(row.mutated, dict) else {}
        if actual.keys() == expected.keys() and all(
            self.same(expected[k], actual[k]) for k in expected
        ):
            return None
        return Drift("mutation", _mutation_text(expected), _mutation_text(actual))


def _mutation_text(mutated: dict[str, JSON]) -> str:
    if not mutated:
        return "no argument mutated"
    return outcome_text(True, None, None, None, mutated).split("; ", 1)[1]


def _value_diff(expected: JSON, actual: JSON) -> str:
    """A unified diff of two values pretty-printed, when they are big enough to need one."""
    import pprint

    try:
        left = pprint.pformat(canon.decode(expected), width=80)
        right = pprint.pformat(canon.decode(actual), width=80)
    except CanonError:
        return ""
    if "\n" not in left and "\n" not in right:
        return ""
    return diff.unified(
        left + "\n", right + "\n", label_expected="recorded", label_actual="replayed"
    )


def _prepare(project: Project, spec: LedgerSpec) -> tuple[Path, LedgerHeader, Callable[..., Any]]:
    path = oracle_path(project, spec)
    header = read_header(path)
    _check_header_target(path, header, spec)
    target = resolve_callable(spec.target, project.root, where=config_key(project, spec, "target"))
    _check_signature(path, header, signature_of(target))
    return path, header, target


def _replayer(
    project: Project, spec: LedgerSpec, path: Path, header: LedgerHeader, target: Callable[..., Any]
) -> _Replayer:
    return _Replayer(
        oracle=spec.name,
        shown=display_path(path, project.root),
        target=target,
        loose=spec.loose,
        tolerance=spec.float_tolerance,
        stem_length=header.stem_length,
        loop=asyncio.new_event_loop() if inspect.iscoroutinefunction(target) else None,
    )


def replay(project: Project, spec: OracleSpec, options: ReplayOptions) -> Iterator[Outcome]:
    """Replay every selected row against the current target, streaming, in file order."""
    spec = _ledger_spec(spec)
    path, header, target = _prepare(project, spec)
    if options.jobs > 1:
        yield from _replay_parallel(project, spec, options)
        return
    replayer = _replayer(project, spec, path, header, target)
    selects = None if options.only is None and options.shard is None else options.selects
    # iter_rows inlined: at 100,000 rows a second, each generator layer per row shows.
    run = replayer.run
    fn = header.fn
    shown = replayer.shown
    try:
        with root_on_path(project.root), _open_ledger(path) as fh:
            lines = enumerate(fh, start=1)
            for _, raw in lines:
                if raw.strip():
                    break  # the header, already read
            for lineno, raw in lines:
                line = raw.rstrip(b"\r\n")
                if not line.strip():
                    continue
                row = parse_row(line, lineno, shown, fn)
                if selects is None or selects(row.id):
                    yield run(lineno, row)
    finally:
        if replayer.loop is not None:
            replayer.loop.close()


def _open_ledger(path: Path) -> BinaryIO:
    """Open a ledger for streaming, with the same one-line errors as :func:`iter_lines`."""
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise DataError(f"{display_path(path)}: file not found") from None
    except OSError as e:
        raise DataError(f"{display_path(path)}: cannot read: {e.strerror}") from None


def case_runner(project: Project, spec: OracleSpec) -> Callable[[str], Outcome]:
    """Replay one row by id (pytest items): the file is read and the target imported once."""
    spec = _ledger_spec(spec)
    path, header, target = _prepare(project, spec)
    rows = {row.id: (lineno, row) for lineno, row in iter_rows(path, header)}
    replayer = _replayer(project, spec, path, header, target)

    def run(case_id: str) -> Outcome:
        found = rows.get(case_id)
        if found is None:
            return Outcome(spec.name, case_id, Status.MISSING, note="no such row in the ledger")
        with root_on_path(project.root):
            return replayer.run(*found)

    return run


# --------------------------------------------------------------------------- parallel replay


@dataclass(frozen=True)
class _WorkerState:
    """What each replay worker process keeps between batches (set by its initializer)."""

    replayer: _Replayer
    options: ReplayOptions
    fn: str


_WORKER: list[_WorkerState] = []
"""This worker process's state: empty in the parent, one item in a worker."""


def _init_worker(project: Project, spec: LedgerSpec, options: ReplayOptions) -> None:
    path, header, target = _prepare(project, spec)
    sys.path.insert(0, str(project.root))
    _WORKER.append(_WorkerState(_replayer(project, spec, path, header, target), options, header.fn))


def _replay_batch(lines: list[tuple[int, bytes]]) -> list[Outcome]:
    state = _WORKER[-1]
    replayer, selects, fn = state.replayer, state.options.selects, state.fn
    out: list[Outcome] = []
    for lineno, line in lines:
        row = parse_row(line, lineno, replayer.shown, fn)
        if selects(row.id):
            out.append(replayer.run(lineno, row))
    return out


def _batches(path: Path) -> Iterator[list[tuple[int, bytes]]]:
    lines = iter_lines(path)
    next(lines, None)
    batch: list[tuple[int, bytes]] = []
    for item in lines:
        batch.append(item)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _replay_parallel(
    project: Project, spec: LedgerSpec, options: ReplayOptions
) -> Iterator[Outcome]:
    """Batches of raw lines to ``options.jobs`` processes; a bounded window keeps memory flat."""
    path = oracle_path(project, spec)
    window: deque[Future[list[Outcome]]] = deque()
    with ProcessPoolExecutor(
        max_workers=options.jobs, initializer=_init_worker, initargs=(project, spec, options)
    ) as pool:
        try:
            for batch in _batches(path):
                window.append(pool.submit(_replay_batch, batch))
                if len(window) >= options.jobs * 2:
                    yield from window.popleft().result()
            while window:
                yield from window.popleft().result()
        finally:
            for future in window:
                future.cancel()


__all__ = [
    "case_ids",
    "case_runner",
    "merge_into_file",
    "oracle_path",
    "read_header",
    "record",
    "replay",
    "status",
    "write_recording",
]
