"""Markdown for a pull request: the review's decision table as GitHub-flavoured Markdown."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from lockstep.report.inert import inert

if TYPE_CHECKING:  # the result's type only: writing it runs no gate
    from lockstep.gates.review import Review


def cell(text: str) -> str:
    """Text made safe for one table cell: HTML escaped (a program's ``<img>`` or ``<!--``
    stays text in the pull request), control characters shown as escapes, pipes escaped,
    newlines folded."""
    text = html.escape(inert(text), quote=False)
    return text.replace("|", "\\|").replace("\n", " ")


def review_markdown(result: Review) -> str:
    """The decision table, to paste into a pull request (``lockstep review --format md``)."""
    verdict = "passes" if result.ok else "FAILS"
    lines = [
        f"### lockstep review `{cell(result.range_label)}`: {verdict}",
        "",
        f"{result.commits} commit(s), `{result.base[:10]}..{result.head[:10]}`",
        "",
        "| check | verdict | evidence |",
        "|---|---|---|",
    ]
    for row in result.rows:
        mark = "✅ pass" if row.ok else "❌ **fail**"
        evidence = "<br>".join(cell(e) for e in row.evidence)
        lines.append(f"| {cell(row.check)} | {mark} | {evidence} |")
    return "\n".join(lines) + "\n"
