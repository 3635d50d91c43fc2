"""The ``[[tape]]`` oracle: a driver's collaborator calls, frozen in ``<dir>/<name>.tape.json``.

The driver (``pkg.mod:func``) receives a :class:`lockstep.Tape`, wires spies,
watches or patches around the collaborators, and runs the target; its return
value is the *output* of the run.  Recording freezes both the calls and the
output; replay runs the driver again and compares the calls under the
oracle's mode (``ordered``, ``multiset``, ``counts``) and the output exactly.

Cases: a tape oracle has exactly one case, whose id is the oracle's name.
A driver is one scenario; several scenarios are several ``[[tape]]`` tables,
which keeps each file small and each drift message about one story.

Accepting a drift on purpose (``lockstep accept``) is split in two so the
command layer can show the reviewer's three signals *before* anything is
written: :func:`plan_accept` runs and compares, :func:`apply_accept` writes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgspec

from lockstep.canon import canonical_json
from lockstep.config import OracleSpec, Project, TapeSpec
from lockstep.diff import unified
from lockstep.errors import (
    CanonError,
    ConfigError,
    DataError,
    LockstepError,
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
from lockstep.oracles.modes import ModeWords, check_record_mode
from lockstep.oracles.status import file_status
from lockstep.oracles.tape.compare import compare, render_result, render_tape, setting_changes
from lockstep.oracles.tape.document import (
    SUFFIX,
    VERSION,
    Acceptance,
    Output,
    TapeDocument,
    check_why,
    read_document,
    write_document,
)
from lockstep.oracles.tape.recorder import CompareMode, Event, Tape
from lockstep.rules import RuleRecord, RuleSet, resolve_rules, rules_from_records
from lockstep.store import display_path
from lockstep.targets import resolve_callable, root_on_path


@dataclass(frozen=True)
class TapeRun:
    """What one run of a driver produced."""

    events: list[Event]
    output: Output


def _spec(spec: OracleSpec) -> TapeSpec:
    if not isinstance(spec, TapeSpec):
        raise UsageError(f"oracle {spec.name!r} is a {spec.kind} oracle, not a tape")
    return spec


def _where(project: Project, spec: TapeSpec) -> str:
    index = next((i for i, s in enumerate(project.config.tape) if s.name == spec.name), 0)
    return f"tape[{index}]"


_MODE_WORDS: Final = ModeWords(
    new_only="keep the tape: it has one case", force="re-record it", trim="nothing to drop"
)


def oracle_path(project: Project, spec: OracleSpec, /) -> Path:
    """``<dir>/<name>.tape.json``."""
    return project.oracle_dir / f"{spec.name}{SUFFIX}"


def config_rules(project: Project, spec: TapeSpec) -> RuleSet:
    """The rules the config names for this oracle (used when recording)."""
    return resolve_rules(spec.rules, project, where=_where(project, spec))


def _check_driver(driver: Callable[..., Any], spec: TapeSpec, where: str) -> None:
    """A driver must take the tape as its one argument.

    Otherwise calling it raises a ``TypeError`` that would be frozen as the
    target's behaviour; it is a configuration mistake, said before anything runs.
    """
    try:
        signature = inspect.signature(driver)
    except (TypeError, ValueError):
        return  # a builtin or C callable: nothing to check
    try:
        signature.bind(object())
    except TypeError:
        raise ConfigError(
            f"{where}: {spec.driver} must take the tape as its one argument, "
            f"e.g. def drive(tape): (it is {spec.driver.rpartition(':')[2]}{signature})"
        ) from None


def run_driver(project: Project, spec: TapeSpec, rules: RuleSet) -> TapeRun:
    """Call the driver with a fresh tape; a driver that raises is frozen as raising.

    Errors of lockstep itself (an argument that cannot be frozen, a driver that
    does not import or does not take the tape) are raised, never frozen: they are
    not the target's behaviour.
    """
    where = f"{project.config_name}: {_where(project, spec)}.driver"
    driver = resolve_callable(spec.driver, project.root, where=where)
    _check_driver(driver, spec, where)
    tape = Tape(rules=rules, stem_length=project.config.lockstep.stem_length)
    with root_on_path(project.root):
        try:
            value = driver(tape)
        except LockstepError:
            raise
        except Exception as exc:
            if tape.failure is not None:
                raise tape.failure from None
            output = Output(raised=tape.freeze_exception(exc))
        else:
            if tape.failure is not None:
                raise tape.failure
            output = Output(returned=tape.freeze(value, f"{spec.name} driver result"))
    return TapeRun(tape.events, output)


def render_output(output: Output) -> str:
    """``-> 1234.5`` or ``raised ValueError: bad rate``."""
    return render_result(output.returned, output.raised)


def _same_output(a: Output, b: Output) -> bool:
    return canonical_json(msgspec.to_builtins(a)) == canonical_json(msgspec.to_builtins(b))


def compare_run(
    doc: TapeDocument, run: TapeRun, mode: CompareMode, rules: list[RuleRecord]
) -> list[Drift]:
    """Every aspect in which a run differs from a recorded tape."""
    drifts = [
        Drift(
            change.aspect,
            change.recorded,
            change.asked,
            f"{change.line}; re-record it (lockstep record {doc.name} --force) to adopt it",
        )
        for change in setting_changes(doc.mode, doc.rules, mode, rules, asked_by="the config")
    ]
    lines = compare(doc.events, run.events, doc.mode)
    if lines:
        listing = unified(
            render_tape(doc.events, numbered=False),
            render_tape(run.events, numbered=False),
            label_expected="recorded tape",
            label_actual="this run",
        )
        drifts.append(
            Drift(
                "calls",
                f"{len(doc.events)} calls ({doc.mode})",
                f"{len(run.events)} calls",
                "\n".join(lines) + "\n" + listing,
            )
        )
    if not _same_output(doc.output, run.output):
        expected, actual = render_output(doc.output), render_output(run.output)
        drifts.append(Drift("output", expected, actual, f"output {actual}, expected {expected}"))
    return drifts


def _read(project: Project, spec: TapeSpec) -> TapeDocument:
    return read_document(oracle_path(project, spec), owner=spec.name, owner_kind="oracle")


# --------------------------------------------------------------------------- protocol


def record(project: Project, spec: OracleSpec, mode: RecordMode, /) -> RecordReport:
    """Run the driver and freeze its tape; never overwrites unless asked (``--force``)."""
    tape_spec = _spec(spec)
    path = oracle_path(project, tape_spec)
    report = RecordReport(tape_spec.name, path, mode)
    exists = check_record_mode(path, project.root, tape_spec.name, mode, _MODE_WORDS)
    if mode is RecordMode.TRIM or mode is RecordMode.NEW_ONLY:
        report.unchanged.append(tape_spec.name)
        if mode is RecordMode.TRIM:
            report.notes.append("a tape has one case (its driver); there is nothing to trim")
        return report
    old: TapeDocument | None = None
    if exists:
        try:
            old = _read(project, tape_spec)
        except DataError as e:
            report.notes.append(f"replaced an unreadable file ({e})")
    rules = config_rules(project, tape_spec)
    run = run_driver(project, tape_spec, rules)
    doc = TapeDocument(
        version=VERSION,
        name=tape_spec.name,
        mode=tape_spec.mode,
        rules=rules.records(),
        events=run.events,
        output=run.output,
        history=list(old.history) if old is not None else [],
    )
    if old is not None and old == doc:
        report.unchanged.append(tape_spec.name)
        return report
    write_document(path, doc)
    (report.replaced if exists else report.added).append(tape_spec.name)
    report.notes.append(
        f"{tape_spec.name}: {len(run.events)} calls recorded ({tape_spec.mode} mode), "
        f"output {render_output(run.output)}"
    )
    for name, count in sorted(rules.fired.items()):
        report.notes.append(f"rule {name} replaced {count} value(s)")
    return report


def replay(project: Project, spec: OracleSpec, options: ReplayOptions, /) -> Iterator[Outcome]:
    """Run the driver again and compare its tape with the recorded one."""
    tape_spec = _spec(spec)
    if not options.selects(tape_spec.name):
        return
    path = oracle_path(project, tape_spec)
    if not path.exists():
        yield Outcome(
            tape_spec.name,
            tape_spec.name,
            Status.ERROR,
            note=f"{display_path(path, project.root)}: not recorded yet; "
            f"run `lockstep record {tape_spec.name}` on the trusted commit",
        )
        return
    doc = _read(project, tape_spec)
    rules = rules_from_records(doc.rules, where=display_path(path, project.root))
    try:
        run = run_driver(project, tape_spec, rules)
        wanted_rules = config_rules(project, tape_spec).records()
    except (TargetError, CanonError) as e:
        yield Outcome(tape_spec.name, tape_spec.name, Status.ERROR, note=str(e))
        return
    drifts = compare_run(doc, run, tape_spec.mode, wanted_rules)
    status = Status.DRIFT if drifts else Status.PASS
    yield Outcome(tape_spec.name, tape_spec.name, status, tuple(drifts))


def case_ids(project: Project, spec: OracleSpec, /) -> Iterator[str]:
    """One case per tape oracle, named after it, once it is recorded."""
    if oracle_path(project, spec).exists():
        yield spec.name


def status(project: Project, spec: OracleSpec, /) -> OracleStatus:
    """Present, readable, one case; the remark counts the calls."""
    tape_spec = _spec(spec)
    path = oracle_path(project, tape_spec)

    def read() -> tuple[int, str]:
        doc = _read(project, tape_spec)
        accepted = f", {len(doc.history)} accepted change(s)" if doc.history else ""
        return 1, f"{len(doc.events)} calls, {doc.mode} mode{accepted}"

    return file_status(tape_spec, path, read)


# --------------------------------------------------------------------------- accept


@dataclass(frozen=True)
class AcceptPlan:
    """What ``lockstep accept`` would write, and the three signals a reviewer needs first."""

    oracle: str
    path: Path
    outputs_identical: bool
    expected_output: str
    actual_output: str
    why: str
    test: str
    """The new intentional test, relative to the project root."""
    changes: tuple[str, ...]
    """The drift lines being accepted (empty: the tape already matches)."""
    document: TapeDocument

    @property
    def needed(self) -> bool:
        """Whether there is anything to accept (or to refuse): changed calls or output."""
        return bool(self.changes) or not self.outputs_identical


def check_test(project: Project, test: Path) -> str:
    """The intentional test must exist inside the project; returns its root-relative path."""
    path = test if test.is_absolute() else Path.cwd() / test
    if not path.is_file():
        raise UsageError(
            f"--test: {test} does not exist; write the test that pins the new behaviour first"
        )
    root = project.root.resolve()
    resolved = path.resolve()
    if root not in resolved.parents:
        raise UsageError(f"--test: {test} is outside the project root {root}")
    return resolved.relative_to(root).as_posix()


def plan_accept(project: Project, spec: OracleSpec, *, why: str, test: Path) -> AcceptPlan:
    """Re-run the driver with the current config and describe what accepting would change."""
    tape_spec = _spec(spec)
    reason = check_why(why)
    test_rel = check_test(project, test)
    path = oracle_path(project, tape_spec)
    if not path.exists():
        raise UsageError(
            f"{display_path(path, project.root)}: no tape to accept a change into; "
            f"run `lockstep record {tape_spec.name}` first"
        )
    old = _read(project, tape_spec)
    rules = config_rules(project, tape_spec)
    run = run_driver(project, tape_spec, rules)
    settings = setting_changes(
        old.mode, old.rules, tape_spec.mode, rules.records(), asked_by="the config"
    )
    changes = [c.line for c in settings] + compare(old.events, run.events, tape_spec.mode)
    identical = _same_output(old.output, run.output)
    entry = Acceptance(
        why=reason, test=test_rel, outputs_identical=identical, changes=list(changes)
    )
    document = TapeDocument(
        version=VERSION,
        name=tape_spec.name,
        mode=tape_spec.mode,
        rules=rules.records(),
        events=run.events,
        output=run.output,
        history=[*old.history, entry],
    )
    return AcceptPlan(
        oracle=tape_spec.name,
        path=path,
        outputs_identical=identical,
        expected_output=render_output(old.output),
        actual_output=render_output(run.output),
        why=reason,
        test=test_rel,
        changes=tuple(changes),
        document=document,
    )


def apply_accept(plan: AcceptPlan) -> None:
    """Write the accepted tape (with its history entry); refuses a plan whose output changed."""
    if not plan.outputs_identical:
        raise UsageError(
            f"{plan.oracle}: the output changed; a tape change is accepted only "
            "when outputs are identical"
        )
    if not plan.needed:
        return
    write_document(plan.path, plan.document)
