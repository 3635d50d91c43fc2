"""The pins oracle: whole process runs — argv, env, stdin → exit code, stdout, stderr.

A billing export script's contract is its process boundary.  A ``[[pins]]``
oracle names the program (``command``), a cases file (see
:mod:`lockstep.oracles.pins.cases`), the environment keys that matter, rules and
a timeout; ``record`` freezes each case's run, ``replay`` re-runs every pin and
compares strictly.  The file format is :mod:`lockstep.oracles.pins.format`.

Record probes first: each case runs ``runs`` times (at least 2) and a case
whose normalized signature varies is refused, naming the case and the first
difference, and nothing is written.  For Python programs, record also runs
each case once under :mod:`lockstep.probe.envspy` and notes environment keys the
program read but ``env_keys`` does not declare.  With ``warm = true``
(:mod:`lockstep.oracles.pins.warm`) record also runs each case once warm and
marks the pin ``warm`` only where that run matches the cold one exactly.
"""

from __future__ import annotations

import atexit
import shlex
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Final

from lockstep.config import Project
from lockstep.errors import UsageError
from lockstep.model import (
    OracleStatus,
    Outcome,
    RecordMode,
    RecordReport,
    ReplayOptions,
    Status,
)
from lockstep.oracles import (
    CaseInput,
    CaseRunner,
    OracleInput,
    OracleKind,
    StrengthScope,
)
from lockstep.oracles.pins.cases import read_cases
from lockstep.oracles.pins.format import (
    open_pins,
)
from lockstep.oracles.pins.program import program_files
from lockstep.oracles.pins.record import _record
from lockstep.oracles.pins.replay import _check_spec, _given, _judge, _plan, case_target
from lockstep.oracles.pins.spec import PinsSpec
from lockstep.oracles.status import file_status
from lockstep.parallel import run_parallel
from lockstep.probe.runs import ProbeTarget

SUFFIX: Final = ".pins.jsonl"


class PinsKind(OracleKind[PinsSpec]):
    """Whole process runs → exit code, stdout, stderr."""

    name = "pins"
    suffix = SUFFIX
    parallel_by_default = True
    not_minable = "argv/stdin variants of whole programs are not generated"
    """A pins case is a whole program run, and its argv and stdin are free text whose
    meaning only the program's own parser knows -- variants drawn from them would mostly
    test the argument parser.  Generating them is out of scope."""

    def record_cases(
        self, project: Project, spec: PinsSpec, mode: RecordMode, only: frozenset[str] | None
    ) -> RecordReport:
        return _record(project, spec, self.oracle_path(project, spec), mode, only)

    def replay(
        self, project: Project, pins_spec: PinsSpec, options: ReplayOptions
    ) -> Iterator[Outcome]:
        """Re-run every selected case (``options.jobs`` at a time) and compare strictly.

        Each case runs exactly as ``command`` and the cases file say now; a pin whose
        recorded argv, env, stdin or folder differs from that, or a file recorded
        under other rules or another environment base, is stale: reported, not run.
        """
        _check_spec(project, pins_spec)
        pins_file = open_pins(
            self.oracle_path(project, pins_spec), project.root, name=pins_spec.name
        )
        plan = _plan(project, pins_spec, pins_file, warm=True)
        pinned: set[str] = set()

        def tasks() -> Iterator[Callable[[], Outcome]]:
            for pin in pins_file.pins():
                pinned.add(pin.id)
                if not options.selects(pin.id):
                    continue
                verdict = _judge(project, plan, pin)
                yield verdict if callable(verdict) else _given(verdict)

        try:
            yield from run_parallel(tasks(), jobs=max(1, options.jobs))
        finally:
            if plan.pool is not None:
                plan.pool.close()
        for case_id in plan.cases:
            if case_id not in pinned and options.selects(case_id):
                yield Outcome(
                    pins_spec.name,
                    case_id,
                    Status.NEW,
                    note=f"not pinned; 'lockstep record {pins_spec.name} --new-only' adds it",
                )

    def case_runner(self, project: Project, pins_spec: PinsSpec) -> CaseRunner:
        """Replay one pin by id (a pytest item): the file is indexed once, each pin read on demand.

        The index holds byte offsets, not pins, so memory stays flat however large
        the recorded outputs are.
        """
        _check_spec(project, pins_spec)
        pins_file = open_pins(
            self.oracle_path(project, pins_spec), project.root, name=pins_spec.name
        )
        plan = _plan(project, pins_spec, pins_file, warm=True)
        if plan.pool is not None:
            atexit.register(plan.pool.close)
        index = pins_file.index()

        def replay_one(case_id: str) -> Outcome:
            if case_id not in index:
                if case_id in plan.cases:
                    return Outcome(pins_spec.name, case_id, Status.NEW, note="not pinned")
                return Outcome(pins_spec.name, case_id, Status.MISSING, note="no such pin")
            verdict = _judge(project, plan, pins_file.pin_at(index, case_id))
            return verdict() if callable(verdict) else verdict

        return replay_one

    def case_ids(self, project: Project, spec: PinsSpec) -> Iterator[str]:
        """The pinned ids, streaming (one pytest item each)."""
        pins_file = open_pins(self.oracle_path(project, spec), project.root, name=spec.name)
        for pin in pins_file.pins():
            yield pin.id

    def status(self, project: Project, pins_spec: PinsSpec) -> OracleStatus:
        """Present, readable, how many pins, and whether the config's rules still match the file's."""
        path = self.oracle_path(project, pins_spec)

        def read() -> tuple[int, str]:
            pins_file = open_pins(path, project.root)
            plan = _plan(project, pins_spec, pins_file)
            count = 0
            stale: list[str] = []
            for pin in pins_file.pins():
                count += 1
                verdict = _judge(project, plan, pin)
                if not callable(verdict) and verdict.status is Status.STALE:
                    stale.append(pin.id)
            if not stale:
                return count, ""
            fields = ", ".join(sorted({m.field for m in plan.header_stale})) or "cases"
            return count, (
                f"{len(stale)} stale (recorded {fields} differ from the configuration and cases "
                f"now: {', '.join(stale[:3])}{', …' if len(stale) > 3 else ''}); "
                "'lockstep record --force' re-records them"
            )

        return file_status(pins_spec, path, read)

    def probe_targets(self, project: Project, pins_spec: PinsSpec) -> tuple[ProbeTarget, ...]:
        """Every configured case as ``lockstep probe NAME`` runs it, labelled ``NAME::id``."""
        _check_spec(project, pins_spec)
        targets = tuple(
            replace(case_target(project, pins_spec, case), label=f"{pins_spec.name}::{case.id}")
            for case in read_cases(project, pins_spec)
        )
        if not targets:
            raise UsageError(f"{pins_spec.name}: the cases file has no [[case]]")
        return targets

    def case_inputs(self, project: Project, pins_spec: PinsSpec) -> Iterator[CaseInput]:
        """Each configured case: its argv (and stdin), as the cases file gives them."""
        for case in read_cases(project, pins_spec):
            argv = shlex.join([*pins_spec.command, *case.argv])
            stdin = f" < {len(case.stdin)} bytes of stdin" if case.stdin else ""
            yield CaseInput(case.id, f"{argv}{stdin}", (*case.argv, case.stdin))

    def strength_scope(self, project: Project, spec: PinsSpec) -> StrengthScope:
        """The program's Python: a ``script.py`` or ``-m module`` of the command, and the project's
        modules it imports (found from its import statements, without running it)."""
        return StrengthScope(program_files(project.root, spec.command), False)

    def inputs(self, project: Project, pins_spec: PinsSpec) -> tuple[OracleInput, ...]:
        """The cases file: changing a case re-records the pins."""
        return (OracleInput(pins_spec.cases, f"cases of pins {pins_spec.name!r}"),)


KIND: Final = PinsKind()
