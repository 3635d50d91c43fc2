"""Encoding: a Python value to its tagged, canonical JSON form.

Two encoders give the same result: the fast one (recording freezes every call's
arguments, so it inlines the common types and keeps no path), and the slow one that
tracks where it is in the value, run again when the fast one fails so that a refusal
names its place (``args[1]["conn"]``).  Types beyond the built-in rules are added with
:func:`~lockstep.canon.registry.register_encoder`, or by a module of this package
appending to :data:`FALLBACK_ENCODERS`.
"""

from __future__ import annotations

import binascii
import dataclasses
import enum
import functools
import math
import sys
import types
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import msgspec

from lockstep.canon import graphs, shared
from lockstep.canon._core import (
    _INT_HIGH,
    _INT_LOW,
    _LONG_DIGITS,
    _PATH_CLASSES,
    _TOO_DEEP,
    JSON,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    TooLarge,
    Unfreezable,
    _b64,
    _check_int,
    _check_text,
    _checker,
    _encoder,
    _key_segment,
    _TooDeep,
    check_level,
    qualified_name,
    text_form,
)
from lockstep.canon.cached_attributes import without_cached
from lockstep.canon.callables import _CALLABLE_TYPES, IterItems, freeze_callable
from lockstep.canon.library_classes import TOOLING, library_plain, not_plain_because, test_module
from lockstep.canon.methods import (
    builtin_owner,
    enc_builtin_method,
    freeze_builtin_method,
    freeze_method,
)
from lockstep.canon.objects import (
    _ACTIVE_OBJECTS,
    begin_outermost,
    enclosing_classes,
    end_outermost,
    fast_open,
    freeze_object,
    freeze_tzinfo,
    library_node,
    library_node_class,
    node_state,
    object_plan,
    outermost_now,
    project_or_zone,
)
from lockstep.canon.registry import (
    _EXT_BY_TYPE,
    _NAMEDTUPLE_ROUTE,
    _NODE_NAMES,
    _OBJECT_PLANS,
    _OWN_ROUTE,
    _SLOTTED_PLANS,
    LEAF_ENCODERS,
    Extension,
    _is_namedtuple_class,
    combine_flags,
    reachable_name,
)
from lockstep.canon.sentinels import freeze_sentinel, is_marker, marker_of
from lockstep.errors import CanonError, TooDeepError, TooLargeError

if TYPE_CHECKING:
    pass

# datetime, uuid and zoneinfo are imported where a value of theirs is frozen or thawed (the
# rare paths below), not here: a replay whose renders return plain JSON, the usual case,
# never pays for them.  The checks are unchanged: a datetime reaches ``_stdlib`` whether or
# not this module imported its class first.


_NOT_LIBRARIES: Final = frozenset({*sys.stdlib_module_names, *TOOLING, "builtins", "__main__"})
"""Top-level modules whose classes a refusal does not suggest ``freeze_classes`` for."""


def _sorted_by_bytes(items: Iterable[JSON]) -> list[JSON]:
    return sorted(items, key=_encoder.encode)


def _enum_name(v: enum.Enum) -> str | None:
    """The member name an enum value freezes under; None for a Flag combination (no member)."""
    name = v.name
    if type(name) is str and type(v).__members__.get(name) is v:
        return name
    return None


def _flag_names(v: enum.Flag, t: type[Any]) -> list[JSON]:
    """The member names a Flag combination is made of, by value; refused when they do not
    make it up again (bits no member names)."""
    members = sorted(v, key=lambda m: m.value)
    names: list[JSON] = [m.name for m in members]
    if combine_flags(t, members) != v or any(_enum_name(m) is None for m in members):
        raise Unfreezable(f"{v!r} holds bits no member of {qualified_name(t)} names")
    return names


FallbackEncoder: TypeAlias = "Callable[[Encoder, Any, int], JSON | None]"
"""Freezes a value of a type no built-in rule knows, or returns None to pass it on.

Called with the path-tracking encoder (encode the value's parts through its ``child``
and ``seq`` so a refusal inside names its place), the value and its level; it checks
the levels of the containers it makes itself with :func:`~lockstep.canon._core.check_level`
(a tag object around an array at ``depth``: ``check_level(depth + 1)``), as decoding
refuses anything deeper than :data:`MAX_DEPTH`."""

AS_USED: dict[type, Callable[[Any, int], JSON]] = {}
"""Types of an argument recorded as the target used it, by what freezes one at a level:
a callable's calls (:class:`~lockstep.canon.callbacks.CalledBack`, which adds itself)."""

FALLBACK_ENCODERS: list[FallbackEncoder] = []
FALLBACK_ENCODERS.append(enc_builtin_method)  # re.Pattern.match bound (a builtin_method)
"""Tried in order for a value that no built-in rule, registered encoder or builtin base type
freezes, before it is refused: where a module of this package adds a tag family."""


class Encoder:
    """One encoding pass that tracks where it is; ``loose`` is fixed for the pass.

    ``depth`` is the level (1 = outermost) at which a container made for the value
    being encoded would sit; every container made is checked against :data:`MAX_DEPTH`.
    """

    __slots__ = ("loose",)

    def __init__(self, loose: bool) -> None:
        self.loose = loose

    def enc(self, v: Any, depth: int) -> JSON:  # noqa: C901 -- one flat type dispatch
        t = type(v)
        if v is None or t is bool:
            return v  # type: ignore[no-any-return]
        if t is str:
            return text_form(v)
        if t is int:
            return _check_int(v)
        if t is float:
            if math.isfinite(v):
                return v  # type: ignore[no-any-return]
            check_level(depth)
            return {"$float": "nan" if v != v else ("inf" if v > 0 else "-inf")}
        if t is list or (t is tuple and self.loose):
            check_level(depth)
            return self.seq(v, depth + 1)
        if t is tuple:
            check_level(depth + 1)
            return {"$tuple": self.seq(v, depth + 2)}
        if t is dict:
            return self._dict(v, depth)
        ext = _EXT_BY_TYPE.get(t)
        if ext is not None:
            return self._ext(ext, v, depth)
        if t is bytes or t is bytearray:
            check_level(depth)
            return {"$bytes" if t is bytes else "$bytearray": _b64(bytes(v))}
        if t is Decimal:
            check_level(depth)
            return {"$decimal": str(v)}
        if t is set or t is frozenset:
            check_level(depth + 1)
            members = [self.child(m, "[<member>]", depth + 2) for m in v]
            return {"$set" if t is set else "$frozenset": _sorted_by_bytes(members)}
        if t in _OWN_ROUTE:  # the project's class, met before: nothing else applies to it
            return freeze_object(self, v, t, depth)
        if t in _NAMEDTUPLE_ROUTE and len(v) == len(t._fields):  # a named tuple met before
            return self._namedtuple(v, t, depth)
        return self._rare(v, t, depth)

    def _ext(self, ext: Extension, v: Any, depth: int) -> JSON:
        check_level(depth + 1)
        try:
            inner = ext.to_json(v)
        except Exception as e:
            raise Unfreezable(
                f"the encoder registered as {ext.name!r} raised {type(e).__name__}: {e}"
            ) from None
        return {"$ext": [ext.name, self.child(inner, "", depth + 2)]}

    def _as_used(self, v: IterItems, depth: int) -> JSON:
        """An iterator argument recorded as the target used it: its items, however many
        were taken since."""
        if v.open:  # taken from and not to its end: the form of a result left open
            check_level(depth + 2)
            return {"$iter": {"items": self.seq(v.items, depth + 3), "end": "open"}}
        check_level(depth + 1)
        return {"$iter": self.seq(v.items, depth + 2)}

    def _rare(self, v: Any, t: type[Any], depth: int) -> JSON:
        """Types outside the hot path: user classes, the standard library, builtin subclasses."""
        if t in _NODE_NAMES:  # another library's plain class met before: a graph's node
            return library_node(v, t, depth)
        if isinstance(v, enum.Enum):
            return self._enum(v, t, depth)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return self._dataclass(v, t, depth)
        if isinstance(v, tuple) and _is_namedtuple_class(t) and len(v) == len(t._fields):
            _NAMEDTUPLE_ROUTE.add(t)
            return self._namedtuple(v, t, depth)
        stdlib = self._stdlib(v, t, depth)
        if stdlib is not None:
            return stdlib
        if t is IterItems:
            return self._as_used(v, depth)
        as_used = AS_USED.get(t)
        if as_used is not None:
            return as_used(v, depth)
        if t in _CALLABLE_TYPES or isinstance(v, type) or t is types.MethodType or t is object:
            return self._code(v, t, depth)
        for ext in _EXT_BY_TYPE.values():
            if isinstance(v, ext.cls):
                return self._ext(ext, v, depth)
        if project_or_zone(t) and not isinstance(v, BaseException):
            return self._own_object(v, t, depth)
        return self._builtin_subclass(v, t, depth)

    def _dataclass(self, v: Any, t: type[Any], depth: int) -> JSON:
        """A dataclass object as its fields; one of the project's own with no field set
        yet (``self`` of its ``__init__`` before it ran, a constructor's row) as an
        allocated object, which thaws blank as it was."""
        if project_or_zone(t) and object.__getstate__(v) is None:
            # not by :meth:`_own_object`: that would send every later object of the class
            # there, filled ones too, which a fresh interpreter freezes as $dataclass
            return freeze_object(self, v, t, depth)
        check_level(depth + 2)
        fields = {
            f.name: self.child(getattr(v, f.name), f".{f.name}", depth + 3)
            for f in dataclasses.fields(v)
        }
        return {"$dataclass": [_named(t), fields]}

    def _own_object(self, v: Any, t: type[Any], depth: int) -> JSON:
        """An object of the project's class, by structure; the type is sent here at once
        from now on (:data:`~lockstep.canon.registry._OWN_ROUTE`): every test :meth:`_rare`
        made before went by the type alone (a named tuple's also by its length)."""
        if not isinstance(v, tuple):
            _OWN_ROUTE.add(t)
        return freeze_object(self, v, t, depth)

    def _enum(self, v: enum.Enum, t: type[Any], depth: int) -> JSON:
        """A member by its name; a Flag combination by its members' names."""
        name = _enum_name(v)
        if name is None and isinstance(v, enum.Flag):
            check_level(depth + 2)
            return {"$enum": [_named(t), _flag_names(v, t)]}
        if name is None:
            raise Unfreezable(
                f"{v!r} is not a member of {t.__module__}.{t.__qualname__} (a Flag "
                "combination?); register an encoder with lockstep.register_encoder()"
            )
        check_level(depth + 1)
        return {"$enum": [_named(t), name]}

    def _code(self, v: Any, t: type[Any], depth: int) -> JSON:
        """A function or class (by name, or a lambda as a parameter's default), a bound
        method (its object and name), or a bare ``object()`` marker (where it is kept)."""
        if t is types.MethodType:
            return freeze_method(self, v, depth)
        if t is types.BuiltinMethodType and builtin_owner(v):
            return freeze_builtin_method(self, v, depth)
        if t is object:
            return freeze_sentinel(v, enclosing_classes(), depth)
        try:
            frozen = freeze_callable(v)
        except Unfreezable:
            if t is not types.FunctionType or "<locals>" not in v.__code__.co_qualname:
                raise
            kept = self._fallback(v, depth)  # written in a function of the project: $closure
            if kept is None:
                raise
            return kept
        check_level(depth if "$fn" in frozen else depth + 1)
        return frozen

    def _namedtuple(self, v: tuple[Any, ...], t: type[Any], depth: int) -> JSON:
        """A namedtuple by its fields; one that also holds attributes (a subclass without
        ``__slots__``: rfc3986's ``URIReference`` sets ``encoding`` in its ``__new__``)
        by its fields and those attributes, less what its class caches."""
        extra = getattr(v, "__dict__", None)
        if extra:
            attrs = without_cached(dict(extra), t)
            if attrs:
                check_level(depth + 2)
                return {
                    "$namedtuple": [
                        _named(t),
                        self.seq(v, depth + 3),
                        self.child(attrs, ".__dict__", depth + 2),
                    ]
                }
        check_level(depth + 2)
        return {"$namedtuple": [_named(t), self.seq(v, depth + 3)]}

    def _stdlib(self, v: Any, t: type[Any], depth: int) -> JSON | None:
        """Dates, times, UUIDs, complex numbers and paths; None for anything else."""
        import datetime as dt
        import uuid

        real_datetime, real_date = _real_dates()
        if t.__module__ == _FREEZEGUN and issubclass(t, real_date):
            # freezegun's FakeDate/FakeDatetime: what ``date(...)`` makes under freeze_time;
            # the same value as the real class's, which is what replay passes.
            t = real_datetime if issubclass(t, real_datetime) else real_date
        if t is real_datetime:
            check_level(depth + 1)
            zone = freeze_tzinfo(self, v.tzinfo, depth + 2)
            return {"$datetime": [v.isoformat(), zone, v.fold]}
        if t is real_date:
            check_level(depth)
            return {"$date": v.isoformat()}
        if t is dt.time:
            check_level(depth + 1)
            zone = freeze_tzinfo(self, v.tzinfo, depth + 2)
            return {"$time": [v.isoformat(), zone, v.fold]}
        if t is dt.timedelta:
            check_level(depth + 1)
            return {"$timedelta": [v.days, v.seconds, v.microseconds]}
        if t is uuid.UUID:
            check_level(depth)
            return {"$uuid": str(v)}
        if t is slice:
            check_level(depth + 1)
            return {
                "$slice": [self.child(part, "", depth + 2) for part in (v.start, v.stop, v.step)]
            }
        if t is range:  # ints, as the codec checks them
            check_level(depth + 1)
            return {"$range": [_check_int(v.start), _check_int(v.stop), _check_int(v.step)]}
        if t is complex:
            check_level(depth + 1)
            return {"$complex": [self.enc(v.real, depth + 2), self.enc(v.imag, depth + 2)]}
        if v is NotImplemented or v is Ellipsis:  # a dunder's "not for this operand"
            check_level(depth)
            return {"$const": "NotImplemented" if v is NotImplemented else "Ellipsis"}
        if t.__name__ in _PATH_CLASSES and _PATH_CLASSES[t.__name__] is t:
            check_level(depth + 1)
            return {"$path": [t.__name__, _check_text(str(v))]}
        return None

    def _builtin_subclass(self, v: Any, t: type[Any], depth: int) -> JSON:
        """Dict subclasses by :meth:`_dict_subclass`; other builtin subclasses (list, str,
        int, float) freeze as their base type: they compare equal to it.  Not a scalar's
        subclass of a test module or of a script run as ``__main__`` (portion's suite has
        an ``int`` whose hash raises): a fresh interpreter has not imported it, and frozen
        as its base it would make the same input key as the base value (``kind(MyStr("a"))``
        and ``kind("a")``, two outcomes of one input: both rows refused); refused by
        name, as a plain object of such a class is."""
        if isinstance(v, dict):
            return self._dict_subclass(v, t, depth)
        if isinstance(v, list):
            check_level(depth)
            return self.seq(v, depth + 1)
        if isinstance(v, str | int | float) and (
            t.__module__ == "__main__" or test_module(t.__module__)
        ):
            raise Unfreezable(
                f"cannot freeze a {t.__module__}.{t.__qualname__}: a class of a test module "
                "or a script, which replay does not import (frozen as its base value, it "
                "would pass for one)"
            )
        if isinstance(v, bool):
            return bool(v)
        if isinstance(v, str):
            return text_form(str(v))
        if isinstance(v, int):
            return _check_int(int(v))
        if isinstance(v, float):
            return self.enc(float(v), depth)
        out = self._fallback(v, depth)  # before another library's plain class: a SortedList
        if out is not None:
            return out
        if library_plain(t):
            return freeze_object(self, v, t, depth)
        return _marker_or_refuse(v, t, depth)

    def child(self, v: Any, segment: str, depth: int) -> JSON:
        """Freeze a part of a value at ``depth``; a refusal inside adds ``segment`` to its path."""
        try:
            return self.enc(v, depth)
        except Unfreezable as e:
            e.segments.append(segment)
            raise

    def seq(self, v: Iterable[Any], depth: int) -> list[JSON]:
        """Freeze items at ``depth`` to a list; a refusal inside adds the item's index."""
        out: list[JSON] = []
        append = out.append
        enc = self.enc
        for i, item in enumerate(v):
            try:
                append(enc(item, depth))
            except Unfreezable as e:
                e.segments.append(f"[{i}]")
                raise
        return out

    def _dict_subclass(self, v: dict[Any, Any], t: type[Any], depth: int) -> JSON:
        """An ``OrderedDict`` (its pairs in its order), a ``Counter`` or a ``defaultdict``
        (its factory by name) by a tag of its own; any other dict subclass is refused.

        As a plain dict they compare equal to a result, but an object holding one thaws
        otherwise: a ``defaultdict`` that counted raises ``KeyError``, an ``OrderedDict``
        forgets ``popitem(last=False)``, a sorted dict its sort -- and a method replayed
        against that object goes red (or green) for a change that did not happen."""
        import collections

        if t is collections.OrderedDict:
            check_level(depth + 2)
            return {"$odict": self.pairs(v, depth + 3)}
        if t is collections.Counter:
            check_level(depth + 2)
            return {"$counter": sorted(self.pairs(v, depth + 3), key=_encoder.encode)}
        if t is collections.defaultdict:
            check_level(depth + 3)
            factory = getattr(v, "default_factory", None)
            made = None if factory is None else self.child(factory, ".default_factory", depth + 2)
            pairs = sorted(self.pairs(v, depth + 4), key=_encoder.encode)
            return {"$defaultdict": [made, pairs]}
        out = self._fallback(v, depth)  # a sortedcontainers SortedDict (sorted_containers)
        if out is not None:
            return out
        raise Unfreezable(
            f"cannot freeze a {t.__module__}.{t.__qualname__}: as a plain dict it would lose "
            "what its class adds; register an encoder with lockstep.register_encoder()"
        )

    def _fallback(self, v: Any, depth: int) -> JSON | None:
        """What the first of :data:`FALLBACK_ENCODERS` that knows ``v`` freezes it to."""
        for fallback in FALLBACK_ENCODERS:
            out = fallback(self, v, depth)
            if out is not None:
                return out
        return None

    def pairs(self, v: dict[Any, Any], depth: int) -> list[JSON]:
        """``[key, value]`` for each item of ``v`` in its order, both frozen at ``depth``."""
        enc = self.enc
        pairs: list[JSON] = []
        for k, item in v.items():
            try:
                pairs.append([enc(k, depth), enc(item, depth)])
            except Unfreezable as e:
                e.segments.append(_key_segment(k))
                raise
        return pairs

    def _dict(self, v: dict[Any, Any], depth: int) -> JSON:
        enc = self.enc
        plain = True
        for k in v:
            if type(k) is not str or k.startswith("$"):
                plain = False
                break
        if plain:
            check_level(depth)
            out: dict[str, JSON] = {}
            for k, item in v.items():
                try:
                    out[_check_text(k)] = enc(item, depth + 1)
                except Unfreezable as e:
                    e.segments.append(_key_segment(k))
                    raise
            return out
        check_level(depth + 2)
        return {"$dict": sorted(self.pairs(v, depth + 3), key=_encoder.encode)}


_STRICT = Encoder(loose=False)
_LOOSE = Encoder(loose=True)


def _fast_encoder(slow: Encoder) -> Callable[[Any, int], JSON]:  # noqa: C901 -- see enc below
    """The hot path: the same encoding as ``slow`` without tracking where it is in the value.

    Recording wraps every call of a target, so freezing small arguments must cost
    about a microsecond.  This encoder inlines the common types and leaves path
    bookkeeping out; it checks nesting depth as it goes, and leaves strings and
    ints to one pass of the JSON writer over the result (:func:`_proven`).
    When anything fails, :func:`encode` runs the slow, path-tracking encoder
    again to name the place in the message.
    """
    loose = slow.loose
    plain = frozenset({str, int, bool, type(None)})
    b64 = binascii.b2a_base64
    isfinite = math.isfinite
    ext_by_type = _EXT_BY_TYPE
    sort_key = _encoder.encode
    rare = slow._rare
    limit = MAX_DEPTH
    plans = _OBJECT_PLANS
    slotted = _SLOTTED_PLANS
    getstate = object.__getstate__
    library_node = library_node_class
    open_objects = fast_open
    forms = _ACTIVE_OBJECTS
    leafy: frozenset[type[Any]] = frozenset({str, int, bool, type(None), float, bytes, Decimal})

    # One flat type dispatch, kept inline on purpose: this runs once per recorded argument,
    # and splitting it into helpers adds a call per value on the hot path.
    def enc(v: Any, d: int) -> JSON:  # noqa: C901
        t = type(v)
        if t in plain:
            return v  # type: ignore[no-any-return]
        if t is list:
            if d > limit:
                raise _TooDeep
            d += 1
            return [x if type(x) in plain else enc(x, d) for x in v]
        if t is tuple:
            if loose:
                if d > limit:
                    raise _TooDeep
                d += 1
                return [x if type(x) in plain else enc(x, d) for x in v]
            if d >= limit:
                raise _TooDeep
            d += 2
            return {"$tuple": [x if type(x) in plain else enc(x, d) for x in v]}
        if t is dict:
            for k in v:
                if type(k) is not str or k[:1] == "$":
                    if d + 2 > limit:
                        raise _TooDeep
                    d += 3
                    return {
                        "$dict": sorted(
                            ([enc(k, d), enc(x, d)] for k, x in v.items()), key=sort_key
                        )
                    }
            if d > limit:
                raise _TooDeep
            d += 1
            return {k: (x if type(x) in plain else enc(x, d)) for k, x in v.items()}
        if t is float and isfinite(v):
            return v  # type: ignore[no-any-return]
        if d > limit:  # every branch below makes a tag object at level d
            raise _TooDeep
        if t is float:
            return {"$float": "nan" if v != v else ("inf" if v > 0 else "-inf")}
        if ext_by_type:
            ext = ext_by_type.get(t)
            if ext is not None:
                if d >= limit:
                    raise _TooDeep
                return {"$ext": [ext.name, enc(ext.to_json(v), d + 2)]}
        if t is bytes:
            return {"$bytes": b64(v, newline=False).decode("ascii")}
        if t is Decimal:
            return {"$decimal": str(v)}
        if t is bytearray:
            return {"$bytearray": b64(v, newline=False).decode("ascii")}
        if t is set or t is frozenset:
            if d >= limit:
                raise _TooDeep
            d += 2
            members = sorted((enc(m, d) for m in v), key=sort_key)
            return {"$set" if t is set else "$frozenset": members}
        plan = plans[t] if t in plans else object_plan(t)
        if plan is not None:  # a plain object of the project's own class: its __dict__
            if d + 2 > limit:
                raise _TooDeep  # a cycle too: the slow path names it
            state = v.__dict__
            if not state:
                return {"$obj": [plan, {}]}
            around = open_objects()
            if id(v) in around:
                raise _TooDeep  # a cycle: the slow path freezes it (see fast_open)
            outermost = not around and outermost_now()
            if outermost:
                begin_outermost()
            else:  # met again inside the outermost object: the same form (objects.shared)
                again = forms.done.get(id(v))
                if again is not None and again[0] is v:
                    forms.shared = True
                    return again[1]  # type: ignore[no-any-return]
            around.append(id(v))
            try:
                out: JSON = {"$obj": [plan, {"state": enc(state, d + 3)}]}
            finally:
                around.pop()
            if outermost:
                ended = end_outermost(out, d)
                if ended is None:  # the slow path freezes it again (objects.end_outermost)
                    raise _TooDeep
                return ended
            forms.done[id(v)] = (v, out)  # no cycle leaves it: the fast encoder has none
            return out
        plan = slotted.get(t)
        if plan is not None and d + 2 <= limit:
            # The same with __slots__, for an object holding only scalars (an identifier, a
            # version part): the state object.__getstate__ gives.  One holding containers or
            # other objects takes the slow path, which counts the objects a value holds and
            # names a cycle.
            try:
                state = getstate(v)
            except Exception:
                return rare(v, t, d)  # the slow path says why it cannot be read
            if state is None:
                return {"$obj": [plan, {}]}
            if (
                type(state) is tuple
                and len(state) == 2
                and (state[0] is None or _scalars_only(state[0], leafy))
                and _scalars_only(state[1], leafy)
            ):
                return {"$obj": [plan, {"state": enc(state, d + 3)}]}
        if library_node(t):  # one graph per value: the slow path opens it
            raise graphs.GraphNeeded
        return rare(v, t, d)

    return enc


def _scalars_only(attrs: Any, leafy: frozenset[type[Any]]) -> bool:
    """Whether ``attrs`` is a dict of str keys to values of ``leafy`` types only."""
    return type(attrs) is dict and all(
        type(k) is str and k[:1] != "$" and type(x) in leafy for k, x in attrs.items()
    )


_FAST_STRICT = _fast_encoder(_STRICT)
_FAST_LOOSE = _fast_encoder(_LOOSE)


_FREEZEGUN: Final = "freezegun.api"
"""The module of freezegun's date and datetime subclasses (frozen as the real classes)."""
_REAL_DATES: list[tuple[type[Any], type[Any]]] = []


def _real_dates() -> tuple[type[Any], type[Any]]:
    """The real ``datetime`` and ``date`` classes, found once.

    Not the ``datetime`` module's names: while a test freezes the clock, freezegun rebinds
    those (and every module global holding them) to its subclasses; its own module keeps
    the real ones as ``real_datetime`` and ``real_date``.
    """
    if not _REAL_DATES:
        api = sys.modules.get(_FREEZEGUN)
        real = getattr(api, "real_datetime", None), getattr(api, "real_date", None)
        if real[0] is None or real[1] is None:
            import datetime as dt

            real = dt.datetime, dt.date
        _REAL_DATES.append(real)  # type: ignore[arg-type]
    return _REAL_DATES[0]


def _proven(out: JSON) -> bool:
    """Whether the fast encoder's result is frozen right, by one pass of the JSON writer:
    it refuses lone surrogates and ints past this process's ``int_max_str_digits``; a run of
    digits long enough to be an int past :data:`MAX_INT_DIGITS` sends it to the slow path."""
    text = _checker.encode(out)
    return len(text) < MAX_INT_DIGITS - 1 or _LONG_DIGITS.search(text) is None


def encode(value: Any, *, loose: bool = False, path: str = "value") -> JSON:
    """Freeze ``value`` to its tagged JSON-compatible form.

    ``path`` names the value in error messages (``args``, ``kwargs``, ``result``).
    """
    t = type(value)
    if (t is int and _INT_LOW < value < _INT_HIGH) or (t is str and value.isascii()):
        return value  # type: ignore[no-any-return]
    leaf = LEAF_ENCODERS.get(t)
    if leaf is not None:
        return leaf(value)
    try:
        out = (_FAST_LOOSE if loose else _FAST_STRICT)(value, 1)
        if _proven(out):
            return out
    except TooLarge as e:
        raise TooLargeError(e.reason, path) from None
    except Exception:  # the slow path below raises the right, path-naming error
        pass
    return _slow_encode(value, loose, path)


AFTER_THE_CALL: Final = " after the call"
"""What a path naming an argument frozen again once its call returned ends with."""


def _placed(path: str, segments: str) -> str:
    """``path`` with ``segments`` inside it: ``args[0]["rules"] after the call``, not
    ``args[0] after the call["rules"]``."""
    if segments and path.endswith(AFTER_THE_CALL):
        return path[: -len(AFTER_THE_CALL)] + segments + AFTER_THE_CALL
    return path + segments


def _slow_encode(value: Any, loose: bool, path: str, depth: int = 1) -> JSON:
    """Encode again, tracking the path, to say where a value cannot be frozen; the
    objects of other libraries it holds become one ``$graph`` (:mod:`~lockstep.canon.graphs`)."""
    encoder = _LOOSE if loose else _STRICT
    scope = graphs.opened()
    try:
        out = graphs.close(
            scope, encoder.enc(value, depth), depth, functools.partial(node_state, encoder)
        )
        _checker.encode(out)
    except _TooDeep:
        raise TooDeepError(_TOO_DEEP, path) from None
    except TooLarge as e:
        raise TooLargeError(e.reason, path) from None
    except Unfreezable as e:
        raise CanonError(e.reason, _placed(path, "".join(reversed(e.segments)))) from None
    except RecursionError:
        raise TooDeepError(_TOO_DEEP, path) from None
    except ValueError as e:  # a limit of this process (int_max_str_digits) below the codec's
        raise CanonError(f"cannot be written as JSON: {e}", path) from None
    finally:
        graphs.abandon(scope)
    return out


def _marker_or_refuse(v: Any, t: type[Any], depth: int) -> JSON:
    """A factory's marker a module keeps (:mod:`~lockstep.canon.sentinels`); anything else
    that reached here is refused, saying why and what would freeze it."""
    if isinstance(v, types.GeneratorType | types.AsyncGeneratorType | types.CoroutineType):
        raise Unfreezable(  # no encoder helps: the items exist only once consumed
            f"cannot freeze a {t.__name__}: what it yields exists only once its caller "
            "consumes it; freeze a function that consumes it (e.g. returns a list)"
        )
    if t.__module__ in ("builtins", "itertools") and hasattr(t, "__next__"):
        raise Unfreezable(  # an encoder would not help either: its items exist once
            f"cannot freeze a {t.__module__}.{t.__qualname__}: an iterator's items exist "
            "only as it is read; one passed as a call's own argument is frozen as the call "
            "reads it, one held inside another value (an attribute, a list) is not"
        )
    if "<locals>" in t.__qualname__:  # no encoder helps: replay cannot import it
        marker = marker_of(v, enclosing_classes(), depth) if is_marker(v) else None
        if marker is not None:  # a factory's marker a module keeps
            return marker
        raise Unfreezable(
            f"cannot freeze a {t.__module__}.{t.__qualname__}: a class defined inside a "
            "function cannot be rebuilt at replay (define it at module level)"
        )
    because = not_plain_because(t)
    top = t.__module__.partition(".")[0]
    if because is not None and top not in _NOT_LIBRARIES and not test_module(t.__module__):
        raise Unfreezable(
            f"cannot freeze a {t.__module__}.{t.__qualname__}: {because}, so it freezes "
            "by structure only when [lockstep] freeze_classes names it; or register an "
            "encoder with lockstep.register_encoder()"
        )
    # price-parser's suite subclasses Price in its test file: half its calls were skipped
    tests = (
        " (a class the tests define: list its module's file in [lockstep] test_modules, "
        "and replay imports it)"
    )
    if t.__module__ == "__main__":  # a doctest's (pytest runs them in __main__), a script's
        raise Unfreezable(
            f"cannot freeze a __main__.{t.__qualname__}: a class a doctest or a script "
            "defines, which no replay can import"
        )
    raise Unfreezable(
        f"cannot freeze a {t.__module__}.{t.__qualname__}; "
        "register an encoder with lockstep.register_encoder()"
        + (tests if test_module(t.__module__) else "")
    )


def _named(t: type[Any]) -> str:
    """How a tag names the class ``t``: by the name that finds it in its module, which is
    the name a module binds it under when its own does not (``TimezoneTuple =
    namedtuple("Timezone", ...)``); else its qualified name (a registered class, or one
    verification will find unthawable)."""
    return reachable_name(t) or qualified_name(t)


_PLAIN_SCALARS: Final = frozenset({str, int, bool, type(None)})


def encode_call(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[JSON], dict[str, JSON]]:
    """Freeze a call's arguments: ``encode(list(args), path="args")`` and
    ``encode(kwargs, path="kwargs")`` in one step, without copying ``args`` (a recorder
    does this on every call with a new input)."""
    fast = _FAST_STRICT
    plain = _PLAIN_SCALARS
    try:
        enc_args = [x if type(x) in plain else fast(x, 2) for x in args]
        enc_kwargs = fast(kwargs, 1) if kwargs else {}
        if _proven((enc_args, enc_kwargs)):  # type: ignore[arg-type]
            return enc_args, enc_kwargs  # type: ignore[return-value]
    except TooLarge as e:
        raise TooLargeError(e.reason, "args" if args else "kwargs") from None
    except Exception:  # encode() below raises the right, path-naming error
        pass
    # each argument a value of its own, as the fast path freezes them (at level 2, in the
    # args list): the objects of other libraries one holds are that argument's graph
    enc_args = [_one_argument(x, f"args[{i}]") for i, x in enumerate(args)]
    if any(k[:1] == "$" for k in kwargs):
        enc_kwargs = encode(kwargs, path="kwargs")
    else:
        enc_kwargs = {k: _one_argument(x, "kwargs" + _key_segment(k)) for k, x in kwargs.items()}
    return enc_args, enc_kwargs  # type: ignore[return-value]


def _one_argument(x: Any, path: str) -> JSON:
    try:
        out = _FAST_STRICT(x, 2)
        if _proven(out):
            return out
    except TooLarge as e:
        raise TooLargeError(e.reason, path) from None
    except Exception:  # the slow path below raises the right, path-naming error
        pass
    return _slow_encode(x, False, path, 2)


_BYTES_LEAF: Final = LEAF_ENCODERS.get(bytes)


def encode_call_keyed(  # noqa: C901 -- one flat loop per call, see below
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[JSON], dict[str, JSON], bytes]:
    """:func:`encode_call`, plus ``canonical_json([args, kwargs])`` of the frozen input.

    A recorder keys its rows by those bytes; writing them is also the one pass of the
    JSON writer that proves the fast encoder's result (see :func:`_proven`), so a call
    with a new input is frozen and keyed with one writer pass instead of two.
    """
    fast = _FAST_STRICT
    plain = _PLAIN_SCALARS
    leaves = LEAF_ENCODERS
    bytes_leaf = leaves.get(bytes) is _BYTES_LEAF  # not when an encoder was registered for it
    b64 = binascii.b2a_base64
    flat = True
    try:
        # Plain loops, not comprehensions (each one is a function call in 3.11): an argument
        # is a scalar, a leaf, a tuple of those, or anything else (the fast encoder).
        enc_args: list[JSON] = []
        for x in args:
            t = type(x)
            if t in plain:
                enc_args.append(x)
            elif (leaf := leaves.get(t)) is not None:
                enc_args.append(leaf(x))
            elif t is tuple:
                items: list[JSON] = []
                for y in x:
                    u = type(y)
                    if u in plain:
                        items.append(y)
                    elif u is bytes and bytes_leaf:  # the bytes leaf, inline
                        items.append({"$bytes": b64(y, newline=False).decode("ascii")})
                    elif (leaf := leaves.get(u)) is not None:
                        items.append(leaf(y))
                    else:
                        items.append(fast(y, 4))
                        flat = False
                enc_args.append({"$tuple": items})
            else:
                enc_args.append(fast(x, 2))
                flat = False
        enc_kwargs: dict[str, JSON] = {}
        for k, x in kwargs.items():
            t = type(x)
            if k[:1] == "$":
                enc_kwargs = fast(kwargs, 1)  # type: ignore[assignment]
                flat = False
                break
            if t in plain:
                enc_kwargs[k] = x
            elif (leaf := leaves.get(t)) is not None:
                enc_kwargs[k] = leaf(x)
            else:
                enc_kwargs[k] = fast(x, 2)
                flat = False
        # Every object written here inline is a one-key tag; when nothing went through the
        # fast encoder (whose dicts keep the caller's order) and at most one keyword was
        # passed, no object has two keys, so the writer need not sort: the same bytes.
        write = _checker.encode if flat and len(enc_kwargs) < 2 else _encoder.encode
        key = write([enc_args, enc_kwargs])
        if len(key) < MAX_INT_DIGITS - 1 or _LONG_DIGITS.search(key) is None:
            return enc_args, enc_kwargs, key
    except TooLarge as e:
        raise TooLargeError(e.reason, "args" if args else "kwargs") from None
    except Exception:  # encode_call() below raises the right, path-naming error
        pass
    slow_args, slow_kwargs = encode_call(args, kwargs)
    return slow_args, slow_kwargs, canonical_json([slow_args, slow_kwargs])


class _BytesTag(msgspec.Struct, gc=False, rename={"value": "$bytes"}):
    """``{"$bytes": value}`` for the JSON writer, which writes ``value`` as padded base64:
    the ``$bytes`` leaf's text (a struct: cheaper to make and write than a dict)."""

    value: bytes


class _TupleTag(msgspec.Struct, gc=False, rename={"items": "$tuple"}):
    """``{"$tuple": items}`` for the JSON writer."""

    items: list[Any]


def scalar_call_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes | None:  # noqa: C901
    """The key :func:`encode_call_keyed` gives a call made of exact ``int``, ``str``,
    ``bool``, ``None``, ``bytes`` and flat tuples of those; None for any other call.

    A recorder whose input is new and immutable needs only that key (nothing compares
    its frozen arguments after the call): this writer builds the tagged form with fewer
    steps and declines, rather than refuses, anything else (floats, nested tuples, a
    keyword starting with ``$`` or holding a tuple, bytes given an encoder of their own,
    text or ints the JSON writer refuses, keywords passed out of sorted order, whose
    order the row keeps), which the general path then handles.  Its tags
    are structs the JSON writer writes as the one-key objects they stand for.
    """
    plain = _PLAIN_SCALARS
    bytes_leaf = LEAF_ENCODERS.get(bytes) is _BYTES_LEAF
    enc: list[Any] = []
    for x in args:
        t = type(x)
        if t in plain:
            enc.append(x)
        elif t is tuple:
            items: list[Any] = []
            for y in x:
                u = type(y)
                if u in plain:
                    items.append(y)
                elif u is bytes and bytes_leaf:
                    items.append(_BytesTag(y))
                else:
                    return None
            enc.append(_TupleTag(items))
        elif t is bytes and bytes_leaf:
            enc.append(_BytesTag(x))
        else:
            return None
    kw: dict[str, Any] = kwargs  # written as passed while every value is a plain scalar
    for k, x in kwargs.items():
        if k[:1] == "$" or type(x) not in plain:
            kw = {}
            for k, x in kwargs.items():
                t = type(x)
                if k[:1] == "$":
                    return None
                if t in plain:
                    kw[k] = x
                elif t is bytes and bytes_leaf:
                    kw[k] = _BytesTag(x)
                else:
                    return None
            break
    if len(kw) > 1 and list(kw) != sorted(kw):
        # keywords passed out of sorted order: the general path keeps that order for the
        # row (``order(b=1, a=2)`` replayed as ``order(a=2, b=1)`` was refused, and a change
        # that made a result follow the order it was given replayed green)
        return None
    try:
        # One-key tags only: past one keyword, the sorting writer orders the keywords.
        key = (_write_as_is if len(kw) < 2 else _write_sorted)([enc, kw])
    except Exception:  # a lone surrogate, an int past this process's limit
        return None
    if len(key) < _LONG_KEY or _LONG_DIGITS.search(key) is None:
        return key
    return None  # maybe an int past the codec's limit: the general path decides


_write_as_is: Final = _checker.encode
_write_sorted: Final = _encoder.encode
_LONG_KEY: Final = MAX_INT_DIGITS - 1
"""A key this long may hold an int past :data:`MAX_INT_DIGITS` (checked by a search)."""


def canonical_json(obj: JSON) -> bytes:
    """Canonical bytes of an already-encoded value: sorted keys, no spaces, UTF-8 unescaped.

    A value :func:`encode` made is always writable; anything else that is not
    (a lone surrogate, a huge int, not JSON at all) is a :class:`CanonError`.
    """
    try:
        return _encoder.encode(obj)
    except (TypeError, ValueError, OverflowError, RecursionError, msgspec.EncodeError) as e:
        raise CanonError(f"cannot be written as JSON: {type(e).__name__}: {e}") from None


def _plain_json(v: Any, d: int) -> bool:
    """Whether ``v`` freezes to itself: only exact dicts with str keys, lists, str, int,
    bool, None and finite floats, nested at most :data:`MAX_DEPTH` deep.

    Such a value (what a render that builds a JSON document returns) needs no tag, so
    its canonical bytes are the JSON writer's on the value itself: this walk copies
    nothing, where the encoders build the tagged copy.  It checks the same limits the
    fast encoder checks (a container at level ``d`` > :data:`MAX_DEPTH` is refused);
    keys starting with ``$``, lone surrogates and huge ints are left to :func:`dumps`,
    which checks the written text.
    """
    t = type(v)
    if t is dict:
        for k in v:
            if type(k) is not str:
                return False
        values: Iterable[Any] = v.values()
    elif t is list:
        values = v
    else:
        return t in _PLAIN_SCALARS or (t is float and math.isfinite(v))
    if d > MAX_DEPTH:
        return False
    d += 1
    for x in values:
        tx = type(x)
        if tx in _PLAIN_SCALARS:
            continue
        if tx is float:
            if not math.isfinite(x):
                return False
        elif not _plain_json(x, d):
            return False
    return True


def dumps(value: Any, *, loose: bool = False, path: str = "value") -> bytes:
    """Canonical JSON bytes of a Python value (``encode`` then ``canonical_json``)."""
    if _plain_json(value, 1):  # plain JSON (see _plain_json): written as it is
        try:
            text = _encoder.encode(value)
        except Exception:  # a lone surrogate, an int past this process's digits: below
            pass
        else:
            # ``"$`` is where a key that would need a ``$dict`` tag starts (or merely a
            # string value starting with ``$``: the encoder below decides).
            if b'"$' not in text and (
                len(text) < MAX_INT_DIGITS - 1 or _LONG_DIGITS.search(text) is None
            ):
                return text
    try:  # encode's fast path, its one writer pass being the canonical bytes themselves
        text = _encoder.encode((_FAST_LOOSE if loose else _FAST_STRICT)(value, 1))
        if len(text) < MAX_INT_DIGITS - 1 or _LONG_DIGITS.search(text) is None:
            return text
    except TooLarge as e:
        raise TooLargeError(e.reason, path) from None
    except Exception:  # the slow path below raises the right, path-naming error
        pass
    return _encoder.encode(_slow_encode(value, loose, path))


def equal(a: Any, b: Any, *, loose: bool = False) -> bool:
    """True when two values freeze to the same form (:func:`same_form`)."""
    return same_form(encode(a, loose=loose), encode(b, loose=loose))


def same_form(a: JSON, b: JSON) -> bool:
    """Whether two frozen values are the same value: the same canonical bytes, or the same
    once each ``{"$same": n}`` is written out as the form it names -- which of the
    project's objects a value holds twice is not part of the contract
    (:mod:`~lockstep.canon.shared`)."""
    x, y = canonical_json(a), canonical_json(b)
    if x == y:
        return True
    if shared.SAME_KEY in x or shared.SAME_KEY in y:
        return shared.same_unshared(a, b)
    return False
