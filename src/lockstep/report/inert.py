"""Text from a program made inert before a person reads it.

A program under test prints what it likes: terminal control sequences (clear the screen,
move the cursor, set the window title), a bare carriage return that overwrites a line,
bidirectional overrides that reorder what is shown.  Every reporter passes such text
through :func:`inert` first, so it reaches a terminal, a CI log or a page as visible
escapes (``\\x1b[2J``) rather than as commands; newlines and tabs stay as they are.
"""

from __future__ import annotations

import re
from typing import Final

_CONTROL: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 controls but newline and tab, DEL, C1 controls, and the bidirectional marks."""


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str) -> str:
    """``text`` with every control character written as its escape (``\\x1b``)."""
    return _CONTROL.sub(_escape, text)
