"""What the gates show in a terminal: guard findings, the budget table, the review table, a step.

Each function takes a gate's result and returns what the command prints, in
order: plain lines (``str``) and rich tables.  The command prints each item with
markup off, because paths, rules and evidence may hold brackets; nothing here
prints or chooses an exit code.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from lockstep.report.terminal import outcome_text

if TYPE_CHECKING:  # the results' types only: showing them runs no gate
    from lockstep.gates.budget import BudgetReport
    from lockstep.gates.guard import GuardReport
    from lockstep.gates.review import Review
    from lockstep.gates.step import StepResult

SHOWN_IMPORTERS = 6
"""Importers listed per module in the budget table before "…"."""


def guard_lines(report: GuardReport) -> list[str]:
    """Each change that mixes oracle files with production code, both sides named; or the all-clear."""
    lines: list[str] = []
    if report.tracked_cache:
        shown = ", ".join(report.tracked_cache[:5])
        more = f" and {len(report.tracked_cache) - 5} more" if len(report.tracked_cache) > 5 else ""
        lines.append(
            f"guard: git tracks lockstep's scratch files ({shown}{more}): a cache is never "
            "evidence and lockstep ignores these; git rm -r --cached .lockstep-cache"
        )
    if not report.findings:
        return lines or [f"guard: ok — {report.label}: no commits to check"]
    for finding in report.violations:
        sides = finding.sides
        lines.append(f"guard: {finding.where}: oracle files and production code change together")
        lines.append("  oracle side:")
        lines += [f"    {shown}" for shown in sides.oracle_shown()]
        lines.append("  production side:")
        lines += [f"    {path}" for path in sides.production]
    if report.violations:
        lines.append(
            "Re-recording an oracle is a change of expected behaviour: commit it on its own, "
            "before or after the refactor, never in the same change."
        )
        return lines
    if report.tracked_cache:
        return lines
    oracle = sum(len(f.sides.oracle) for f in report.findings)
    production = sum(len(f.sides.production) for f in report.findings)
    lines.append(
        f"guard: ok — {report.label}: {production} production file(s), "
        f"{oracle} oracle file(s), never in the same change"
    )
    return lines


def budget_table(report: BudgetReport) -> Table:
    """The modules under change with their fan-in, allowance and importers."""
    table = Table(title=f"change budget — {report.change}", title_justify="left")
    table.add_column("module under change")
    table.add_column("fan-in", justify="right")
    table.add_column("lines allowed", justify="right")
    table.add_column("imported by")
    for m in report.modules:
        shown = ", ".join(m.importers[:SHOWN_IMPORTERS])
        if len(m.importers) > SHOWN_IMPORTERS:
            shown += " …"
        table.add_row(Text(m.module), str(m.fan_in), str(m.allowed), Text(shown or "-"))
    return table


def budget_lines(report: BudgetReport) -> list[RenderableType]:
    """The table (when a module is under change), changed lines per file, and the verdict."""
    out: list[RenderableType] = [budget_table(report)] if report.modules else []
    for path, n in sorted(report.lines.items()):
        moved = report.moved.get(path, 0)
        split = f" ({moved} moved here, {n - moved} edited)" if moved else ""
        out.append(f"  {path}: {n} changed line(s){split}")
    out.append(("budget: ok — " if report.ok else "budget: exceeded — ") + report.summary())
    return out


def review_table(result: Review) -> Table:
    """The decision table: one row per check, its verdict and its evidence."""
    table = Table(
        title=f"lockstep review {result.range_label} ({result.commits} commit(s))",
        title_justify="left",
        show_lines=True,
    )
    table.add_column("check", overflow="fold", max_width=36)
    table.add_column("verdict")
    table.add_column("evidence", overflow="fold")
    for row in result.rows:
        verdict = Text("pass", style="green") if row.ok else Text("FAIL", style="bold red")
        table.add_row(Text(row.check), verdict, Text("\n".join(row.evidence)))
    return table


def review_verdict(result: Review) -> str:
    """``review: ok — every row passes`` or the failed rows named."""
    failed = [r.check for r in result.rows if not r.ok]
    if not failed:
        return "review: ok — every row passes"
    return f"review: rejected — {len(failed)} row(s) failed: " + "; ".join(failed)


def review_lines(result: Review) -> list[RenderableType]:
    return [review_table(result), review_verdict(result)]


def step_lines(result: StepResult) -> list[RenderableType]:
    """Probe, replay and budget, each with its evidence, then the verdict.

    A red replay shows the first failing cases of each oracle with their diffs,
    as ``lockstep replay`` prints them, and how to see the rest.
    """
    probe, replay, budget = result.probe, result.replay, result.budget
    lines: list[RenderableType] = [
        f"probe:  {'ok' if probe.ok else 'NONDETERMINISTIC'} — {probe.note}"
    ]
    lines += [
        f"  {line.oracle}/{line.case_id}: {line.variants} distinct outputs"
        for line in probe.lines
        if not line.ok
    ]
    lines.append(f"replay: {'ok' if replay.ok else 'RED'}")
    lines += [f"  {text}" for text in replay.evidence()]
    for oracle in replay.oracles:
        for outcome in oracle.first:
            shown = outcome_text(outcome)
            shown.rstrip()
            lines.append(shown)
        hidden = len(oracle.failed) - len(oracle.first)
        if hidden > 0:
            lines.append(
                f"… {hidden} more failing case(s) of {oracle.oracle}: "
                f"'lockstep replay {oracle.oracle}' shows them"
            )
    lines.append(f"budget: {'ok' if budget.ok else 'EXCEEDED'} — {budget.summary()}")
    lines.append("verdict: green — commit this step" if result.ok else "verdict: red")
    return lines


def revert_lines(saved: Path | None) -> list[str]:
    """What ``step --revert`` did with a red change: where it is saved, how to bring it back."""
    if saved is None:
        return ["nothing to revert: the working tree equals HEAD"]
    return [
        f"reverted the working tree to HEAD; the change is saved in {saved}",
        f"bring it back with: git apply {saved}",
    ]
