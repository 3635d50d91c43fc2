"""Plain-text rendering of outcomes for the terminal and CI logs.

Text, not escape codes: the command layer hands it to rich, which colours it
only on a real terminal, so logs and pipes stay grep-able.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from rich.table import Table
from rich.text import Text

from lockstep.canon.text import around_difference
from lockstep.diff import unified_highlights
from lockstep.model import OracleStatus, Outcome, RecordReport, Status
from lockstep.report.inert import inert
from lockstep.report.record_lines import record_segments
from lockstep.report.summary import Tally
from lockstep.store import display_path

_LABEL = {
    Status.PASS: "PASS",
    Status.DRIFT: "DRIFT",
    Status.NEW: "NEW",
    Status.MISSING: "MISSING",
    Status.ERROR: "ERROR",
    Status.STALE: "STALE",
}
_STYLE = {
    Status.PASS: "green",
    Status.DRIFT: "bold red",
    Status.NEW: "yellow",
    Status.MISSING: "yellow",
    Status.ERROR: "bold red",
    Status.STALE: "bold red",
}


def outcome_text(outcome: Outcome, *, max_diff_lines: int | None = None) -> Text:
    """A failing outcome as the user should read it: header, each drifted aspect, its diff.

    Removed and added lines are red and green, and the characters that changed within a
    line pair stand out (reverse video); styles show only on a colour terminal, so the
    plain text is the same everywhere.  With ``max_diff_lines`` a longer diff is cut there
    with a count of what was left out.
    """
    text = Text()
    text.append(f"{_LABEL[outcome.status]} ", style=_STYLE[outcome.status])
    text.append(f"{outcome.oracle}::{inert(outcome.case_id)}\n", style="bold")
    if outcome.note:
        text.append(f"  {inert(outcome.note)}\n")
    for drift in outcome.drifts:
        expected, actual = around_difference(drift.expected, drift.actual, SIDE_SHOWN)
        text.append(f"  {drift.aspect}: expected {inert(expected)}\n")
        text.append(f"  {' ' * len(drift.aspect)}       got {inert(actual)}\n")
        if drift.diff:
            text.append_text(diff_text(drift.diff.splitlines(), max_diff_lines))
        else:
            text.append(where_they_differ(drift.expected, drift.actual, len(drift.aspect)))
    return text


SIDE_SHOWN: Final = 2_000
"""Characters of each side of a drift a terminal line shows, around their first difference
(``--json`` keeps up to 20,000): arrow's zones print their whole transition tables, and
nine drifts made 88 KB of lines up to 20,030 characters."""

LONG_SIDE: Final = 100
"""Characters past which a one-line drift's two sides get a line showing where they part:
a 900-character ``repr`` of an object differing in one attribute near its end
(``_port=9000`` against ``_port='9000'``) left the eye nothing to go on without colour."""

AROUND: Final = 32
"""Characters shown before the first difference (and twice as many from it)."""


def where_they_differ(expected: str, actual: str, indent: int) -> str:
    """Under two long one-line sides, the stretch around their first difference, the two
    aligned; empty for short or multi-line sides (a diff shows those)."""
    if max(len(expected), len(actual)) <= LONG_SIDE or "\n" in expected or "\n" in actual:
        return ""
    at = next(
        (i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
        min(len(expected), len(actual)),
    )
    if at < AROUND:  # they part where each line starts: nothing hidden to point at
        return ""
    start = at - AROUND

    def stretch(side: str) -> str:
        shown = side[start : at + 2 * AROUND]
        return ("…" if start else "") + shown + ("…" if at + 2 * AROUND < len(side) else "")

    pad = " " * indent
    return (
        f"  {pad}  first difference at character {at + 1}:\n"
        f"  {pad}    expected {inert(stretch(expected))}\n"
        f"  {pad}         got {inert(stretch(actual))}\n"
    )


FOLD_HINT = "--full-diff shows every line"


def diff_text(lines: list[str], max_lines: int | None = None) -> Text:
    """A unified diff, indented, coloured, with intra-line highlights; folded past ``max_lines``."""
    text = Text()
    lines = [inert(line) for line in lines]
    shown = lines if max_lines is None or len(lines) <= max_lines else lines[:max_lines]
    for line, spans in zip(shown, unified_highlights(shown), strict=True):
        style = ""
        if line.startswith("+") and not line.startswith("+++"):
            style = "green"
        elif line.startswith("-") and not line.startswith("---"):
            style = "red"
        start = len(text)
        text.append(f"    {line}\n", style=style)
        for begin, end in spans:  # offsets after the sign; 4 spaces + sign before them
            text.stylize(f"reverse {style}", start + 5 + begin, start + 5 + end)
    if len(shown) < len(lines):
        text.append(f"    … {len(lines) - len(shown)} more lines ({FOLD_HINT})\n")
    return text


def outcome_line(outcome: Outcome) -> Text:
    """A failing outcome on one line, without its diff: ``DRIFT transform::basic.json``."""
    text = Text()
    text.append(_LABEL[outcome.status], style=_STYLE[outcome.status])
    text.append(f" {outcome.oracle}::{inert(outcome.case_id)}")
    return text


def summary_text(tally: Tally) -> Text:
    """:meth:`Tally.summary`, its verdict line in bold green or red."""
    first, *rest = tally.summary().split("\n")
    text = Text(first, style="bold green" if tally.green else "bold red")
    for line in rest:
        text.append(f"\n{line}")
    return text


def summary_table(tally: Tally) -> Table:
    table = Table(show_edge=False, box=None, pad_edge=False)
    table.add_column("oracle")
    # A stale case is rare (a re-record fixes it): its column shows only when there is one.
    shown = [s for s in Status if s is not Status.STALE or tally.total[s]]
    for status in shown:
        table.add_column(status.value, justify="right")
    many = len(tally.counts) > EVERY_ORACLE_UP_TO
    empty = 0
    for oracle, counts in tally.counts.items():
        if many and not any(counts[s] for s in shown):
            empty += 1  # a surface member the suite never called: its ledger holds no case
            continue
        table.add_row(oracle, *(str(counts[s]) if counts[s] else "·" for s in shown))
    if empty:
        table.add_row(f"… {empty} more holding no case", *("" for _ in shown))
    return table


EVERY_ORACLE_UP_TO: Final = 40
"""Oracles the summary table lists however many cases each holds; past this many (a
package's surface of hundreds of members), those holding none are counted on one line."""


def record_text(
    report: RecordReport, root: Path | None = None, mask: Callable[[str], str] | None = None
) -> Text:
    """What one ``record`` did, each category on its own line (see
    :func:`~lockstep.report.record_lines.record_segments`)."""
    text = Text()
    for segment, style in record_segments(report, root, mask):
        if style:
            text.append(segment, style=style)
        else:
            text.append(segment)
    return text


def status_table(rows: list[OracleStatus], root: Path | None = None) -> Table:
    table = Table(show_edge=False, box=None, pad_edge=False)
    for column in ("oracle", "kind", "cases", "file", "state"):
        table.add_column(column)
    for row in rows:
        if not row.present:
            state = "missing"
        elif not row.readable:
            state = "unreadable"
        else:
            state = row.state or "ok"
        if row.message:
            state += f" ({row.message})"
        table.add_row(
            row.oracle,
            row.kind,
            str(row.cases),
            display_path(row.path, root),
            state,
        )
    return table
