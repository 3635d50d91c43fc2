"""How much of one target's input holding objects a recording freezes.

Freezing an object costs its size on every call: a suite that grows one structure call by
call (furl's tests add to one query thousands of times) or moves items in a large one
(boltons' ``BarrelList`` of 100,000 items, ten thousand times) would take minutes to
record and write as many rows.  ``[lockstep] object_calls`` bounds how many such calls
of one target a recording freezes, ``[lockstep] object_bytes`` how many bytes their rows
take (the frozen input, then the outcome with the objects as the call left them); past
either, such calls run unrecorded and are counted as skipped, with the setting named.
Inputs of scalars and tuples are never counted: they repeat, and repeated inputs are
found without freezing them.  Once the budget is spent, a call with objects is skipped
before anything of it is keyed or frozen, even one repeating a recorded input: keying a
babel ``Locale`` (its whole locale data) on each of thousands of calls cost minutes.
"""

from __future__ import annotations

import contextlib
import enum
import math
from typing import Any, Final

PER_TEST: Final = 20
"""Calls with objects each test of a recording's pytest run may still freeze of a target
once ``object_calls`` is spent.  The limit counts calls in test order, so a whole late
group of tests kept nothing: arrow's ``dehumanize`` spent its 2,000 before
``TestArrowDehumanize::test_years``, and a one-line change to the Italian years replayed
green while the suite failed.  Each test keeps its first few calls of each target."""


KINDS_KEPT: Final = 64
"""Characters of a text argument that tell one kind of call from another (see
:func:`call_kind`): longer texts differing further on count as one kind."""

_SCALAR_ITEMS: Final = 8
"""Items of a list or tuple of scalars that tell one kind of call from another."""


def call_kind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
    """What tells one kind of call from another, cheaply and without freezing anything:
    the class of each argument holding objects, and each scalar argument (a text by its
    first :data:`KINDS_KEPT` characters, an enum member by itself, a number by its sign
    and size, a short list or tuple of scalars by its items).  Past the ``object_calls``
    budget a call of a kind not met before is still frozen: arrow's Italian ``humanize``
    (``locale="it"``) was the only call of its kind, late in a test that had spent its
    allowance on the same call in twenty other languages.  (A hashable value.)"""
    return (tuple(_kind(a) for a in args), tuple((k, _kind(v)) for k, v in kwargs.items()))


def _kind(value: Any) -> object:
    t = type(value)
    if t is str:
        return value[:KINDS_KEPT]
    if t is bool or value is None:
        return value
    if t is int:
        return (int, value < 0, value.bit_length())
    if t is float:
        return (
            float,
            math.copysign(1.0, value) < 0,
            math.isfinite(value) and value.is_integer(),
            abs(value) < 1,
        )
    if isinstance(t, enum.EnumMeta):
        return value
    if (t is list or t is tuple) and len(value) <= _SCALAR_ITEMS:
        items = tuple(_kind(v) for v in value)
        if not any(type(i) is type for i in items):  # every item a scalar
            return (t, items)
    return t


class RunningTest:
    """Which test of the run is running: the recording counts each test's start, and every
    target's budget reads it to know when its per-test allowance starts again."""

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


class InputBudget:
    """One target's budget (0: no limit on that measure)."""

    def __init__(self, calls: int = 0, size: int = 0) -> None:
        self.calls = calls
        self.size = size
        self._calls_spent = 0
        self._size_spent = 0
        self.charged = False
        """Whether the last call asked about was counted (:meth:`refund` gives it back)."""
        self.serial: RunningTest | None = None
        """The recording's test counter (None outside a pytest run: no per-test allowance)."""
        self._test = -1
        self._test_spent = 0
        self._charged_test = False
        self._kinds: set[object] = set()
        """The kinds of the calls frozen (:func:`call_kind`)."""
        self._new_kinds = 0
        """Calls frozen past ``object_calls`` because their kind was new (at most as many
        as ``object_calls``)."""

    def frozen(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Note the kind of a call about to be frozen with objects (:func:`call_kind`)."""
        if self.calls:  # an unhashable enum member has no kind: never new, never noted
            with contextlib.suppress(TypeError, ValueError):
                self._kinds.add(call_kind(args, kwargs))

    def new_kind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Whether a call past ``object_calls`` is of a kind no frozen call was (and may be
        frozen, counted apart, while those are fewer than ``object_calls``); never past
        ``object_bytes``."""
        if (
            not self.calls
            or self._new_kinds >= self.calls
            or (self.size and self._size_spent >= self.size)
        ):
            return False
        try:
            kind = call_kind(args, kwargs)
            if kind in self._kinds:
                return False
        except (TypeError, ValueError):
            return False
        self._kinds.add(kind)
        self._new_kinds += 1
        return True

    def _allowance(self) -> bool:
        """Whether the running test may still freeze a call past ``object_calls``."""
        serial = self.serial
        if serial is None:
            return False
        if serial.n != self._test:
            self._test = serial.n
            self._test_spent = 0
        return self._test_spent < PER_TEST

    def exhausted(self) -> str | None:
        """Why no more call with objects is frozen, once the budget is spent (counting
        nothing), or None."""
        if (self.size and self._size_spent >= self.size) or (
            self.calls and self._calls_spent >= self.calls and not self._allowance()
        ):
            return self.refusal()
        return None

    def refusal(self) -> str | None:
        """Why the next call with objects is not frozen, or None (the call is counted)."""
        over = self.calls and self._calls_spent >= self.calls
        if over and not self._allowance():
            each = f"the first {PER_TEST} of each test after them, and " if self.serial else ""
            return (
                f"past the first {self.calls:,} calls whose input holds objects or mutable "
                f"values (and {each}each kind of call not met before), as many as a "
                "recording freezes ([lockstep] object_calls)"
            )
        if self.size and self._size_spent >= self.size:
            return (
                f"past the first {_size_text(self.size)} frozen for calls whose input holds "
                "objects or mutable values, as much as a recording freezes of one target "
                "([lockstep] object_bytes)"
            )
        if over:
            self._test_spent += 1
        else:
            self._calls_spent += 1
        self.charged = True
        self._charged_test = bool(over)
        return None

    def refund(self) -> None:
        """Give back the call :meth:`refusal` last counted: its input did not freeze and the
        call was skipped, so it froze nothing the budget bounds (bidict's ``keys``: its
        first 2,000 calls were all skipped as unfreezable and spent the budget, and the
        next 8,015, which would have frozen, were skipped as past it)."""
        if self.charged:
            if self._charged_test:
                self._test_spent -= 1
            else:
                self._calls_spent -= 1
            self.charged = False

    def spent(self, size: int) -> None:
        """Count bytes frozen for a call whose input held objects (its input, its outcome)."""
        self._size_spent += size


def _size_text(n: int) -> str:
    return f"{n / 2**20:,.4g} MiB" if n >= 2**20 else f"{n:,} bytes"
