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
    exp_doc, act_doc = _as_json(expected), _as_json(actual)
    if exp_doc is not None and act_doc is not None:
        pretty = unified(
            _pretty(exp_doc),
            _pretty(act_doc),
            label_expected=label_expected,
            label_actual=label_actual,
        )
        if pretty:
            return pretty
        # Same document, different bytes (key order, spacing): show the raw text.
    try:
        exp_text, act_text = expected.decode("utf-8"), actual.decode("utf-8")
    except UnicodeDecodeError:
        return hex_summary(expected, actual)
    text = unified(exp_text, act_text, label_expected=label_expected, label_actual=label_actual)
    if text:
        return text
    return hex_summary(expected, actual)
