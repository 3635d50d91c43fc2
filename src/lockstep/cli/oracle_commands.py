"""``record``, ``replay``, ``diff`` and ``status``: the same four verbs for every oracle kind.

``replay`` is the command run most often, in CI and in a refactoring loop, so what it
imports is kept to what a green run needs: the terminal renderers (rich's tables and
text), the secrets scanner and the report files load only when a run prints a failing
case, a table or a file (see :mod:`lockstep.cli.output`).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click
import msgspec

from lockstep.cli.app import (
    EXIT_FAIL,
    EXIT_OK,
    EXIT_USAGE,
    REPLAY_JOBS_DEFAULT,
    console,
    err_console,
    fail_usage,
    jobs_option_showing,
    json_option,
    main,
    project_from,
    replay_options,
    shard_option,
    verbosity,
)
from lockstep.cli.output import Lines, descriptor_one_to_stderr, lines
from lockstep.cli.progress import progress
from lockstep.cli.report_command import (
    ReportFiles,
    junit_option,
    report_option,
    select_specs,
    spec_options,
)
from lockstep.cli.revisions import REV
from lockstep.config import OracleSpec, Project
from lockstep.errors import UsageError
from lockstep.model import Outcome, RecordMode, RefusalReason, ReplayOptions, Status
from lockstep.oracles import kind_of
from lockstep.oracles import replay as replay_oracle
from lockstep.oracles.ledger.spec import LedgerSpec
from lockstep.oracles.pending import PendingSink, pending_path
from lockstep.report.summary import Tally
from lockstep.store import display_path

if TYPE_CHECKING:
    from rich.console import Console


def _select(project: Project, names: tuple[str, ...], *, former: bool = False) -> list[OracleSpec]:
    """:func:`select_specs`, a ``package`` ledger's name standing for its members (with
    ``former``, those today's sources no longer have too: ``Project.former``)."""
    return select_specs(project, project.expand_names(names, former=former), former=former)


@main.command()
@click.argument("names", nargs=-1)
@click.option("--new-only", is_flag=True, help="Add cases the oracle does not know; keep the rest.")
@click.option("--force", is_flag=True, help="Re-record every case, reporting what changed.")
@click.option("--trim", is_flag=True, help="Drop entries whose input is gone.")
@click.pass_context
def record(
    ctx: click.Context, names: tuple[str, ...], new_only: bool, force: bool, trim: bool
) -> None:
    """Freeze today's behaviour into oracle files (all oracles, or NAMES).

    A plain record only creates oracles that do not exist yet; over an existing
    one it refuses and asks for --new-only, --force or --trim.
    """
    asked = [
        mode
        for mode, given in (
            (RecordMode.NEW_ONLY, new_only),
            (RecordMode.FORCE, force),
            (RecordMode.TRIM, trim),
        )
        if given
    ]
    if len(asked) > 1:
        flags = " and ".join(f"--{m.value}" for m in asked)
        raise UsageError(f"record takes one mode, not {flags}: each is a different update")
    chosen = asked[0] if asked else RecordMode.CREATE
    from lockstep.oracles.verify_session import shared_verification, verifying_seed
    from lockstep.report.terminal import record_text
    from lockstep.secrets.policy import display_mask

    project = project_from(ctx)
    _warn_short_secrets(project)
    out = console()
    refused = secrets = 0
    mask = display_mask(project)
    specs = _select(project, names)
    # One verifying interpreter for the whole run; started now when a ledger's driver will
    # run (its start overlaps the driver), else when a first candidate needs it.
    driven = any(isinstance(spec, LedgerSpec) for spec in specs)
    with shared_verification(project.root, seed=verifying_seed() if driven else None):
        for spec in specs:
            with progress(out, f"record {spec.name}"):
                report = kind_of(spec).record(project, spec, chosen)
            out.print(record_text(report, project.root, mask), end="")
            secrets += sum(r.reason is RefusalReason.SECRET for r in report.refused)
            refused += len(report.refused)
    if secrets:
        out.print(
            f"{secrets} case(s) refused because they hold a secret (see above): nothing of "
            "them was written; scrub the value with [[secret]], or allow a false positive",
            markup=False,
        )
    if refused > secrets:
        out.print(
            f"{refused - secrets} input(s) refused: their behaviour varies between calls or does not "
            "reproduce in a fresh interpreter, so they are not frozen (see above); make them "
            "deterministic, name the volatile part with a rule, or record them in a clean state"
        )
    if refused:
        sys.exit(EXIT_FAIL)


def _warn_short_secrets(project: Project) -> None:
    """Name the environment variables that look secret but are too short to scrub."""
    from lockstep.secrets import scrubber_for

    short = scrubber_for(project).short
    if short:
        err_console().print(
            f"warning: {', '.join(short)} look(s) secret by name but the value is under "
            "8 characters, so it is not scrubbed: use a longer secret, or name the variable "
            "in [[secret]] env to scrub it anyway",
            markup=False,
        )


DEFAULT_SHOWN = 10
"""Failing cases printed in full per oracle; the rest are counted (a ledger whose every row
drifted the same way says so in ten rows as well as in ten thousand)."""


@main.command()
@click.argument("names", nargs=-1)
@jobs_option_showing(REPLAY_JOBS_DEFAULT)
@shard_option
@click.option(
    "--show",
    "show",
    type=click.IntRange(min=0),
    default=DEFAULT_SHOWN,
    show_default=True,
    metavar="N",
    help="Failing cases printed in full, with their diffs, per oracle; the rest are counted "
    "(0 = all).",
)
@click.option(
    "--keep-pending",
    is_flag=True,
    help="Keep each drifted case's new outcome in <dir>/.pending/ for 'lockstep accept' "
    "(the oracle is not touched).",
)
@click.option(
    "--full-diff",
    is_flag=True,
    help="Print every line of each diff (on a terminal, a diff longer than the screen is cut).",
)
@report_option
@junit_option
@click.option(
    "--against",
    type=REV,
    default=None,
    help="Differential: run the code at REV and the working tree side by side on the "
    "recorded and generated inputs (no stored output is trusted); exit 1 on a difference.",
)
@click.option(
    "--generate",
    type=click.IntRange(min=0),
    default=200,
    show_default=True,
    metavar="N",
    help="With --against: inputs to generate besides the recorded ones.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="With --against: seed.")
@json_option
@click.pass_context
def replay(
    ctx: click.Context,
    names: tuple[str, ...],
    jobs: int | None,
    shard: str | None,
    show: int,
    keep_pending: bool,
    full_diff: bool,
    report_path: Path | None,
    junit_path: Path | None,
    against: str | None,
    generate: int,
    seed: int,
    as_json: bool,
) -> None:
    """Re-run every recorded case and compare: the gate (exit 1 unless all pass).

    Exit 1 on any drift, error or missing case, and on new cases too (inputs
    the oracle does not know yet): nothing froze their behaviour, so the run is
    not green until 'lockstep record NAME --new-only' adds them. -q prints each
    failing case on one line (its id, no diff); -v lists the passing ones too.

    \b
    --json prints one document (schema 1) instead of the text:
      schema   1, the layout version; command "replay"
      verdict  "green", "DRIFT" or "NOT GREEN"; green: true when exit 0
      summary  the verdict line
      oracles  [{name, counts: {pass, drift, new, missing, error, stale}, rules_fired}]
      cases    [{oracle, case, status, note, drifts: [{aspect, expected, actual, diff}]}]
               every case that did not pass (passing ones too with -v)
    """
    if against is not None:
        if as_json:
            raise UsageError("--json: not with --against (the differential prints text)")
        from lockstep.cli.mine_commands import run_against  # imports Hypothesis: only here

        run_against(ctx, names, against, generate, seed)
    quiet = verbosity(ctx) < 0
    verbose = verbosity(ctx) > 0
    project = project_from(ctx)
    _warn_short_secrets(project)
    specs = _select(project, names, former=True)
    # one oracle: nothing another's replay changes can reach it (a ledger needs no fork)
    options = msgspec.structs.replace(replay_options(jobs, shard), alone=len(specs) == 1)
    ctx.with_resource(descriptor_one_to_stderr())  # the replayed code's writes: not the report
    out = lines()
    if as_json:
        _replay_json(project, specs, jobs, options, keep_pending, verbose, report_path, junit_path)
    if not verbose:
        _warnings_not_shown()
    tally = Tally()
    files = ReportFiles(html=report_path, junit=junit_path)
    max_diff_lines = None if full_diff or not out.is_terminal else max(10, out.console.height - 6)
    printer = _CasePrinter(out, quiet, verbose, show, max_diff_lines)
    for spec in specs:
        tally.start(spec.name)
        printer.start()
        chosen = spec_options(project, spec, options, jobs)
        pending = PendingSink(project, spec, chosen, enabled=keep_pending)
        with progress(out, f"replay {spec.name}") as tick:
            for outcome in replay_oracle(project, spec, chosen):
                tally.add(outcome)
                files.keep(outcome)
                pending.add(outcome)
                tick()
                printer.add(outcome)
        if printer.hidden:
            out.print(
                f"… {printer.hidden} more failing cases of {spec.name} not shown "
                f"(--show 0 prints all; 'lockstep diff {spec.name} ID' prints one)"
            )
        _say_pending(out, project, spec, pending.commit())
    if len(tally.counts) > 1 and not quiet:
        from lockstep.report.terminal import summary_table

        out.print(summary_table(tally))
    if not quiet:
        for line in tally.rules_lines():
            out.print(line)
    _say_summary(out, tally)
    files.write(project, tally, out)
    sys.exit(EXIT_OK if tally.green else EXIT_FAIL)


def _warnings_not_shown() -> None:
    """Warnings the replayed code raises are not printed (``-v`` prints them): furl's
    ``UserWarning``s and packaging's ``RuntimeWarning``s filled a green replay's stderr,
    each shown as raised at lockstep's own line that called the target.  Only the display
    is replaced: the filters stay as they are, so a warning the filters make an error, or
    one the code records with ``catch_warnings``, does what it did in verification."""
    import warnings

    warnings.showwarning = lambda *args, **kwargs: None


@dataclasses.dataclass
class _CasePrinter:
    """How replay prints each case: failing ones in full up to ``show`` per oracle (one line
    each with -q), passing ones only with -v."""

    out: Lines
    quiet: bool
    verbose: bool
    show: int
    max_diff_lines: int | None
    shown: int = 0
    hidden: int = 0

    def start(self) -> None:
        self.shown = self.hidden = 0

    def add(self, outcome: Outcome) -> None:
        if outcome.status is Status.PASS:
            if self.verbose:
                self.out.literal(f"pass {outcome.oracle}::{outcome.case_id}")
            return
        from lockstep.report.terminal import outcome_line, outcome_text

        if self.quiet:
            self.out.print(outcome_line(outcome))
        elif self.show and self.shown >= self.show:
            self.hidden += 1
        else:
            self.shown += 1
            self.out.print(outcome_text(outcome, max_diff_lines=self.max_diff_lines), end="")


def _replay_json(
    project: Project,
    specs: list[OracleSpec],
    jobs: int | None,
    options: ReplayOptions,
    keep_pending: bool,
    verbose: bool,
    report_path: Path | None,
    junit_path: Path | None,
) -> NoReturn:
    """``replay --json``: the same replay, one document on stdout (file notes on stderr)."""
    from lockstep.report.documents import replay_doc, to_json

    tally = Tally()
    files = ReportFiles(html=report_path, junit=junit_path)
    shown: list[Outcome] = []
    notes = err_console()
    for spec in specs:
        tally.start(spec.name)
        chosen = spec_options(project, spec, options, jobs)
        pending = PendingSink(project, spec, chosen, enabled=keep_pending)
        for outcome in replay_oracle(project, spec, chosen):
            tally.add(outcome)
            files.keep(outcome)
            pending.add(outcome)
            if verbose or not outcome.ok:
                shown.append(outcome)
        _say_pending(notes, project, spec, pending.commit())
    click.echo(to_json(replay_doc(tally, shown)), nl=False)
    files.write(project, tally, notes)
    sys.exit(EXIT_OK if tally.green else EXIT_FAIL)


def _say_summary(out: Lines, tally: Tally) -> None:
    """The verdict: in bold colour on a terminal, plain text elsewhere (no rich to load)."""
    if out.is_terminal:
        from lockstep.report.terminal import summary_text

        out.print(summary_text(tally))
    else:
        out.literal(tally.summary())


def _say_pending(out: Console | Lines, project: Project, spec: OracleSpec, kept: int) -> None:
    if kept:
        shown = display_path(pending_path(project, spec), project.root)
        out.print(
            f"{kept} drifted case(s) of {spec.name} kept for review in {shown}: "
            "'lockstep accept' reviews them"
        )


@main.command()
@click.argument("name")
@click.argument("case_id")
@click.pass_context
def diff(ctx: click.Context, name: str, case_id: str) -> None:
    """Show one case's drift: the recorded document against today's."""
    project = project_from(ctx)
    spec = project.oracle(name)
    options = ReplayOptions(only=frozenset({case_id}))
    ctx.with_resource(descriptor_one_to_stderr())  # the replayed code's writes: not the report
    outcomes = list(replay_oracle(project, spec, options))
    if not outcomes:
        raise UsageError(f"{name}: no case with id {case_id!r}")
    from lockstep.report.terminal import outcome_text

    out = console()
    for outcome in outcomes:
        if outcome.ok:
            out.print(f"{name}::{case_id}: no drift")
        else:
            out.print(outcome_text(outcome), end="")
    sys.exit(EXIT_OK if all(o.ok for o in outcomes) else EXIT_FAIL)


@main.command()
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """List the oracles, how many cases each holds, and whether each file is present and readable.

    Exit 2 when an oracle file is present but unreadable (a link counts as present:
    lockstep reads no oracle file through one), as replay exits. Status reads each file's
    structure (a ledger's header, digest and rows), not the values in its rows: a value
    that names what it must not (a class outside the project) is refused by replay, exit
    2, where status says the file reads. Pending drifts (kept by
    'replay --keep-pending') are counted; 'lockstep pending' lists them.

    \b
    --json prints one document (schema 1) instead of the table:
      schema   1, the layout version; command "status"
      config   the configuration file read
      oracles  [{name, kind, path, present, readable, cases, message, pending}]
    """
    project = project_from(ctx)
    specs = list(project.oracles(former=True))
    rows = [kind_of(spec).status(project, spec) for spec in specs]
    if as_json:
        from lockstep.oracles.pending import read_pending
        from lockstep.report.documents import status_doc, to_json

        counted = [
            (row, len(read_pending(project, spec))) for row, spec in zip(rows, specs, strict=True)
        ]
        click.echo(to_json(status_doc(project.config_path, project.root, counted)), nl=False)
        sys.exit(EXIT_USAGE if any(r.present and not r.readable for r in rows) else EXIT_OK)
    from lockstep.report.terminal import status_table

    out = console()
    if not rows:
        out.print(f"{project.config_name}: no oracles are configured")
        return
    out.print(status_table(rows, project.root))
    bad = [r for r in rows if r.present and not r.readable]
    if bad:  # a corrupt oracle file: exit 2, as replay says it
        more = f" (and {len(bad) - 1} more unreadable)" if len(bad) > 1 else ""
        fail_usage(f"{bad[0].message}{more}")
    sys.exit(EXIT_OK)


@main.command()
@click.argument("names", nargs=-1)
@json_option
@click.pass_context
def pending(ctx: click.Context, names: tuple[str, ...], as_json: bool) -> None:
    """List the drifts 'lockstep replay --keep-pending' kept, oracle by oracle.

    Every oracle, or NAMES. Each line is a case id and the aspects that
    drifted; 'lockstep diff NAME ID' shows one, 'lockstep accept' decides them.
    Exit 0 whatever is pending (a listing, not a gate).

    \b
    --json prints one document (schema 1) instead:
      schema   1, the layout version; command "pending"
      total    pending drifts in all
      oracles  [{name, path, cases: [{oracle, case, status, note,
                 drifts: [{aspect, expected, actual, diff}]}]}]
               only oracles with pending drifts
    """
    from lockstep.oracles.pending import read_pending

    project = project_from(ctx)
    specs = project.select(names)
    kept = [
        (
            spec.name,
            display_path(pending_path(project, spec), project.root),
            read_pending(project, spec),
        )
        for spec in specs
    ]
    if as_json:
        from lockstep.report.documents import pending_doc, to_json

        click.echo(to_json(pending_doc(kept)), nl=False)
        sys.exit(EXIT_OK)
    out = lines()
    total = 0
    for name, shown, entries in kept:
        if not entries:
            continue
        total += len(entries)
        out.literal(f"{name}: {len(entries)} pending drift(s) in {shown}")
        for entry in entries:
            aspects = ", ".join(d.aspect for d in entry.drifts) or "drift"
            out.literal(f"  {entry.case}  {aspects}")
    if not total:
        out.literal("nothing pending: 'lockstep replay --keep-pending' keeps drifts for review")
        sys.exit(EXIT_OK)
    out.literal(
        f"{total} pending drift(s): 'lockstep diff NAME ID' shows one; "
        "'lockstep accept NAME --case ID --why \"...\"' accepts it, "
        "'lockstep accept NAME --case ID --reject' drops it"
    )
    sys.exit(EXIT_OK)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.pass_context
def scan(ctx: click.Context, paths: tuple[Path, ...]) -> None:
    """Check oracle files and fixtures for secrets (default: the oracle folder and every
    configured fixture and cases file); exit 1 listing FILE:LINE: FIELD: DETECTOR."""
    project = project_from(ctx)
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise UsageError(f"scan: no such file or folder: {missing[0]}")
    inputs = [i.pattern for spec in project.oracles() for i in kind_of(spec).inputs(project, spec)]
    from lockstep.secrets import policy_for
    from lockstep.secrets.files import default_paths, scan_paths  # only for this command

    chosen = list(paths) or default_paths(project, inputs)
    policy = dataclasses.replace(policy_for(project), enabled=True)
    findings = scan_paths(chosen, project.root, policy)
    out = console()
    for finding in findings:
        out.print(finding.text(), markup=False)
    if findings:
        out.print(
            f"{len(findings)} secret(s) found; scrub them ([[secret]] env or pattern) and "
            're-record, or allow a false positive with [[secret]] allow = "<sha256>"',
            markup=False,
        )
        sys.exit(EXIT_FAIL)
    out.print(f"no secrets in {len(chosen)} path(s)", markup=False)
