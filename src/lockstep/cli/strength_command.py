"""``lockstep strength``: how much the gate would catch, before the refactor.

``--coverage`` (the default) shows which lines and branches no recorded case
reaches; ``--mutants`` adds a mutation score, every survivor and the cases worth
adding.  The command reports; it does not gate: exit 0 unless the input is bad
(exit 2).
"""

from __future__ import annotations

import json
import os
import re

import click

from lockstep.cli.app import (
    EXIT_OK,
    chosen_time_limit,
    console,
    default_jobs,
    jobs_option_showing,
    main,
    project_from,
    replay_options,
    time_limit_option,
)
from lockstep.config import OracleSpec, Project
from lockstep.errors import UsageError
from lockstep.oracles import kind_of, record_command
from lockstep.report.strength import report_json, report_lines
from lockstep.store import display_path
from lockstep.strength import MutationOptions, analyze

_DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h)?\s*$")
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_time_limit(text: str) -> float:
    """``60s``, ``2m``, ``1.5h`` or plain seconds; anything else is a usage error."""
    match = _DURATION.match(text)
    if not match or float(match.group(1)) <= 0:
        raise click.BadParameter(
            f"expected a duration such as 60s, 2m or 90, got {text!r}", param_hint="--time-limit"
        )
    return float(match.group(1)) * _SECONDS[match.group(2)]


def _select(project: Project, names: tuple[str, ...]) -> list[OracleSpec]:
    specs = project.select(names)
    if not specs:
        raise UsageError(f"{project.config_name}: no oracles are configured")
    for spec in specs:
        path = kind_of(spec).oracle_path(project, spec)
        if not os.path.lexists(path):  # a link to nothing: reading it says what is wrong
            raise UsageError(
                f"{display_path(path, project.root)} is not recorded yet: run "
                f"'{record_command(spec)}' first (strength measures recorded cases)"
            )
    return specs


@main.command()
@click.argument("names", nargs=-1)
@click.option(
    "--coverage",
    "mode",
    flag_value="coverage",
    default=True,
    help="Lines and branches no case reaches (the default).",
)
@click.option(
    "--mutants",
    "mode",
    flag_value="mutants",
    help="Also inject mutants and report which survive replay.",
)
@jobs_option_showing("one per core")
@click.option(
    "--shard",
    default=None,
    metavar="K/N",
    help="Evaluate only slice K of N of the mutants (deterministic), for CI matrices.",
)
@time_limit_option(
    None, "Stop evaluating mutants after this long (60s, 2m); the score stays honest."
)
@click.option(
    "--no-cache", is_flag=True, help="Evaluate every mutant again (ignore .lockstep-cache/)."
)
@click.option(
    "--show",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Survivors and suggestions listed.",
)
@click.option("--lines", "per_line", is_flag=True, help="List, per line, which cases reach it.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@click.pass_context
def strength(
    ctx: click.Context,
    names: tuple[str, ...],
    mode: str,
    jobs: int | None,
    shard: str | None,
    time_limit: str | None,
    old_time_limit: str | None,
    no_cache: bool,
    show: int,
    per_line: bool,
    as_json: bool,
) -> None:
    """How much the gate would catch: coverage by case, and with --mutants a mutation score.

    \b
    Every oracle, or NAMES.  Mutants are evaluated in --jobs worker processes
    (default: one per core); --shard K/N evaluates one slice of them.
    --json prints the report as one JSON document.  The report ends with the
    unfrozen surface: public functions the cases call that no ledger freezes,
    ranked by how often the cases call them.
    """
    limit = chosen_time_limit(time_limit, old_time_limit)
    seconds = parse_time_limit(limit) if limit is not None else None
    project = project_from(ctx)
    specs = _select(project, names)
    replay = replay_options(jobs, shard)
    options = MutationOptions(
        jobs=replay.jobs if jobs is not None else default_jobs(),
        shard=replay.shard,
        budget=seconds,
        cache=not no_cache,
    )
    report = analyze(project, specs, mutants=mode == "mutants", options=options)
    out = console()
    if as_json:
        click.echo(json.dumps(report_json(report, project.root), indent=2, ensure_ascii=False))
    else:
        for item in report_lines(report, project.root, shown=show, per_line=per_line):
            out.print(item, markup=False)
    ctx.exit(EXIT_OK)
