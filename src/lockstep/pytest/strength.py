"""``pytest --lockstep-strength``: the strength summary of every recorded oracle, at the end.

After the run, every oracle whose file exists is measured (coverage by case)
and scored (mutants, within ``--lockstep-strength-budget``), and the same
report ``lockstep strength --mutants`` prints is written to the terminal
summary.  Only the controlling process does it (never an xdist worker).
"""

from __future__ import annotations

import pytest

from lockstep.errors import LockstepError
from lockstep.pytest.project import oracles_for, project_for

OPTION = "--lockstep-strength"
BUDGET_OPTION = "--lockstep-strength-budget"


def addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lockstep")
    group.addoption(
        OPTION,
        action="store_true",
        default=False,
        help="At the end, print how much the lockstep gate would catch (coverage, mutants).",
    )
    group.addoption(
        BUDGET_OPTION,
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="Time allowed for mutants with --lockstep-strength (default 60).",
    )


def terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if not config.getoption(OPTION) or hasattr(config, "workerinput"):
        return
    # Only when asked: strength and its report import coverage (the plugin stays light).
    from lockstep.oracles import kind_of
    from lockstep.report.strength import report_lines, summary_line
    from lockstep.strength import MutationOptions, analyze

    project = project_for(config)
    specs = [s for s in oracles_for(config) if kind_of(s).oracle_path(project, s).exists()]
    terminalreporter.write_sep("-", "lockstep strength")
    if not specs:
        terminalreporter.write_line("lockstep strength: no recorded oracle to measure")
        return
    try:
        report = analyze(
            project,
            specs,
            mutants=True,
            options=MutationOptions(budget=config.getoption(BUDGET_OPTION)),
        )
    except LockstepError as e:
        terminalreporter.write_line(f"lockstep strength: {e}")
        return
    for item in report_lines(report, project.root, shown=10):
        text = item if isinstance(item, str) else getattr(item, "plain", str(item))
        terminalreporter.write_line(text)
    terminalreporter.write_line(summary_line(report))
