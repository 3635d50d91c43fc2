"""Iterator arguments, frozen as the target takes their items: handed on through a proxy.

A call such as ``render(iter(rows))``, ``total(map(parse, lines))`` or
``index(w for w in words)`` cannot be frozen before the call: an iterator's items exist
only once, as the callee consumes them.  Skipping such calls shrinks the oracle silently (a
branch only they reach is not guarded), so the recorder hands the target a proxy
(:class:`TakenItems`, an :class:`lockstep.canon.IterItems`) in place of a built-in
iterator passed as a top-level argument: each item the target asks for is taken from the
original iterator then, frozen at once (before the target can change it), and handed on.
When the call's outcome is known, the argument freezes as ``{"$iter": [...]}`` of the
items taken, or ``{"$iter": {"items": [...], "end": "open"}}`` when the target stopped
before the iterator's end; replay hands the target an iterator over those items, and one
left open that it is asked for more (today's code takes more than the recorded call did)
makes the case a drift (:class:`lockstep.canon.IterPastRecorded`).

The contract, and what it costs:

* **Which iterators**: those of Python's own types -- ``iter()`` of a list, tuple, str,
  bytes, range, dict or set, ``map``, ``filter``, ``zip``, ``enumerate``, ``reversed``,
  ``itertools`` objects and generators (generator expressions and generator functions).
  A file, a database cursor or a user-defined iterator is left alone (and skipped, as
  before).  Only top-level arguments, not iterators nested inside a list or a dict.
* **As the target asks**: the original iterator is advanced exactly as far as the target
  advances it, when it does, so the caller that keeps using it afterwards
  (``consume(it, 3); next(it)``), an endless or slow generator (``take(4, count())``) and a
  generator whose items have side effects behave as they do unrecorded.  An iterator a
  target keeps and reads after it returned (a lazy result) is frozen with the items taken
  by the time the row is noted: when the call returned, or, for an iterator result, when
  that ended.
* **Bounded**: at most :data:`MATERIALIZE_LIMIT` items are kept.  A target that takes more
  still gets every item; its call is skipped (reported).  So is a call whose iterator
  raised, or one of whose items could not be frozen.
* The target sees an ``IterItems`` where it got a generator or a ``map``, under recording
  and replay alike: code that tests the argument's type (``inspect.isgenerator``) behaves
  differently from unrecorded, but consistently, so replay still compares like with like.
* Items the target mutates in place are recorded as a mutation of the argument, as for
  a list: each was frozen as it was handed on.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, cast

from lockstep import canon
from lockstep.canon import JSON
from lockstep.canon.codec import IterItems
from lockstep.errors import CanonError
from lockstep.oracles.ledger.call_state import _Materialized

MATERIALIZE_LIMIT: Final = 10_000
"""Most items taken from one iterator argument; a longer one is not frozen."""

_ITERATOR_MODULES: Final = frozenset({"builtins", "itertools"})


def _builtin_iterator(value: Any) -> bool:
    t = type(value)
    return t is types.GeneratorType or (
        t.__module__ in _ITERATOR_MODULES and hasattr(t, "__next__") and hasattr(t, "__iter__")
    )


class TakenItems(IterItems):
    """An :class:`IterItems` taking each item from ``source`` when the target asks for it:
    the item is kept (at most :data:`MATERIALIZE_LIMIT`) and frozen by ``freeze`` before it
    is handed on.  What goes wrong is kept, never raised at the target: an item that would
    not freeze, more items than the limit; an exception of ``source`` reaches the target
    as it would have, and is kept too.  One frame per item, no generator: proxies chained
    into each other (a remainder handed to the next call, and so on) nest as shallowly as
    can be."""

    __slots__ = ("_freeze", "_source", "_where", "ended", "frozen", "why")

    live = 0
    """Proxies not yet freed (see :data:`LIVE_MOST`)."""

    def __init__(self, source: Iterator[Any], freeze: Callable[[Any], JSON], where: str) -> None:
        super().__init__([])
        self._source = source
        self._freeze = freeze
        self._where = where
        self.frozen: list[JSON] = []
        """Each item kept, frozen as it was handed on."""
        self.why = ""
        """Why the argument cannot be frozen, or ""."""
        self.ended = False
        """Whether the target found the iterator's end (else it froze as left open)."""
        TakenItems.live += 1

    def __del__(self) -> None:
        TakenItems.live -= 1

    def __next__(self) -> Any:
        try:
            item = next(self._source)
        except StopIteration:
            self.ended = True
            raise
        except Exception as e:  # the target meets it as it would have
            self.why = self.why or f"{self._where}: the iterator raised {type(e).__name__}"
            raise
        if not self.why:
            items = self.items
            if len(items) >= MATERIALIZE_LIMIT:
                self.why = (
                    f"{self._where}: an iterator of more than {MATERIALIZE_LIMIT:,} items "
                    "is not frozen"
                )
            else:
                try:
                    self.frozen.append(self._freeze(item))
                    items.append(item)
                except CanonError as e:
                    self.why = f"{self._where}[{len(items)}]: {e}"
                except Exception as e:
                    self.why = f"{self._where}[{len(items)}]: freezing it raised {e!r}"
        return item


LIVE_MOST: Final = 100
"""Proxies alive at most before an iterator argument is handed on as it is (its call
skipped): each one a target keeps (a lazy result reading its argument later) stays in the
chain of whoever reads on, so a suite that hands each call the last one's remainder
(more-itertools' nested ``before_and_after``) would nest them past the recursion limit."""


@dataclass(frozen=True)
class Taken:
    """A call's arguments with each iterator argument handed on through a
    :class:`TakenItems`."""

    call_args: tuple[Any, ...]
    """What the target is called with: a :class:`TakenItems` per iterator argument."""
    call_kwargs: dict[str, Any]
    proxies: tuple[tuple[int | str, TakenItems], ...]
    """Each proxy with its place: the position or the keyword."""


def take_lazily(
    args: tuple[Any, ...], kwargs: dict[str, Any], freeze: Callable[[Any], JSON]
) -> Taken | None:
    """Hand every built-in iterator among the top-level arguments on through a proxy; None
    if there is none.  Called only for a call whose arguments did not freeze, so the common
    call pays nothing."""
    if not any(map(_builtin_iterator, args)) and not any(map(_builtin_iterator, kwargs.values())):
        return None
    proxies: list[tuple[int | str, TakenItems]] = []
    call_args: list[Any] = []
    for i, value in enumerate(args):
        if _builtin_iterator(value):
            value = TakenItems(value, freeze, f"args[{i}]")
            proxies.append((i, value))
        call_args.append(value)
    call_kwargs: dict[str, Any] = {}
    for name, value in kwargs.items():
        if _builtin_iterator(value):
            value = TakenItems(value, freeze, f"kwargs[{name!r}]")
            proxies.append((name, value))
        call_kwargs[name] = value
    return Taken(tuple(call_args), call_kwargs, tuple(proxies))


def taken_call(
    index: int, args: tuple[Any, ...], kwargs: dict[str, Any], clock: dict[str, Any] | None
) -> tuple[_Materialized | None, str]:
    """The pending call for arguments that did not freeze, its iterators handed on through
    :class:`TakenItems` and its other arguments frozen now; None when no argument is an
    iterator.  The reason is why the call cannot be recorded (it is still made with the
    pending call's arguments), or ""."""
    if TakenItems.live >= LIVE_MOST and any(map(_builtin_iterator, (*args, *kwargs.values()))):
        return None, (
            f"an iterator argument while {LIVE_MOST} others handed to recorded calls are "
            "still being read (each call given the last one's remainder?) is not frozen"
        )
    done = take_lazily(args, kwargs, canon.encode)
    if done is None:
        return None, ""
    pending = _Materialized(
        index,
        (),
        {},
        None,
        None,
        False,
        None,
        b"",
        call_args=done.call_args,
        call_kwargs=done.call_kwargs,
        proxies=done.proxies,
    )
    places = {place for place, _ in done.proxies}
    rest_args = tuple(None if i in places else v for i, v in enumerate(done.call_args))
    rest_kwargs = {k: None if k in places else v for k, v in done.call_kwargs.items()}
    try:
        pending.enc_args, pending.enc_kwargs = canon.encode_call(rest_args, rest_kwargs)
    except CanonError as e:
        return pending, str(e)
    pending.clock = clock
    pending.recorded = True
    return pending, ""


def complete_input(
    pending: _Materialized,
    immutable: Callable[[Any], bool],
    with_clock: Callable[[bytes, dict[str, Any]], bytes],
) -> str:
    """Complete a call's input with the items its iterator arguments handed on (each frozen
    as it was taken), when its row is noted; the reason it cannot be, or "".  The recorder
    says which values cannot change in place and how a clock joins the input's key."""
    enc_args = list(cast("list[JSON]", pending.enc_args or []))
    enc_kwargs = dict(cast("dict[str, JSON]", pending.enc_kwargs or {}))
    args = list(pending.call_args)
    kwargs = dict(pending.call_kwargs)
    for place, proxy in pending.proxies:
        if proxy.why:
            return str(proxy.why)
        taken: list[JSON] = list(proxy.frozen)
        frozen: JSON = {"$iter": taken if proxy.ended else {"items": taken, "end": "open"}}
        # what the call left of the items, frozen again for its mutations
        handed = IterItems(proxy.items, open=not proxy.ended)
        if isinstance(place, int):
            enc_args[place], args[place] = frozen, handed
        else:
            enc_kwargs[place], kwargs[place] = frozen, handed
    try:
        key = canon.canonical_json([enc_args, enc_kwargs])
    except CanonError as e:
        return str(e)
    if pending.clock is not None:
        key = with_clock(key, pending.clock)
    pending.enc_args, pending.enc_kwargs, pending.key = enc_args, enc_kwargs, key
    pending.args, pending.kwargs = tuple(args), kwargs
    pending.mutable = not all(map(immutable, (*pending.args, *pending.kwargs.values())))
    pending.proxies = ()
    return ""
