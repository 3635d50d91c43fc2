"""Thin targets over lockstep's canonical value codec, frozen by the selftest's ledgers.

lockstep itself calls ``lockstep.canon`` while it records, so a ledger cannot
target the codec's functions directly: it would record lockstep's own calls
too.  These wrappers are what the ledgers freeze instead.  Each returns a plain
description of what the codec did (the canonical text, the thawed value with
every type spelled out), so a replay compares the codec's behaviour and not
only whether it happens to round-trip.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import threading
from collections.abc import Callable
from decimal import Decimal
from typing import Any, NamedTuple

from foreign_values import Opaque, ring

from lockstep import canon, register_encoder

# --------------------------------------------------------------------------- example types


class Colour(enum.Enum):
    RED = "r"
    GREEN = "g"


class Level(enum.IntEnum):
    LOW = 1


@dataclasses.dataclass(frozen=True)
class Point:
    x: Any
    y: Any


class Pair(NamedTuple):
    left: Any
    right: Any


class Money:
    """A type the codec learns through ``register_encoder``."""

    def __init__(self, cents: int, currency: str) -> None:
        self.cents = cents
        self.currency = currency

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Money) and (self.cents, self.currency) == (
            other.cents,
            other.currency,
        )

    def __hash__(self) -> int:
        return hash((self.cents, self.currency))

    def __repr__(self) -> str:
        return f"Money({self.cents}, {self.currency!r})"


register_encoder(
    Money,
    lambda m: (m.cents, m.currency),
    lambda v: Money(*v),
    name="selftest:Money",
)


class LegacyError(Exception):
    """An exception type of the code under freeze."""


class Outer:
    class InnerError(LookupError):
        pass


# --------------------------------------------------------------------------- descriptions


def describe(value: Any) -> str:
    """The value with every type spelled out (``tuple(int 1, str '1')``), containers sorted
    where Python leaves their order open, so two values of different types never read alike."""
    t = type(value)
    if t in (bool, int, float, str, bytes, bytearray, Decimal, complex) or value is None:
        return f"{t.__name__} {value!r}"
    if t is tuple:
        return "tuple(" + ", ".join(describe(v) for v in value) + ")"
    if t is list:
        return "list[" + ", ".join(describe(v) for v in value) + "]"
    if t is dict:
        return "dict{" + ", ".join(f"{describe(k)}: {describe(v)}" for k, v in value.items()) + "}"
    if t in (set, frozenset):
        return f"{t.__name__}{{" + ", ".join(sorted(describe(v) for v in value)) + "}"
    return f"{t.__module__}.{t.__qualname__} {value!r}"


# --------------------------------------------------------------------------- the targets


def encode_text(value: Any, loose: bool = False) -> str:
    """The canonical JSON text of ``value``."""
    return _text(value, loose)


def _text(value: Any, loose: bool) -> str:
    # Shared by the targets without calling one another: a ledger records every call of
    # its target, including calls made from inside another target.
    return canon.dumps(value, loose=loose).decode("utf-8")


def roundtrip(value: Any, loose: bool = False) -> dict[str, Any]:
    """Freeze then thaw: the canonical text, what comes back, and whether it freezes alike."""
    text = canon.dumps(value, loose=loose)
    back = canon.loads(text)
    return {
        "text": text.decode("utf-8"),
        "back": describe(back),
        "same_bytes": canon.dumps(back, loose=loose) == text,
    }


def same(a: Any, b: Any, loose: bool = False) -> bool:
    """Whether two values freeze to the same canonical bytes."""
    return canon.equal(a, b, loose=loose)


def decode_text(text: str) -> str:
    """Thaw canonical JSON text (well-formed or not) and describe what comes back."""
    return describe(canon.loads(text))


def _open_file() -> Any:
    with open(os.devnull, encoding="utf-8") as fh:
        return [1, {"conn": fh}]


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def _cycle() -> Any:
    items: list[Any] = []
    items.append(items)
    return items


SPECIALS: dict[str, Callable[[], Any]] = {
    "closed-file-in-a-dict": _open_file,
    "generator": lambda: (n for n in range(3)),
    "object": object,
    "opaque-in-a-tuple": lambda: ("ok", Opaque()),
    "opaque-as-dict-key": lambda: {Opaque(): 1},
    "opaque-in-a-set": lambda: {1, Opaque()},
    "opaque-in-a-dataclass": lambda: Point(1, Opaque()),
    "function": lambda: len,
    "lambda": lambda: lambda: None,
    "lock": threading.Lock,  # freezes by kind since {"$lock": ...}
    "semaphore": threading.Semaphore,
    "type": lambda: int,
    "reference-cycle": _cycle,
    "lone-surrogate": lambda: "\udcff",  # freezes since {"$str": ...}
    "surrogate-pair-escape": lambda: "\ud83d\ude00",  # two lone ones: {"$str": ...} too
    "lone-surrogate-as-dict-key": lambda: {"\udcff": 1},
    "object-as-dict-key": lambda: {object(): 1},
    "int-past-the-limit": lambda: [1, 10**5000],
    "nested-201-deep": lambda: _nested(201),
    "foreign-ring": lambda: ("ring", ring(1, "b"), ring()),
    "foreign-in-a-set": lambda: {1, ring(2)},
}
"""Values a ledger row cannot carry as an argument, built inside the target by name:
mostly refused, and another library's plain objects (``foreign-ring``)."""


def encode_special(name: str, loose: bool = False) -> str:
    """Freeze one of :data:`SPECIALS`: mostly values the codec must refuse, naming the path."""
    return _text(SPECIALS[name](), loose)


EXCEPTIONS: dict[str, type[BaseException]] = {
    "ValueError": ValueError,
    "KeyError": KeyError,
    "OSError": OSError,
    "LegacyError": LegacyError,
    "Outer.InnerError": Outer.InnerError,
    "KeyboardInterrupt": KeyboardInterrupt,
}


def freeze(exc_type: str, args: list[Any], stem_length: int = 48) -> list[str]:
    """An exception as every oracle freezes it: ``[qualified type, message stem]``."""
    frozen = canon.freeze_exception(EXCEPTIONS[exc_type](*args), stem_length=stem_length)
    return [frozen.exc_type, frozen.exc_stem]
