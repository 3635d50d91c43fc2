"""What ``lockstep mine`` and ``replay --against`` show: plain lines from their plain results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

UNKEPT_SHOWN: Final = 5
"""Reasons listed for generated inputs that could not be kept."""

if TYPE_CHECKING:  # the results' types only
    from lockstep.mine.differential import DifferentialResult
    from lockstep.mine.miner import MineReport


def mine_lines(report: MineReport) -> list[str]:
    """Coverage before and after, rows added, why it stopped, and the saturation curve."""
    lines = [
        f"mine {report.oracle} (seed {report.seed}, {report.constants} source constant(s)): "
        f"tried {report.tried} input(s), kept {report.kept}, "
        f"added {report.added} {report.unit}(s)",
        f"  coverage before: {report.before.text()}",
        f"  coverage after:  {report.after.text()}",
        *_mutant_lines(report),
        f"  stopped: {report.stopped}",
        *_unkept_lines(report),
        "  saturation curve (round: seconds, inputs tried, arcs, outcome classes, kept):",
    ]
    lines += [
        f"    {p.round:>3}: {p.seconds:6.2f} s {p.tried:>6} {p.arcs:>5} "
        f"{p.outcome_classes:>4} {p.kept:>5}"
        for p in report.curve
    ]
    return lines


def _mutant_lines(report: MineReport) -> list[str]:
    tally = report.mutants
    if tally is None:
        return []
    missed = tally.total - tally.killed_by_recorded
    return [
        f"  mutants: {tally.total} in the functions the recorded inputs run; the recorded "
        f"inputs kill {tally.killed_by_recorded}, the mined inputs {tally.killed_by_mined} "
        f"of the {missed} they miss; {tally.surviving} survive"
        + (
            f", {tally.dropped} dropped (looped or could not be switched on)"
            if tally.dropped
            else ""
        )
    ]


def _unkept_lines(report: MineReport) -> list[str]:
    if not report.unkept:
        return []
    total = sum(u.count for u in report.unkept)
    lines = [
        f"  not kept: {total} generated input(s) whose outcome could not be frozen"
        " or that did not return:"
    ]
    lines += [
        f"    {u.count} × {u.reason} (e.g. {u.example})" for u in report.unkept[:UNKEPT_SHOWN]
    ]
    if len(report.unkept) > UNKEPT_SHOWN:
        lines.append(f"    … {len(report.unkept) - UNKEPT_SHOWN} more reason(s)")
    return lines


def differential_lines(result: DifferentialResult) -> list[str]:
    """The verdict, and the smallest input on which the versions differ with both outcomes."""
    lines = [result.summary(), *result.notes]
    for found in result.differences:
        lines.append(f"  {found.origin}: {found.call}")
        lines += [f"    {line}" for line in found.explanation]
    return lines
