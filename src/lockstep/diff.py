"""Document diffs for drift: what a reviewer reads instead of two hashes.

A drift is only useful if it shows *what* moved.  Two JSON documents are
pretty-printed with sorted keys before diffing, so a reordered key is not
noise and a changed value stands on its own line; text is diffed line by line;
binary gets a short hex summary around the first differing byte.
"""

from __future__ import annotations

import difflib
import json
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
    """A unified line diff of two texts (empty when they are equal)."""
    if expected == actual:
        return ""
    exp_lines = expected.splitlines(keepends=True)
    act_lines = actual.splitlines(keepends=True)
    lines = list(
        difflib.unified_diff(
            exp_lines, act_lines, fromfile=label_expected, tofile=label_actual, n=context
        )
    )
    out: list[str] = []
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    if len(out) > MAX_DIFF_LINES:
        left = len(out) - MAX_DIFF_LINES
        out = [*out[:MAX_DIFF_LINES], f"... ({left} more diff lines not shown)\n"]
    return "".join(out)


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
