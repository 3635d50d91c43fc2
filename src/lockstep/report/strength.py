"""What ``lockstep strength`` shows: reached and unreached code, survivors, next cases; or JSON.

The terminal report reads top-down as the user acts on it: what no case
reaches (with the source), which branches no case takes, the mutation score,
each survivor as a two-line diff with whether a case reaches it, and last the
cases worth adding.  Functions return lines and rich renderables; nothing here
prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.text import Text

from lockstep.store import display_path
from lockstep.strength.engine import Verdict

if TYPE_CHECKING:  # the report's types only: showing it runs nothing
    from lockstep.strength import StrengthReport
    from lockstep.strength.coverage import FileCoverage
    from lockstep.strength.engine import MutantResult, MutationRun
    from lockstep.strength.guidance import Gap, Hint

SHOWN_CASES = 3
"""Case ids listed per line before "…"."""
SHOWN_JSON = 10
"""Cases listed per mutant in JSON (``reached_by`` counts them all; ``lines`` lists them all)."""


def _cases(cases: tuple[str, ...] | list[str]) -> str:
    shown = ", ".join(cases[:SHOWN_CASES])
    more = len(cases) - SHOWN_CASES
    return f"{shown}, … (+{more})" if more > 0 else shown


def _branch_target(to: int) -> str:
    return "the exit" if to < 0 else f"line {to}"


def _ranges(lines: list[int]) -> str:
    parts: list[str] = []
    start = prev = None
    for line in lines:
        if start is None:
            start = prev = line
        elif prev is not None and line == prev + 1:
            prev = line
        else:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = line
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(parts)


def coverage_lines(report: StrengthReport, root: Path, *, per_line: bool) -> list[RenderableType]:
    out: list[RenderableType] = []
    cov = report.coverage
    out.append(
        Text(
            f"strength: {', '.join(report.oracles)} — {len(cov.cases)} case(s), "
            f"{cov.reached():.0%} of statements reached",
            style="bold",
        )
    )
    for note in cov.notes:
        out.append(f"  note: {note}")
    if cov.failing:
        out.append(
            f"  note: {len(cov.failing)} case(s) do not replay green now and judge no mutant: "
            f"{_cases(list(cov.failing))}"
        )
    for path, fc in cov.files.items():
        out.extend(_file_lines(fc, display_path(path, root), per_line=per_line))
    return out


def _file_lines(fc: FileCoverage, shown: str, *, per_line: bool) -> list[RenderableType]:
    unreached = fc.unreached()
    reached = len(fc.statements) - len(unreached)
    out: list[RenderableType] = [
        f"coverage: {shown}: {reached} of {len(fc.statements)} statements reached, "
        f"{len(fc.missing_branches)} branch(es) never taken"
    ]
    if unreached:
        out.append(f"  no case reaches lines {_ranges(unreached)}:")
        out.extend(f"    {line:>5} | {fc.text(line)}" for line in unreached)
    if fc.missing_branches:
        out.append("  branches no case takes:")
        for line, to in fc.missing_branches:
            out.append(
                f"    {line:>5} | {fc.text(line).strip()}   (never goes to {_branch_target(to)}; "
                f"reached by {_cases(list(fc.reached_by.get(line, ())))})"
            )
    if per_line:
        out.append("  cases reaching each line:")
        for line in sorted(fc.statements):
            cases = fc.reached_by.get(line, ())
            who = _cases(list(cases)) if cases else ("(import)" if line in fc.at_import else "-")
            out.append(f"    {line:>5} {len(cases):>4} | {fc.text(line)}   [{who}]")
    return out


def _counts(run: MutationRun) -> str:
    counts = ", ".join(f"{run.count(v)} {v.value}" for v in Verdict if run.count(v))
    rate = run.evaluated / run.seconds if run.seconds > 0 else 0.0
    cached = sum(1 for r in run.results if r.cached)
    return (
        f"{len(run.results)} mutants: {counts} — score {run.score:.0%} of {run.judged} judged "
        f"({run.evaluated} evaluated in {run.seconds:.1f}s, {rate:.0f}/s; {cached} from cache)"
    )


def _input(report: StrengthReport, ref: str) -> str:
    given = report.inputs.get(ref)
    if given is None:
        return ref
    text = given.text if len(given.text) <= 100 else given.text[:99] + "…"
    return f"{ref}: {text}"


def _survivor(report: StrengthReport, hint: Hint, root: Path) -> list[RenderableType]:
    r = hint.result
    m = r.mutant
    where = f"{display_path(m.file, root)}:{m.line}"
    within = f" in {hint.function}" if hint.function else ""
    if r.reached_by:
        why = (
            f"reached by {_cases(list(r.reached_by))}: the comparison is too weak here "
            "(a rule, a tolerance or loose mode hides it), or no case sits where it differs"
        )
    else:
        why = f"no case reaches line {m.line}: add one"
    out: list[RenderableType] = [f"  {where}{within}: {m.operator} — {why}"]
    out.append(Text(f"    - {m.before.strip()}", style="red"))
    out.append(Text(f"    + {m.after.strip()}", style="green"))
    if hint.nearest_case and not r.reached_by:
        out.append(
            f"    nearest recorded case (reaches line {hint.nearest_line}): "
            f"{_input(report, hint.nearest_case)}"
        )
    return out


def mutation_lines(report: StrengthReport, root: Path, *, shown: int) -> list[RenderableType]:
    run = report.mutation
    if run is None:
        return []
    out: list[RenderableType] = [Text(_counts(run), style="bold")]
    if run.budget_hit:
        left = sum(1 for r in run.results if r.verdict is Verdict.NOT_RUN)
        out.append(
            f"  budget reached: {left} mutant(s) not run; the score counts only the "
            "judged ones (run again: cached verdicts are kept)"
        )
    out.extend(f"  note: {n}" for n in run.notes)
    errors = [r for r in run.results if r.verdict in (Verdict.ERROR, Verdict.TIMEOUT)]
    for r in errors[:shown]:
        out.append(
            f"  {r.verdict.value}: {display_path(r.mutant.file, root)}:{r.mutant.line} {r.note}"
        )
    if report.hints:
        out.append("survivors:")
        for hint in report.hints[:shown]:
            out.extend(_survivor(report, hint, root))
        if len(report.hints) > shown:
            out.append(f"  … {len(report.hints) - shown} more (--show N, or --json for all)")
    return out


def guidance_lines(report: StrengthReport, root: Path, *, shown: int) -> list[RenderableType]:
    gaps = report.gaps
    if not gaps:
        return []
    out: list[RenderableType] = [Text("next cases to add (most survivors first):", style="bold")]
    for n, gap in enumerate(gaps[:shown], start=1):
        out.append(f"  {n}. {_gap_text(report, gap, root)}")
    return out


def _gap_text(report: StrengthReport, gap: Gap, root: Path) -> str:
    span = f"{gap.first}" if gap.first == gap.last else f"{gap.first}-{gap.last}"
    where = f"{display_path(gap.file, root)}:{span}"
    within = f" in {gap.function}" if gap.function else " (module level)"
    survivors = f" — {gap.survivors} survivor(s)" if gap.survivors else ""
    if gap.nearest_case:
        how = f"; vary the input of {_input(report, gap.nearest_case)}"
    elif gap.function:
        how = f"; no recorded case runs {gap.function}: record a call that does"
    else:
        how = ""
    return f"{where}{within}{survivors}{how}"


def unfrozen_lines(report: StrengthReport, root: Path, *, shown: int) -> list[RenderableType]:
    """Public functions the cases call that no ledger freezes, most-called first."""
    found = report.unfrozen
    if not found:
        return []
    out: list[RenderableType] = [
        Text(
            f"unfrozen surface: {len(found)} public function(s) the cases call that no "
            "ledger freezes (most-called first):",
            style="bold",
        )
    ]
    for u in found[:shown]:
        where = f"{display_path(u.file, root)}:{u.line}"
        times = f"{u.calls} call(s) from " if u.calls is not None else ""
        out.append(
            f"  {u.target} ({where}) — {times}{len(u.cases)} case(s), "
            f"e.g. {_input(report, u.cases[0])}"
        )
    if len(found) > shown:
        out.append(f"  … {len(found) - shown} more (--show N, or --json for all)")
    out.append(
        f'  freeze one with [[ledger]] target = "{found[0].target}", or the whole package '
        "with [[ledger]] package = ..."
    )
    return out


def report_lines(
    report: StrengthReport, root: Path, *, shown: int = 20, per_line: bool = False
) -> list[RenderableType]:
    return [
        *coverage_lines(report, root, per_line=per_line),
        *mutation_lines(report, root, shown=shown),
        *guidance_lines(report, root, shown=shown),
        *unfrozen_lines(report, root, shown=shown),
    ]


def summary_line(report: StrengthReport) -> str:
    """One line for the end of a pytest run."""
    cov = f"{report.coverage.reached():.0%} of statements reached by {len(report.coverage.cases)} case(s)"
    if report.mutation is None:
        return f"lockstep strength: {cov}"
    return f"lockstep strength: {cov}; {_counts(report.mutation)}"


# ---------------------------------------------------------------------- JSON


def _mutant_json(r: MutantResult, root: Path) -> dict[str, Any]:
    m = r.mutant
    return {
        "file": display_path(m.file, root),
        "line": m.line,
        "function": m.scope,
        "operator": m.operator,
        "before": m.before,
        "after": m.after,
        "verdict": r.verdict.value,
        "killed_by": r.killed_by,
        "reached_by": len(r.reached_by),
        "reaching_cases": list(r.reached_by[:SHOWN_JSON]),
        "note": r.note,
        "cached": r.cached,
    }


def _text(report: StrengthReport, ref: str) -> str:
    given = report.inputs.get(ref)
    return given.text if given is not None else ""


def report_json(report: StrengthReport, root: Path) -> dict[str, Any]:
    cov = report.coverage
    files = []
    for path, fc in cov.files.items():
        files.append(
            {
                "file": display_path(path, root),
                "statements": len(fc.statements),
                "unreached": [{"line": n, "text": fc.text(n)} for n in fc.unreached()],
                "missing_branches": [
                    {"line": line, "to": to, "text": fc.text(line)}
                    for line, to in fc.missing_branches
                ],
                "at_import": sorted(fc.at_import),
                "lines": {str(n): list(c) for n, c in sorted(fc.reached_by.items())},
            }
        )
    data: dict[str, Any] = {
        "oracles": list(report.oracles),
        "cases": len(cov.cases),
        "failing_cases": list(cov.failing),
        "reached": round(cov.reached(), 4),
        "files": files,
        "notes": list(cov.notes),
        "next_cases": [
            {
                "file": display_path(g.file, root),
                "first": g.first,
                "last": g.last,
                "function": g.function,
                "survivors": g.survivors,
                "nearest_case": g.nearest_case,
                "nearest_input": _text(report, g.nearest_case),
            }
            for g in report.gaps
        ],
        "unfrozen_surface": [
            {
                "target": u.target,
                "file": display_path(u.file, root),
                "line": u.line,
                "cases": len(u.cases),
                "calls": u.calls,
                "example_case": u.cases[0],
                "example_input": _text(report, u.cases[0]),
            }
            for u in report.unfrozen
        ],
    }
    run = report.mutation
    if run is not None:
        data["mutants"] = {
            "total": len(run.results),
            "counts": {v.value: run.count(v) for v in Verdict},
            "score": round(run.score, 4),
            "judged": run.judged,
            "evaluated": run.evaluated,
            "seconds": round(run.seconds, 3),
            "budget_hit": run.budget_hit,
            "notes": list(run.notes),
            "results": [_mutant_json(r, root) for r in run.results],
            "survivors": [
                {
                    **_mutant_json(h.result, root),
                    "nearest_case": h.nearest_case,
                    "nearest_line": h.nearest_line,
                    "nearest_input": _text(report, h.nearest_case),
                }
                for h in report.hints
            ],
        }
    return data
