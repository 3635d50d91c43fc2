"""Document diffs for drift: what a reviewer reads instead of two hashes.

A drift is only useful if it shows *what* moved.  Two JSON documents are
pretty-printed with sorted keys before diffing, so a reordered key is not
noise and a changed value stands on its own line; text is diffed line by line;
binary gets a short hex summary around the first differing byte.
"""

from __future__ import annotations

import bisect
import difflib
import json
from collections.abc import Iterator, Sequence
from typing import Final

MAX_DIFF_LINES: Final = 400
"""A diff longer than this is cut, with a line saying how much was left out."""


def unified(
    expected: str,
    actual: str,
    *,
    label_expected: str = "expected",
    label_actual: str = "actual",
    context: int = 3,
) -> str:
    """A unified line diff of two texts (empty when they are equal).

    The same text as :func:`difflib.unified_diff`; only the matching of lines is bounded
    (see :func:`line_matcher`), so a drift of 400,000 interleaved changed lines is
    explained in seconds instead of hours.
    """
    if expected == actual:
        return ""
    exp_lines = expected.splitlines(keepends=True)
    act_lines = actual.splitlines(keepends=True)
    out: list[str] = []
    hidden = 0
    for line in _unified_lines(
        exp_lines,
        act_lines,
        line_matcher(exp_lines, act_lines),
        label_expected,
        label_actual,
        context,
    ):
        if len(out) >= MAX_DIFF_LINES:
            hidden += 1
            continue
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    if hidden:
        out.append(f"... ({hidden} more diff lines not shown)\n")
    return "".join(out)


MAX_QUADRATIC: Final = 1_000_000
"""Above this product of the two line counts (after the common head and tail are set
aside), difflib's own matching is not asked for: its longest-match search rescans a region
once per matching block, minutes on a 25,000-line output where every other line changed."""


def line_matcher(a: Sequence[str], b: Sequence[str]) -> difflib.SequenceMatcher[str]:
    """The matcher :func:`unified` formats: difflib's own for ordinary sizes (so the diff is
    exactly ``difflib.unified_diff``'s), an anchored one above :data:`MAX_QUADRATIC`.

    Anchored: the lines that occur once in each side are matched in order (the longest
    increasing run of their positions, as patience diff does), the gaps between them are
    matched the same way, and a gap small enough goes to difflib.  A gap that is large and
    has no line unique to it is shown as removed and added whole: a correct diff, not a
    minimal one.  Time is about linear in the lines for real outputs.
    """
    if len(a) * len(b) <= MAX_QUADRATIC:
        return difflib.SequenceMatcher(None, a, b)
    return _AnchoredMatcher(a, b, _anchored_blocks(a, b))


class _AnchoredMatcher(difflib.SequenceMatcher[str]):
    """A SequenceMatcher whose matching blocks were found by :func:`_anchored_blocks`;
    difflib's opcodes and grouping then work on them unchanged."""

    def __init__(self, a: Sequence[str], b: Sequence[str], blocks: list[difflib.Match]) -> None:
        super().__init__(None, a, b, autojunk=False)
        self._blocks = blocks

    def get_matching_blocks(self) -> list[difflib.Match]:
        return self._blocks


Region = tuple[int, int, int, int]
"""``a[alo:ahi]`` against ``b[blo:bhi]``."""


def _anchored_blocks(a: Sequence[str], b: Sequence[str]) -> list[difflib.Match]:
    blocks: list[difflib.Match] = []
    pending: list[Region] = [(0, len(a), 0, len(b))]
    while pending:
        alo, ahi, blo, bhi = _trim(a, b, pending.pop(), blocks)
        if alo == ahi or blo == bhi:
            continue
        if (ahi - alo) * (bhi - blo) <= MAX_QUADRATIC:
            matcher = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi])
            blocks.extend(
                difflib.Match(alo + m.a, blo + m.b, m.size)
                for m in matcher.get_matching_blocks()
                if m.size
            )
            continue
        anchors = _unique_anchors(a, b, alo, ahi, blo, bhi)
        # the gaps between anchors, each matched on its own
        prev_a, prev_b = alo, blo
        for i, j in anchors:
            blocks.append(difflib.Match(i, j, 1))
            if prev_a < i and prev_b < j:
                pending.append((prev_a, i, prev_b, j))
            prev_a, prev_b = i + 1, j + 1
        if anchors and prev_a < ahi and prev_b < bhi:
            pending.append((prev_a, ahi, prev_b, bhi))
    return _merged(blocks, len(a), len(b))


def _trim(
    a: Sequence[str], b: Sequence[str], region: Region, blocks: list[difflib.Match]
) -> Region:
    """The region without its common first and last lines, which go to ``blocks``."""
    alo, ahi, blo, bhi = region
    head = 0
    while alo + head < ahi and blo + head < bhi and a[alo + head] == b[blo + head]:
        head += 1
    if head:
        blocks.append(difflib.Match(alo, blo, head))
        alo, blo = alo + head, blo + head
    tail = 0
    while ahi - tail > alo and bhi - tail > blo and a[ahi - tail - 1] == b[bhi - tail - 1]:
        tail += 1
    if tail:
        blocks.append(difflib.Match(ahi - tail, bhi - tail, tail))
        ahi, bhi = ahi - tail, bhi - tail
    return alo, ahi, blo, bhi


def _merged(blocks: list[difflib.Match], len_a: int, len_b: int) -> list[difflib.Match]:
    """Blocks in order, adjacent ones joined, and the closing empty block, as difflib
    reports them."""
    blocks.sort()
    merged: list[difflib.Match] = []
    for m in blocks:
        last = merged[-1] if merged else None
        if last is not None and last.a + last.size == m.a and last.b + last.size == m.b:
            merged[-1] = difflib.Match(last.a, last.b, last.size + m.size)
        else:
            merged.append(m)
    merged.append(difflib.Match(len_a, len_b, 0))
    return merged


def _unique_anchors(
    a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int
) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` of lines that occur once in ``a[alo:ahi]`` and once in
    ``b[blo:bhi]``, the longest run in which both positions increase."""
    seen_a: dict[str, int] = {}
    for i in range(alo, ahi):
        seen_a[a[i]] = -1 if a[i] in seen_a else i
    seen_b: dict[str, int] = {}
    for j in range(blo, bhi):
        line = b[j]
        if seen_a.get(line, -1) >= 0:
            seen_b[line] = -1 if line in seen_b else j
    pairs = sorted((seen_a[line], j) for line, j in seen_b.items() if j >= 0)
    # longest increasing subsequence of the b positions (patience sorting)
    tops: list[int] = []
    top_index: list[int] = []
    back: list[int] = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        pile = bisect.bisect_left(tops, j)
        if pile == len(tops):
            tops.append(j)
            top_index.append(k)
        else:
            tops[pile] = j
            top_index[pile] = k
        back[k] = top_index[pile - 1] if pile else -1
    chain: list[tuple[int, int]] = []
    k = top_index[-1] if top_index else -1
    while k >= 0:
        chain.append(pairs[k])
        k = back[k]
    chain.reverse()
    return chain


def _unified_lines(
    a: Sequence[str],
    b: Sequence[str],
    matcher: difflib.SequenceMatcher[str],
    fromfile: str,
    tofile: str,
    n: int,
) -> Iterator[str]:
    """:func:`difflib.unified_diff`'s lines, from a given matcher."""
    started = False
    for group in matcher.get_grouped_opcodes(n):
        if not started:
            started = True
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        first, last = group[0], group[-1]
        file1 = _unified_range(first[1], last[2])
        file2 = _unified_range(first[3], last[4])
        yield f"@@ -{file1} +{file2} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in a[i1:i2]:
                    yield " " + line
                continue
            if tag in {"replace", "delete"}:
                for line in a[i1:i2]:
                    yield "-" + line
            if tag in {"replace", "insert"}:
                for line in b[j1:j2]:
                    yield "+" + line


def _unified_range(start: int, stop: int) -> str:
    """A hunk's range as ``difflib`` writes it (``3``, ``3,4``, or ``2,0`` when empty)."""
    beginning = start + 1
    length = stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def _as_json(data: bytes) -> object | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        return json.loads(stripped)  # type: ignore[no-any-return]
    except ValueError:
        return None


def _pretty(doc: object) -> str:
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def hex_summary(expected: bytes, actual: bytes, *, width: int = 16) -> str:
    """Where two byte strings first differ, with a hex window around that offset."""
    if expected == actual:
        return ""
    limit = min(len(expected), len(actual))
    offset = next((i for i in range(limit) if expected[i] != actual[i]), limit)
    start = max(0, offset - width // 2)
    exp_window = expected[start : start + width]
    act_window = actual[start : start + width]
    return (
        f"binary output differs at byte {offset} "
        f"(expected {len(expected)} bytes, got {len(actual)})\n"
        f"  expected @{start}: {exp_window.hex(' ')}\n"
        f"  actual   @{start}: {act_window.hex(' ')}\n"
    )


def describe_kind(data: bytes) -> str:
    """``json``, ``text`` or ``binary``: how a document will be diffed."""
    if _as_json(data) is not None:
        return "json"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "binary"
    return "text"


MAX_SHOWN_DOCUMENT: Final = 1 << 20
"""Documents larger than this (bytes, either side) are not kept whole on a drift for the
HTML report's side-by-side view; the unified diff still shows what moved."""


def comparable_texts(expected: bytes, actual: bytes) -> tuple[str, str] | None:
    """The two documents as the diff compares them: pretty JSON when both are JSON (and the
    pretty forms differ), else UTF-8 text; ``None`` for binary.  The one place that decides
    how a document is read, for the unified diff here and the side-by-side report view."""
    exp_doc, act_doc = _as_json(expected), _as_json(actual)
    if exp_doc is not None and act_doc is not None:
        pretty = _pretty(exp_doc), _pretty(act_doc)
        if pretty[0] != pretty[1]:
            return pretty
        # Same document, different bytes (key order, spacing): compare the raw text.
    try:
        return expected.decode("utf-8"), actual.decode("utf-8")
    except UnicodeDecodeError:
        return None


def shown_texts(expected: bytes, actual: bytes) -> tuple[str, str] | None:
    """:func:`comparable_texts` for documents small enough to keep whole on a drift."""
    if max(len(expected), len(actual)) > MAX_SHOWN_DOCUMENT:
        return None
    return comparable_texts(expected, actual)


def document_diff(
    expected: bytes,
    actual: bytes,
    *,
    label_expected: str = "expected",
    label_actual: str = "actual",
) -> str:
    """The most readable diff of two documents: JSON, text or binary."""
    if expected == actual:
        return ""
    texts = comparable_texts(expected, actual)
    if texts is not None:
        text = unified(*texts, label_expected=label_expected, label_actual=label_actual)
        if text:
            return text
    return hex_summary(expected, actual)


Span = tuple[int, int]
"""Characters ``[start, end)`` of one line."""

MAX_INTRALINE: Final = 2000
"""Lines longer than this get no intra-line highlight (the character match is quadratic)."""

MIN_LIKENESS: Final = 0.4
"""Below this similarity two lines are different lines, not one line edited: highlighting
their common letters would be noise."""


def intraline(old: str, new: str) -> tuple[list[Span], list[Span]]:
    """The character spans that differ between two versions of one line.

    difflib's SequenceMatcher on characters: in a 200-character row whose only change is
    ``12.35`` → ``12.34`` the reader's eye goes to the ``5`` and the ``4``.  Empty lists when
    the lines are too long or too unlike to be one line edited.
    """
    if len(old) > MAX_INTRALINE or len(new) > MAX_INTRALINE:
        return [], []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    if matcher.ratio() < MIN_LIKENESS:
        return [], []
    left: list[Span] = []
    right: list[Span] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            left.append((i1, i2))
        if j2 > j1:
            right.append((j1, j2))
    return left, right


def unified_highlights(lines: list[str]) -> list[list[Span]]:
    """Intra-line spans for each line of a unified diff (offsets after the ``-``/``+`` sign).

    A run of removed lines followed by a run of added lines is one edit: the i-th removed
    line is paired with the i-th added one.  Other lines get no spans.
    """
    spans: list[list[Span]] = [[] for _ in lines]
    i = 0
    while i < len(lines):
        removed = _run(lines, i, "-", "---")
        added = _run(lines, i + len(removed), "+", "+++")
        for old, new in zip(removed, added, strict=False):
            spans[old], spans[new] = intraline(lines[old][1:], lines[new][1:])
        i += max(1, len(removed) + len(added))
    return spans


def _run(lines: list[str], start: int, sign: str, header: str) -> list[int]:
    """Indexes of the consecutive lines from ``start`` that begin with ``sign``."""
    out: list[int] = []
    for i in range(start, len(lines)):
        line = lines[i]
        if not line.startswith(sign) or line.startswith(header):
            break
        out.append(i)
    return out
