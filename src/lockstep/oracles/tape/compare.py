"""Compare two tapes and say how they differ in words a reviewer reads.

A tape drift is shown as a *sequence diff of events*, never as two JSON blobs:
``call 3: expected rates.rate('EUR'), got fees.late_fee()`` and
``rates.rate('USD') called 1 time, expected 2``.

Three modes, because not all work is ordered:

* ``ordered`` (default): the exact sequence of calls and their outcomes;
* ``multiset``: the same calls with the same outcomes, in any order (a thread
  pool, a set iteration: work that is unordered by design);
* ``counts``: only how many times each collaborator was called.

Values are rendered from their canonical form back to Python-like text by
:mod:`lockstep.canon.text` (``'EUR'``, ``Decimal('1.10')``, ``(1, 2)``), so the
message reads like code; the tape's own sentence is ``call -> value``.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from lockstep.canon import FrozenException
from lockstep.canon.text import call_text, raised_text, value_text
from lockstep.oracles.tape.recorder import LAZY_TAG, CompareMode, Event
from lockstep.rules import RuleRecord

MAX_LINES: Final = 40
"""Drift lines shown before the rest is summarized as "… and N more"."""
MAX_VALUE: Final = 80
"""Characters of one rendered value before it is cut with "…"."""

_key_encoder = msgspec.json.Encoder(order="sorted")


# --------------------------------------------------------------------------- rendering


def _returned_text(value: Any) -> str:
    """A returned value; a returned generator, recorded by its type name only, as ``<generator>``."""
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get(LAZY_TAG), str):
        return f"<{value[LAZY_TAG]}>"
    return value_text(value, limit=MAX_VALUE)


def render_call(event: Event) -> str:
    """``rates.rate('EUR', when=date('2024-01-31'))``, or ``rates.base`` for an attribute read."""
    if event.read:
        return event.collaborator
    return call_text(event.collaborator, event.args, event.kwargs, limit=MAX_VALUE)


def render_result(returned: Any, raised: FrozenException | None) -> str:
    """``-> 1.1`` or ``raised KeyError: 'XXX'``: a call's outcome, or a driver's output."""
    if raised is not None:
        return raised_text(raised.exc_type, raised.exc_stem)
    return f"-> {_returned_text(returned)}"


def render_outcome(event: Event) -> str:
    """``-> 1.1`` or ``raised KeyError: 'XXX'``."""
    return render_result(event.returned, event.raised)


def render_event(event: Event) -> str:
    """The call and its outcome on one line."""
    return f"{render_call(event)} {render_outcome(event)}"


def render_tape(events: Sequence[Event], *, numbered: bool = True) -> str:
    """A listing, one event a line, indented under the spied call it happened within.

    ``numbered=False`` gives the form a line diff reads best (numbers would
    shift after the first missing call and make every later line differ).
    """
    depth: dict[str, int] = {}
    lines: list[str] = []
    for number, event in enumerate(events, start=1):
        level = depth.get(event.within, 0) + 1 if event.within else 0
        depth[event.collaborator] = level
        prefix = f"{number:>4}  " if numbered else ""
        lines.append(f"{prefix}{'  ' * level}{render_event(event)}")
    return "\n".join(lines) + ("\n" if lines else "")


# --------------------------------------------------------------------------- keys


def _full_key(event: Event) -> bytes:
    return _key_encoder.encode(event)


def _call_key(event: Event) -> bytes:
    return _key_encoder.encode((event.collaborator, event.read, event.args, event.kwargs))


def _times(n: int) -> str:
    return f"{n} time" if n == 1 else f"{n} times"


# --------------------------------------------------------------------------- comparing


def compare(
    expected: Sequence[Event], actual: Sequence[Event], mode: CompareMode = "ordered"
) -> list[str]:
    """The readable differences between two tapes under ``mode``; an empty list means they match."""
    if mode == "ordered":
        lines = _ordered(expected, actual)
    elif mode == "multiset":
        lines = _multiset(expected, actual)
    else:
        lines = _counts(expected, actual)
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"… and {len(lines) - MAX_LINES} more differences"]
    return lines


@dataclass(frozen=True)
class SettingChange:
    """A change in *how* a tape is compared (its ``mode`` or its ``rules``), not in the calls."""

    aspect: str
    recorded: str
    asked: str
    line: str
    """The sentence a reviewer reads."""


def setting_changes(
    recorded_mode: CompareMode,
    recorded_rules: Sequence[RuleRecord],
    mode: CompareMode,
    rules: Sequence[RuleRecord],
    *,
    asked_by: str,
) -> list[SettingChange]:
    """The mode and rules a tape was recorded with, against what ``asked_by`` asks for now.

    Every place that checks a tape (replay, accept, the pytest fixture) says it
    the same way, so a reviewer reads one phrasing.
    """
    changes: list[SettingChange] = []
    if recorded_mode != mode:
        line = f"the tape was recorded in {recorded_mode} mode, {asked_by} asks for {mode}"
        changes.append(SettingChange("mode", recorded_mode, mode, line))
    if list(recorded_rules) != list(rules):
        was = "[" + ", ".join(r.name for r in recorded_rules) + "]"
        now = "[" + ", ".join(r.name for r in rules) + "]"
        line = f"the tape was recorded with rules {was}, {asked_by} names {now}"
        changes.append(SettingChange("rules", was, now, line))
    return changes


def _pair(number: int, want: Event, got: Event) -> str:
    if _call_key(want) != _call_key(got):
        return f"call {number}: expected {render_call(want)}, got {render_call(got)}"
    call = render_call(want)
    if render_outcome(want) != render_outcome(got) or want.returned != got.returned:
        return f"call {number}: {call} {render_outcome(got)}, expected {render_outcome(want)}"
    where_want = f"inside {want.within}" if want.within else "at top level"
    where_got = f"inside {got.within}" if got.within else "at top level"
    return f"call {number}: {call} was made {where_got}, expected {where_want}"


def _ordered(expected: Sequence[Event], actual: Sequence[Event]) -> list[str]:
    want = [_full_key(e) for e in expected]
    got = [_full_key(e) for e in actual]
    if want == got:
        return []
    lines: list[str] = []
    if len(want) == len(got):
        # Same length: calls were swapped or changed in place; position by position
        # reads best ("call 3: expected X, got Y").
        for number, (a, b, ka, kb) in enumerate(zip(expected, actual, want, got, strict=True), 1):
            if ka != kb:
                lines.append(_pair(number, a, b))
        return lines + _call_count_lines(expected, actual)
    matcher = difflib.SequenceMatcher(None, want, got, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(paired):
            lines.append(_pair(i1 + k + 1, expected[i1 + k], actual[j1 + k]))
        for i in range(i1 + paired, i2):
            lines.append(f"call {i + 1}: expected {render_call(expected[i])}, missing")
        for j in range(j1 + paired, j2):
            lines.append(f"call {j + 1}: got {render_call(actual[j])}, not expected")
    lines.extend(_call_count_lines(expected, actual))
    return lines


def _call_count_lines(expected: Sequence[Event], actual: Sequence[Event]) -> list[str]:
    """``rates.rate('USD') called 1 time, expected 2`` for every call whose count changed."""
    want = Counter(_call_key(e) for e in expected)
    got = Counter(_call_key(e) for e in actual)
    shown: dict[bytes, str] = {}
    for event in (*expected, *actual):
        shown.setdefault(_call_key(event), render_call(event))
    lines = [
        f"{shown[key]} called {_times(got[key])}, expected {want[key]}"
        for key in shown
        if want[key] != got[key]
    ]
    return sorted(lines)


def _multiset(expected: Sequence[Event], actual: Sequence[Event]) -> list[str]:
    want = Counter(_full_key(e) for e in expected)
    got = Counter(_full_key(e) for e in actual)
    if want == got:
        return []
    shown: dict[bytes, str] = {}
    for event in (*expected, *actual):
        shown.setdefault(_full_key(event), render_event(event))
    lines = [
        f"{shown[key]} happened {_times(got[key])}, expected {want[key]}"
        for key in shown
        if want[key] != got[key]
    ]
    return sorted(lines)


def _counts(expected: Sequence[Event], actual: Sequence[Event]) -> list[str]:
    want = Counter(e.collaborator for e in expected)
    got = Counter(e.collaborator for e in actual)
    if want == got:
        return []
    return sorted(
        f"{name} called {_times(got[name])}, expected {want[name]}"
        for name in want.keys() | got.keys()
        if want[name] != got[name]
    )
