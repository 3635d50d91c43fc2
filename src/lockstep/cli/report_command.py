"""Report files of a replay (``replay --report/--junit``) and the ``report`` command.

``lockstep replay --report out.html --junit out.xml`` writes both beside its usual
terminal output and keeps replay's exit code.  ``lockstep report`` is the reviewer's
command: it replays, writes the HTML page and exits 0 whatever the replay found (a
report is a document, not a gate), unless ``--fail-on-drift`` asks for replay's
verdict as the exit code.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click
import msgspec
from click.decorators import FC

from lockstep.cli.app import (
    EXIT_FAIL,
    EXIT_OK,
    REPLAY_JOBS_DEFAULT,
    chosen_time_limit,
    console,
    jobs_option_showing,
    main,
    project_from,
    replay_options,
    shard_option,
    time_limit_option,
)
from lockstep.cli.output import descriptor_one_to_stderr
from lockstep.cli.progress import progress
from lockstep.cli.revisions import RANGE
from lockstep.config import OracleSpec, Project
from lockstep.errors import LockstepError, UsageError
from lockstep.model import Outcome, ReplayOptions
from lockstep.oracles import default_jobs, kind_of
from lockstep.oracles import replay as replay_oracle
from lockstep.report.summary import Tally
from lockstep.rules import resolve_rules
from lockstep.store import atomic_write, display_path

if TYPE_CHECKING:  # the page's and JUnit's modules (jinja2...) load only when a file is asked
    from rich.console import Console

    from lockstep.cli.output import Lines
    from lockstep.report.html import (
        DifferentialSection,
        Extras,
        ReviewSection,
        SignatureSection,
        StrengthSection,
    )


def select_specs(
    project: Project, names: tuple[str, ...], *, former: bool = False
) -> list[OracleSpec]:
    """The oracles NAMES (all configured ones when none is named; ``former``: and those of
    members today's sources no longer have, ``Project.former``)."""
    if names:
        return [project.oracle(name) for name in names]
    specs = list(project.oracles(former=former))
    if not specs:
        raise UsageError(f"{project.config_name}: no oracles are configured")
    return specs


def spec_options(
    project: Project, spec: OracleSpec, options: ReplayOptions, jobs: int | None
) -> ReplayOptions:
    """``options`` with the oracle's own worker count when ``--jobs`` was not given."""
    if jobs is not None:
        return options
    return msgspec.structs.replace(options, jobs=default_jobs(spec, project.config.lockstep.jobs))


@dataclass
class ReportFiles:
    """Where a replay's report files go, and the outcomes they need, gathered as it runs.

    Passing cases are kept only for JUnit (one testcase per case); the HTML page keeps
    the failing ones.  With neither file asked for, nothing is kept.
    """

    html: Path | None = None
    junit: Path | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    started_at: float = field(default_factory=time.time)
    """When the run began (seconds since the epoch), for the page's header."""

    drawn: int = 0

    def keep(self, outcome: Outcome) -> None:
        """Keep what the files need; whole documents only for the cases the page draws."""
        if outcome.ok:
            if self.junit is not None:  # its id is all a passing testcase shows
                self.outcomes.append(Outcome(outcome.oracle, outcome.case_id, outcome.status))
            return
        if self.html is None and self.junit is None:
            return
        from lockstep.report.html import MAX_CASES

        if self.html is not None and self.drawn < MAX_CASES:
            self.drawn += 1
        elif any(d.texts is not None for d in outcome.drifts):
            drifts = tuple(dataclasses.replace(d, texts=None) for d in outcome.drifts)
            outcome = msgspec.structs.replace(outcome, drifts=drifts)
        self.outcomes.append(outcome)

    def write(
        self, project: Project, tally: Tally, out: Console | Lines, extras: Extras | None = None
    ) -> None:
        """Write each file asked for and say where it is."""
        seconds = time.monotonic() - self.started
        if self.html is not None:
            from datetime import UTC, datetime

            from lockstep.report.html import ReportRun, render_html
            from lockstep.report.revision import working_tree

            run = ReportRun(
                title=str(project.root),
                tally=tally,
                failing=tuple(o for o in self.outcomes if not o.ok),
                seconds=seconds,
                generated=datetime.fromtimestamp(self.started_at, UTC).isoformat(
                    timespec="seconds"
                ),
                tree=working_tree(project.root),
            )
            _write_report(self.html, render_html(run, extras).encode("utf-8"))
            out.print(f"report: {display_path(self.html)}")
        if self.junit is not None:
            from lockstep.report.junit import junit_xml

            _write_report(self.junit, junit_xml(self.outcomes, seconds=seconds))
            out.print(f"junit: {display_path(self.junit)}")


def _write_report(path: Path, data: bytes) -> None:
    """Write a report file, or say in one line (exit 2) that it cannot be written."""
    try:
        atomic_write(path, data)
    except (LockstepError, OSError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise UsageError(f"cannot write the report {path}: {reason}") from None


def _file_option(flag: str, dest: str, help_text: str) -> Callable[[FC], FC]:
    return click.option(
        flag,
        dest,
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        metavar="FILE",
        help=help_text,
    )


report_option = _file_option(
    "--report", "report_path", "Also write an HTML report of the run (one self-contained file)."
)
junit_option = _file_option(
    "--junit", "junit_path", "Also write JUnit XML: one testcase per case, for CI test reports."
)


@main.command()
@click.argument("names", nargs=-1)
@click.option(
    "--out",
    "out_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=Path("lockstep-report.html"),
    show_default=True,
    help="Where to write the HTML report.",
)
@junit_option
@jobs_option_showing(REPLAY_JOBS_DEFAULT)
@shard_option
@click.option(
    "--probe",
    "probe_runs",
    type=click.IntRange(min=2),
    default=None,
    metavar="N",
    help="Also probe each oracle N times (each run a fresh interpreter or process) and show "
    "its distinct signatures.",
)
@click.option(
    "--review",
    "review_range",
    default=None,
    type=RANGE,
    help="Also review RANGE (as 'lockstep review RANGE' does: BASE..HEAD, BASE...HEAD or "
    "BASE) and show its decision table.",
)
@click.option(
    "--strength",
    "with_strength",
    is_flag=True,
    help="Also measure coverage by case and show, on the source, the lines no case reaches.",
)
@click.option(
    "--mutants",
    is_flag=True,
    help="With --strength: also run the mutation score and mark the lines whose mutants "
    "survived replay (stops at --time-limit).",
)
@time_limit_option("60s", "With --mutants: stop evaluating mutants after this long (90s, 2m).")
@click.option(
    "--fail-on-drift",
    is_flag=True,
    help="Exit 1 when the replay is not green, as 'lockstep replay' does (default: exit 0).",
)
@click.pass_context
def report(
    ctx: click.Context,
    names: tuple[str, ...],
    out_path: Path,
    junit_path: Path | None,
    jobs: int | None,
    shard: str | None,
    probe_runs: int | None,
    review_range: str | None,
    with_strength: bool,
    mutants: bool,
    time_limit: str,
    old_time_limit: str | None,
    fail_on_drift: bool,
) -> None:
    """Replay every oracle (or NAMES) and write one HTML page of what moved.

    \b
    The page needs no network and no JavaScript: a summary, each failing case with
    a side-by-side diff (changed characters marked, long equal stretches folded).
    Exit 0 once the page is written, whatever the replay found; --fail-on-drift
    exits 1 when it is not green.
    """
    project = project_from(ctx)
    specs = select_specs(project, names, former=True)
    options = replay_options(jobs, shard)
    if mutants and not with_strength:
        raise UsageError("--mutants: add --strength (mutants are part of the strength section)")
    limit = chosen_time_limit(time_limit, old_time_limit) or "60s"
    seconds = _time_limit(limit) if mutants else None
    ctx.with_resource(descriptor_one_to_stderr())  # the replayed code's writes: not the report
    out = console()
    files = ReportFiles(html=out_path, junit=junit_path)
    tally = Tally()
    for spec in specs:
        tally.start(spec.name)
        with progress(out, f"replay {spec.name}") as tick:
            for outcome in replay_oracle(project, spec, spec_options(project, spec, options, jobs)):
                tally.add(outcome)
                files.keep(outcome)
                tick()
    signatures = () if probe_runs is None else probe_sections(project, specs, probe_runs, out)
    reviewed = None if review_range is None else review_section(project, review_range, jobs)
    from lockstep.report.html import Extras

    extras = Extras(
        review=reviewed,
        signatures=signatures,
        strength=strength_of(project, specs, mutants, seconds) if with_strength else None,
        differential=differential_of(project),
    )
    files.write(project, tally, out, extras)
    out.print(f"{'green' if tally.green else 'not green'}: {tally.line()}")
    sys.exit(EXIT_FAIL if fail_on_drift and not tally.green else EXIT_OK)


def probe_sections(
    project: Project, specs: list[OracleSpec], runs: int, out: Console
) -> tuple[SignatureSection, ...]:
    """Each case of each oracle probed ``runs`` times: its signatures, for the report."""
    from lockstep.probe.runs import probe_many
    from lockstep.report.html import SignatureSection

    sections: list[SignatureSection] = []
    for spec in specs:
        targets = list(kind_of(spec).probe_targets(project, spec))
        rules = resolve_rules(list(spec.rules), project, where=f"{spec.name}: rules")
        jobs = default_jobs(spec, project.config.lockstep.jobs)
        with progress(out, f"probe {spec.name}", total=len(targets) * runs) as tick:
            reports = probe_many(targets, runs=runs, jobs=jobs, rules=rules, on_run=tick)
        sections += [SignatureSection.of(report) for report in reports]
    return tuple(sections)


def _time_limit(text: str) -> float:
    from lockstep.cli.strength_command import parse_time_limit

    return parse_time_limit(text)


def strength_of(
    project: Project, specs: list[OracleSpec], mutants: bool, budget: float | None
) -> StrengthSection:
    """Coverage by case (and with ``mutants`` the mutation score) on the source, for the page."""
    from lockstep.report.strength_html import strength_section  # coverage.py: only when asked
    from lockstep.strength import MutationOptions, analyze

    options = MutationOptions(budget=budget)
    return strength_section(analyze(project, specs, mutants=mutants, options=options), project.root)


def differential_of(project: Project) -> DifferentialSection | None:
    """The last ``replay --against`` run, judged as review judges it (None when none ran)."""
    from lockstep.mine import last_run
    from lockstep.report.html import DifferentialSection

    if last_run.load(project) is None:
        return None
    from lockstep.gates.git import Git
    from lockstep.gates.review import differential_row

    try:
        head = Git(project.root).resolve("HEAD")
    except LockstepError:
        return None
    row = differential_row(project, head)
    if row is None:
        return None
    return DifferentialSection(row.ok, " ".join(row.evidence))


def review_section(project: Project, revision_range: str, jobs: int | None) -> ReviewSection:
    """The decision table of ``lockstep review RANGE``, for the report."""
    from lockstep.gates.git import Git  # only when asked: the gates' imports are not cheap
    from lockstep.gates.review import parse_range, review
    from lockstep.report.html import ReviewSection

    git = Git(project.root)
    return ReviewSection.of(
        review(
            project,
            git,
            parse_range(git, revision_range),
            replay_options(jobs, None),
            jobs_given=jobs is not None,
        )
    )
