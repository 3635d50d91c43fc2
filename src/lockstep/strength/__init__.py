"""How much the gate would catch: coverage by case, and a mutation score of the oracles.

A green replay proves only that the recorded cases still reproduce.  Strength
tells the user, before the refactor, where the gate is blind:

* :mod:`.coverage` — which lines and branches of the code under freeze each
  recorded case reaches, and what no case reaches;
* :mod:`.mutants` and :mod:`.switch` — small injected bugs, switched on in
  place in a warm interpreter;
* :mod:`.engine` — which cases can judge each mutant, evaluation in workers
  with timeouts, budget, shards and a verdict cache;
* :mod:`.guidance` — the cases worth adding next;
* :mod:`.unfrozen` — public functions the cases call that no ledger freezes.

:func:`analyze` runs them in order and returns a :class:`StrengthReport`;
``report/strength.py`` shows it, ``cli/strength_command.py`` and the pytest
plugin call it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lockstep.config import OracleSpec, Project
from lockstep.oracles import CaseInput, kind_of
from lockstep.strength.coverage import CaseCoverage, case_ref, measure, scopes, widened
from lockstep.strength.engine import MutationOptions, MutationRun, program_files, run_mutants
from lockstep.strength.guidance import Gap, Hint, gaps, hints
from lockstep.strength.unfrozen import Unfrozen, unfrozen_surface
from lockstep.targets import root_on_path

__all__ = ["MutationOptions", "StrengthReport", "analyze"]


@dataclass(frozen=True)
class StrengthReport:
    oracles: tuple[str, ...]
    coverage: CaseCoverage
    mutation: MutationRun | None
    gaps: list[Gap]
    hints: list[Hint] = field(default_factory=list)
    inputs: Mapping[str, CaseInput] = field(default_factory=dict)
    """Each case's input (``oracle::id`` → recorded call, fixture, argv)."""
    unfrozen: list[Unfrozen] = field(default_factory=list)
    """Public functions the cases call that no configured ledger freezes, most-called first."""


def case_inputs(project: Project, specs: Sequence[OracleSpec]) -> dict[str, CaseInput]:
    """Every recorded case's input, by ``oracle::id``."""
    return {
        case_ref(spec.name, given.case_id): given
        for spec in specs
        for given in kind_of(spec).case_inputs(project, spec)
    }


def analyze(
    project: Project,
    specs: Sequence[OracleSpec],
    *,
    mutants: bool,
    options: MutationOptions | None = None,
) -> StrengthReport:
    """Measure coverage by case for ``specs``; with ``mutants``, run the mutation score too."""
    options = options or MutationOptions()
    with root_on_path(project.root):
        scope_of = scopes(project, specs)
        guarded = program_files(scope_of)  # a helper module's __main__ block never runs
        coverage = measure(project, specs, scope_of, jobs=options.jobs)
        scope_of = widened(scope_of, coverage)  # every project file the cases execute
        inputs = case_inputs(project, specs)
        run = (
            run_mutants(project, specs, coverage, scope_of, options, inputs, guarded=guarded)
            if mutants
            else None
        )
        unfrozen = unfrozen_surface(project, coverage, project.select(()))
    return StrengthReport(
        oracles=tuple(s.name for s in specs),
        coverage=coverage,
        mutation=run,
        gaps=gaps(coverage, run),
        hints=hints(coverage, run) if run else [],
        inputs=inputs,
        unfrozen=unfrozen,
    )
