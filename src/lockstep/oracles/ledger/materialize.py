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
  A file is left alone here (one open for reading freezes as what it reads:
  :mod:`lockstep.canon.open_files`); a database cursor or a user-defined iterator too
  (and skipped, as before).  Only top-level arguments, not iterators nested inside a
  list or a dict.
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

**Callable arguments** that do not freeze by name (a lambda, a closure, a test's local
function, a bound method, a ``functools.partial`` of one) are handed on the same way
(:class:`TapedCalls`): each call the target makes calls the original, and its arguments
and answer are kept, frozen, so the argument freezes as ``{"$calls": [...]}``
(:mod:`lockstep.canon.callbacks`) and replay answers the same questions with the same
answers.  At most :data:`CALLS_LIMIT` calls are kept; a callable that raised other than a
builtin exception, or whose arguments or answer do not freeze, leaves its call skipped.
A target that *keeps* the callable (a registry, a decorator returning it, a closure it
returns) must get the very function, as unrecorded, or a suite's ``registry["h"] is
handler`` fails: so the first call of each target given such a callable hands it on as it
is (:class:`Probe`, the call skipped) and counts its references before and after.  A
target that kept it gets every later callable as it is; one that did not gets the proxy.
A proxy kept all the same (a target that keeps only some) is seen the same way: that call
is skipped, and the proxy passes calls on from then on, keeping none.  The proxy compares
and hashes as the original and answers its attributes, so a registry keyed by it still
finds it.
"""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, cast

from lockstep import canon
from lockstep.canon import JSON
from lockstep.canon.callbacks import CalledBack, builtin_exception
from lockstep.canon.codec import IterItems
from lockstep.canon.encoding import FALLBACK_ENCODERS, Encoder
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

    @property  # type: ignore[misc]
    def __class__(self) -> type[Any]:
        """The source's class, so ``isinstance(items, types.GeneratorType)`` answers as
        unrecorded (replay hands the items otherwise: a call whose outcome depended on it
        is refused by the verifying interpreter, never replayed wrong)."""
        return type(self._source)

    def __getattr__(self, name: str) -> Any:
        """What the proxy does not answer itself (a generator's ``send``, ``throw``,
        ``close``, ``gi_frame``) is the source's: the target gets the iterator's own
        answer, and its call, which used more than the items it took, is not recorded."""
        if name.startswith("_"):
            raise AttributeError(name)
        found = getattr(self._source, name)
        if not self.why:
            self.why = (
                f"{self._where}: the target used the iterator's {name} (only the items it "
                "takes are frozen)"
            )
        return found

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


CALLS_LIMIT: Final = 1_000
"""Most calls kept of one callable argument; a call that makes more is not recorded."""

_TAPED_TYPES: Final = frozenset({types.FunctionType, types.MethodType, functools.partial})


def _taped_callable(value: Any) -> bool:
    """A function of the caller's (not a class, not a builtin) that does not freeze by its
    name (``$fn``, ``$partial``, ``$method``), to be handed on through a
    :class:`TapedCalls`."""
    if type(value) not in _TAPED_TYPES:
        return False
    try:
        canon.encode(value)
    except CanonError:
        return True
    return False


class TapedCalls:
    """A callable argument handed on: each call calls ``original`` and keeps its arguments
    and answer, frozen (at most :data:`CALLS_LIMIT`), until :meth:`close`.  What goes wrong
    is kept, never raised at the target: the target gets what ``original`` gives or raises.
    It compares, hashes, binds and answers attributes as ``original`` does (a target that
    reads one, its signature or its name, has its call skipped: replay has only the
    calls)."""

    __slots__ = ("__weakref__", "closed", "frozen", "original", "refs", "where", "why")

    def __init__(self, original: Callable[..., Any], where: str) -> None:
        self.original = original
        self.where = where
        self.frozen: list[dict[str, JSON]] = []
        """Each call kept: its arguments and its answer, frozen."""
        self.why = ""
        """Why the argument cannot be frozen, or ""."""
        self.closed = False
        """Whether calls are only passed on now (its call noted, or kept by the target)."""
        self.refs = 0
        """References to it when the target was called (see :func:`kept_callables`)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.closed or self.why:
            return self.original(*args, **kwargs)
        where = f"{self.where} call {len(self.frozen) + 1}"
        if len(self.frozen) >= CALLS_LIMIT:
            self.why = (
                f"{self.where}: a callable called more than {CALLS_LIMIT:,} times is not frozen"
            )
            return self.original(*args, **kwargs)
        try:
            enc_args, enc_kwargs = canon.encode_call(args, kwargs)
        except CanonError as e:
            self.why = f"{where}: {e}"
            return self.original(*args, **kwargs)
        call: dict[str, JSON] = {"args": enc_args}
        if enc_kwargs:
            call["kwargs"] = enc_kwargs
        try:
            result = self.original(*args, **kwargs)
        except Exception as e:
            self._raised(call, e, where)
            raise
        if not self.why:
            try:
                call["returned"] = canon.encode(result)
                self.frozen.append(call)
            except CanonError as e:
                self.why = f"{where}: its answer: {e}"
            except Exception as e:
                self.why = f"{where}: freezing its answer raised {e!r}"
        return result

    def _raised(self, call: dict[str, JSON], exc: Exception, where: str) -> None:
        name = type(exc).__name__
        if type(exc).__module__ != "builtins" or builtin_exception(name) is not type(exc):
            self.why = f"{where}: it raised {canon.exception_type_name(exc)}"
            return
        try:
            call["raised"] = [name, canon.encode(list(exc.args))]
            self.frozen.append(call)
        except CanonError as e:
            self.why = f"{where}: the arguments of the {name} it raised: {e}"

    def close(self) -> None:
        self.closed = True

    def watched(self) -> Any:
        """What the target is handed, whose references tell whether it kept it."""
        return self

    def _read(self, name: str) -> None:
        """The target read an attribute (its signature, its name): not only its calls,
        which are all replay has of it, so its call is not recorded."""
        if not self.closed and not self.why:
            self.why = (
                f"{self.where}: the target read the callable's {name} (only its calls are "
                "frozen, and replay has nothing else of it)"
            )

    def __getattr__(self, name: str) -> Any:
        self._read(name)
        return getattr(self.original, name)

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return self if instance is None else types.MethodType(self, instance)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TapedCalls):
            other = other.original
        return bool(self.original == other)

    def __hash__(self) -> int:
        return hash(self.original)

    def __repr__(self) -> str:
        return repr(self.original)

    @property
    def __wrapped__(self) -> Callable[..., Any]:
        self._read("__wrapped__")
        return self.original

    @property  # type: ignore[misc]
    def __class__(self) -> type[Any]:
        """The original's class, so ``isinstance(fn, functools.partial)`` and
        ``inspect.isfunction(fn)`` answer as unrecorded (marshmallow's ``get_func_args``
        took a partial for a plain callable while recording, and its suite failed); the
        target looked at more than the calls, so its call is not recorded."""
        self._read("class")
        return type(self.original)


class Probe:
    """A callable argument handed to the target as it is, on the first call of a target
    given one, to see whether the target keeps it (:func:`kept_callables`): a target that
    does (a registry, a decorator) must get the very function, as unrecorded, or the
    suite's ``registry["h"] is handler`` fails.  Only a target that did not is handed its
    callables through :class:`TapedCalls` from then on."""

    __slots__ = ("original", "refs")

    def __init__(self, original: Callable[..., Any]) -> None:
        self.original = original
        self.refs = 0

    def watched(self) -> Any:
        """What the target is handed: the function itself."""
        return self.original


def kept_callables(proxies: tuple[tuple[int | str, Any], ...]) -> bool:
    """Whether the target kept a callable argument it was handed: more references to it
    than :meth:`~.call_state._Materialized.count_references` counted as it was called (a
    registry, an attribute, a closure or the function itself returned)."""
    for _, proxy in proxies:
        watched = getattr(type(proxy), "watched", None)  # counted as count_references does
        if watched is not None and sys.getrefcount(watched(proxy)) > proxy.refs:
            return True
    return False


def probing(proxies: tuple[tuple[int | str, Any], ...]) -> bool:
    """Whether the call is a target's first given a callable (:class:`Probe`)."""
    return any(type(proxy) is Probe for _, proxy in proxies)


def settled(
    proxies: tuple[tuple[int | str, Any], ...], ok: bool, relayed: bool = False
) -> tuple[str, str]:
    """Once a call given proxies returned (``ok``) or raised: the mode the target's next
    callables get (:data:`CALLABLES`; "" for unchanged), and why this call is skipped ("":
    it may be noted).  A probe decides the mode; a target found to keep a callable it was
    handed gets them as they are from now on.  Every callable proxy is closed either way:
    calls from now on are not this call's.  A call that raised teaches nothing (its
    traceback refers to what the target was handed); nor does a ``relayed`` one, noted
    when its iterator result ended, which holds what it calls (``map(fn, items)``) while
    it is read: its callables count as not kept."""
    kept = ok and not relayed and kept_callables(proxies)
    for _, proxy in proxies:
        if type(proxy) is TapedCalls:
            proxy.close()
    if probing(proxies):
        return ("off" if kept else "tape") if ok or relayed else "", PROBED
    return ("off", KEPT_CALLABLE) if kept else ("", "")


CALLABLES: Final = ("probe", "tape", "off")
"""What a recorder does with callable arguments: look whether the target keeps them (its
first call given one), hand them through :class:`TapedCalls`, or hand them as they are."""

KEPT_CALLABLE: Final = (
    "the target kept a callable argument (a registry, a closure it returned): its calls "
    "after this one are not the call's to freeze"
)

PROBED: Final = (
    "a callable argument on the first call given one (handed on as it is, to see whether "
    "the target keeps it; later calls record it)"
)


LIVE_MOST: Final = 100
"""Proxies alive at most before an iterator argument is handed on as it is (its call
skipped): each one a target keeps (a lazy result reading its argument later) stays in the
chain of whoever reads on, so a suite that hands each call the last one's remainder
(more-itertools' nested ``before_and_after``) would nest them past the recursion limit."""


@dataclass(frozen=True)
class Taken:
    """A call's arguments with each iterator argument handed on through a
    :class:`TakenItems` and each callable one through a :class:`TapedCalls`."""

    call_args: tuple[Any, ...]
    """What the target is called with: a proxy per iterator or callable argument."""
    call_kwargs: dict[str, Any]
    proxies: tuple[tuple[int | str, TakenItems | TapedCalls], ...]
    """Each proxy with its place: the position or the keyword."""


def take_lazily(
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    freeze: Callable[[Any], JSON],
    callables: bool = True,
) -> Taken | None:
    """Hand every built-in iterator among the top-level arguments on through a proxy, and
    every callable (when ``callables``) through another; None if there is none.  Called
    only for a call whose arguments did not freeze, so the common call pays nothing."""

    def proxy(value: Any, where: str) -> TakenItems | TapedCalls | None:
        if _builtin_iterator(value):
            return TakenItems(value, freeze, where)
        if callables and _taped_callable(value):
            return TapedCalls(value, where)
        return None

    proxies: list[tuple[int | str, TakenItems | TapedCalls]] = []
    call_args: list[Any] = []
    for i, value in enumerate(args):
        handed = proxy(value, f"args[{i}]")
        if handed is not None:
            proxies.append((i, handed))
        call_args.append(value if handed is None else handed)
    call_kwargs: dict[str, Any] = {}
    for name, value in kwargs.items():
        handed = proxy(value, f"kwargs[{name!r}]")
        if handed is not None:
            proxies.append((name, handed))
        call_kwargs[name] = value if handed is None else handed
    if not proxies:
        return None
    return Taken(tuple(call_args), call_kwargs, tuple(proxies))


def taken_call(
    index: int,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    clock: dict[str, Any] | None,
    on: JSON | None = None,
    callables: str = "tape",
) -> tuple[_Materialized | None, str]:
    """The pending call for arguments that did not freeze, its iterators handed on through
    :class:`TakenItems`, its callables through :class:`TapedCalls` (``callables``: see
    :data:`CALLABLES`; a probe hands every argument as it is), and its other arguments
    frozen now; None when no argument is either.  The reason is why the call cannot be
    recorded (it is still made with the pending call's arguments), or ""."""
    if callables == "probe":
        probed = _probes(args, kwargs)
        if probed:
            pending = _Materialized(
                index, (), {}, None, None, False, None, b"", call_args=args, call_kwargs=kwargs
            )
            pending.proxies, pending.recorded = probed, True
            return pending, ""
    if TakenItems.live >= LIVE_MOST and any(map(_builtin_iterator, (*args, *kwargs.values()))):
        return None, (
            f"an iterator argument while {LIVE_MOST} others handed to recorded calls are "
            "still being read (each call given the last one's remainder?) is not frozen"
        )
    done = take_lazily(args, kwargs, canon.encode, callables == "tape")
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
        for _, proxy in done.proxies:
            if type(proxy) is TapedCalls:
                proxy.close()  # the call is not recorded: nothing of it to keep
        return pending, str(e)
    pending.clock = clock
    pending.on = on
    pending.recorded = True
    return pending, ""


def _probes(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[int | str, Probe], ...]:
    places: list[tuple[int | str, Any]] = [*enumerate(args), *kwargs.items()]
    return tuple((place, Probe(value)) for place, value in places if _taped_callable(value))


def complete_input(
    pending: _Materialized,
    immutable: Callable[[Any], bool],
    with_context: Callable[[bytes, dict[str, Any] | None, JSON | None], bytes],
) -> str:
    """Complete a call's input with what its iterator and callable arguments handed on
    (items and calls, each frozen when it was made), when its row is noted (after
    :func:`settled`); the reason it cannot be, or "".  The recorder
    says which values cannot change in place and how a clock and a class join the input's
    key."""
    enc_args = list(cast("list[JSON]", pending.enc_args or []))
    enc_kwargs = dict(cast("dict[str, JSON]", pending.enc_kwargs or {}))
    args = list(pending.call_args)
    kwargs = dict(pending.call_kwargs)
    for place, proxy in pending.proxies:
        if proxy.why:
            return str(proxy.why)
        frozen: JSON
        handed: IterItems | CalledBack
        if type(proxy) is TapedCalls:
            calls = cast("list[JSON]", list(proxy.frozen))
            frozen, handed = {"$calls": calls}, CalledBack(list(proxy.frozen), proxy.where)
        else:
            taken: list[JSON] = list(proxy.frozen)
            frozen = {"$iter": taken if proxy.ended else {"items": taken, "end": "open"}}
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
    key = with_context(key, pending.clock, pending.on)
    pending.enc_args, pending.enc_kwargs, pending.key = enc_args, enc_kwargs, key
    pending.args, pending.kwargs = tuple(args), kwargs
    pending.mutable = not all(map(immutable, (*pending.args, *pending.kwargs.values())))
    pending.proxies = ()
    return ""


def _enc_kept_proxy(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    """An iterator argument's proxy that a target kept in its state (more-itertools'
    ``peekable(iter(items))`` keeps ``iter()`` of it, the proxy itself, as ``self._it``),
    frozen where a later call's input or outcome holds it: as the iterator it reads from,
    which is what the object holds without the recording (a generator still refuses, as
    it would).  Refused as "a lockstep...TakenItems", with advice to register an encoder
    for it, 1,801 of peekable's 1,832 ``__getitem__`` calls were skipped."""
    if type(v) is not TakenItems:
        return None
    source = object.__getattribute__(v, "_source")
    return encoder.enc(source, depth)


FALLBACK_ENCODERS.append(_enc_kept_proxy)
