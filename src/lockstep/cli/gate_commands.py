"""``lockstep guard | budget | review | step | brief``: the gates for the change itself.

Exit codes: 0 the gate passes; 1 it rejects the change (guard, budget or
review failed, step red); 2 usage, configuration or git errors (not a
repository, unknown or missing BASE, a detached HEAD without a range).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

import click
from rich.console import Console

from lockstep.cli.app import (
    EXIT_FAIL,
    EXIT_OK,
    REPLAY_JOBS_DEFAULT,
    console,
    deprecated,
    jobs_option_showing,
    main,
    project_from,
    replay_options,
)
from lockstep.cli.revisions import RANGE, REV
from lockstep.errors import LockstepError, UsageError
from lockstep.gates.brief import make_brief
from lockstep.gates.budget import check_budget
from lockstep.gates.git import Change, Git
from lockstep.gates.guard import guard_change, guard_commits, local_change
from lockstep.gates.review import parse_range, review
from lockstep.gates.step import save_and_restore, step
from lockstep.report.gates import budget_lines, guard_lines, revert_lines, review_lines, step_lines
from lockstep.report.markdown import review_markdown


class _PlainConsole:
    """The stdout console with markup off: paths, rules and evidence may hold brackets."""

    def __init__(self) -> None:
        self.console: Console = console()

    def print(self, obj: object = "") -> None:
        self.console.print(obj, markup=False, highlight=False)

    def print_all(self, items: Iterable[object]) -> None:
        for item in items:
            self.print(item)


def _plain() -> _PlainConsole:
    return _PlainConsole()


@main.command()
@click.argument("revision_range", metavar="[RANGE]", type=RANGE, required=False)
@click.option("--staged", is_flag=True, help="Check the staged files (for a pre-commit hook).")
@click.option(
    "--base",
    "old_base",
    default=None,
    type=REV,
    hidden=True,
    help="Deprecated: 'lockstep guard REV' checks each commit of REV..HEAD.",
)
@click.pass_context
def guard(
    ctx: click.Context, revision_range: str | None, staged: bool, old_base: str | None
) -> None:
    """Fail when one change touches both oracle files and production code.

    Oracle files: everything under the oracle folder (locks, ledgers, tapes,
    pins, blobs), the fixtures and cases files oracles name, and the oracle
    and [[rule]] tables of the configuration. Default: the working tree
    against HEAD; --staged: the index (for a pre-commit hook); RANGE: each
    commit of the range on its own (for CI).

    RANGE is BASE..HEAD, BASE...HEAD (from their merge base) or BASE (meaning
    BASE..HEAD). The deprecated --base REV means the RANGE REV.
    """
    if old_base is not None:
        deprecated("guard --base REV", "guard REV")
        if revision_range is not None:
            raise UsageError("give the range once: guard RANGE (--base is its old spelling)")
        revision_range = old_base
    if staged and revision_range:
        raise UsageError("--staged and a RANGE are exclusive: a hook checks the index, CI a range")
    project = project_from(ctx)
    git = Git(project.root)
    if revision_range is not None:
        change = parse_range(git, revision_range)
        assert isinstance(change.head, str)
        report = guard_commits(project, git, change.base, change.head, change.label)
    else:
        report = guard_change(project, git, local_change(git, staged=staged))
    _plain().print_all(guard_lines(report))
    sys.exit(EXIT_OK if report.ok else EXIT_FAIL)


@main.command()
@click.argument("revision_range", metavar="[RANGE]", type=RANGE, required=False)
@click.option(
    "--target",
    default=None,
    metavar="MODULE",
    help="The module the change is about (pkg.module, path/to/module.py or pkg.module:func), "
    "weighed even before it is edited.",
)
@click.option("--staged", is_flag=True, help="Measure only the staged change.")
@click.option(
    "--base",
    "old_base",
    default=None,
    type=REV,
    hidden=True,
    help="Deprecated: the change since REV, uncommitted edits included.",
)
@click.pass_context
def budget(
    ctx: click.Context,
    revision_range: str | None,
    target: str | None,
    staged: bool,
    old_base: str | None,
) -> None:
    """Weigh the changed lines against the fan-in of the module under change.

    Every changed production module counts and the smallest allowance wins.
    Default: the working tree against HEAD; --staged: the index; RANGE: the
    committed change BASE..HEAD (BASE alone means BASE..HEAD). Budget rows
    come from [gates] budget. This budget is one of changed lines; a time
    limit is --time-limit on mine, report and strength.

    Deprecated, still accepted: 'budget MODULE' (use --target MODULE) and
    --base REV (the change since REV, uncommitted edits included).
    """
    project = project_from(ctx)
    git = Git(project.root)
    if (
        revision_range is not None
        and ".." not in revision_range
        and not _is_revision(git, revision_range)
    ):
        deprecated("budget MODULE", "budget --target MODULE")
        if target is not None:
            raise UsageError(f"{revision_range!r} is no revision, and --target is given")
        target, revision_range = revision_range, None
    if revision_range is not None and (staged or old_base is not None):
        raise UsageError("a RANGE is a committed change: leave out --staged and --base")
    if revision_range is not None:
        change = parse_range(git, revision_range)
    else:
        change = local_change(git, staged=staged)
        if old_base is not None:
            deprecated("budget --base REV", "budget REV (the committed change REV..HEAD)")
            change = Change(git.resolve(old_base), change.head, f"{old_base}..{change.label}")
    report = check_budget(project, git, change, target)
    _plain().print_all(budget_lines(report))
    sys.exit(EXIT_OK if report.ok else EXIT_FAIL)


def _is_revision(git: Git, text: str) -> bool:
    try:
        git.resolve(text)
    except LockstepError:
        return False
    return True


@main.command("review")
@click.argument("revision_range", metavar="[RANGE]", type=RANGE, required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "md"]),
    default="table",
    show_default=True,
    help="A terminal table, or Markdown to paste into a pull request.",
)
@jobs_option_showing(REPLAY_JOBS_DEFAULT)
@click.pass_context
def review_command(
    ctx: click.Context, revision_range: str | None, fmt: str, jobs: int | None
) -> None:
    """Print the decision table for a change and exit 1 if any row fails.

    RANGE is BASE..HEAD, BASE...HEAD (from their merge base) or BASE (meaning
    BASE..HEAD); without one, the current branch against its upstream. Rows: every oracle replays green at
    HEAD; oracle files unchanged or changed alone; public signatures
    unchanged; one seam; no new reads; logging and printing unchanged;
    within budget.
    """
    project = project_from(ctx)
    git = Git(project.root)
    change = parse_range(git, revision_range)
    result = review(project, git, change, replay_options(jobs, None), jobs_given=jobs is not None)
    if fmt == "md":
        click.echo(review_markdown(result), nl=False)
    else:
        _plain().print_all(review_lines(result))
    sys.exit(EXIT_OK if result.ok else EXIT_FAIL)


@main.command("step")
@click.option(
    "--revert", is_flag=True, help="When red, save the change as a patch and restore HEAD."
)
@click.option(
    "--runs",
    type=click.IntRange(2),
    default=2,
    show_default=True,
    help="Probe runs per pinned case.",
)
@jobs_option_showing(REPLAY_JOBS_DEFAULT)
@click.pass_context
def step_command(ctx: click.Context, revert: bool, runs: int, jobs: int | None) -> None:
    """One transformation, judged: probe pinned cases, replay every oracle, check the budget.

    A red replay shows the first failing cases of each oracle with their diffs.
    """
    project = project_from(ctx)
    git = Git(project.root)
    result = step(
        project, git, runs=runs, options=replay_options(jobs, None), jobs_given=jobs is not None
    )
    out = _plain()
    out.print_all(step_lines(result))
    if result.ok:
        sys.exit(EXIT_OK)
    if revert:
        out.print_all(revert_lines(save_and_restore(git)))
    sys.exit(EXIT_FAIL)


@main.command("brief")
@click.argument("sentence")
@click.option("--target", default=None, help="The module under change (pkg.module or a path).")
@click.pass_context
def brief_command(ctx: click.Context, sentence: str, target: str | None) -> None:
    """Print the constraints to hand a coding assistant for ONE seam.

    A sentence asking for two changes ("extract the loop and rename the
    class") is refused, naming both: two changes need two freezes. What counts
    is the actions (clauses opening with a refactoring verb), not the word
    "and": "extract the search-and-replace loop" is one change.
    """
    project = project_from(ctx)
    git = Git(project.root)
    click.echo(make_brief(project, git, sentence, target).text(), nl=False)
