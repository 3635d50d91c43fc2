"""Iterator arguments, frozen losslessly: consumed before the call, handed on as a fresh iterator.

A call such as ``render(iter(rows))``, ``total(map(parse, lines))`` or
``index(w for w in words)`` cannot be frozen as it is: an iterator's items exist only
once, as the callee consumes them.  Skipping such calls shrinks the oracle silently (a
branch only they reach is not guarded), so the recorder *materializes* a built-in
iterator passed as a top-level argument: it consumes it into a list before the call,
hands the target an iterator over the same items (:class:`lockstep.canon.IterItems`), and
freezes the argument as ``{"$iter": [...]}``; replay hands the target the same kind of
iterator over the thawed items.

The contract, and what it costs:

* **Which iterators**: those of Python's own types -- ``iter()`` of a list, tuple, str,
  bytes, range, dict or set, ``map``, ``filter``, ``zip``, ``enumerate``, ``reversed``,
  ``itertools`` objects and generators (generator expressions and generator functions).
  A file, a database cursor or a user-defined iterator is left alone (and skipped, as
  before): consuming it early could change what the program does.  Only top-level
  arguments are materialized, not iterators nested inside a list or a dict.
* **Eagerly**: the iterator runs to its end *before* the target starts.  For iterators
  over data that is the same; a generator or ``map`` whose function has side effects
  (prints, reads a clock) now runs them before the call instead of during it, and a
  target that stops early (``next(it)`` once) has made the generator run to the end.
  The target always sees the same items in the same order.
* **Bounded**: at most :data:`MATERIALIZE_LIMIT` items.  A longer (or endless) iterator
  is not frozen; the call is skipped (reported) and the target gets the items already
  taken followed by the rest of the original iterator, lazily, as it would have.
* The target sees an ``IterItems`` (a plain iterator: ``__iter__``/``__next__``) where it
  got a generator or a ``map``: code that tests the argument's type
  (``inspect.isgenerator``) behaves differently, under recording and replay alike --
  consistently, so replay still compares like with like.
* Items the target mutates in place are recorded as a mutation of the argument, as for
  a list.
"""

from __future__ import annotations

import itertools
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from lockstep.canon.codec import IterItems

MATERIALIZE_LIMIT: Final = 10_000
"""Most items taken from one iterator argument; a longer one is not frozen."""

_ITERATOR_MODULES: Final = frozenset({"builtins", "itertools"})


def _builtin_iterator(value: Any) -> bool:
    t = type(value)
    return t is types.GeneratorType or (
        t.__module__ in _ITERATOR_MODULES and hasattr(t, "__next__") and hasattr(t, "__iter__")
    )


@dataclass(frozen=True)
class Materialized:
    """A call's arguments with each iterator argument consumed."""

    call_args: tuple[Any, ...]
    """What the target is called with: an :class:`IterItems` per iterator argument."""
    call_kwargs: dict[str, Any]
    frozen_args: tuple[Any, ...]
    """What is frozen: the same, or None for an iterator that is not frozen."""
    frozen_kwargs: dict[str, Any]
    too_long: str = ""
    """Why nothing is frozen (an iterator longer than the limit), or ""."""


def _take(value: Any, where: str) -> tuple[Any, Any, str]:
    """(what the target gets, what is frozen, why not frozen)."""
    items: list[Any] = []
    try:
        for item in value:
            items.append(item)
            if len(items) > MATERIALIZE_LIMIT:
                return (
                    itertools.chain(items, value),
                    None,
                    f"{where}: an iterator of more than {MATERIALIZE_LIMIT:,} items is not frozen",
                )
    except Exception as e:  # the target gets the same items, then the same exception
        return _then_raise(items, e), None, f"{where}: the iterator raised {type(e).__name__}"
    handed = IterItems(items)
    return handed, handed, ""


def _then_raise(items: list[Any], error: Exception) -> Iterator[Any]:
    yield from items
    raise error


def materialize(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Materialized | None:
    """Consume every built-in iterator among the top-level arguments; None if there is none.

    Called only for a call whose arguments did not freeze, so the common call pays nothing.
    An iterator that raises while consumed is handed on as its items then that exception.
    """
    if not any(map(_builtin_iterator, args)) and not any(map(_builtin_iterator, kwargs.values())):
        return None
    call_args: list[Any] = []
    frozen_args: list[Any] = []
    reasons: list[str] = []
    for i, value in enumerate(args):
        if _builtin_iterator(value):
            given, frozen, why = _take(value, f"args[{i}]")
            call_args.append(given)
            frozen_args.append(frozen)
            reasons.append(why)
        else:
            call_args.append(value)
            frozen_args.append(value)
    call_kwargs: dict[str, Any] = {}
    frozen_kwargs: dict[str, Any] = {}
    for name, value in kwargs.items():
        if _builtin_iterator(value):
            call_kwargs[name], frozen_kwargs[name], why = _take(value, f"kwargs[{name!r}]")
            reasons.append(why)
        else:
            call_kwargs[name] = frozen_kwargs[name] = value
    return Materialized(
        tuple(call_args),
        call_kwargs,
        tuple(frozen_args),
        frozen_kwargs,
        too_long=next((r for r in reasons if r), ""),
    )
