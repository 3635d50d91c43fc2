"""Objects of the project's own classes: ``$obj``, the class by name plus its state.

Real code passes and returns objects of its own classes (a Duration, a Version, a Money).
Such an object freezes by structure, the way pickle's state protocol sees it:

    {"$obj": ["pkg.mod:Qual", {"base": ..., "new": [...], "state": ...}]}

* ``base``: for a subclass of a builtin value type (str, int, float, complex, bytes,
  bytearray, tuple, list, dict, set, frozenset, Decimal, date, datetime, time, timedelta),
  the value as that exact builtin, read through the builtin's own slots (never a method
  the subclass overrides, such as ``__str__`` or ``__iter__``);
* ``new``: the arguments of ``cls.__new__`` when the class's own ``__reduce_ex__`` says so in
  pickle's ``copyreg.__newobj__`` form (any other reduce form is passed over for the default state);
* ``state``: ``__getstate__()`` -- the class's own where it defines one, else Python's
  default (``__dict__``, and ``(__dict__, {slot: value})`` for ``__slots__``).

Neither ``__repr__`` nor ``__eq__`` is ever asked, so a changed attribute is a changed
frozen form even where ``__eq__`` would call the objects equal.

Which classes: the project's own, i.e. defined under a package allowed with
:func:`allow_callables_from` (the configured targets' packages) or matching a pattern given
to :func:`allow_classes_matching` (``[lockstep] freeze_classes``); and tzinfo classes of any
library, since a tz-aware datetime must keep its zone.  Decoding is as inert as for
``$dataclass``: the name resolves only to a class already imported (no import, no
``getattr``) that passes the same test; the object is made with the builtin base's
``__new__`` (``object.__new__`` for a plain class) -- or, for the ``new`` form, the class's
own ``__new__`` -- and its state set with ``__setstate__`` where the class defines it,
else straight into ``__dict__`` and the slots.  The only code that runs is the project's
own class's (its ``__new__``/``__setstate__``/``__getstate__``), never a class named
only by the data.  A reference cycle through objects (a key that lists itself, a child
that points at its parent) freezes as ``{"$ref": n}``: the object ``n`` levels out from
the innermost object being frozen (0: that object); it thaws to that very object, so the
cycle comes back.  An object reached twice otherwise is frozen twice (identity is not
part of the contract).

A class whose own ``__reduce_ex__`` returns ``(cls, args, state)`` and that defines its own
``__setstate__`` freezes that ``state`` (what its ``__setstate__`` reads), not ``__dict__``.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import marshal
import pickle
import threading
import types
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final, cast

from lockstep.canon import graphs, shared
from lockstep.canon._core import (
    JSON,
    MAX_DEPTH,
    TooLarge,
    Unfreezable,
    _short,
    _TooDeep,
    check_level,
    qualified_name,
)
from lockstep.canon.c_state import c_state_base
from lockstep.canon.cached_attributes import cached_names, without_cached
from lockstep.canon.decoding import TAG_DECODERS, _malformed, decode_at, list_payload, str_payload
from lockstep.canon.kept import kept_path, linked, resolve_kept
from lockstep.canon.library_classes import library_plain, member_slot, test_module
from lockstep.canon.registry import (
    _CALLABLE_SCOPE,
    _CLASS_FACTS,
    _EXT_BY_TYPE,
    _NODE_NAMES,
    _OBJECT_PLANS,
    _SLOTTED_PLANS,
    _TYPES_BY_NAME,
    _already_imported,
    class_named,
    forget_plans,
    module_and_rest,
    no_longer_imports,
    reachable_name,
)
from lockstep.canon.sentinels import is_marker, marker_of
from lockstep.errors import CanonError, ThawError

if TYPE_CHECKING:
    from lockstep.canon.encoding import Encoder


_CLASS_PATTERNS: list[str] = []
"""``fnmatch`` patterns of ``module.QualName`` whose classes freeze by structure too."""

_ACTIVE_OBJECTS: Final = threading.local()
"""Per thread, ``ids``: the objects being frozen, outermost first (a cycle meets one again),
and ``classes``, their classes; ``done``: while the outermost object freezes, each object
already frozen inside it."""

_FAST_OPEN: Final = threading.local()
"""Per thread, ``ids``: the project's objects the fast encoder is inside, outermost first."""


def fast_open() -> list[int]:
    """The ids of the project's objects the fast encoder (:func:`~lockstep.canon.encoding.
    _fast_encoder`) is freezing in this thread, outermost first.

    The fast encoder keeps no cycle bookkeeping: it met a cycle only at the depth limit,
    and the objects it handed to :func:`freeze_object` did not know the objects around
    them, so each froze the whole graph again down to the cycle.  A ``markdown.Markdown``
    (its processors each keep the instance) took half a second to give up on and 2 ms by
    the slow encoder; markdown's suite of 1.5 s had not finished recording after ten
    minutes.  Met again inside itself, such an object now ends the fast attempt at once,
    and the slow encoder, which tracks the objects it is inside, freezes the value."""
    try:
        return _FAST_OPEN.ids  # type: ignore[no-any-return]
    except AttributeError:
        ids: list[int] = []
        _FAST_OPEN.ids = ids
        return ids


MAX_OBJECTS: Final = 20_000
"""Most objects an object read through its state protocol (slots, ``__reduce__``,
``__getstate__``) may hold, counting each time one is reached: a larger one (a whole
time-zone database) is data, not behaviour, and freezing it would take minutes.  (Plain
objects freeze on the fast path, uncounted; the recorder's row size limit bounds them.)"""


def allow_classes_matching(*patterns: str) -> None:
    """Let classes whose ``module.QualName`` matches one of ``patterns`` freeze by structure."""
    added = [p for p in dict.fromkeys(patterns) if p and p not in _CLASS_PATTERNS]
    if added:  # the same patterns again change nothing
        _CLASS_PATTERNS.extend(added)
        forget_plans()


def _class_facts(cls: type[Any]) -> tuple[object, bool, bool]:
    """``(__module__, own, tzinfo)`` of a class, answered once per class and module name
    (:data:`~lockstep.canon.registry._CLASS_FACTS`; a factory's class may be given its
    caller's module after it was made)."""
    module = getattr(cls, "__module__", None)
    facts = _CLASS_FACTS.get(cls)
    if facts is None or facts[0] is not module:
        facts = _CLASS_FACTS[cls] = (module, _own_class_now(cls), _tzinfo_class_now(cls))
    return facts


def _own_class(cls: type[Any]) -> bool:
    """Whether ``cls`` is the project's own: under an allowed package, or matched by a pattern."""
    return _class_facts(cls)[1] if isinstance(cls, type) else _own_class_now(cls)


def _own_class_now(cls: type[Any]) -> bool:
    module = getattr(cls, "__module__", None)
    if not isinstance(module, str):
        return False
    if module.split(".")[0] in _CALLABLE_SCOPE:
        return True
    if _CLASS_PATTERNS:
        import fnmatch

        dotted = f"{module}.{cls.__qualname__}"
        return any(fnmatch.fnmatchcase(dotted, p) for p in _CLASS_PATTERNS)
    return False


def _tzinfo_class(cls: type[Any]) -> bool:
    return _class_facts(cls)[2]


def _tzinfo_class_now(cls: type[Any]) -> bool:
    import datetime as dt

    return issubclass(cls, dt.tzinfo) and cls not in (dt.tzinfo, dt.timezone)


def project_or_zone(cls: type[Any]) -> bool:
    """Whether ``cls`` is the project's own (or matches ``freeze_classes``) or a tzinfo
    class: its objects freeze by structure before any fallback encoder is asked."""
    if not isinstance(cls, type):
        return False
    _, own, zone = _class_facts(cls)
    return own or zone


@functools.cache
def _value_bases() -> tuple[type[Any], ...]:
    """Builtin value types a project class may extend, most derived first (bool cannot be).

    ``OrderedDict`` and ``defaultdict`` keep state a plain dict does not (the order of
    their own links, the factory): an ``OrderedDict`` subclass rebuilt as a dict iterated
    as empty (icalendar's ``Component.to_ical`` wrote an empty event, and all but one of
    its rows were refused), a ``defaultdict`` subclass lost its factory."""
    import collections
    import datetime as dt

    return (
        collections.OrderedDict,
        collections.defaultdict,
        dt.datetime,  # before date: datetime is a date
        dt.date,
        dt.time,
        dt.timedelta,
        Decimal,
        str,
        int,
        float,
        complex,
        bytes,
        bytearray,
        tuple,
        list,
        dict,
        set,
        frozenset,
    )


def _value_base(cls: type[Any]) -> type[Any] | None:
    for base in _value_bases():
        if issubclass(cls, base):
            return base
    return None


def _as_base(v: Any, base: type[Any]) -> Any:  # noqa: C901 -- one flat dispatch by base
    """``v`` as an exact ``base`` value, read through the builtin's own slots and descriptors."""
    import datetime as dt

    if base is str:
        return str.__str__(v)
    if base is int:
        return int.__int__(v)
    if base is float:
        return float.__float__(v)
    if base is complex:
        return complex(complex.real.__get__(v), complex.imag.__get__(v))
    if base is bytes:
        return bytes(memoryview(v))
    if base is bytearray:
        return bytearray(memoryview(v))
    if base is tuple or base is list:
        return base(base.__getitem__(v, slice(None)))
    if base is dict:
        return dict(dict.items(v))
    if base is OrderedDict:  # its own links hold the order, which dict.items may not
        return OrderedDict(OrderedDict.items(v))
    if base is defaultdict:
        factory = defaultdict.__dict__["default_factory"].__get__(v)
        return defaultdict(factory, dict.items(v))
    if base is set or base is frozenset:
        return base(base.__iter__(v))
    if base is Decimal:
        return Decimal(v)
    if base is dt.timedelta:
        get = dt.timedelta.__dict__
        return dt.timedelta(
            get["days"].__get__(v), get["seconds"].__get__(v), get["microseconds"].__get__(v)
        )
    names = {
        dt.date: ("year", "month", "day"),
        dt.datetime: ("year", "month", "day", "hour", "minute", "second", "microsecond"),
        dt.time: ("hour", "minute", "second", "microsecond"),
    }[base]
    owners = base.__mro__
    parts = [_slot(owners, name).__get__(v) for name in names]
    if base is dt.date:
        return dt.date(*parts)
    tz = _slot(owners, "tzinfo").__get__(v)
    fold = _slot(owners, "fold").__get__(v)
    return base(*parts, tzinfo=tz, fold=fold)


def _slot(owners: tuple[type[Any], ...], name: str) -> Any:
    for owner in owners:
        if name in owner.__dict__:
            return owner.__dict__[name]
    raise AttributeError(name)


_GROWN_BASES: Final = (list, dict, set, bytearray, OrderedDict, defaultdict)
"""Builtin bases an object is made empty of, then filled: its items may hold it."""


def _allocate_grown(cls: type[Any], base: type[Any]) -> Any:
    """An empty ``cls`` instance of a :data:`_GROWN_BASES` base, by the builtin's ``__new__``
    (never the class's own ``__new__`` or ``__init__``)."""
    new: Any = base.__new__
    obj = new(cls)
    if base is defaultdict:
        defaultdict.__init__(obj)
    return obj


def _grow(obj: Any, base: type[Any], value: Any) -> None:
    """Fill ``obj`` (see :func:`_allocate_grown`) with the builtin ``value``, by the
    builtin's own methods (never the subclass's ``__setitem__``)."""
    if base is defaultdict:
        obj.default_factory = value.default_factory
        dict.update(obj, value)
    elif base is OrderedDict:
        for key, item in value.items():
            OrderedDict.__setitem__(obj, key, item)
    elif base is list or base is bytearray:
        base.extend(obj, value)
    else:
        base.update(obj, value)


def _thawed_with_base(
    cls: type[Any], base: type[Any], form: Any, name: str, path: str, depth: int
) -> Any:
    """A ``cls`` instance of the builtin ``base`` the form ``form`` holds.  One of
    :data:`_GROWN_BASES` is made empty first: a child in its items may point back at it
    (``{"$ref": n}``), as a configobj ``Section``'s ``parent`` does, which the encoder
    writes while the object is open around its base."""
    if base not in _GROWN_BASES:
        value = decode_at(form, path, depth + 3)
        if type(value) is not base:
            raise CanonError(f"malformed $obj value: the base of {name} is not a {base}", path)
        return _from_base(cls, base, value)
    obj = _allocate_grown(cls, base)
    value = _thawed_inside(obj, form, path, depth + 3)
    if type(value) is dict and base in (OrderedDict, defaultdict):
        value = base(value) if base is OrderedDict else defaultdict(None, value)
    if type(value) is not base:
        raise CanonError(f"malformed $obj value: the base of {name} is not a {base}", path)
    _grow(obj, base, value)
    return obj


def _thawed_inside(obj: Any, form: Any, path: str, depth: int) -> Any:
    """``form`` thawed with ``obj`` the innermost object a ``{"$ref": n}`` in it may name."""
    thawing = _thawing()
    thawing.append(obj)
    try:
        return decode_at(form, path, depth)
    finally:
        thawing.pop()


def _from_base(cls: type[Any], base: type[Any], value: Any) -> Any:
    """A ``cls`` instance holding the immutable builtin ``value``, made by the builtin's
    ``__new__`` (a mutable base's: :func:`_allocate_grown`, then :func:`_grow`)."""
    import datetime as dt

    if base is dt.timedelta:
        return dt.timedelta.__new__(cls, value.days, value.seconds, value.microseconds)
    if base is dt.date:
        return dt.date.__new__(cls, value.year, value.month, value.day)
    if base is dt.datetime:
        return dt.datetime.__new__(
            cls,
            *(value.year, value.month, value.day, value.hour, value.minute, value.second),
            value.microsecond,
            value.tzinfo,
            fold=value.fold,
        )
    if base is dt.time:
        return dt.time.__new__(
            cls,
            *(value.hour, value.minute, value.second, value.microsecond),
            value.tzinfo,
            fold=value.fold,
        )
    return base.__new__(cls, value)


def _own_reduce(cls: type[Any]) -> bool:
    """Whether the class (not a builtin base) defines ``__reduce__``/``__reduce_ex__``."""
    for owner in cls.__mro__:
        if owner is object or owner.__module__ in ("builtins", "datetime", "decimal", "_decimal"):
            return False
        if "__reduce_ex__" in owner.__dict__ or "__reduce__" in owner.__dict__:
            return True
    return False


def _custom(cls: type[Any], name: str) -> bool:
    """Whether ``cls`` has its own ``name`` (``__getstate__``/``__setstate__``), not object's."""
    found = getattr(cls, name, None)
    return found is not None and found is not getattr(object, name, None)


def _object_body(
    self: Encoder, v: Any, t: type[Any], depth: int, *, reduce: bool
) -> dict[str, JSON]:
    """The ``{"base", "new", "state"}`` body of an object; ``reduce`` heeds the class's own
    ``__reduce__`` when it is in pickle's ``copyreg.__newobj__`` form (any other form, such as
    a singleton's ``(factory, ())``, is passed over for the default state: the verification
    refuses a row whose objects that state does not rebuild)."""
    body: dict[str, JSON] = {}
    base = _value_base(t)
    if base is not None:
        body["base"] = self.child(_as_base(v, base), "", depth + 1)
    reduced = _newobj_reduction(v, t) if reduce and _own_reduce(t) else None
    if reduced is not None:
        new_args, state = reduced
        if base is None:
            body["new"] = self.child(new_args, ".__new__", depth + 1)
    elif reduce and _own_reduce(t) and _custom(t, "__setstate__"):
        state = _setstate_reduction(v, t)
    elif _custom(t, "__getstate__"):
        state = _own_state(v, t)
    else:  # what the class caches on the object is not its state (cached_attributes)
        state = without_cached(object.__getstate__(v), t)
    if state is not None:
        body["state"] = _state_form(self, state, depth + 1)
    return body


def _state_form(self: Encoder, state: Any, depth: int) -> JSON:
    """An object's state frozen at ``depth``; a refusal inside names the attribute, not its
    place in pickle's ``(__dict__, slots)`` pair (``args[0]["expr"]``, not ``[1]["expr"]``)."""
    try:
        return self.enc(state, depth)
    except Unfreezable as e:
        if _slot_pair(state) and e.segments and e.segments[-1] in ("[0]", "[1]"):
            e.segments.pop()
        raise


def _slot_pair(state: Any) -> bool:
    """Whether ``state`` is pickle's state of an object with ``__slots__``: ``(its
    __dict__ or None, {slot: value})``."""
    return (
        type(state) is tuple
        and len(state) == 2
        and (state[0] is None or type(state[0]) is dict)
        and type(state[1]) is dict
    )


def _own_state(v: Any, t: type[Any]) -> Any:
    """The class's own ``__getstate__()``; None for an object with nothing set yet, which
    that method cannot read (``self`` of a constructor before it runs: netaddr's
    ``IPAddress.__getstate__`` reads slots ``__init__`` sets, so every ``IPAddress(...)``
    call was skipped).  Frozen without a state, such an object thaws allocated and blank,
    as its constructor found it."""
    try:
        return v.__getstate__()
    except AttributeError:
        if object.__getstate__(v) is None:  # no __dict__ entry, no slot set
            return None
        raise


def _newobj_reduction(v: Any, t: type[Any]) -> tuple[list[Any], Any] | None:
    """``(__new__ arguments, state)`` when ``v.__reduce_ex__(2)`` has the form
    ``(copyreg.__newobj__, (cls, *args), state, ...)``, or names a function of its own
    called ``__newobj__`` there, as pickle's protocol 2 names the one that calls
    ``cls.__new__(cls, *args)`` (configobj's ``Section``: ``(__newobj__, (cls,), (dict(self),
    self.__dict__))``; its ``__setstate__`` reads that pair, and the ``__dict__`` alone
    made it raise ``KeyError: 0``, so every row holding a configuration was refused).  The
    function itself is never called to thaw: ``cls.__new__`` is, and the verification
    refuses a row it does not rebuild.  None for any other form."""
    import copyreg

    try:
        reduced = v.__reduce_ex__(2)
    except Exception:
        return None
    if (
        isinstance(reduced, tuple)
        and len(reduced) >= 2
        and (
            reduced[0] is copyreg.__newobj__  # type: ignore[attr-defined]
            or (type(reduced[0]) is types.FunctionType and reduced[0].__name__ == "__newobj__")
        )
        and isinstance(reduced[1], tuple)
        and reduced[1][:1] == (t,)
    ):
        return list(reduced[1][1:]), reduced[2] if len(reduced) > 2 else None
    return None


def _setstate_reduction(v: Any, t: type[Any]) -> Any:
    """The state a class's own ``__reduce_ex__`` hands its own ``__setstate__`` in the form
    ``(cls, args, state, ...)`` (tomlkit's ``Container``: ``__dict__`` is not what its
    ``__setstate__`` reads); else the default state.  The constructor call is not kept:
    thawing sets that state on an empty object, and the verification refuses a row whose
    objects that does not rebuild."""
    try:
        reduced = v.__reduce_ex__(2)
    except Exception:
        reduced = None
    if (
        isinstance(reduced, tuple)
        and len(reduced) >= 3
        and reduced[0] is t
        and reduced[2] is not None
    ):
        return reduced[2]
    return v.__getstate__() if _custom(t, "__getstate__") else object.__getstate__(v)


def object_plan(t: type[Any]) -> str | None:
    """Whether objects of ``t`` freeze as ``{"state": __dict__}`` and nothing else.

    Only the project's own classes (and tzinfo classes) get a plan: another library's
    plain objects (a linked list of nodes) freeze through :func:`freeze_object`, which
    counts them against :data:`MAX_OBJECTS`.

    A class that would, but has ``__slots__``, freezes as ``{"state":
    object.__getstate__(v)}`` (what :func:`freeze_object` writes for it): its name goes to
    :data:`~lockstep.canon.registry._SLOTTED_PLANS` instead, for the hot path too."""
    plan: str | None = None
    slotted: str | None = None
    try:
        name = qualified_name(t)
        if (
            (_own_class(t) or _tzinfo_class(t))
            and not issubclass(t, BaseException | enum.Enum | tuple)
            and not dataclasses.is_dataclass(t)
            and _value_base(t) is None
            and c_state_base(t, _value_base) is None
            and not _custom(t, "__getstate__")
            and not _own_reduce(t)
            and not cached_names(t)
            and not any(issubclass(t, ext.cls) for ext in _EXT_BY_TYPE.values())
            and "<" not in t.__qualname__
            and _already_imported(name) is t
        ):
            if any("__slots__" in vars(c) for c in t.__mro__):
                slotted = name
            else:
                plan = name
    except Exception:
        plan = slotted = None
    _OBJECT_PLANS[t] = plan
    if slotted is None:
        _SLOTTED_PLANS.pop(t, None)
    else:
        _SLOTTED_PLANS[t] = slotted
    return plan


class _NoKey(Exception):
    """A value :func:`object_key` does not cover (or too large to be worth it)."""


_KEY_LEAVES: Final = frozenset({int, str, bytes, bool, float, type(None)})

KEY_BUDGET: Final = 256
"""Most containers and objects :func:`object_key` walks in one call before giving up."""

STATE_KEY_MAX: Final = 4096
"""Longest state key kept: a larger state is frozen, never remembered."""


class _BuiltinsOnly(pickle.Pickler):
    """A pickler that writes exact builtin values only (int, float, str, bytes, None,
    bool, bytearray, and dict, list, tuple, set and frozenset of them), in C.

    pickle keeps apart every type canon keeps apart (a list from a tuple, 1 from 1.0 and
    True, -0.0 from 0.0), and the C pickler asks :meth:`reducer_override` only for an
    object that is not one of those exact types: that refuses it, so the key never depends
    on code of the object's class (a ``__reduce__``); and it writes a bytearray apart from
    bytes, which ``marshal`` does not.  Equal keys mean equal object graphs, hence equal canonical bytes.
    """

    def reducer_override(self, obj: Any) -> Any:
        raise _NoKey


class _Sink:
    """Where a key pickler writes: its list's ``append`` (no file object to rewind)."""

    __slots__ = ("write",)

    def __init__(self, write: Any) -> None:
        self.write = write


class _KeyPickler(_BuiltinsOnly):
    """A key pickler in pickle's *fast* mode: no memo, so every value is written in full
    where it occurs (as canon freezes it), the bytes depend on the values alone, never on
    which of them are the same object, and no memo is filled and cleared per key.

    Fast mode counts nesting to catch cycles; CPython 3.11's frozenset writer enters that
    count without leaving it, so a pickler that wrote many frozensets starts to raise
    ``ValueError`` or ``KeyError`` (never other bytes: the count decides only whether it
    raises).  A pickler that raised either is dropped and the input pickled again by a new
    one, so its key is what a new pickler writes (a cycle fails twice: no key here)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        super().__init__(_Sink(self.chunks.append), 5)
        self.fast = True


_DROP: Final = (ValueError, KeyError, RecursionError)
"""What a key pickler raises for a cycle, nesting too deep, or a nesting count gone wrong:
the pickler is not reused."""


_FREE_PICKLERS: Final[list[_KeyPickler]] = []
"""Picklers not in use.  Making one costs more than a key, so they are reused; taking one
with ``list.pop`` is atomic, so two threads (or a signal handler calling a recorded
function while a key is written) never share one."""


def _builtins_key(value: Any) -> bytes:
    """The exact bytes of a value made of builtin values only, such as an object's
    ``__dict__``; :class:`_NoKey` for anything else."""
    try:
        pickler = _FREE_PICKLERS.pop()
    except IndexError:
        pickler = _KeyPickler()
    chunks = pickler.chunks
    try:
        pickler.dump(value)
        key = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except _NoKey:
        chunks.clear()
        _FREE_PICKLERS.append(pickler)
        raise
    except _DROP:
        again = _with_new_pickler(value)
        if again is None:
            raise _NoKey from None
        return again
    chunks.clear()
    _FREE_PICKLERS.append(pickler)
    return key


def _with_new_pickler(value: Any) -> bytes | None:
    """The key of ``value`` by a new pickler, after the one that was used raised (and is
    dropped); None when the new one raises too (a cycle), or refuses the value."""
    pickler = _KeyPickler()
    chunks = pickler.chunks
    try:
        pickler.dump(value)
    except (_NoKey, *_DROP):
        return None
    key = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    chunks.clear()
    _FREE_PICKLERS.append(pickler)
    return key


def object_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes | None:
    """A cheap key of a call's arguments made of plain objects of the project's own classes,
    builtin containers and scalars: two calls with equal keys freeze to equal canonical
    bytes (the key may tell apart more, which costs only a miss).  None for anything else.

    A recorder remembers an input it has seen by this key, so a repeated call with an
    object argument is not frozen again (and its object result is compared by key too).

    The usual call -- positional scalars and objects whose state is builtins only (``self``,
    a value object) -- is pickled at once in C, here inline: it runs two or three times per
    recorded call.  Each object stands as the tuple ``(class plan, __dict__)`` (no scalar
    argument is a tuple here), and the key starts with pickle's protocol mark, which no key
    of the walk (``marshal`` bytes, :func:`_walked_key`) starts with.
    """
    if kwargs:
        return _walked_key(args, kwargs)
    parts: list[Any] = []
    append = parts.append
    plans = _OBJECT_PLANS
    leaves = _KEY_LEAVES
    for v in args:
        t = type(v)
        if t in leaves:
            append(v)
            continue
        plan = plans.get(t, _UNPLANNED)
        if plan is _UNPLANNED:
            plan = object_plan(t)
        if plan is None:
            return _walked_key(args, kwargs)
        append((plan, v.__dict__))
    try:
        pickler = _FREE_PICKLERS.pop()
    except IndexError:
        pickler = _KeyPickler()
    chunks = pickler.chunks
    try:
        pickler.dump(parts)
        key = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except _NoKey:  # not builtins only: walk
        chunks.clear()
        _FREE_PICKLERS.append(pickler)
        return _walked_key(args, kwargs)
    except _DROP:  # pickled again by a new pickler (this one is dropped)
        again = _with_new_pickler(parts)
        if again is None:
            return _walked_key(args, kwargs)
        return again if len(again) <= STATE_KEY_MAX else None
    chunks.clear()
    _FREE_PICKLERS.append(pickler)
    return key if len(key) <= STATE_KEY_MAX else None


_UNPLANNED: Final = object()


def _object_form(plan: str, state: dict[str, Any], form: Any, depth: int) -> tuple[Any, ...]:
    """The walk's form of a plain object: its plan and its state's bytes (pickled in C
    when the state is builtins only, else walked)."""
    if not state:
        return ("o", plan)
    try:
        flat = _builtins_key(state)
    except _NoKey:
        return ("o", plan, form(state, depth))
    if len(flat) > STATE_KEY_MAX:
        raise _NoKey
    return ("o", plan, flat)


def _walked_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes | None:
    """:func:`object_key` by walking the arguments: containers, nested objects, keywords."""
    budget = [KEY_BUDGET]
    plans = _OBJECT_PLANS
    leaves = _KEY_LEAVES

    def form(v: Any, depth: int) -> Any:
        # Leaves are tested inline before each call: a call per attribute would cost more
        # than the freeze this key saves.
        t = type(v)
        budget[0] -= 1
        if budget[0] < 0 or depth > 32:
            raise _NoKey
        depth += 1
        out: list[Any]
        if t is dict:
            out = ["d"]
            append = out.append
            for k, x in v.items():
                append(k if type(k) in leaves else form(k, depth))
                append(x if type(x) in leaves else form(x, depth))
            return tuple(out)
        if t is tuple or t is list:
            out = ["t" if t is tuple else "l"]
            append = out.append
            for x in v:
                append(x if type(x) in leaves else form(x, depth))
            return tuple(out)
        if t is Decimal:
            return ("D", str(v))
        plan = plans[t] if t in plans else object_plan(t)
        if plan is None:
            raise _NoKey
        return _object_form(plan, v.__dict__, form, depth)

    try:
        return marshal.dumps((form(args, 0), form(kwargs, 0) if kwargs else None), 2)
    except (_NoKey, RecursionError, ValueError):
        return None


def _active_objects() -> list[int]:
    """The ids of the objects being frozen, outermost first; at a value's start, the
    value's bookkeeping (copies, count, floors) is begun afresh."""
    active: list[int] | None = getattr(_ACTIVE_OBJECTS, "ids", None)
    if active is None:
        active = _ACTIVE_OBJECTS.ids = []
    if not active:
        if not fast_open():  # else the fast encoder's object around it began the value
            begin_outermost()
        _ACTIVE_OBJECTS.floors = []
        _ACTIVE_OBJECTS.classes = []
    return active


def begin_outermost() -> None:
    """Begin the bookkeeping of an outermost object of the project (not inside another
    one being frozen): the forms of the objects frozen inside it, and their count."""
    _ACTIVE_OBJECTS.done = {}
    _ACTIVE_OBJECTS.outward = {}
    _ACTIVE_OBJECTS.shared = False
    _ACTIVE_OBJECTS.count = 0


def end_outermost(frozen: JSON, depth: int) -> JSON | None:
    """The outermost object's form, its objects met again written once
    (:mod:`~lockstep.canon.shared`); None when an object whose form refers to an object
    around it was met again at a place the form could not be written once for (the
    caller freezes the value again, such objects each time in full)."""
    _ACTIVE_OBJECTS.done = {}
    _ACTIVE_OBJECTS.outward = {}
    if _ACTIVE_OBJECTS.shared:
        _ACTIVE_OBJECTS.shared = False
        return shared.share(frozen, depth)
    return frozen


def _sharing_outward() -> bool:
    """Whether an object whose form refers to an object around it is written once when
    met again (``$same``); off while a value is frozen again because it could not be."""
    return not getattr(_ACTIVE_OBJECTS, "no_outward", False)


def held_around(v: Any) -> bool:
    """Whether ``v`` is an object being frozen around the value at hand (a weak reference
    back to it freezes as the cycle it is)."""
    return id(v) in (getattr(_ACTIVE_OBJECTS, "ids", None) or ()) or id(v) in fast_open()


def outermost_now() -> bool:
    """Whether an object frozen now is outermost: no object is being frozen around it."""
    return not getattr(_ACTIVE_OBJECTS, "ids", None) and not fast_open()


def enclosing_classes() -> list[type[Any]]:
    """The classes of the objects being frozen around the value at hand, outermost first
    (the graph node whose state is being frozen, then the objects inside it; empty outside
    any object): where a sentinel inside them may be kept."""
    active: list[int] | None = getattr(_ACTIVE_OBJECTS, "ids", None)
    scope = graphs.current()
    around: list[type[Any]] = scope.context if scope is not None else []
    return [*around, *_ACTIVE_OBJECTS.classes] if active else around


def library_node_class(t: type[Any]) -> bool:
    """Whether objects of ``t`` freeze as nodes of a graph (:mod:`~lockstep.canon.graphs`):
    another library's plain class, not one the project owns, names or a tzinfo class."""
    return library_plain(t) and not project_or_zone(t)


ZONE_ENCODERS: Final[list[Callable[[Any, type[Any], int], JSON | None]]] = []
"""Time zones of libraries that name their zones rather than build them from a class one
can name (:mod:`lockstep.canon.pytz_zones`): asked first, each returns None for a value
that is not its own."""


def freeze_object(self: Encoder, v: Any, t: type[Any], depth: int) -> JSON:
    """An object by structure: ``$obj`` for the project's own (and tzinfo) classes, a
    ``$node`` of the ``$graph`` of the value being frozen for another library's plain class."""
    for zone_encoder in ZONE_ENCODERS:
        zone = zone_encoder(v, t, depth)
        if zone is not None:
            return zone
    name = reachable_name(t)
    if name is None:
        marker = marker_of(v, enclosing_classes(), depth) if is_marker(v) else None
        if marker is not None:  # a factory's marker a module keeps (boltons' make_sentinel)
            return marker
        name = qualified_name(t)
        raise Unfreezable(
            f"cannot freeze a {name}: the class is not reachable by its name "
            "(defined inside a function?), so it could not be rebuilt"
        )
    if project_or_zone(t):
        return _freeze_own(self, v, t, depth)
    _NODE_NAMES[t] = name  # met again, the encoder finds it at once (library_node)
    return library_node(v, t, depth)


def library_node(v: Any, t: type[Any], depth: int) -> JSON:
    """``{"$node": n}`` for an object of another library's plain class, in the graph of
    the value being frozen."""
    scope = graphs.current()
    if scope is None:  # the fast encoder: the slow one opens a scope for the whole value
        raise graphs.GraphNeeded
    check_level(depth)
    return scope.node(v, t)


def node_state(self: Encoder, v: Any, t: type[Any], depth: int) -> JSON:
    """The state of a graph's node, frozen as a value of its own (no ``$ref`` leaves it)."""
    try:
        state = without_cached(object.__getstate__(v), t)
    except Exception as e:
        raise Unfreezable(
            f"cannot freeze a {qualified_name(t)}: reading its state raised {type(e).__name__}: {e}"
        ) from None
    if state is None:
        return None
    return _state_form(self, state, depth)


def _freeze_own(self: Encoder, v: Any, t: type[Any], depth: int) -> JSON:
    if id(v) in fast_open():  # a cycle through an object the fast encoder is inside
        raise _TooDeep
    name = qualified_name(t)
    kept = _as_kept(v, t)
    if kept is not None:
        check_level(depth + 1)
        return kept
    active = _active_objects()
    done: dict[int, tuple[Any, JSON]] = _ACTIVE_OBJECTS.done
    _ACTIVE_OBJECTS.count += 1
    if _ACTIVE_OBJECTS.count > MAX_OBJECTS:
        raise TooLarge(
            f"holds more than {MAX_OBJECTS:,} objects: too large to freeze (data, not behaviour)"
        )
    again = _met_again(v, done, depth)
    if again is not None:
        return again
    floors: list[int] = _ACTIVE_OBJECTS.floors
    if id(v) in active:
        return _cycle(active, floors, v, depth)
    check_level(depth + 2)
    active.append(id(v))
    classes: list[type[Any]] = _ACTIVE_OBJECTS.classes
    classes.append(t)
    floors.append(len(active) - 1)
    try:
        hidden = c_state_base(t, _value_base)
        if hidden is not None and not (_own_reduce(t) and _newobj_reduction(v, t)):
            raise Unfreezable(
                f"cannot freeze a {name}: its class extends {hidden.__module__}."
                f"{hidden.__qualname__}, whose objects keep their state in C fields that "
                "neither __dict__ nor __getstate__ shows (define __reduce__ or __getstate__ "
                "on the class, or register an encoder with lockstep.register_encoder())"
            )
        body = _object_body(self, v, t, depth + 2, reduce=_own_class(t))
    except Unfreezable:
        raise
    except RecursionError:
        raise _TooDeep from None
    except Exception as e:
        raise Unfreezable(
            f"cannot freeze a {name}: reading its state raised {type(e).__name__}: {e}"
        ) from None
    finally:
        active.pop()
        classes.pop()
        self_contained = floors.pop() >= len(active)
    frozen: JSON = {"$obj": [name, body]}
    if outermost_now():
        return _outermost_form(self, v, t, frozen, depth)
    if self_contained:  # inside a larger value: it may be reached again
        done[id(v)] = (v, frozen)
    else:  # refers to an object around it: met again, written once where it was frozen
        _ACTIVE_OBJECTS.outward[id(v)] = (v, frozen)
    return frozen


def _met_again(v: Any, done: dict[int, tuple[Any, JSON]], depth: int) -> JSON | None:
    """The form of an object met again inside the outermost one, or None.

    A document's items, a time zone's offsets: the very same form, which the outermost
    object writes once (:mod:`~lockstep.canon.shared`), without reading the object again.
    One whose form refers to an object around its first place (a registry of parsers
    that point back at their document) is that form as an :class:`~.shared.Alias`: written
    once there, ``{"$same": n}`` here, it thaws to that very object."""
    again = done.get(id(v))
    if again is None or again[0] is not v:
        again = _ACTIVE_OBJECTS.outward.get(id(v)) if _sharing_outward() else None
        if again is None or again[0] is not v:
            return None
        check_level(depth)
        _ACTIVE_OBJECTS.shared = True
        return shared.Alias(again[1])
    check_level(depth)
    _ACTIVE_OBJECTS.shared = True
    return again[1]


def _outermost_form(self: Encoder, v: Any, t: type[Any], frozen: JSON, depth: int) -> JSON:
    """The outermost object's form, its objects met again written once; frozen again
    without :class:`~.shared.Alias` forms where one could not be (see ``shared.share``)."""
    out = end_outermost(frozen, depth)
    if out is not None:
        return out
    _ACTIVE_OBJECTS.no_outward = True
    try:
        return _freeze_own(self, v, t, depth)
    finally:
        _ACTIVE_OBJECTS.no_outward = False


def _cycle(active: list[int], floors: list[int], v: Any, depth: int) -> JSON:
    """``{"$ref": n}`` for an object met again inside itself: a reference cycle back to the
    object ``n`` levels out.  Every object between is marked as referring outside itself
    (``floors``), so its frozen form is not reused elsewhere, where ``n`` would be wrong."""
    check_level(depth)
    index = active.index(id(v))
    for j in range(index + 1, len(active)):
        floors[j] = min(floors[j], index)
    return {"$ref": len(active) - 1 - index}


_KEPT: dict[int, tuple[Any, str]] = {}
"""Objects found kept by a module (:mod:`lockstep.canon.kept`) -> (the object, its path):
met again, each is named at once.  The object is held, so its id is not reused."""

MAX_KEPT: Final = 100_000
"""Kept objects remembered at most (the rest are looked up again each time)."""


def _as_kept(v: Any, t: type[Any]) -> JSON:
    """``{"$kept": path}`` for a node of a tree its class's module keeps (an object whose
    own attributes hold another object of its very class, a parent or a child, reachable
    from the module's globals: a token type), else None; a tzinfo keeps its state
    (:mod:`lockstep.canon.kept`)."""
    known = _KEPT.get(id(v))
    if known is not None and known[0] is v:
        return {"$kept": known[1]}
    if not linked(v, t) or _tzinfo_class(t):
        return None
    path = kept_path(v, t, _own_class)
    if path is None:
        return None
    if len(_KEPT) < MAX_KEPT:
        _KEPT[id(v)] = (v, path)
    return {"$kept": path}


def _dec_kept(payload: Any, path: str, depth: int) -> Any:
    """``{"$kept": "pkg.mod:Name.attr"}``: the object that module keeps at that path."""
    name = str_payload("$kept", payload, path)
    module, where = module_and_rest(name)
    if module is None or not where:
        raise CanonError(f"$kept names {_short(name)}, not in a module of the project", path)
    try:
        return resolve_kept(where, module, _own_class)
    except LookupError as e:
        raise CanonError(
            f"$kept names {_short(name)}, where {module.__name__} keeps no object of a "
            f"class of the project (no {_short(str(e))})",
            path,
        ) from None


def freeze_timezone(encoder: Encoder, v: Any, depth: int) -> JSON:
    """A :class:`datetime.timezone` as ``{"$timezone": [offset, name or null]}`` (null: the
    default name of that offset); :mod:`lockstep.canon.patterns` thaws it."""
    import datetime as dt

    check_level(depth + 1)
    offset = v.utcoffset(None)
    name = v.tzname(None)
    default = dt.timezone(offset).tzname(None)
    return {"$timezone": [encoder.child(offset, "", depth + 2), None if name == default else name]}


def freeze_tzinfo(self: Encoder, tz: Any, depth: int) -> JSON:
    """The zone of a datetime or time: null (none, or a fixed ``datetime.timezone`` offset,
    which the ISO text carries), a ``zoneinfo`` key, or any other tzinfo by structure."""
    if tz is None:
        return None
    import datetime as dt
    import zoneinfo

    t = type(tz)
    if t is dt.timezone:
        if tz.tzname(None) != dt.timezone(tz.utcoffset(None)).tzname(None):
            return freeze_timezone(self, tz, depth)  # a named fixed offset
        return None
    if t is zoneinfo.ZoneInfo:
        return tz.key  # type: ignore[no-any-return]
    try:
        return freeze_object(self, tz, t, depth)
    except Unfreezable as e:
        raise Unfreezable(f"cannot keep the datetime's tzinfo: {e.reason}") from None


def _obj_class(name: str, path: str) -> type[Any]:
    """The project's (or a tzinfo) class ``$obj`` names, imported already or a configured
    target's module imported now; a module that no longer imports is today's code failing."""
    cls = _TYPES_BY_NAME.get(name) or class_named(name, importing=True)
    if cls is None:
        no_longer_imports(name, "$obj", path)
    if cls is not None and project_or_zone(cls) and issubclass(cls, BaseException):
        raise CanonError(
            f"$obj names {_short(name)}, an exception class: an exception is written as a "
            "row's exc_type and exc_stem, never as a value to build",
            path,
        )
    if cls is None or not project_or_zone(cls):
        suite = (  # cssutils' own tests hand its codecs a queue of cssutils.tests.test_codec
            ": a class the tests define (list its module's file in [lockstep] test_modules)"
            if test_module(name.partition(":")[0])
            else ""
        )
        raise CanonError(
            f"$obj names {_short(name)}, which is not a class of the project (or a tzinfo "
            f"class) already imported{suite}",
            path,
        )
    return cast("type[Any]", cls)


def _dec_obj(payload: Any, path: str, depth: int) -> Any:
    scope = _scope()
    if scope.depth:
        again = scope.made.get(id(payload))
        if again is not None:  # thawed already, for a {"$same": n} met before it
            return again[1]
    else:
        scope.root = payload
        scope.table = None
        scope.made = {}
    scope.depth += 1
    scope.pending.append(payload)
    try:
        return _thawed_obj(payload, path, depth, scope)
    finally:
        scope.pending.pop()
        scope.depth -= 1
        if not scope.depth:
            scope.root = scope.table = None
            scope.made = {}


def _thawed_obj(payload: Any, path: str, depth: int, scope: _SameScope) -> Any:
    name, body = list_payload("$obj", payload, path, depth, "[type name, body]")
    name = str_payload("$obj", name, path)
    cls = _obj_class(name, path)
    if type(body) is not dict or not set(body) <= {"base", "new", "state"}:
        raise _malformed("$obj", 'an object of "base", "new" and "state"', body, path)
    if depth + 2 > MAX_DEPTH:
        raise _TooDeep
    base = _value_base(cls)
    if ("base" in body) != (base is not None) or ("new" in body and not _own_reduce(cls)):
        raise CanonError(f"malformed $obj value: not the form lockstep writes for {name}", path)
    if base is not None:
        obj = _thawed_with_base(cls, base, body["base"], name, path, depth)
    elif "new" in body:
        args = decode_at(body["new"], path, depth + 3)
        if type(args) is not list:
            raise _malformed("$obj", "a list of __new__ arguments", body["new"], path)
        try:
            obj = cls.__new__(cls, *args)
        except Exception as e:
            raise ThawError(f"{name}.__new__ raised {type(e).__name__}: {e}", path) from None
    else:
        obj = _allocate(cls)
    scope.made[id(payload)] = (payload, obj)  # what a {"$same": n} naming it thaws to
    if "state" in body:
        state = _thawed_inside(obj, body["state"], path, depth + 3)
        if state is None:
            raise CanonError(f"malformed $obj value: a null state of {name}", path)
        _set_state(obj, cls, state, path)
    return obj


class _SameScope(threading.local):
    """Per thread, the outermost ``$obj`` being thawed (``root``, its payload) and its
    objects thawed so far by payload (``made``), for the ``{"$same": n}`` inside it
    (:mod:`~lockstep.canon.shared`); ``table``: its forms in their numbered order, read
    when the first ``$same`` is met."""

    def __init__(self) -> None:
        self.depth = 0
        self.root: Any = None
        self.table: list[Any] | None = None
        self.made: dict[int, tuple[Any, Any]] = {}  # the payload held: its id stays its own
        self.pending: list[Any] = []  # the payloads being thawed, outermost first


_SAME_SCOPE: Final = _SameScope()


def _scope() -> _SameScope:
    return _SAME_SCOPE


def _dec_same(payload: Any, path: str, depth: int) -> Any:
    """``{"$same": n}``: the object form ``n`` of the outermost ``$obj`` being thawed
    thawed to (thawed now when the walk had not reached it: a dict's keys in the order
    it holds them)."""
    scope = _scope()
    if not scope.depth:
        raise CanonError("malformed $same value: not inside an object of the project", path)
    if scope.table is None:
        scope.table = shared.numbered({"$obj": scope.root})
    table = scope.table
    if type(payload) is not int or not 0 <= payload < len(table):
        raise CanonError(
            f"malformed $same value: {_short(repr(payload))} names no object written before it",
            path,
        )
    target = table[payload]
    made = scope.made.get(id(target))
    if made is not None:
        return made[1]
    if any(target is p for p in scope.pending):
        raise CanonError(f"malformed $same value: {payload} names an object that holds it", path)
    return _dec_obj(target, path, depth)


_THAWING: Final = threading.local()
"""Per thread, ``objects``: the objects whose state is being thawed, outermost first."""


def _thawing() -> list[Any]:
    objects: list[Any] | None = getattr(_THAWING, "objects", None)
    if objects is None:
        objects = _THAWING.objects = []
    return objects


def _dec_ref(payload: Any, path: str, depth: int) -> Any:
    """``{"$ref": n}``: the object ``n`` levels out from the innermost one whose state is
    being thawed (0: that object itself) -- a reference cycle, as :func:`freeze_object`
    writes it; nothing else can be named."""
    objects = _thawing()
    if type(payload) is not int or not 0 <= payload < len(objects):
        raise CanonError(
            f"malformed $ref value: {_short(repr(payload))} names no object whose state holds it",
            path,
        )
    return objects[len(objects) - 1 - payload]


def _allocate(cls: type[Any]) -> Any:
    """An empty ``cls`` instance from the nearest builtin ``__new__`` (``object``'s for a plain
    class, ``tzinfo``'s for a tzinfo): the class's own Python ``__new__`` does not run."""
    for owner in cls.__mro__:
        new = owner.__dict__.get("__new__")
        if new is not None and not isinstance(new, staticmethod | types.FunctionType):
            return new(cls)
    return object.__new__(cls)


def _set_state(obj: Any, cls: type[Any], state: Any, path: str) -> None:
    """Pickle's default ``__setstate__``, without ``setattr`` hooks: ``__dict__`` and slots."""
    if _custom(cls, "__setstate__"):
        try:
            obj.__setstate__(state)
        except Exception as e:
            raise ThawError(
                f"{qualified_name(cls)}.__setstate__ raised {type(e).__name__}: {e}", path
            ) from None
        return
    slots: Any = None
    if type(state) is tuple and len(state) == 2:
        state, slots = state
    for part in (state, slots):
        if part is not None and (type(part) is not dict or any(type(k) is not str for k in part)):
            raise CanonError(f"malformed $obj value: the state of {qualified_name(cls)}", path)
    if slots and not (_own_class(cls) or _tzinfo_class(cls)):
        for key in slots:
            if not member_slot(cls, key):  # a property's setter would run the class's code
                raise CanonError(
                    f"malformed $obj value: {_short(key)} is not a slot of {qualified_name(cls)}",
                    path,
                )
    try:
        if state:
            object.__getattribute__(obj, "__dict__").update(state)
        for key, value in (slots or {}).items():
            object.__setattr__(obj, key, value)
    except (AttributeError, TypeError) as e:  # no __dict__, no such slot, a read-only one
        raise CanonError(
            f"malformed $obj value: the state of {qualified_name(cls)} does not fit it "
            f"({type(e).__name__}: {e})",
            path,
        ) from None


_GRAPHS: Final = threading.local()
"""Per thread, ``nodes``: the objects of each ``$graph`` being thawed, innermost last."""


def _dec_graph(payload: Any, path: str, depth: int) -> Any:
    """``{"$graph": [root, [[class, {"state": ...}], ...]]}``: every node allocated first
    (no code of its class runs), then each state filled, then the root thawed."""
    root, table = list_payload("$graph", payload, path, depth, "[root, table]")
    table = list_payload("$graph", table, path, depth + 1)
    if depth + 5 > MAX_DEPTH:
        raise _TooDeep
    nodes: list[tuple[Any, type[Any], dict[str, Any]]] = []
    for entry in table:
        name, body = list_payload("$graph", entry, path, depth + 2, "[class, body]")
        name = str_payload("$graph", name, path)
        cls = _already_imported(name)
        if cls is None or not library_node_class(cls):
            raise CanonError(
                f"$graph names {_short(name)}, which is not a plain class of another library "
                "already imported",
                path,
            )
        if type(body) is not dict or not set(body) <= {"state"}:
            raise _malformed("$graph", 'an object of "state"', body, path)
        nodes.append((object.__new__(cls), cls, body))
    stack: list[list[Any]] | None = getattr(_GRAPHS, "nodes", None)
    if stack is None:
        stack = _GRAPHS.nodes = []
    stack.append([obj for obj, _, _ in nodes])
    thawing = _thawing()
    try:
        for obj, cls, body in nodes:
            if "state" in body:
                outer = thawing[:]
                thawing.clear()  # a $ref inside a node's state stays inside that state
                try:
                    state = decode_at(body["state"], path, depth + 5)
                finally:
                    thawing[:] = outer
                if state is None:
                    raise CanonError(f"malformed $graph value: a null state of {name}", path)
                _set_state(obj, cls, state, path)
        return decode_at(root, path, depth + 2)
    finally:
        stack.pop()


def _dec_node(payload: Any, path: str, depth: int) -> Any:
    """``{"$node": n}``: node ``n`` of the innermost ``$graph`` being thawed."""
    stack: list[list[Any]] = getattr(_GRAPHS, "nodes", None) or [[]]
    nodes = stack[-1]
    if type(payload) is not int or not 0 <= payload < len(nodes):
        raise CanonError(
            f"malformed $node value: {_short(repr(payload))} names no node of a $graph", path
        )
    return nodes[payload]


TAG_DECODERS["$obj"] = _dec_obj
TAG_DECODERS["$graph"] = _dec_graph
TAG_DECODERS["$node"] = _dec_node
TAG_DECODERS["$ref"] = _dec_ref
TAG_DECODERS["$same"] = _dec_same
TAG_DECODERS["$kept"] = _dec_kept
