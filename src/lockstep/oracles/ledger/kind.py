"""The ledger oracle: a function's real calls, frozen, replayed against the current body.

``record`` wraps the ``[[ledger]]`` target in-process, runs the configured
``driver`` (:mod:`.driver`) and writes the distinct calls it saw
(:mod:`.recorder`, :mod:`.file`); ``pytest --lockstep-record`` feeds the same
writer from a test run (:mod:`.pytest_recording`).  ``replay``
streams the file, thaws each row's arguments, calls the current target and
compares canonical outcomes (:mod:`.replay`).

Replay refuses a ledger whose header names another function, or whose
recorded signature differs from the current target's, naming the parameters
that changed: a body rewrite keeps the signature, and rows recorded against
another signature prove nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
from collections.abc import Callable, Container, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from lockstep import canon, project_codec
from lockstep.config import Project
from lockstep.errors import LockstepError, TargetError, UsageError
from lockstep.model import (
    OracleStatus,
    Outcome,
    RecordMode,
    RecordReport,
    Refusal,
    RefusalReason,
    ReplayOptions,
    Status,
)
from lockstep.oracles import (
    CaseInput,
    CaseRunner,
    OracleKind,
    StrengthScope,
    source_scope,
)
from lockstep.oracles.ledger import isolated
from lockstep.oracles.ledger.deadline import armed
from lockstep.oracles.ledger.empty_stdin import empty_stdin
from lockstep.oracles.ledger.file import (
    MODE_WORDS,
    RowOrder,
    SignatureChanged,
    check_header_target,
    check_signature,
    iter_rows,
    open_ledger,
    parse_row,
    read_header,
    record_rows,
)
from lockstep.oracles.ledger.format import (
    SUFFIX,
    LedgerHeader,
    LedgerRow,
    Param,
    call_text,
    signature_of,
)
from lockstep.oracles.ledger.former import former_member as _former_member
from lockstep.oracles.ledger.relocation import relocation
from lockstep.oracles.ledger.replay_random import seeded_random
from lockstep.oracles.ledger.spec import LedgerSpec
from lockstep.oracles.ledger.write_guard import guarded_folder
from lockstep.oracles.lifecycle import check_record_mode
from lockstep.oracles.status import file_status
from lockstep.oracles.verify import (
    Prestarted,
    prestarted,
)
from lockstep.secrets import Scrubber, scrubber_for
from lockstep.store import display_path
from lockstep.targets import resolve_callable, root_on_path

if TYPE_CHECKING:  # recording, mining and parallel replay import theirs where they run:
    # record's verifying interpreter and every fork of it only replay a candidate
    from lockstep.oracles.ledger.merging import Recording
    from lockstep.oracles.ledger.replay import Replayer
    from lockstep.oracles.mining import MiningSubject
    from lockstep.oracles.stale import Mismatch


# --------------------------------------------------------------------------- recording


def _require_driver(project: Project, spec: LedgerSpec) -> None:
    if spec.driver is None:
        raise UsageError(
            f"{project.where(spec, 'driver')}: ledger {spec.name!r} has no driver; set one, "
            f"or record from your tests with pytest --lockstep-record={spec.name}"
        )


def _drive(
    project: Project, spec: LedgerSpec, calls: list[LedgerRow] | None = None
) -> tuple[Recording, list[Param]]:
    """Run the driver (or make ``calls`` again) with the target wrapped: the distinct calls
    it made, and the signature."""
    from lockstep.oracles.ledger.driver import run_driver  # recording only (see the imports)
    from lockstep.oracles.ledger.merging import merge_parts
    from lockstep.oracles.ledger.wrapping import Installation

    if calls is None:
        _require_driver(project, spec)
    stem = project.config.lockstep.stem_length
    installation = Installation()
    project_codec.apply(project, spec.target)
    try:
        wrapped = installation.wrap(
            spec.target,
            project.root,
            where=project.where(spec, "target"),
            stem_length=stem,
            object_calls=project.config.lockstep.object_calls,
            object_bytes=project.config.lockstep.object_bytes,
            surface=spec.package,
        )
        wrapped.recorder.spill = True  # its part is taken once: a large recording stays flat
        installation.watch_context()
        if calls is None:
            run_driver(project, spec)
        else:
            _call_again(project, spec, calls)
    finally:
        installation.undo()
    return merge_parts(spec.target, [wrapped.recorder.part(release=True)]), wrapped.signature


def _call_again(project: Project, spec: LedgerSpec, rows: list[LedgerRow]) -> None:
    """Call the (wrapped) target with each row's recorded arguments, as a driver would."""
    target = resolve_callable(spec.target, project.root, where=project.where(spec, "target"))
    for row in rows:
        args = canon.decode(row.args, path="args")
        kwargs = canon.decode(row.kwargs, path="kwargs") if row.kwargs else {}
        try:
            result = target(*args, **kwargs)
            if inspect.isawaitable(result):
                import asyncio

                from lockstep.oracles.ledger.mining import awaited

                asyncio.run(awaited(result))
        except (Exception, canon.PastRecorded):  # the row's outcome: the recorder froze it
            continue


def check_mode(project: Project, spec: LedgerSpec, mode: RecordMode) -> None:
    """Refuse early (before running anything) a mode that cannot apply to the file on disk.

    The shared record-mode precondition, plus the ledger's own: a mode that keeps
    rows needs the file to be a ledger of this very target.
    """
    path = KIND.oracle_path(project, spec)
    exists = check_record_mode(path, project.root, spec.name, mode, MODE_WORDS)
    if exists and mode is not RecordMode.FORCE:  # --force replaces whatever is there
        check_header_target(path, read_header(path), spec)


def write_recording(
    project: Project,
    spec: LedgerSpec,
    mode: RecordMode,
    recording: Recording,
    signature: list[Param],
    only: Container[str] | None = None,
    started: Prestarted | None = None,
    transient: Sequence[str] = (),
) -> RecordReport:
    """Write ``recording`` to the ledger according to ``mode``; every category is reported.

    ``transient``: folders whose paths will be gone at replay (pytest's temporary folder);
    a row whose input names one is refused (:mod:`.transient_paths`).

    ``only``: the ids ``recording`` re-records (an accept, or a pytest run that saw only
    some tests): every other row of the ledger is kept as it is (verified when it was
    recorded: only the rows of ``recording`` are verified now), and one of them that is
    not recorded now (refused, or no longer made) is dropped.
    """
    path = KIND.oracle_path(project, spec)
    check_mode(project, spec, mode)
    report = RecordReport(spec.name, path, mode)
    report.notes.extend(recording.notes())
    for r in recording.refused:
        report.refused.append(
            Refusal(
                spec.name,
                r.id,
                RefusalReason.VARIES,
                label=f"{r.call} [{r.id}]",
                detail=" | ".join(r.outcomes),
                cause=recording.contexts.get(r.id, ""),
            )
        )
    # (verification's machinery: the secret scan, the seed suspects; imported where a
    # recording writes, never by a replay nor the verifying interpreter)
    from lockstep.oracles.ledger.verified_rows import reproducible, rows_to_verify

    checked, secret_free = rows_to_verify(
        project, path, mode, recording, signature, report, transient
    )
    rows = reproducible(
        project, spec, recording, checked, signature, report, started, within=secret_free
    )
    stem_length = project.config.lockstep.stem_length
    return record_rows(report, project.root, recording.fn, rows, signature, stem_length, only)


# --------------------------------------------------------------------------- replay


NO_ROWS_REMARK: Final = (
    "no rows: it guards nothing (no call was recorded, or each was skipped or refused)"
)
"""What ``lockstep status`` says of a ledger that holds no row (no call, or all refused)."""


def _rerecord(spec: LedgerSpec) -> str:
    """What records a stale ledger again: its driver (``lockstep record --force``), or, for
    a ledger with none, the tests (``--lockstep-refresh``: the rows this run sees)."""
    if spec.driver is not None:
        return ""
    return f"pytest --lockstep-record={spec.name} --lockstep-refresh"


def _header(project: Project, spec: LedgerSpec) -> tuple[Path, LedgerHeader]:
    """The ledger's path and header, checked to name ``spec``'s target."""
    path = KIND.oracle_path(project, spec)
    header = read_header(path)
    check_header_target(path, header, spec)
    return path, header


def _prepare(
    project: Project, spec: LedgerSpec, read: tuple[Path, LedgerHeader] | None = None
) -> tuple[Path, LedgerHeader, Callable[..., Any]]:
    """The ledger's path and header (``read``: already read) and its target, imported and
    checked against the header's signature."""
    path, header = read if read is not None else _header(project, spec)
    target = resolve_callable(spec.target, project.root, where=project.where(spec, "target"))
    check_signature(path, header, signature_of(target))
    project_codec.apply(project, spec.target)  # its classes and callbacks thaw by name
    return path, header, target


def _replayer(
    project: Project,
    spec: LedgerSpec,
    path: Path,
    header: LedgerHeader | None,
    target: Callable[..., Any],
    candidate: bool = False,
) -> Replayer:
    # replaying's machinery, imported where a ledger replays (a recording under pytest only
    # writes ledgers; the verifying server imports it once, before its forks: REPLAYING)
    from lockstep.oracles.ledger.replay import Replayer

    return Replayer(
        oracle=spec.name,
        shown=display_path(path, project.root),
        target=target,
        loose=spec.loose,
        tolerance=spec.float_tolerance,
        stem_length=project.config.lockstep.stem_length,
        loop=_event_loop() if inspect.iscoroutinefunction(target) else None,
        scrubber=_revealing(scrubber_for(project)),
        candidate=candidate,
        timeout=spec.timeout,
        relocate=_relocation(header, project.root),
        guarded=guarded_folder(str(project.root)),
    )


def _relocation(header: LedgerHeader | None, root: Path) -> tuple[str, str] | None:
    """The folder a ledger's rows name paths inside and today's, when they differ."""
    recorded = header.root if header is not None else None
    return relocation(recorded if isinstance(recorded, str) else None, root)


def _revealing(scrubber: Scrubber) -> Scrubber | None:
    """The scrubber when a row may hold a placeholder to put today's value in (or one
    of a variable that is not set here), else None: replay then skips the search."""
    return scrubber if scrubber or scrubber.ambient_names else None


def _event_loop() -> Any:
    """A loop for an ``async def`` target; asyncio is imported only then (it costs a fresh
    interpreter, such as record's verifying one, a noticeable share of its start)."""
    import asyncio

    return asyncio.new_event_loop()


SIGNATURE: Final = "(signature)"
"""The one case a ledger replays as when its target's signature changed since it was
recorded (:class:`~.file.SignatureChanged`): a DRIFT naming the parameters, its rows not
called, since they prove nothing about another signature.  The report still shows every
other ledger; before, the first such ledger stopped ``lockstep replay`` with one line."""

NO_ROWS: Final = "(no rows)"
"""The one case an empty ledger replays as: an ERROR, since nothing guards the target.
A member of a package surface (``package =``) that no call reached replays as no case:
the package's other members guard it, and the suite simply does not call this one."""


def _no_rows(project: Project, spec: LedgerSpec, path: Path) -> Outcome:
    return Outcome(
        spec.name,
        NO_ROWS,
        Status.ERROR,
        note=f"{display_path(path, project.root)} holds 0 rows, so nothing guards the target (no "
        "call was recorded, or each was skipped or refused: the recording said why); record it "
        "again while "
        f"something calls {spec.target} (a driver, or 'pytest --lockstep-record={spec.name}')",
    )


def _not_replayable(
    project: Project,
    spec: LedgerSpec,
    path: Path,
    header: LedgerHeader,
    selects: Callable[[str], bool] | None,
) -> Iterator[Outcome] | None:
    """The outcomes of a ledger whose rows cannot replay as they are (it holds none, or
    they were frozen under another contract); None when they can."""
    if header.rows == 0:
        if spec.package:  # a member of a package surface that no recorded call reached
            return iter([])
        chosen = selects is None or selects(NO_ROWS)
        return iter([_no_rows(project, spec, path)] if chosen else [])
    stale = _stale(project, header)
    if not stale:
        return None
    from lockstep.oracles.stale import stale_outcome

    return (
        stale_outcome(
            spec.name, row.id, stale, config_name=project.config_name, rerecord=_rerecord(spec)
        )
        for _, row in iter_rows(path, header)
        if selects is None or selects(row.id)
    )


def _stale(project: Project, header: LedgerHeader) -> list[Mismatch]:
    """The stem length the rows were frozen with against the configured one."""
    from lockstep.oracles.stale import mismatches

    return mismatches([("stem_length", header.stem_length, project.config.lockstep.stem_length)])


def _replay_rows(
    project: Project,
    spec: LedgerSpec,
    path: Path,
    header: LedgerHeader,
    target: Callable[..., Any],
    options: ReplayOptions,
    selects: Callable[[str], bool] | None,
) -> Iterator[Outcome]:
    """Replay the rows of the ledger at ``path``, streaming, in file order; with a
    selection (``--shard``, ``lockstep diff``), every row up to the last selected one
    runs and only the selected ones are told (a candidate's selection, which verification
    replays to name a cause, runs alone).

    Its rows were verified as one sequence, in this order, in a fresh process: a row may
    rely on what the rows before it left (jmespath's ``Parser.parse`` touches ``self`` only
    when its expression is not in the class's cache, which the earlier rows filled), so a
    row replayed without them is not the row that was verified.  Every shard of
    jmespath's ledger drifted on unchanged code while the whole replay was green; for the
    same reason a ledger's rows are never split between processes (``--jobs`` runs other
    kinds' cases side by side, a ledger's rows one after another)."""
    replayer = _replayer(project, spec, path, header, target, options.candidate)
    # iter_rows inlined: at 100,000 rows a second, each generator layer per row shows.
    run = replayer.run_under
    fn = header.fn
    shown = replayer.shown
    order = RowOrder(shown)
    check_order = order.check
    elsewhere = _elsewhere(project)
    wanted = set(options.only) if options.only is not None and options.shard is None else None
    # a candidate's chosen cases, each replayed alone: verification asks for them to name
    # a cause, and compares them with themselves replayed alike (see verify._second_opinion)
    alone = options.candidate and selects is not None
    try:
        with (
            root_on_path(project.root),
            open_ledger(path) as fh,
            armed(spec.timeout) as deadline,
            seeded_random(),
            empty_stdin(),
        ):
            lines = enumerate(fh, start=1)
            for _, raw in lines:
                if raw.strip():
                    break  # the header, already read
            for lineno, raw in lines:
                line = raw.rstrip(b"\r\n")
                if not line.strip():
                    continue
                row = parse_row(line, lineno, shown, fn)
                check_order(lineno, row)
                chosen = selects is None or selects(row.id)
                if alone and not chosen:
                    continue
                if elsewhere is None:
                    outcome = run(deadline, lineno, row)
                else:
                    with contextlib.chdir(elsewhere):  # not while the caller runs
                        outcome = run(deadline, lineno, row)
                if chosen:
                    yield outcome
                    if wanted is not None:
                        wanted.discard(row.id)
                        if not wanted:
                            break  # the last row asked for: the later ones cannot change it
    finally:
        if replayer.loop is not None:
            replayer.loop.close()


def _elsewhere(project: Project) -> Path | None:
    """The project's root when this process works in another folder, else None.

    A row runs in the project's root, as the fresh interpreter that verified it did: a
    call reading ``load('test.toml')`` replayed from the oracle folder drifted as
    ``FileNotFoundError``."""
    try:
        here = Path.cwd().resolve()
    except OSError:  # the working folder was removed
        return project.root
    return None if here == project.real_root else project.root


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


class LedgerKind(OracleKind[LedgerSpec]):
    """A function's real calls, frozen, replayed against the current body."""

    name = "ledger"
    suffix = SUFFIX

    def prepare_replay(self) -> None:
        """:mod:`.replay` and :mod:`lockstep.oracles.stale`, imported where a ledger replays."""
        from lockstep.oracles import stale  # noqa: F401
        from lockstep.oracles.ledger import replay  # noqa: F401

    def record_cases(
        self, project: Project, spec: LedgerSpec, mode: RecordMode, only: frozenset[str] | None
    ) -> RecordReport:
        if only is None:
            return self._record_driven(project, spec, mode)
        return self._accept_rows(project, spec, only)

    def case_ids(self, project: Project, spec: LedgerSpec) -> Iterator[str]:
        """Row ids in file order (sorted), streaming."""
        if spec.name in project.former:
            yield from (o.case_id for o in _former_member(project, spec, None))
            return
        path = self.oracle_path(project, spec)
        header = read_header(path)
        check_header_target(path, header, spec)
        if header.rows == 0:
            if not spec.package:  # a surface member nobody called: no case (see NO_ROWS)
                yield NO_ROWS
            return
        for _, row in iter_rows(path, header):
            yield row.id

    def status(self, project: Project, ledger: LedgerSpec) -> OracleStatus:
        """Present, readable, and how many rows (none: said, it guards nothing; a former
        member's: that it is one)."""
        path = self.oracle_path(project, ledger)

        def read() -> tuple[int, str]:
            if ledger.name in project.former:
                outcomes = list(_former_member(project, ledger, None))
                return len(outcomes), outcomes[0].note if outcomes else ""
            rows = sum(1 for case_id in self.case_ids(project, ledger) if case_id != NO_ROWS)
            return rows, "" if rows else NO_ROWS_REMARK

        listed = ledger.name in project.tested and ledger.name in project.listed_beyond()
        found = file_status(ledger, path, read, deleted=listed)
        if ledger.name in project.former and found.readable:
            import msgspec

            return msgspec.structs.replace(found, state="no longer a member")
        return found

    def _record_driven(self, project: Project, spec: LedgerSpec, mode: RecordMode) -> RecordReport:
        """Run the driver with the target wrapped and write the distinct calls it made."""
        check_mode(project, spec, mode)
        _require_driver(project, spec)
        with prestarted(project, spec) as verifier:  # its start overlaps the driver's run
            recording, signature = _drive(project, spec)
            return write_recording(project, spec, mode, recording, signature, started=verifier)

    def _accept_rows(
        self, project: Project, ledger: LedgerSpec, cases: frozenset[str]
    ) -> RecordReport:
        """Re-record only the rows ``cases``; every other row is kept as it is.

        With a driver, the driver runs again (a row it no longer makes is dropped,
        reported as trimmed).  A ledger recorded from pytest has none: then the
        accepted rows' own recorded calls are made again through the recorder.
        Either way the rows are frozen and verified the way any record does it.
        """
        check_mode(project, ledger, RecordMode.NEW_ONLY)  # it exists and is this target's ledger
        path = self.oracle_path(project, ledger)
        # every row read (a bad one is an error before anything runs); the accepted ones kept
        again = [row for _, row in iter_rows(path, read_header(path)) if row.id in cases]
        recording, signature = _drive(project, ledger, again if ledger.driver is None else None)
        narrowed = dataclasses.replace(
            recording,
            rows={rid: row for rid, row in recording.rows.items() if rid in cases},
            refused=[r for r in recording.refused if r.id in cases],
        )
        return write_recording(project, ledger, RecordMode.FORCE, narrowed, signature, only=cases)

    def replay(
        self, project: Project, spec: LedgerSpec, options: ReplayOptions
    ) -> Iterator[Outcome]:
        """Replay every selected row against the current target, streaming, in file order."""
        if not options.candidate and spec.name in project.former:  # (a candidate never is)
            selects = None if options.only is None and options.shard is None else options.selects
            yield from _former_member(project, spec, selects)
            return
        read = _header(project, spec)
        if spec.package and read[1].rows == 0:
            return  # an uncalled member (:data:`NO_ROWS`): nothing imported, it may not import here
        selects = None if options.only is None and options.shard is None else options.selects
        self.prepare_replay()  # here, once, not in each ledger's fork
        try:
            path, header, target = _prepare(project, spec, read)
        except SignatureChanged as e:  # one finding of this ledger; the others still replay
            if selects is None or selects(SIGNATURE):
                yield Outcome(spec.name, SIGNATURE, Status.DRIFT, note=str(e))
            return
        early = _not_replayable(project, spec, path, header, selects)
        if early is not None:
            yield from early
            return

        def rows() -> Iterator[Outcome]:
            return _replay_rows(project, spec, path, header, target, options, selects)

        alone = options.alone and not isolated.under_our_command_line()
        if options.candidate or alone or not isolated.forks():
            yield from rows()  # a candidate replays in a fork of its own already
        else:
            yield from isolated.in_fork(rows)  # alone, as it was verified

    def case_runner(self, project: Project, spec: LedgerSpec) -> CaseRunner:
        """Replay one row by id (pytest items): the file is read and the target imported once."""
        if spec.name in project.former:
            errors = {o.case_id: o for o in _former_member(project, spec, None)}
            return lambda case_id: errors.get(
                case_id, Outcome(spec.name, case_id, Status.MISSING, note="no such row")
            )
        path, header, target = _prepare(project, spec)
        rows: dict[str, tuple[int, LedgerRow]] = {
            row.id: (lineno, row) for lineno, row in iter_rows(path, header)
        }
        replayer = _replayer(project, spec, path, header, target)
        stale = _stale(project, header)

        def run(case_id: str) -> Outcome:
            found = rows.get(case_id)
            if found is None and case_id == NO_ROWS and not rows:
                return _no_rows(project, spec, path)
            if found is None:
                return Outcome(spec.name, case_id, Status.MISSING, note="no such row in the ledger")
            if stale:
                from lockstep.oracles.stale import stale_outcome

                return stale_outcome(
                    spec.name,
                    case_id,
                    stale,
                    config_name=project.config_name,
                    rerecord=_rerecord(spec),
                )
            with root_on_path(project.root), empty_stdin(), contextlib.chdir(project.root):
                return replayer.run(*found)

        return run

    def isolated_case_runner(self, project: Project, spec: LedgerSpec) -> CaseRunner:
        """pytest's items' runner: at the first item, the ledger's rows replay in a fork of
        their own (:meth:`replay`, :mod:`.isolated`), as ``lockstep replay`` replays them;
        each item then takes its row's outcome.  Rows replayed one by one in the pytest process
        saw what the other ledgers' rows had changed there.  A row the replay gives no
        outcome for (an uncalled member's, a missing one) is answered by :meth:`case_runner`.
        """
        if not isolated.forks() or spec.name in project.former:
            return self.case_runner(project, spec)
        outcomes: dict[str, Outcome] = {}
        failure: list[LockstepError] = []
        plain: list[CaseRunner] = []
        replayed: list[bool] = []

        def run(case_id: str) -> Outcome:
            if not replayed:
                replayed.append(True)
                try:
                    outcomes.update((o.case_id, o) for o in _replayed_alone(project, spec))
                except LockstepError as e:
                    failure.append(e)
            if failure:
                raise failure[0]
            found = outcomes.get(case_id)
            if found is not None:
                return found
            if not plain:
                plain.append(self.case_runner(project, spec))
            return plain[0](case_id)

        return run

    def keep_replays(
        self, project: Project, prepare: Callable[[], None]
    ) -> Callable[[], None] | None:
        """``pytest --lockstep``, as it configures: fork the process its ledger items replay
        in (:mod:`.keeper`), which has imported no test module and run no test, and which
        runs ``prepare()`` first; what ends it, or None where none can be kept."""
        from lockstep.oracles.ledger import keeper

        def replay(name: str) -> Iterator[Outcome]:
            spec = project.oracle(name)
            if not isinstance(spec, LedgerSpec):
                raise TargetError(f"{name}: not a ledger")
            return self.replay(project, spec, ReplayOptions())

        return keeper.stop if keeper.start(replay, prepare) is not None else None

    def mining(self, project: Project, spec: LedgerSpec) -> MiningSubject:
        """The target, imported once, with this kind's freezing, record path and comparison."""
        from lockstep.oracles.ledger.mining import LedgerSubject  # mining only

        target = resolve_callable(spec.target, project.root, where=project.where(spec, "target"))
        project_codec.apply(project, spec.target)  # objects of its package thaw (self too)
        path = self.oracle_path(project, spec)

        def write(recording: Recording) -> RecordReport:
            return write_recording(
                project, spec, RecordMode.NEW_ONLY, recording, signature_of(target)
            )

        replayer = _replayer(project, spec, path, None, target)
        return LedgerSubject(spec, target, path, write, replayer)

    def case_inputs(self, project: Project, spec: LedgerSpec) -> Iterator[CaseInput]:
        """Each row's call as Python, and the strings among its frozen arguments."""
        path = self.oracle_path(project, spec)
        header = read_header(path)
        for _, row in iter_rows(path, header):
            strings = tuple(_strings([row.args, row.kwargs]))
            yield CaseInput(row.id, call_text(row.fn, row.args, row.kwargs), strings)

    def strength_scope(self, project: Project, spec: LedgerSpec) -> StrengthScope:
        """The target function's module: what its recorded calls run."""
        return source_scope(
            project,
            resolve_callable(spec.target, project.root, where=project.where(spec, "target")),
        )


KIND: Final = LedgerKind()


def _replayed_alone(project: Project, spec: LedgerSpec) -> Iterator[Outcome]:
    """The ledger's outcomes for pytest's items: replayed by the process ``pytest
    --lockstep`` kept from before its suite ran (:mod:`.keeper`), or, with none, in a fork
    of this one (:meth:`LedgerKind.replay`)."""
    from lockstep.oracles.ledger import keeper

    kept = keeper.current()
    if kept is not None:
        return kept.replay(spec.name)
    return KIND.replay(project, spec, ReplayOptions())
