"""``lockstep.Tape``: record which collaborators a target calls, with what, in what order.

An output-only gate signs off a cleanup that hoists ``rates.rate()`` out of a
loop or memoizes it, because the totals still match to the cent.  Yet call
count, call order and evaluation timing are behaviour: a cache TTL, a metric
counter or a rate-limited API notices.  A tape freezes that behaviour.

Three ways to put a collaborator on the tape:

* :meth:`Tape.spy` wraps one callable;
* :meth:`Tape.watch` returns a proxy recording every public method call (and,
  opt-in, attribute reads) of a real collaborator or a fake;
* :meth:`Tape.patch` swaps a module-level function for a spy during a ``with``
  block (patch it where the target looks it up, as with ``unittest.mock``).

Each call becomes one :class:`Event`, in the order the calls *started*: the
collaborator's name, its arguments frozen through the canonical codec (not
``repr``: timestamps and objects go through registered encoders), the outcome
(the returned value, or the exception's type and message stem; a returned
generator or iterator is recorded as ``{"$lazy": "generator"}``, never
consumed), and ``within``:
the innermost spied call still open on the same thread.  ``within`` is what
catches a change of evaluation *timing*: when an eager list becomes a generator,
the same lookups happen, but inside a different caller, after its ``try`` has
closed.

Values are frozen at call time (a list the target mutates later is recorded
as it was passed), and every string in them goes through the tape's named
rules, so a run id or a timestamp is normalized exactly as everywhere else.
A value that cannot be frozen raises :class:`~lockstep.errors.CanonError`
naming the call and the path inside the value; the tape remembers the error,
so a target that swallows it with ``except Exception`` still cannot produce a
half-true tape.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import itertools
import math
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any, Final, Literal, TypeVar, cast

import msgspec

from lockstep.canon import DEFAULT_STEM, LEAF_ENCODERS, FrozenException, encode, freeze_exception
from lockstep.errors import CanonError, UsageError
from lockstep.rules import RuleSet

F = TypeVar("F", bound=Callable[..., Any])

CompareMode = Literal["ordered", "multiset", "counts"]
"""How two tapes are compared: exact sequence, same calls in any order, same count per name."""

COMPARE_MODES: Final[tuple[CompareMode, ...]] = ("ordered", "multiset", "counts")


class Event(
    msgspec.Struct,
    frozen=True,
    gc=False,
    forbid_unknown_fields=True,
    omit_defaults=True,
    kw_only=True,
):
    """One collaborator call (or attribute read) as the tape keeps it."""

    collaborator: str
    """``rates.rate``: the name given to the spy, watch or patch, plus the method name."""
    args: list[Any] = []
    """Positional arguments in canonical (tagged JSON) form."""
    kwargs: dict[str, Any] = {}
    read: bool = False
    """True for an attribute read of a watched object (``attributes=True``), not a call."""
    returned: Any = None
    """The returned (or read) value, canonical form; meaningless when ``raised`` is set."""
    raised: FrozenException | None = None
    within: str = ""
    """The innermost spied call open on this thread when this one started ("" at top level)."""


_PLAIN: Final = frozenset({str, int, bool, type(None)})
"""Types whose canonical form is the value itself: the fast path for small arguments."""


LAZY_TAG: Final = "$lazy"
"""How a returned generator or iterator is recorded: its type name, never its items."""

_KEEP_ITERATORS: Final = (str, bytes, bytearray, list, tuple, dict, set, frozenset)


def _plain(value: Any) -> bool:
    t = type(value)
    return t in _PLAIN or (t is float and math.isfinite(value))


class _Stack(threading.local):
    """The spied calls open on the current thread (innermost last)."""

    def __init__(self) -> None:
        self.names: list[str] = []


class Tape:
    """The calls a target makes to its collaborators, in the order they started.

    ``rules`` normalize every string inside recorded values (a :class:`RuleSet`,
    see :func:`lockstep.rules.resolve_rules`); ``stem_length`` is how much of an
    exception message is kept.
    """

    def __init__(self, *, rules: RuleSet | None = None, stem_length: int = DEFAULT_STEM) -> None:
        self._done: list[tuple[int, Event]] = []
        """Finished events with the sequence number taken when their call *started*.

        Numbering at the start keeps call order (an outer spied call comes before
        the calls it makes); ``itertools.count`` and ``list.append`` are atomic, so
        threads need no lock.
        """
        self._seq = itertools.count()
        self._rules = rules if rules is not None and rules.active else None
        self._stem_length = stem_length
        self._open = _Stack()
        self.failure: CanonError | None = None
        """The first value that could not be frozen; such a tape is never compared or saved."""

    # ------------------------------------------------------------------ reading

    @property
    def rules(self) -> RuleSet:
        """The rules applied to recorded values (possibly none)."""
        return self._rules if self._rules is not None else RuleSet()

    @property
    def events(self) -> list[Event]:
        """The finished events, in call order; raises the recorded failure if there is one."""
        if self.failure is not None:
            raise self.failure
        self._done.sort(key=_first)
        return [event for _, event in self._done]

    def __len__(self) -> int:
        return len(self._done)

    def clear(self) -> None:
        """Forget every event (for a driver that sets up collaborators before the real run)."""
        self._done = []
        self.failure = None

    # ------------------------------------------------------------------ recording

    def spy(self, name: str, fn: F) -> F:
        """Wrap ``fn`` so each call is recorded under ``name``; the wrapper behaves like ``fn``."""
        __tracebackhide__ = True
        _check_name(name, "spy")
        if not callable(fn):
            raise UsageError(
                f"tape.spy({name!r}, ...): a {type(fn).__name__} is not callable; "
                "spy on a function or a method (use tape.watch for an object)"
            )
        return self._wrap(name, fn)

    def watch(self, obj: Any, *, name: str | None = None, attributes: bool = False) -> Any:
        """A proxy for ``obj`` that records every call of a public method as ``name.method``.

        Attribute reads are recorded too when ``attributes`` is true.  Names that
        start with ``_`` and classes (exception types, nested classes) pass through
        unrecorded, so ``except rates.RateError`` still works on the proxy.
        """
        __tracebackhide__ = True
        label = name if name is not None else _default_watch_name(obj)
        _check_name(label, "watch")
        if obj is None:
            raise UsageError(f"tape.watch(None, name={label!r}): nothing to watch")
        return _Watched(self, obj, label, attributes)

    @contextlib.contextmanager
    def patch(self, target: str, *, name: str | None = None) -> Iterator[Callable[..., Any]]:
        """Replace the function ``pkg.mod.attr`` by a spy for the ``with`` block, then restore it.

        The events are named ``name``, by default the last two parts of the
        target (``"billing.rates.rate"`` → ``rates.rate``).
        """
        __tracebackhide__ = True
        owner, attr, default_name = _resolve_patch_target(target)
        original = getattr(owner, attr)
        label = name if name is not None else default_name
        _check_name(label, "patch")
        if not callable(original):
            raise UsageError(
                f"tape.patch({target!r}): a {type(original).__name__} is not callable; "
                "patch a function"
            )
        spied = self._wrap(label, original)
        setattr(owner, attr, spied)
        try:
            yield spied
        finally:
            setattr(owner, attr, original)

    # ------------------------------------------------------------------ internals

    def _wrap(self, name: str, fn: F) -> F:
        call = self._call

        def spied(*args: Any, **kwargs: Any) -> Any:
            try:
                return call(name, fn, args, kwargs)
            except CanonError:
                __tracebackhide__ = True  # pytest: show the caller's line, not ours
                raise

        with contextlib.suppress(AttributeError, TypeError):
            functools.update_wrapper(spied, fn)
        return cast(F, spied)

    def freeze(self, value: Any, where: str = "value") -> Any:
        """Freeze ``value`` as the tape freezes arguments: canonical form, then the rules.

        A value that cannot be frozen is remembered as the tape's :attr:`failure`
        and raised from here, so a test's traceback ends at the spied call, not
        inside the codec.
        """
        try:
            frozen = encode(value, path=where)
        except CanonError as e:
            __tracebackhide__ = True
            if self.failure is None:
                self.failure = e
            raise e.with_traceback(None) from None
        if self._rules is not None:
            return _normalize(frozen, self._rules)
        return frozen

    def _freeze_args(self, name: str, args: tuple[Any, ...]) -> list[Any]:
        if not args:
            return []
        if self._rules is None:
            plain = _PLAIN
            for value in args:
                if type(value) not in plain:
                    break
            else:
                return list(args)
            leaves = LEAF_ENCODERS
            frozen: list[Any] = []
            for value in args:
                t = type(value)
                if t in plain:
                    frozen.append(value)
                    continue
                leaf = leaves.get(t)
                if leaf is None:
                    break
                frozen.append(leaf(value))
            else:
                return frozen
        __tracebackhide__ = True
        return cast(list[Any], self.freeze(list(args), f"{name} args"))

    def _freeze_kwargs(self, name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        if self._rules is None:
            plain = _PLAIN
            leaves = LEAF_ENCODERS
            frozen: dict[str, Any] = {}
            for key, value in kwargs.items():
                if key[:1] == "$":
                    break
                t = type(value)
                if t in plain:
                    frozen[key] = value
                    continue
                leaf = leaves.get(t)
                if leaf is None:
                    break
                frozen[key] = leaf(value)
            else:
                return frozen
        __tracebackhide__ = True
        return cast(dict[str, Any], self.freeze(kwargs, f"{name} kwargs"))

    def _freeze_result(self, name: str, value: Any) -> Any:
        if self._rules is None:
            t = type(value)
            if t in _PLAIN or (t is float and math.isfinite(value)):
                return value
            leaf = LEAF_ENCODERS.get(t)
            if leaf is not None:
                return leaf(value)
        if hasattr(type(value), "__next__") and not isinstance(value, _KEEP_ITERATORS):
            # A generator is not data, and consuming it would change the target's
            # timing; that the call returned something lazy *is* the behaviour.
            return {LAZY_TAG: type(value).__qualname__}
        __tracebackhide__ = True
        return self.freeze(value, f"{name} result")

    def _call(
        self, name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        try:
            frozen_args = self._freeze_args(name, args)
            frozen_kwargs = self._freeze_kwargs(name, kwargs) if kwargs else {}
        except CanonError:
            __tracebackhide__ = True
            raise
        seq = next(self._seq)
        stack = self._open.names
        within = stack[-1] if stack else ""
        stack.append(name)
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            stack.pop()
            failed = Event(
                collaborator=name,
                args=frozen_args,
                kwargs=frozen_kwargs,
                raised=self.freeze_exception(exc),
                within=within,
            )
            self._done.append((seq, failed))
            raise
        stack.pop()
        event = Event(
            collaborator=name,
            args=frozen_args,
            kwargs=frozen_kwargs,
            returned=self._freeze_result(name, result),
            within=within,
        )
        self._done.append((seq, event))
        return result

    def freeze_exception(self, exc: BaseException) -> FrozenException:
        """Freeze an exception as the tape freezes a collaborator's: type + normalized stem."""
        frozen = freeze_exception(exc, stem_length=self._stem_length)
        if self._rules is None:
            return frozen
        return FrozenException(frozen.exc_type, self._rules.apply(frozen.exc_stem))

    def _read(self, name: str, value: Any) -> None:
        stack = self._open.names
        event = Event(
            collaborator=name,
            read=True,
            returned=self._freeze_result(name, value),
            within=stack[-1] if stack else "",
        )
        self._done.append((next(self._seq), event))


def _first(item: tuple[int, Event]) -> int:
    return item[0]


class _Watched:
    """The proxy :meth:`Tape.watch` returns; its own attributes are name-mangled out of the way.

    The spy made for a method is kept and handed out again while the watched object
    still gives the same callable for that name (a bound method of the same function
    on the same object compares equal), so a call through the proxy costs what a call
    of a spy costs, not a new wrapper each time.
    """

    __slots__ = ("__attributes", "__name", "__obj", "__spies", "__tape")

    def __init__(self, tape: Tape, obj: Any, name: str, attributes: bool) -> None:
        object.__setattr__(self, "_Watched__tape", tape)
        object.__setattr__(self, "_Watched__obj", obj)
        object.__setattr__(self, "_Watched__name", name)
        object.__setattr__(self, "_Watched__attributes", attributes)
        object.__setattr__(self, "_Watched__spies", {})

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self.__obj, attr)
        known = self.__spies.get(attr)
        if known is not None and (
            known[0] is value or (type(value) is types.MethodType and known[0] == value)
        ):
            return known[1]
        if attr.startswith("_") or isinstance(value, type):
            return value
        name = f"{self.__name}.{attr}"
        if callable(value):
            spied = self.__tape._wrap(name, value)
            self.__spies[attr] = (value, spied)
            return spied
        if self.__attributes:
            self.__tape._read(name, value)
        return value

    def __setattr__(self, attr: str, value: Any) -> None:
        setattr(self.__obj, attr, value)

    def __repr__(self) -> str:
        return f"<watched {self.__name}: {self.__obj!r}>"


def _check_name(name: object, what: str) -> None:
    __tracebackhide__ = True
    if not isinstance(name, str) or not name.strip():
        raise UsageError(
            f"tape.{what}: the collaborator name must be a non-empty string, got {name!r}"
        )


def _default_watch_name(obj: Any) -> str:
    module_name = getattr(obj, "__name__", None)
    if isinstance(module_name, str) and type(obj).__name__ == "module":
        return module_name.rpartition(".")[2]
    return type(obj).__name__


def _resolve_patch_target(target: str) -> tuple[Any, str, str]:
    """``pkg.mod.attr`` (or ``pkg.mod:attr``) → (owner, attribute name, default event name)."""
    __tracebackhide__ = True
    dotted = target.replace(":", ".")
    parts = dotted.split(".")
    if len(parts) < 2 or not all(parts):
        raise UsageError(f"tape.patch({target!r}): expected 'package.module.function'")
    default_name = ".".join(parts[-2:])
    for split in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:split])
        try:
            owner: Any = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name is not None and module_name.startswith(e.name):
                continue
            raise UsageError(
                f"tape.patch({target!r}): cannot import {module_name!r}: {e}"
            ) from None
        for part in parts[split:-1]:
            try:
                owner = getattr(owner, part)
            except AttributeError:
                raise UsageError(
                    f"tape.patch({target!r}): {module_name!r} has no attribute {part!r}"
                ) from None
        if not hasattr(owner, parts[-1]):
            raise UsageError(
                f"tape.patch({target!r}): {module_name!r} has no attribute {parts[-1]!r}"
            )
        return owner, parts[-1], default_name
    raise UsageError(f"tape.patch({target!r}): no importable module in {dotted!r}")


def _normalize(value: Any, rules: RuleSet) -> Any:
    """Apply ``rules`` to every string (and string key) inside an encoded value."""
    t = type(value)
    if t is str:
        return rules.apply(value)
    if t is list:
        return [_normalize(v, rules) for v in value]
    if t is dict:
        return {
            (k if k.startswith("$") else rules.apply(k)): _normalize(v, rules)
            for k, v in value.items()
        }
    return value
