"""What ``lockstep mine`` and ``replay --against`` show: plain lines from their plain results."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
        f"  stopped: {report.stopped}",
        "  saturation curve (round: seconds, inputs tried, arcs, outcome classes, kept):",
    ]
    lines += [
        f"    {p.round:>3}: {p.seconds:6.2f} s {p.tried:>6} {p.arcs:>5} "
        f"{p.outcome_classes:>4} {p.kept:>5}"
        for p in report.curve
    ]
    return lines


def differential_lines(result: DifferentialResult) -> list[str]:
    """The verdict, and the smallest input on which the versions differ with both outcomes."""
    lines = [result.summary(), *result.notes]
    for found in result.differences:
        lines.append(f"  {found.origin}: {found.call}")
        lines += [f"    {line}" for line in found.explanation]
    return lines
