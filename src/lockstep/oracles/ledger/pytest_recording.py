"""``pytest --lockstep-record=TARGET``: record a ledger while the project's own tests run.

The project's tests already call the messy function the way production does;
this wraps each named target for the duration of the run (including names
other modules bound with ``from pkg.mod import func``), then writes the
ledger once at the end.  ``TARGET`` is a ``[[ledger]]`` name or its
``pkg.mod:qualname`` target; repeat the option for several.

Under pytest-xdist every worker records in memory and, at its session end,
appends its whole recording as one line to a spool file next to the ledger
(:class:`lockstep.store.JsonlAppender`: whole lines under a file lock, so
nothing is lost or interleaved).  The controller finishes after every worker,
merges the spool and its own recording, kept in memory (a run without workers
writes and reads no spool; an input whose outcome differs between workers is
refused like one that differed within a worker), writes the ledger atomically in the
chosen ``--lockstep-record-mode`` and removes the spool.  The run id that
names the spool travels to workers in ``workerinput``, so a stale spool from an
interrupted run is never merged into a new one.

What the user controls, test by test:

* A test marked ``@pytest.mark.lockstep_skip``, or whose node id the
  ``record_exclude`` setting names, is *kept out*: while it runs (setup, call
  and teardown) the targets' recorders are paused, so its calls pass through
  unrecorded; the summary says how many calls each such test made.
* Each recording remembers which test first produced each row (from the
  recorder's call counter at every test's start and each row's first call), so
  a refused row names its test.  A worker whose recorder spilled its rows to
  disk (more than 50,000 distinct rows, :mod:`lockstep.oracles.ledger.spool`)
  hands over its runs and the test starts instead; the controller then reads
  the runs once more for the tests of the rows it refused only.
* A run in which any test failed or errored writes nothing unless
  ``--lockstep-record-allow-failures`` is given: rows from a broken run are
  suspect.  The controller sees every report, the workers' too.
* ``--lockstep-refresh`` re-records the rows the run saw and keeps the
  ledger's other rows: a run of a subset (``-k``, one file) must not drop the
  rows of the tests it did not run.  ``trim`` is the way to drop them.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, TypeAlias, cast

import msgspec
import pytest

from lockstep import project_codec
from lockstep.config import Project
from lockstep.errors import (
    ComparedAsValue,
    DataError,
    LockstepError,
    MissingMember,
    NotACallable,
    UnimportableModule,
)
from lockstep.model import RecordMode, RecordReport
from lockstep.oracles.ledger import run_summary, session_gc
from lockstep.oracles.ledger.input_budget import RunningTest
from lockstep.oracles.ledger.spec import LedgerSpec
from lockstep.oracles.ledger.tests_of_rows import (
    add_spilled_tests,
    name_refused,
    refused_ids,
    test_of,
    tests_by_row,
)
from lockstep.oracles.ledger.worker_spool import discard_spool, remove_spool
from lockstep.pytest.project import project_for
from lockstep.store import JsonlAppender, folder_syncs_batched, iter_jsonl
from lockstep.store.beyond_surface import list_present
from lockstep.surface import is_made_dunder

if TYPE_CHECKING:  # the recording machinery is imported only when a run asks for it
    from lockstep.oracles.ledger.format import LedgerRow, Param
    from lockstep.oracles.ledger.merging import Recording
    from lockstep.oracles.ledger.part import RecordingPart
    from lockstep.oracles.ledger.recorder import TargetRecorder
    from lockstep.oracles.ledger.run_summary import CallCounts
    from lockstep.oracles.ledger.wrapping import Installation, Wrapped
    from lockstep.oracles.verify_session import VerifySession

RUN_KEY: Final = "lockstep_record_run"
"""The ``workerinput`` key carrying the controller's run id to xdist workers."""

SKIP_MARKER: Final = "lockstep_skip"
"""``@pytest.mark.lockstep_skip``: keep this test's calls out of ``--lockstep-record``."""

SHOWN: Final = 8
"""Node ids or row ids listed in one summary line before ``… (+N)``."""

FAILED_SHOWN: Final = 3
"""Failed tests named in the one-line refusal of a failing run."""


def _shown(items: Sequence[str], limit: int = SHOWN) -> str:
    listed = ", ".join(items[:limit])
    return listed + (f", … (+{len(items) - limit})" if len(items) > limit else "")


def excluded_by(nodeid: str, patterns: Iterable[str]) -> str | None:
    """The ``record_exclude`` entry naming ``nodeid``, if any.

    An entry names a test by its node id, a file, class or folder containing it
    (``tests/test_i18n.py``, ``tests/i18n``), or an ``fnmatch`` pattern of node ids
    (``tests/test_i18n.py::*``, ``*freeze*``).
    """
    for pattern in patterns:
        parent = pattern.rstrip("/")
        if (
            nodeid == pattern
            or nodeid.startswith((f"{parent}::", f"{parent}/"))
            or fnmatch.fnmatchcase(nodeid, pattern)
        ):
            return pattern
    return None


class _Paused:
    """What a recorder's ``active`` flag holds while a kept-out test runs.

    The recording wrapper asks ``if not recorder.active`` once per call and then
    calls the target unrecorded; this answers "not active" and counts the asks,
    which is the number of calls the test made.
    """

    __slots__ = ("calls",)

    def __init__(self) -> None:
        self.calls = 0

    def __bool__(self) -> bool:
        self.calls += 1
        return False


class _SpoolLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """One process's recording of one target, as appended to the spool."""

    part: msgspec.Raw
    """The :class:`~lockstep.oracles.ledger.part.RecordingPart` (decoded by the controller)."""
    first_test: dict[str, str] = {}
    """Row id -> node id of the test during which this process first produced it."""
    skipped: dict[str, int] = {}
    """Node id of each kept-out test -> calls of the target it made (unrecorded)."""
    matched: list[str] = []
    """``record_exclude`` entries that named at least one test of this process."""
    starts: list[int] = []
    tests: list[str] = []
    """A part whose rows were spilled to disk (:mod:`lockstep.oracles.ledger.spool`) has no
    ``first_test`` map as large as its rows: its process's call count at each test's start
    and the tests, so the controller names the tests of the rows it refuses."""


class _Target(msgspec.Struct):
    """One ledger this run records.  This module's small records are structs rather than
    dataclasses: made in microseconds where a dataclass costs every recording run half a
    millisecond to import."""

    spec: LedgerSpec
    spool: Path
    wrapped: Wrapped | None = None
    starts: list[int] = msgspec.field(default_factory=list)
    """The recorder's call count when each recorded test started (ascending)."""
    tests: list[str] = msgspec.field(default_factory=list)
    """The node id of each recorded test, parallel to :attr:`starts`."""
    skipped: dict[str, int] = msgspec.field(default_factory=dict)

    @property
    def recorder(self) -> TargetRecorder:
        assert self.wrapped is not None
        return self.wrapped.recorder

    def first_tests(self, part: RecordingPart) -> dict[str, str]:
        """Row id -> the test during which the row's first call was made."""
        out: dict[str, str] = {}
        starts, tests = self.starts, self.tests
        for entry in part.entries:
            test = test_of(starts, tests, entry.first_call)
            if test:
                out[entry.row.id] = test
        for refused in part.refused:
            # the test to look at is the one in which the input first behaved differently
            calls = refused.first_calls[1:] or refused.first_calls
            test = test_of(starts, tests, calls[0]) if calls else ""
            if test:
                out[refused.id] = test
        return out


class _Written(msgspec.Struct):
    """What writing one target adds to the summary (see ``LedgerRecording._write``)."""

    outcomes: list[_Outcome] = msgspec.field(default_factory=list)
    unwritten: list[tuple[str, CallCounts]] = msgspec.field(default_factory=list)
    """A member beyond the surface whose every call was skipped: its name and counts."""
    errors: list[str] = msgspec.field(default_factory=list)


class _Outcome(msgspec.Struct):
    """What the controller wrote for one target, with what the summary adds to the report."""

    report: RecordReport
    unseen_kept: int = 0
    skipped: dict[str, int] = msgspec.field(default_factory=dict)
    refused_by_test: dict[str, list[str]] = msgspec.field(default_factory=dict)
    counts: CallCounts = msgspec.field(default_factory=lambda: _no_counts())


_INCOMPLETE_RUN: Final = MappingProxyType(
    {
        int(pytest.ExitCode.INTERRUPTED): "interrupted",
        int(pytest.ExitCode.INTERNAL_ERROR): "pytest internal error",
        int(pytest.ExitCode.USAGE_ERROR): "usage error",
        int(pytest.ExitCode.NO_TESTS_COLLECTED): "no tests collected",
    }
)


# eq=False: registered as a pytest plugin, it must stay hashable (by identity)
class LedgerRecording(msgspec.Struct, eq=False):
    """The plugin object for one run: wraps at configure, writes at session end."""

    project: Project
    options: RecordOptions
    run_id: str
    controller: bool
    targets: list[_Target]
    installation: Installation
    outcomes: list[_Outcome] = msgspec.field(default_factory=list)
    unwritten: list[tuple[str, CallCounts]] = msgspec.field(default_factory=list)
    """Members beyond the surface called, every call skipped: no ledger, counted in totals."""
    errors: list[str] = msgspec.field(default_factory=list)
    failed: list[str] = msgspec.field(default_factory=list)
    """Node ids of the tests (or collectors) that failed or errored, in report order."""
    refusal: str = ""
    unimported: list[str] = msgspec.field(default_factory=list)
    """Surface members whose module does not import here, with the reason."""
    transient: tuple[str, ...] = ()
    """Folders pytest made this session's temporary paths in (a row naming one is refused)."""
    not_callable: list[str] = msgspec.field(default_factory=list)
    """Surface members the source suggested that are no callables once imported."""
    undefined: list[str] = msgspec.field(default_factory=list)
    """Members of a package surface its source defines where this import did not run it
    (a function under ``try: import icu``)."""
    compared: list[str] = msgspec.field(default_factory=list)
    """Surface functions the package compares as values, left unwrapped (compared_names)."""
    matched: set[str] = msgspec.field(default_factory=set)
    first_tests: dict[str, dict[str, str]] = msgspec.field(default_factory=dict)
    """Ledger name -> row id -> node id of a test that first produced the row (spilled to
    disk: only the refused rows; the map would be as large as the ledger)."""
    secret_rows: int = 0  # rows refused because they hold a secret: the run fails
    serial: RunningTest = msgspec.field(default_factory=RunningTest)  # the running test
    merged: dict[str, _Merged] = msgspec.field(default_factory=dict)
    """Ledger name -> its parts merged for the secret scan of all (:meth:`_secrets_found`)."""
    _marks: list[tuple[list[int], list[str], TargetRecorder]] = msgspec.field(default_factory=list)
    """Each target's test starts, tests and recorder, as each test's start notes them."""
    verifier: VerifySession | None = None
    """The controller's one verifying interpreter for every ledger of the run, started first
    thing at configure so its start overlaps the rest of it and the tests
    (:mod:`lockstep.oracles.verify_session`); each package's targets are imported in it
    once ahead (:meth:`~lockstep.oracles.verify_session.VerifySession.warm`)."""

    @property
    def reports(self) -> list[RecordReport]:
        return [o.report for o in self.outcomes]

    def install(self) -> None:
        stem = self.project.config.lockstep.stem_length
        imported: list[LedgerSpec] = []  # targets whose module imported: warmed ahead
        try:
            project_codec.apply(
                self.project, *(t.spec.target for t in self.targets), importing_tests=False
            )
            for target in self.targets:
                try:
                    target.wrapped = self.installation.wrap(
                        target.spec.target,
                        self.project.root,
                        where=self.project.where(target.spec, "target"),
                        stem_length=stem,
                        object_calls=self.project.config.lockstep.object_calls,
                        object_bytes=self.project.config.lockstep.object_bytes,
                        surface=target.spec.package,
                        leave_compared=bool(target.spec.package),
                        own_only=target.spec.name in self.project.tested
                        and is_made_dunder(target.spec.target),
                        functions_only=target.spec.name in self.project.tested,
                    )
                    imported.append(target.spec)
                except LockstepError as e:
                    if target.spec.name in self.project.tested:
                        continue  # beyond the surface, recorded only if it can be: skipped
                    if not target.spec.package or not isinstance(
                        e, UnimportableModule | NotACallable | ComparedAsValue | MissingMember
                    ):
                        raise
                    # A surface module that does not import here (dateutil.tz.win off
                    # Windows), or a name the source made look like a method that is a
                    # value once imported (sqlparse's `Text = Token.Text`): the member
                    # records nothing, as a member nobody called.
                    target.wrapped = _recording_nothing(target.spec.target, stem)
                    if isinstance(e, UnimportableModule):
                        self.unimported.append(f"{target.spec.name} ({e.reason})")
                    elif isinstance(e, ComparedAsValue):
                        self.compared.append(target.spec.name)
                    elif isinstance(e, MissingMember):
                        self.undefined.append(target.spec.name)
                    else:
                        self.not_callable.append(target.spec.name)
                # its part is taken once, at the session's end: a large run stays flat
                target.wrapped.recorder.spill = True
                target.wrapped.recorder.budget.serial = self.serial  # a few calls per test
            self.targets = [t for t in self.targets if t.wrapped is not None]
            self._marks = [(t.starts, t.tests, t.recorder) for t in self.targets]
            self.installation.watch_context()
            if self.controller:
                from lockstep.oracles.ledger.verify_warming import warm_session
                from lockstep.oracles.verify_session import VerifySession

                if self.verifier is None:
                    self.verifier = VerifySession(self.project.root)
                warm_session(self.verifier, self.project, imported)
            session_gc.freeze()  # what configure built, out of every collection's walk
        except LockstepError as e:
            self.installation.undo()
            raise pytest.UsageError(f"lockstep: {e}") from None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: tell each worker which spool this run appends to."""
        node.workerinput[RUN_KEY] = self.run_id

    # -- test by test ---------------------------------------------------------------

    def _kept_out(self, item: pytest.Item) -> bool:
        if item.get_closest_marker(SKIP_MARKER) is not None:
            return True
        pattern = excluded_by(item.nodeid, self.project.config.lockstep.record_exclude)
        if pattern is None:
            return False
        self.matched.add(pattern)
        return True

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        """Note where each test's calls start; pause the recorders around a kept-out test."""
        if not self._kept_out(item):
            nodeid = item.nodeid
            self.serial.n += 1
            for starts, tests, recorder in self._marks:
                calls = recorder.calls
                if starts and starts[-1] == calls:  # the test before made no call of it
                    tests[-1] = nodeid
                else:
                    starts.append(calls)
                    tests.append(nodeid)
            return (yield)
        paused = [(target, _Paused()) for target in self.targets]
        for target, window in paused:
            # the wrapper only tests the flag's truth: _Paused is false and counts the calls
            target.recorder.active = cast(bool, window)
        try:
            return (yield)
        finally:
            for target, window in paused:
                target.recorder.active = True
                target.skipped[item.nodeid] = target.skipped.get(item.nodeid, 0) + window.calls

    def _note_failure(self, nodeid: str) -> None:
        if self.controller and nodeid not in self.failed:
            self.failed.append(nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:  # under xdist the controller gets every worker's reports
            self._note_failure(report.nodeid)

    def pytest_runtest_logfinish(self) -> None:
        if self.verifier is not None:  # after a test's teardown, never inside it
            self.verifier.pump()  # the next verifying interpreter, once the last is ready

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._note_failure(report.nodeid or "collection")
        if self.verifier is not None:
            self.verifier.pump()

    # -- the end ----------------------------------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.installation.undo()
        own: dict[str, tuple[_SpoolLine, RecordingPart]] = {}
        for target in self.targets:
            part = target.recorder.part()
            line = _SpoolLine(
                # the controller's own part stays in memory: only workers' parts travel
                part=msgspec.Raw(msgspec.json.encode(part) if not self.controller else b""),
                first_test=target.first_tests(part),
                skipped=target.skipped,
                matched=sorted(self.matched),
                starts=target.starts if part.runs else [],
                tests=target.tests if part.runs else [],
            )
            if self.controller:
                own[target.spec.name] = (line, part)
            else:
                JsonlAppender(target.spool).append(msgspec.json.encode(line))
        if not self.controller:
            return
        if exitstatus in _INCOMPLETE_RUN:
            self.refusal = (
                f"lockstep: nothing recorded: the run did not complete "
                f"({_INCOMPLETE_RUN[exitstatus]}); rows from a partial run would trim or miss cases"
            )
            _discard(self.targets, own)
            return
        if self.failed and not self.options.allow_failures:
            self.refusal = (
                f"lockstep: nothing recorded: {len(self.failed)} test(s) failed or errored "
                f"({_shown(self.failed, FAILED_SHOWN)}); rows from a failing run are suspect: "
                f"fix or deselect them, or pass {self.options.allow_failures_flag} (one that "
                "passes unrecorded meets a recorded member's wrapper, a frame it counts, or a "
                "module the recording imported to wrap and the suite never imports, whose "
                "import registers something: leave that member or module out with the "
                "ledger's exclude)"
            )
            _discard(self.targets, own)
            return
        from lockstep.oracles.ledger.secret_rows import shared as secrets_shared
        from lockstep.oracles.ledger.transient_paths import pytest_temporary_roots
        from lockstep.oracles.verify_session import in_turns, verifying_jobs

        self.transient = pytest_temporary_roots(session.config)
        with contextlib.ExitStack() as stack:
            stack.enter_context(secrets_shared())  # a secret in one ledger, refused in all
            self._secrets_found(own)
            if self.verifier is not None:
                stack.callback(self.verifier.ending)  # waited for at unconfigure
                self.verifier.start_queued()  # the candidates come now
                stack.enter_context(self.verifier.active())
            stack.enter_context(folder_syncs_batched())  # the ledgers' folder once, at the end
            written = in_turns(
                self.verifier,
                verifying_jobs(self.project.config.lockstep.jobs),
                [functools.partial(self._write, t, own[t.spec.name]) for t in self.targets],
            )
        for each in written:  # in the targets' order, however they were verified
            self.outcomes.extend(each.outcomes)
            self.unwritten.extend(each.unwritten)
            self.errors.extend(each.errors)
        try:  # the ledgers beyond a package's surface written: one deleted is then missed
            list_present(self.project.oracle_dir, self.project.tested)
        except (LockstepError, OSError) as e:
            self.errors.append(str(e) if isinstance(e, LockstepError) else f"{e}")
        self.secret_rows = run_summary.secret_refusals(self.reports)
        if (self.errors or self.secret_rows) and session.exitstatus == pytest.ExitCode.OK:
            # a ledger not written, or a secret met (``lockstep record`` exits 1): not green,
            # ``pytest --lockstep-record && git commit`` must stop (the summary says why)
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(trylast=True)  # after pytest's own collection at unconfigure
    def pytest_unconfigure(self) -> None:
        session_gc.thaw()
        if self.verifier is not None:  # ended at the session's finish (or never reached)
            self.verifier.close()

    def _write(self, target: _Target, own: tuple[_SpoolLine, RecordingPart]) -> _Written:
        """Merge the workers' parts (the spool, under xdist) and the controller's ``own``
        (appended last, where the spool had it), then verify and write the ledger: what
        the summary reports of it (its outcome, or that it has no ledger, or an error).

        Several targets are written at once in threads taking turns
        (:func:`~lockstep.oracles.verify_session.in_turns`): this returns what it adds to
        the summary rather than adding it, so the summary keeps the targets' order."""
        written = _Written()
        from lockstep.oracles.ledger import kind as ledger_oracle

        assert target.wrapped is not None
        parts: list[RecordingPart] = [own[1]]
        try:
            merged = self.merged.pop(target.spec.name, None)
            lines, parts, recording = merged if merged is not None else _merged(target, own)
            mode = self.options.mode
            if _first_rows(self.project, target.spec):
                beyond = target.spec.name in self.project.tested
                if beyond and not recording.rows and not recording.refused:
                    # beyond the surface: no oracle unless the suite called it, and when
                    # every such call was skipped, the summary still counts them
                    if recording.unfreezable:
                        counts = _call_counts(recording, _NO_REPORT)
                        written.unwritten.append((target.spec.name, counts))
                    return written
                mode = RecordMode.CREATE  # its first rows, whatever the run's mode
            tests_of = tests_by_row(lines)
            skipped: dict[str, int] = {}
            for line in lines:
                self.matched.update(line.matched)
                for nodeid, calls in line.skipped.items():
                    skipped[nodeid] = skipped.get(nodeid, 0) + calls
            if mode is RecordMode.FORCE:
                report, unseen = self._force(target, recording, target.wrapped.signature)
            else:
                report = ledger_oracle.write_recording(
                    self.project,
                    target.spec,
                    mode,
                    recording,
                    target.wrapped.signature,
                    transient=self.transient,
                )
                unseen = sum(1 for rid in report.unchanged if rid not in recording.rows)
            add_spilled_tests(tests_of, lines, parts, refused_ids(report))
            self.first_tests[target.spec.name] = {rid: nodes[0] for rid, nodes in tests_of.items()}
            written.outcomes.append(
                _Outcome(
                    report,
                    unseen,
                    skipped,
                    name_refused(report, tests_of),
                    _call_counts(recording, report),
                )
            )
        except LockstepError as e:
            written.errors.append(str(e))
        except msgspec.DecodeError as e:  # a part this version of lockstep did not write
            written.errors.append(f"{target.spool.name}: {e}")
        finally:
            from lockstep.oracles.ledger.spool import remove_run

            remove_spool(target.spool)
            for part in parts:
                for run in part.runs:
                    remove_run(run)
        return written

    def _secrets_found(self, own: dict[str, tuple[_SpoolLine, RecordingPart]]) -> None:
        """Every target's rows merged and scanned for secrets before any ledger is written,
        so that a secret found in one refuses the rows of every ledger that hold it (see
        :func:`lockstep.oracles.ledger.secret_rows.shared`); each merge is kept for its
        write."""
        from lockstep.oracles.ledger.secret_rows import found_in
        from lockstep.secrets import policy_for

        policy = policy_for(self.project)
        if not policy.enabled:
            return
        for target in self.targets:
            if target.wrapped is None:
                continue
            try:
                merged = _merged(target, own[target.spec.name])
                found_in(policy, merged[2].rows, target.wrapped.signature)
            except (LockstepError, msgspec.DecodeError):
                continue  # its write meets it again, and says so
            self.merged[target.spec.name] = merged

    def _force(
        self, target: _Target, recording: Recording, signature: list[Param]
    ) -> tuple[RecordReport, int]:
        """Re-record the rows this run saw; keep the ledger's other rows as they are.

        The run's rows are written as an accept's are (``--force`` narrowed to the inputs
        this run saw, one refused now dropped); the kept rows stream through the same merge
        (verified when they were recorded, they are not replayed again).
        They can only be kept under the contract they were recorded with: when the
        ledger names another function, signature or stem length, or cannot be read,
        ``force`` replaces it whole and says why its other rows are gone.
        """
        from lockstep.oracles.ledger import kind as ledger_oracle

        why_not = self._not_keepable(target.spec, recording.fn, signature)
        seen = _Seen(recording.rows, {r.id for r in recording.refused})
        report = ledger_oracle.write_recording(
            self.project,
            target.spec,
            RecordMode.FORCE,
            recording,
            signature,
            only=None if why_not else seen,
            transient=self.transient,
        )
        if why_not:
            if report.trimmed:
                report.notes.append(
                    f"force replaced the whole ledger ({why_not}): the rows this run did not "
                    "see could not be kept and are listed as trimmed"
                )
            return report, 0
        if report.trimmed:  # every unseen row was passed on: what is gone was refused
            report.notes.append(
                f"dropped the recorded row of {len(report.trimmed)} input(s) refused now: "
                f"{_shown(report.trimmed)}"
            )
            report.trimmed = []
        kept = sum(1 for rid in report.unchanged if rid not in seen)
        if kept:
            report.notes.append(
                f"kept {kept} row(s) this run did not see; {self.options.trim_flag} drops them"
            )
        return report, kept

    def _not_keepable(self, spec: LedgerSpec, fn: str, signature: list[Param]) -> str:
        """Why the ledger's rows cannot be kept under this recording's contract ("": they
        can; every row is read, none held)."""
        from lockstep.oracles.ledger import kind as ledger_oracle
        from lockstep.oracles.ledger.file import iter_rows, read_header

        path = ledger_oracle.KIND.oracle_path(self.project, spec)
        try:
            header = read_header(path)
            if header.fn != fn:
                return f"it was recorded for {header.fn!r}"
            if header.signature != signature:
                return "it was recorded against another signature"
            if header.stem_length != self.project.config.lockstep.stem_length:
                return f"it was recorded with stem_length {header.stem_length}"
            for _ in iter_rows(path, header):
                pass
        except DataError as e:
            return f"it could not be read: {e}"
        return ""

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.controller:
            return

        terminalreporter.section("lockstep ledger recording")
        if self.refusal:
            terminalreporter.write_line(self.refusal, red=True)
            return
        if self.failed:
            terminalreporter.write_line(
                f"lockstep: written although {len(self.failed)} test(s) failed or errored "
                f"({_shown(self.failed, FAILED_SHOWN)}; {self.options.allow_failures_flag})",
                yellow=True,
            )

        run_summary.write_outcomes(
            terminalreporter, self.project, self.outcomes, self.unwritten, SKIP_MARKER
        )
        unmatched = [
            p for p in self.project.config.lockstep.record_exclude if p not in self.matched
        ]
        if unmatched and self.outcomes:
            terminalreporter.write_line(
                f"  note: record_exclude entries that named no test of this run: {_shown(unmatched)}"
            )
        if self.unimported:
            terminalreporter.write_line(
                f"  note: {len(self.unimported)} member(s) of a package surface recorded no "
                "call: their module does not import here, so they are written empty (no "
                f"case): {_shown(self.unimported)}",
                yellow=True,
            )
        if self.not_callable:
            terminalreporter.write_line(
                f"  note: {len(self.not_callable)} name(s) of a package surface are not "
                "functions once imported (a name bound to a value, or to an object of the "
                "package's own callable class, whose __call__ is the member), so they are "
                f"written empty (no case): {_shown(self.not_callable)}"
            )
        if self.undefined:
            terminalreporter.write_line(
                f"  note: {len(self.undefined)} name(s) of a package surface are defined in "
                "a block this import did not run (under a try whose import failed, an if "
                f"not taken), so they are written empty (no case): {_shown(self.undefined)}"
            )
        if self.compared:
            terminalreporter.write_line(
                f"  note: {len(self.compared)} function(s) of a package surface are compared "
                "as values by the package (x == func, d[func]), so a wrapper in their place would "
                f"change what it does: not recorded, written empty: {_shown(self.compared)}"
            )
        for error in run_summary.grouped_errors(self.errors, (t.spec.name for t in self.targets)):
            terminalreporter.write_line(f"lockstep: error: {error}", red=True)
        if self.secret_rows:
            terminalreporter.write_line(run_summary.secrets_failed(self.secret_rows), red=True)


class _Seen:
    """The inputs a run saw: its rows (a row file is bisected, not listed) and the inputs
    refused because their outcome varied."""

    __slots__ = ("refused", "rows")

    def __init__(self, rows: Mapping[str, LedgerRow], refused: set[str]) -> None:
        self.rows = rows
        self.refused = refused

    def __contains__(self, rid: object) -> bool:
        return rid in self.rows or rid in self.refused


def _recording_nothing(target: str, stem_length: int) -> Wrapped:
    """An installed target that is never called: a surface member whose module does not
    import here records no call, like a member the suite does not call."""
    from lockstep.oracles.ledger.recorder import TargetRecorder
    from lockstep.oracles.ledger.wrapping import Wrapped

    return Wrapped(target, TargetRecorder(target, stem_length=stem_length), [])


_Merged: TypeAlias = tuple[list["_SpoolLine"], list["RecordingPart"], "Recording"]
"""A target's spool lines, its parts, and the recording they merge into."""


def _merged(target: _Target, own: tuple[_SpoolLine, RecordingPart]) -> _Merged:
    """The workers' parts (the spool, under xdist) and the controller's ``own`` (appended
    last, where the spool had it), merged."""
    from lockstep.oracles.ledger.merging import merge_parts
    from lockstep.oracles.ledger.part import RecordingPart

    lines: list[_SpoolLine] = []
    if target.spool.exists():  # workers' parts (a serial run has none)
        lines = [line for _, line in iter_jsonl(target.spool, _SpoolLine)]
    parts = [msgspec.json.decode(line.part, type=RecordingPart) for line in lines]
    lines.append(own[0])
    parts.append(own[1])
    return lines, parts, merge_parts(target.spec.target, parts, remove_runs=False)


def _discard(
    targets: Iterable[_Target], own: Mapping[str, tuple[_SpoolLine, RecordingPart]]
) -> None:
    """A run that writes nothing: remove the spools and every part's scratch files."""
    from lockstep.oracles.ledger.spool import remove_run

    for target in targets:
        discard_spool(target.spool)
        for run in own[target.spec.name][1].runs:
            remove_run(run)


_NO_REPORT: Final = RecordReport(oracle="", path=Path(), mode=RecordMode.CREATE)
"""The report of a member with nothing written (its counts need one for their notes)."""


def _no_counts() -> CallCounts:
    from lockstep.oracles.ledger.run_summary import CallCounts

    return CallCounts()


def _call_counts(recording: Recording, report: RecordReport) -> CallCounts:
    """What the summary needs of the merged recording, and the notes a clean one has."""
    from lockstep.oracles.ledger.run_summary import CallCounts
    from lockstep.oracles.verify import Verification
    from lockstep.oracles.verify_session import verifying_seed

    verified = Verification(verifying_seed(), {})
    written = {
        len(report.added) + len(report.replaced),
        len(report.added) + len(report.replaced) + len(report.unchanged),
        len(recording.rows),
    }
    return CallCounts(
        calls=recording.calls,
        unfreezable=dict(recording.unfreezable),
        sites=dict(recording.skip_sites),
        faults=sum(recording.faults.values()),
        routine_notes=frozenset([recording.notes()[0], *(verified.note(n) for n in written)]),
    )


def _every_spec(project: Project, flag: str) -> list[LedgerSpec]:
    """Every configured ledger (a bare ``--lockstep-record``); none is a usage error."""
    if project.config.ledger:
        return list(project.config.ledger)
    raise pytest.UsageError(
        f"lockstep: {flag}: {project.config_name} configures no [[ledger]] to record; "
        "add one with name and target (or package)"
    )


def _specs_for(project: Project, wanted: str, flag: str) -> list[LedgerSpec]:
    """The ledgers ``wanted`` names: the one with that name or target, or every target of
    the package surface with that name."""
    ledgers = project.config.ledger
    members = set(project.surfaces.get(wanted, ()))
    chosen = [s for s in ledgers if wanted in (s.name, s.target) or s.name in members]
    if chosen:
        return chosen
    known = _shown([s.name for s in ledgers]) or "none configured"
    hint = ""
    path = wanted.partition("::")[0]  # a test's node id names its file first
    if (project.root / path).exists() or Path(path).exists():
        hint = (
            f"; {wanted!r} is a test path: a bare {flag} takes the next word as a ledger name, "
            "so put it after the paths or write it with '=NAME'"
        )
    raise pytest.UsageError(
        f"lockstep: {flag}={wanted}: no [[ledger]] in {project.config_name} has that "
        f"name or target (known: {known}){hint or '; add one with name and target'}"
    )


class RecordOptions(msgspec.Struct, frozen=True, kw_only=True):
    """What the run asked for, and the command-line options it was asked with (the pytest
    layer defines them; messages here name them)."""

    wanted: list[str]
    """``--lockstep-record`` values: ledger names or targets."""
    mode: RecordMode
    allow_failures: bool
    record_flag: str
    trim_flag: str
    mode_error: Callable[[str, str], str]
    """The record command's mode message (``--new-only``, ``--trim``) in pytest's spellings."""
    allow_failures_flag: str
    record_all: bool = False
    """A bare ``--lockstep-record``: every configured ledger."""


def _first_rows(project: Project, spec: LedgerSpec) -> bool:
    """Whether ``spec``'s ledger is created by this run whatever its mode: a member of a
    package surface whose file does not exist yet (beyond the public surface, or a
    member the package gained since its surface was recorded: ``new-only`` adds it)."""
    from lockstep.oracles.ledger.format import SUFFIX

    path = project.oracle_dir / f"{spec.name}{SUFFIX}"
    if spec.name in project.tested:
        return not os.path.lexists(path)  # listed but deleted: made again if it is called
    return bool(spec.package) and not path.exists()


def start(
    config: pytest.Config, options: RecordOptions, verifier: VerifySession | None = None
) -> None:
    """Wrap the requested targets for this run (controller, plain run or xdist worker);
    the controller verifies under ``verifier`` when one was started for it."""
    from lockstep.oracles.ledger.format import SUFFIX
    from lockstep.oracles.ledger.wrapping import Installation

    project = project_for(config)
    mode = options.mode
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    controller = workerinput is None
    run_id = uuid.uuid4().hex[:12] if workerinput is None else str(workerinput.get(RUN_KEY, ""))
    if not run_id:
        return  # a worker of a controller that does not record
    specs: list[LedgerSpec] = []
    asked = [_every_spec(project, options.record_flag)] if options.record_all else []
    asked += [_specs_for(project, name, options.record_flag) for name in options.wanted]
    for chosen in asked:
        for spec in chosen:
            if spec not in specs:
                specs.append(spec)
    if controller:
        existing = [spec for spec in specs if not _first_rows(project, spec)]
        if existing:  # (the writing machinery: otherwise imported at the session's end)
            from lockstep.oracles.ledger import kind as ledger_oracle
        for spec in existing:  # (a ledger with no file yet is created whatever the mode)
            try:
                ledger_oracle.check_mode(project, spec, mode)
            except LockstepError as e:
                message = options.mode_error(str(e), spec.name)
                if len(existing) > 1 and mode is RecordMode.CREATE:  # not this one alone
                    message = f"{len(existing)} ledgers exist already, such as {message}"
                raise pytest.UsageError(f"lockstep: {message}") from None
    targets = [
        _Target(
            spec,
            project.oracle_dir / f".{spec.name}{SUFFIX}.{run_id}.spool",
        )
        for spec in specs
    ]
    plugin = LedgerRecording(
        project,
        options,
        run_id,
        controller,
        targets,
        Installation(batched=True),
        verifier=verifier if controller else None,
    )
    plugin.install()
    config.pluginmanager.register(plugin, "lockstep-ledger-recording")


__all__ = ["SKIP_MARKER", "LedgerRecording", "RecordOptions", "excluded_by", "start"]
