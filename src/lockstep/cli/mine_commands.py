"""``lockstep mine``: grow a recorded oracle with generated inputs until it saturates."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click
import msgspec
from rich.console import Console
from rich.text import Text

from lockstep.cli.app import (
    EXIT_FAIL,
    EXIT_OK,
    chosen_time_limit,
    console,
    main,
    project_from,
    time_limit_option,
)
from lockstep.cli.signals import terminate_cleanly
from lockstep.gates.git import Git
from lockstep.mine import last_run
from lockstep.mine.differential import replay_against
from lockstep.mine.miner import mine as mine_oracle
from lockstep.mine.search import hypothesis_home, keep_files_in
from lockstep.oracles import kind_of
from lockstep.report.mining import differential_lines, mine_lines
from lockstep.report.terminal import record_text
from lockstep.scratch import tracked_note

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$")
_SCALE = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """``60s``, ``2m``, ``90`` (seconds) → seconds; anything else is a usage error."""
    match = _DURATION.match(text)
    if not match or float(match.group(1)) <= 0:
        raise click.BadParameter(
            f"{text!r} is not a duration such as 60s, 2m or 90", param_hint="--time-limit"
        )
    return float(match.group(1)) * _SCALE[match.group(2) or "s"]


@main.command()
@click.argument("name")
@time_limit_option(
    "60s", "Most time to spend generating (60s, 2m); mining stops earlier once saturated."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the generator.")
@click.option(
    "--mutants/--no-mutants",
    default=True,
    show_default=True,
    help="Also keep an input that kills a mutant the recorded inputs miss.",
)
@click.pass_context
def mine(
    ctx: click.Context,
    name: str,
    time_limit: str,
    old_time_limit: str | None,
    seed: int,
    mutants: bool,
) -> None:
    """Grow oracle NAME with generated inputs that reach new code or new outcomes.

    Inputs are shaped like the recorded ones and seeded with the constants in the
    target's source; an input is kept when it takes a new branch anywhere in the
    project's code, gives a new outcome class, or kills a mutant (as strength makes
    them) that no recorded or kept input kills.  The kept ones are recorded like any
    call (verified in a fresh interpreter first).  Mining stops at the time limit, or
    once three rounds add no branch, no outcome class and kill no mutant.  Exit 1 when
    some were refused.
    """
    seconds = parse_duration(chosen_time_limit(time_limit, old_time_limit) or "60s")
    project = project_from(ctx)
    spec = project.oracle(name)
    keep_files_in(hypothesis_home())
    out = console()
    _say_planted(out, project.root)
    subject = kind_of(spec).mining(project, spec)
    report = mine_oracle(
        subject, name, budget=seconds, seed=seed, root=project.root, mutants=mutants
    )
    for line in mine_lines(report):
        out.print(Text(line))
    if report.record is not None:
        from lockstep.secrets.policy import display_mask

        out.print(record_text(report.record, project.root, display_mask(project)), end="")
    refused = bool(report.record and report.record.refused)
    sys.exit(EXIT_FAIL if refused else EXIT_OK)


def _say_planted(out: Console, root: Path) -> None:
    """One note when ``.lockstep-cache/`` holds files git tracks: they arrived in a commit,
    and none of them is read."""
    note = tracked_note(root)
    if note:
        out.print(Text(f"note: {note}"))


def run_against(
    ctx: click.Context, names: tuple[str, ...], rev: str, generate: int, seed: int
) -> None:
    """``lockstep replay --against REV``: print the differential result, keep it for
    review, exit 1 when the versions differ."""
    project = project_from(ctx)
    last_run.cache_folder(project)  # a link in its place: one line, exit 2, nothing run
    keep_files_in(hypothesis_home())
    out = console()
    _say_planted(out, project.root)
    specs = project.select(names)
    with terminate_cleanly("the temporary worktree is removed"):
        result = replay_against(
            project, specs, rev, generate=generate, seed=seed, skip_unsupported=not names
        )
    for name in result.skipped:
        out.print(Text(f"{name}: not compared (its kind has no target to call directly)"))
    # the calls and outcomes quoted are behaviour: shown (and kept) as a drift is
    from lockstep.report.inert import inert
    from lockstep.secrets.policy import display_mask

    mask = display_mask(project)
    for line in differential_lines(result):
        out.print(Text(inert(mask(line))))
    stored = result.stored(Git(project.root).resolve("HEAD"))
    last_run.save(project, msgspec.structs.replace(stored, smallest=mask(stored.smallest)))
    sys.exit(EXIT_OK if result.ok else EXIT_FAIL)
