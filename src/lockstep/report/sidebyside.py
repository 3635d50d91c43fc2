"""A drift as rows of a side-by-side view: what the HTML report draws.

Two sources, one shape.  When a drift carries both documents whole
(:attr:`Drift.texts`), the rows come from difflib over the lines, with every long
equal stretch folded into one :class:`Fold` ("12 equal lines") the reader may open.
Otherwise the rows are read back from the unified diff the drift carries, or built
from its one-line expected/actual values (a ledger result, a tape output).  Changed
line pairs carry intra-line spans (:func:`lockstep.diff.intraline`), so the eye goes to
the digit that moved.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Final

from lockstep.diff import Span, intraline
from lockstep.model import Drift

CONTEXT: Final = 3
"""Equal lines kept open on each side of a change; the rest of an equal stretch is folded."""

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class Segment:
    """A piece of one line; ``changed`` pieces are the intra-line highlight."""

    text: str
    changed: bool = False


@dataclass(frozen=True)
class Row:
    """One row: the expected line on the left, the actual line on the right.

    ``kind`` is ``equal``, ``change`` (both sides, edited), ``delete`` (left only),
    ``insert`` (right only) or ``gap`` (lines the diff does not show; ``note`` says so).
    """

    kind: str
    left_no: int | None = None
    left: tuple[Segment, ...] = ()
    right_no: int | None = None
    right: tuple[Segment, ...] = ()
    note: str = ""


MAX_FOLD_ROWS: Final = 100
"""Equal lines drawn inside one fold; the rest of a longer stretch is counted, not drawn, so a
one-line change in a 100,000-line document still makes a page a browser opens at once."""


@dataclass(frozen=True)
class Fold:
    """A stretch of ``count`` equal lines shown closed, opened on demand (the first
    :data:`MAX_FOLD_ROWS` drawn)."""

    rows: tuple[Row, ...]
    count: int


Item = Row | Fold


def segments(line: str, spans: list[Span]) -> tuple[Segment, ...]:
    """``line`` cut at ``spans`` into plain and highlighted pieces."""
    out: list[Segment] = []
    at = 0
    for start, end in spans:
        if start > at:
            out.append(Segment(line[at:start]))
        out.append(Segment(line[start:end], changed=True))
        at = end
    if at < len(line) or not out:
        out.append(Segment(line[at:]))
    return tuple(out)


def _pair(left: list[tuple[int | None, str]], right: list[tuple[int | None, str]]) -> list[Row]:
    """Removed and added lines side by side: paired lines are edits, the surplus one-sided."""
    rows: list[Row] = []
    for i in range(max(len(left), len(right))):
        if i < len(left) and i < len(right):
            (lno, old), (rno, new) = left[i], right[i]
            lspans, rspans = intraline(old, new)
            rows.append(Row("change", lno, segments(old, lspans), rno, segments(new, rspans)))
        elif i < len(left):
            lno, old = left[i]
            rows.append(Row("delete", lno, segments(old, [])))
        else:
            rno, new = right[i]
            rows.append(Row("insert", right_no=rno, right=segments(new, [])))
    return rows


def _equal_rows(lines: list[str], i1: int, j1: int, start: int, stop: int) -> list[Row]:
    """Rows ``start..stop`` of an equal stretch beginning at line ``i1`` (left), ``j1`` (right)."""
    return [
        Row(
            "equal",
            i1 + k + 1,
            segments(lines[i1 + k], []),
            j1 + k + 1,
            segments(lines[i1 + k], []),
        )
        for k in range(start, stop)
    ]


def _fold_equal(
    lines: list[str], i1: int, j1: int, n: int, *, first: bool, last: bool, context: int
) -> list[Item]:
    """Keep ``context`` lines next to each change open; fold the middle when it is worth it.

    Only the rows drawn are built, so a long document costs what the page shows."""
    head = 0 if first else context
    tail = 0 if last else context
    if n <= head + tail + 1:
        return list(_equal_rows(lines, i1, j1, 0, n))
    hidden = n - head - tail
    drawn: list[Row] = _equal_rows(lines, i1, j1, head, head + min(hidden, MAX_FOLD_ROWS))
    if hidden > MAX_FOLD_ROWS:
        drawn.append(Row("gap", note=f"{hidden - MAX_FOLD_ROWS} more equal lines not drawn"))
    return [
        *_equal_rows(lines, i1, j1, 0, head),
        Fold(tuple(drawn), hidden),
        *_equal_rows(lines, i1, j1, n - tail, n),
    ]


def rows_from_texts(expected: str, actual: str, *, context: int = CONTEXT) -> list[Item]:
    """Both documents line by line, long equal stretches folded."""
    old, new = expected.splitlines(), actual.splitlines()
    opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    items: list[Item] = []
    for n, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            first, last = n == 0, n == len(opcodes) - 1
            items += _fold_equal(old, i1, j1, i2 - i1, first=first, last=last, context=context)
            continue
        left: list[tuple[int | None, str]] = [(i + 1, old[i]) for i in range(i1, i2)]
        right: list[tuple[int | None, str]] = [(j + 1, new[j]) for j in range(j1, j2)]
        items += _pair(left, right)
    return items


def rows_from_unified(diff: str) -> list[Item]:
    """The rows a unified diff shows; the lines between its hunks are a ``gap`` row."""
    items: list[Item] = []
    left: list[tuple[int | None, str]] = []
    right: list[tuple[int | None, str]] = []
    lno = rno = 0

    def flush() -> None:
        items.extend(_pair(left, right))
        left.clear()
        right.clear()

    for line in diff.splitlines():
        hunk = _HUNK.match(line)
        if hunk:
            flush()
            if items:
                items.append(Row("gap", note="equal lines not shown"))
            lno, rno = int(hunk.group(1)), int(hunk.group(2))
        elif line.startswith(("--- ", "+++ ")) and not items and not left and not right:
            continue
        elif line.startswith("-"):
            left.append((lno, line[1:]))
            lno += 1
        elif line.startswith("+"):
            right.append((rno, line[1:]))
            rno += 1
        elif line.startswith(" "):
            flush()
            text = segments(line[1:], [])
            items.append(Row("equal", lno, text, rno, text))
            lno += 1
            rno += 1
        else:  # "\ No newline at end of file", "... (N more diff lines not shown)"
            flush()
            items.append(Row("gap", note=line.lstrip("\\ ")))
    flush()
    return items


def split_unified(diff: str) -> tuple[str, str]:
    """``(explanation, unified diff)``: a drift's diff may open with lines of its own (a tape's
    ``call 3: expected ..., got ...``) before the unified listing; either part may be empty."""
    if diff.startswith("--- ") and "\n+++ " in diff:
        return "", diff
    at = diff.find("\n--- ")
    if at >= 0 and "\n+++ " in diff[at + 1 :]:
        return diff[: at + 1], diff[at + 1 :]
    return diff, ""


def drift_rows(drift: Drift) -> list[Item]:
    """The side-by-side rows of one drift, from the best source it carries."""
    if drift.texts is not None:
        rows = rows_from_texts(*drift.texts)
        if any(isinstance(row, Row) and row.kind != "equal" for row in rows):
            return rows
        # The documents differ only where lines are not (a final newline): the diff says so.
    listing = split_unified(drift.diff)[1]
    if listing:
        return rows_from_unified(listing)
    return rows_from_texts(drift.expected, drift.actual)
