"""``lockstep accept TAPE --why ... --test ...``: re-record a tape whose drift is intended.

A tape change is accepted only after the reviewer's three signals are on the
screen: the outputs are identical (otherwise it is not a refactor and accept
refuses), the one-sentence delta the user gives, and the path of the new test
that pins the intended behaviour.  The ``why`` goes into the tape's history,
so the review of the oracle file shows it next to the changed calls.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lockstep.cli.app import EXIT_FAIL, EXIT_OK, console
from lockstep.config import Project
from lockstep.oracles.tape.accept import AcceptPlan, apply_accept, plan_accept
from lockstep.store import display_path


def _signals(plan: AcceptPlan, root: Path) -> str:
    verdict = "yes" if plan.outputs_identical else "NO"
    outputs = (
        f"output {plan.actual_output}"
        if plan.outputs_identical
        else f"expected {plan.expected_output}, got {plan.actual_output}"
    )
    lines = [
        f"accept {plan.oracle} ({display_path(plan.path, root)})",
        f"  1. outputs identical: {verdict} ({outputs})",
        f"  2. why: {plan.why}",
        f"  3. intentional test: {plan.test}",
        "  calls that change:",
        *(f"     {line}" for line in plan.changes),
    ]
    return "\n".join(lines)


def accept_tape(project: Project, name: str, why: str, test: Path) -> None:
    """Accept an intended drift of tape NAME: show the three signals, then re-record it.

    Refuses (exit 1) when the output changed too: that is not a refactor.
    """
    spec = project.oracle(name)
    plan = plan_accept(project, spec, why=why, test=test)
    out = console()
    if not plan.needed:
        out.print(f"{name}: the tape already matches; nothing to accept")
        sys.exit(EXIT_OK)
    out.print(_signals(plan, project.root))
    if not plan.outputs_identical:
        out.print(f"refused: the output of {name} changed, so the tape stays as recorded")
        sys.exit(EXIT_FAIL)
    apply_accept(project, spec, plan)
    out.print(
        f"accepted: {display_path(plan.path, project.root)} rewritten; the why is in its history"
    )
