"""What kind of input a recorded call has: immutable scalars a ``marshal`` key finds
again, values that may change in place (frozen again after the call), iterators over a
sequence taken as the call reads them.  Asked on every recorded call, so the loops are
plain and inline."""

from __future__ import annotations

import marshal
from collections.abc import Iterable
from decimal import Decimal
from typing import Any, Final

from lockstep.canon.sequence_iterators import SEQUENCE_ITERATORS

_marshal = marshal.dumps

_IMMUTABLE: Final = frozenset(
    {int, str, float, bool, type(None), bytes, Decimal, complex, range, type(Ellipsis)}
)

_MEMO_LEAVES: Final = frozenset({int, str, bytes, bool, float, type(None)})
"""Exact types whose ``marshal`` bytes tell every value apart that canon tells apart.

``marshal`` keeps ``1``, ``1.0`` and ``True`` apart, and ``-0.0`` from ``0.0``, unlike
``==``; but it writes every buffer (bytearray, memoryview, a bytes subclass) as bytes,
so inputs holding anything but these exact types and tuples of them are never memoized.
"""


def _memo_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes | None:
    """The ``marshal`` bytes of an input made only of :data:`_MEMO_LEAVES` and tuples of
    them, else None.  (The recording wrapper has these loops inline.)"""
    leaves = _MEMO_LEAVES
    try:
        for v in args:
            t = type(v)
            if t in leaves:
                continue
            if t is not tuple:
                return None
            for w in v:
                t = type(w)
                if t not in leaves and (t is not tuple or not _memoizable(w)):
                    return None
        for v in kwargs.values():
            t = type(v)
            if t not in leaves and (t is not tuple or not _memoizable(v)):
                return None
        return _marshal((args, kwargs), 2)
    except RecursionError:
        return None


def _memoizable(values: Iterable[Any]) -> bool:
    """True when every value is of a :data:`_MEMO_LEAVES` type or a tuple of such (immutable too)."""
    leaves = _MEMO_LEAVES
    for v in values:
        t = type(v)
        if t in leaves:
            continue
        if t is not tuple:
            return False
        for w in v:  # one level inline: a call per nested tuple shows at a microsecond a call
            t = type(w)
            if t not in leaves and (t is not tuple or not _memoizable(w)):
                return False
    return True


_TAKEN_AS_READ: Final = "an iterator argument is frozen as the call reads it"


def _sequence_iterator_argument(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a call's own argument is an iterator over a sequence, set or dict.  Inside a
    value such an iterator freezes as what it has left (``$iterator``); as the argument
    itself it is handed on through a proxy and frozen as the items the call takes
    (``$iter``, :mod:`.materialize`), as every iterator argument is."""
    iterators = SEQUENCE_ITERATORS
    for v in args:
        if type(v) in iterators:
            return True
    return any(type(v) in iterators for v in kwargs.values())


def _mutable_input(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether an argument may change in place (so it is frozen again after the call)."""
    for a in args:
        if type(a) not in _IMMUTABLE and not _immutable(a):
            return True
    for v in kwargs.values():  # noqa: SIM110 - a plain loop, as above
        if type(v) not in _IMMUTABLE and not _immutable(v):
            return True
    return False


def _immutable(value: Any) -> bool:
    """True when ``value`` cannot change in place (so the after-call re-freeze can be skipped)."""
    t = type(value)
    if t in _IMMUTABLE:
        return True
    if t is tuple or t is frozenset:
        for v in value:  # noqa: SIM110 - a plain loop: this runs on every recorded call
            if type(v) not in _IMMUTABLE and not _immutable(v):
                return False
        return True
    return False


def blank_constructor_input(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a constructor's input is a ``self`` with nothing set yet and scalars (and
    tuples of them): what the input budget does not count, as it counts no input of
    scalars.  packaging's ``Marker("python_version > '3'")``: the blank ``Marker`` made
    every constructor call one "holding objects", and its first 2,000 calls, all from one
    test, spent the budget the other 4,151 (a whole feature's markers) never got.

    Blank: an object whose ``__dict__`` is empty, of classes all written in Python that
    keep no ``__slots__`` (their values would not show in ``__dict__``) and extend no
    builtin value (a ``str`` subclass's text is its state)."""
    if not args or not _memoizable(args[1:]) or not _memoizable(kwargs.values()):
        return False
    first: object = args[0]
    if not _dict_only_class(type(first)):
        return False
    try:
        return not object.__getattribute__(first, "__dict__")
    except AttributeError:
        return False


_HEAP_TYPE: Final = 1 << 9
"""``Py_TPFLAGS_HEAPTYPE``: a class written in Python."""


def _dict_only_class(cls: type[object]) -> bool:
    """Whether every class of ``cls``'s MRO but ``object`` is written in Python and keeps
    no ``__slots__``: its objects' whole state is their ``__dict__``."""
    return all(
        owner.__flags__ & _HEAP_TYPE and "__slots__" not in owner.__dict__
        for owner in cls.__mro__[:-1]
    )
