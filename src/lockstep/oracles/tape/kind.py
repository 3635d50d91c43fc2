"""The ``[[tape]]`` oracle: a driver's collaborator calls, frozen in ``<dir>/<name>.tape.json``.

The driver (``pkg.mod:func``) receives a :class:`lockstep.Tape`, wires spies,
watches or patches around the collaborators, and runs the target; its return
value is the *output* of the run.  Recording freezes both the calls and the
output; replay runs the driver again and compares the calls under the
oracle's mode (``ordered``, ``multiset``, ``counts``) and the output exactly.

Cases: a tape oracle has exactly one case, whose id is the oracle's name.
A driver is one scenario; several scenarios are several ``[[tape]]`` tables,
which keeps each file small and each drift message about one story.

Accepting a drift on purpose (``lockstep accept``) is :mod:`.accept`; the
file format is :mod:`.document`, the spies :mod:`.recorder`, and the
comparison of two tapes :mod:`.compare`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgspec

from lockstep.canon import same_form
from lockstep.config import OracleSpec, Project
from lockstep.diff import unified
from lockstep.errors import (
    CanonError,
    ConfigError,
    LockstepError,
    TargetError,
)
from lockstep.model import (
    Drift,
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
    spec_as,
    used_scope,
)
from lockstep.oracles.lifecycle import ModeWords, RecordHooks, record
from lockstep.oracles.stale import mismatches, rules_mismatch, stale_outcome
from lockstep.oracles.status import file_status
from lockstep.oracles.tape.compare import compare, render_result, render_tape, setting_changes
from lockstep.oracles.tape.document import (
    SUFFIX,
    Acceptance,
    Output,
    TapeDocument,
    read_document,
    secret_refusal,
    successor,
    write_document,
)
from lockstep.oracles.tape.recorder import CompareMode, Event, Tape
from lockstep.oracles.tape.spec import TapeSpec
from lockstep.oracles.verify import verify
from lockstep.rules import RuleRecord, RuleSet, resolve_rules
from lockstep.secrets import policy_for
from lockstep.store import display_path
from lockstep.targets import resolve_callable, root_on_path


@dataclass(frozen=True)
class TapeRun:
    """What one run of a driver produced."""

    events: list[Event]
    output: Output


def tape_spec(spec: OracleSpec) -> TapeSpec:
    """``spec`` as a tape oracle (anything else is a usage error)."""
    return spec_as(spec, TapeSpec, "tape")


_MODE_WORDS: Final = ModeWords(
    new_only="keep the tape: it has one case", force="re-record it", trim="nothing to drop"
)


def config_rules(project: Project, spec: TapeSpec) -> RuleSet:
    """The rules the config names for this oracle (used when recording)."""
    return resolve_rules(spec.rules, project, where=project.key(spec))


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
    where = project.where(spec, "driver")
    driver = resolve_callable(spec.driver, project.root, where=where)
    _check_driver(driver, spec, where)
    tape = Tape(rules=rules, stem_length=project.config.lockstep.stem_length)
    with root_on_path(project.root):
        try:
            value = driver(tape)
        except LockstepError:
            raise
        except (Exception, SystemExit) as exc:  # sys.exit(0) must not end a replay green
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


def same_output(a: Output, b: Output) -> bool:
    return same_form(msgspec.to_builtins(a), msgspec.to_builtins(b))


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
    if not same_output(doc.output, run.output):
        expected, actual = render_output(doc.output), render_output(run.output)
        drifts.append(Drift("output", expected, actual, f"output {actual}, expected {expected}"))
    return drifts


def read_tape(project: Project, spec: TapeSpec) -> TapeDocument:
    """The recorded tape of ``spec``, checked to be this oracle's."""
    return read_document(KIND.oracle_path(project, spec), owner=spec.name, owner_kind="oracle")


# --------------------------------------------------------------------------- protocol


def _reproduces(project: Project, tspec: TapeSpec, doc: TapeDocument, report: RecordReport) -> bool:
    """Whether the driver's tape replays green in a fresh interpreter with another hash seed."""

    def candidate(folder: Path) -> list[str]:
        write_document(folder / f"{tspec.name}{SUFFIX}", doc)
        return [tspec.name]

    checked = verify(project, tspec, candidate)
    report.notes.append(checked.note(1))
    for verdict in checked.failed():
        report.refused.append(
            Refusal(
                tspec.name,
                tspec.name,
                RefusalReason.NOT_REPRODUCED,
                detail=verdict.reason,
                cause=verdict.cause,
            )
        )
    return not checked.failed()


class TapeKind(OracleKind[TapeSpec]):
    """The collaborator calls a driver makes, in order."""

    name = "tape"
    suffix = SUFFIX

    def record_cases(
        self, project: Project, tspec: TapeSpec, mode: RecordMode, only: frozenset[str] | None, /
    ) -> RecordReport:
        """Run the driver and freeze its tape; never overwrites unless asked (``--force``).

        A tape is one case (its driver): accepting it re-records the tape (``--force``).
        """
        if only is not None and tspec.name not in only:
            return RecordReport(tspec.name, self.oracle_path(project, tspec), mode)
        return self._record(project, tspec, mode)

    def accept_reviewed(self, project: Project, tspec: TapeSpec, entry: Acceptance) -> RecordReport:
        """``lockstep accept TAPE --why --test``: :meth:`accept` of the tape, with the
        reviewer's signals added to its history -- the same record path (the oracle's lock,
        the secrets scan, the fresh interpreter's check), no side door."""
        with self.write_lock(project, tspec):
            return self._record(project, tspec, RecordMode.FORCE, accepted=entry)

    def _record(
        self,
        project: Project,
        tspec: TapeSpec,
        mode: RecordMode,
        *,
        accepted: Acceptance | None = None,
    ) -> RecordReport:
        """The tape through :func:`~lockstep.oracles.lifecycle.record`: one case, its driver."""
        path = self.oracle_path(project, tspec)
        rules = functools.cache(lambda: config_rules(project, tspec))

        def contract(old: TapeDocument) -> tuple[object, object]:
            return (old.mode, old.rules), (tspec.mode, rules().records())

        def freeze(
            todo: list[str], old: TapeDocument | None, report: RecordReport
        ) -> dict[str, TapeDocument]:
            if not todo:
                return {}
            run = run_driver(project, tspec, rules())
            doc = successor(
                old,
                name=tspec.name,
                mode=tspec.mode,
                rules=rules().records(),
                events=run.events,
                output=run.output,
                accepted=accepted,
            )
            return {tspec.name: doc}

        def write(
            old: TapeDocument | None, merged: dict[str, TapeDocument], report: RecordReport
        ) -> None:
            if mode is RecordMode.TRIM:
                report.notes.append("a tape has one case (its driver); there is nothing to trim")
            doc = merged.get(tspec.name)
            if doc is None or doc == old:
                return
            refusal = secret_refusal(policy_for(project), doc)
            if refusal is not None:
                report.refused.append(refusal)
            elif _reproduces(project, tspec, doc, report):
                write_document(path, doc)
                report.notes.append(
                    f"{tspec.name}: {len(doc.events)} calls recorded ({tspec.mode} mode), "
                    f"output {render_output(doc.output)}"
                )
                for name, count in sorted(rules().fired.items()):
                    report.notes.append(f"rule {name} replaced {count} value(s)")
                return
            report.added.clear()
            report.replaced.clear()

        hooks = RecordHooks(
            read=lambda: read_tape(project, tspec),
            cases=lambda doc: {tspec.name: doc},
            present=lambda: [tspec.name],
            freeze=freeze,
            write=write,
            contract=contract,
            what="compare mode or rules",
            unreadable_replaced=True,
        )
        return record(tspec.name, path, project.root, mode, _MODE_WORDS, hooks)

    def replay(
        self, project: Project, tspec: TapeSpec, options: ReplayOptions, /
    ) -> Iterator[Outcome]:
        """Run the driver again and compare its tape with the recorded one."""
        if not options.selects(tspec.name):
            return
        path = self.oracle_path(project, tspec)
        if not path.exists():
            yield Outcome(
                tspec.name,
                tspec.name,
                Status.ERROR,
                note=f"{display_path(path, project.root)}: not recorded yet; "
                f"run `lockstep record {tspec.name}` on the trusted commit",
            )
            return
        doc = read_tape(project, tspec)
        rules = config_rules(project, tspec)
        stale = mismatches([("mode", doc.mode, tspec.mode)]) + rules_mismatch(
            doc.rules, rules.records()
        )
        if stale:
            yield stale_outcome(tspec.name, tspec.name, stale, config_name=project.config_name)
            return
        try:
            run = run_driver(project, tspec, rules)
        except (TargetError, CanonError) as e:
            yield Outcome(tspec.name, tspec.name, Status.ERROR, note=str(e))
            return
        drifts = compare_run(doc, run, tspec.mode, rules.records())
        status = Status.DRIFT if drifts else Status.PASS
        yield Outcome(tspec.name, tspec.name, status, tuple(drifts))

    def case_ids(self, project: Project, spec: TapeSpec, /) -> Iterator[str]:
        """One case per tape oracle, named after it, once it is recorded."""
        if self.oracle_path(project, spec).exists():
            yield spec.name

    def status(self, project: Project, tspec: TapeSpec, /) -> OracleStatus:
        """Present, readable, one case; the remark counts the calls."""
        path = self.oracle_path(project, tspec)

        def read() -> tuple[int, str]:
            doc = read_tape(project, tspec)
            accepted = f", {len(doc.history)} accepted change(s)" if doc.history else ""
            return 1, f"{len(doc.events)} calls, {doc.mode} mode{accepted}"

        return file_status(tspec, path, read)

    def case_runner(self, project: Project, tspec: TapeSpec, /) -> CaseRunner:
        """Replay the tape's one case by id (a pytest item)."""

        def run(case_id: str) -> Outcome:
            for outcome in self.replay(project, tspec, ReplayOptions(only=frozenset({case_id}))):
                return outcome
            return Outcome(tspec.name, case_id, Status.MISSING, note="no such case in the tape")

        return run

    def case_inputs(self, project: Project, tspec: TapeSpec, /) -> Iterator[CaseInput]:
        """A tape's one case is its driver."""
        for case_id in self.case_ids(project, tspec):
            yield CaseInput(case_id, f"driver {tspec.driver}")

    def strength_scope(self, project: Project, tspec: TapeSpec, /) -> StrengthScope:
        """What the driver runs: the project's own modules, functions and classes its module uses
        (the target and its collaborators), or the driver's module when it uses none."""
        driver = resolve_callable(tspec.driver, project.root, where=project.where(tspec, "driver"))
        return used_scope(project, driver, own=False)


KIND: Final = TapeKind()
