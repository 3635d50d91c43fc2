"""Canonical values: the codec every oracle freezes through.

JSON has no tuple, bytes, set, Decimal, NaN or non-string key, yet legacy code
returns all of them and a refactor that swaps a tuple for a list *is* a change
of behaviour.  This module maps Python values to a JSON-compatible *tagged*
form and back so that

* ``decode(encode(x))`` equals ``x`` with the same types, and
* two different values never encode alike (``{1: x}`` vs ``{"1": x}``,
  ``(1,)`` vs ``[1]``, ``True`` vs ``1``, ``Decimal("1.0")`` vs ``Decimal("1.00")``).

The tagged form
---------------
A tag is a JSON object with exactly one key that starts with ``$``::

    {"$tuple": [...]}            {"$bytes": "<base64>"}      {"$bytearray": "<base64>"}
    {"$set": [...]}              {"$frozenset": [...]}       {"$decimal": "1.00"}
    {"$float": "nan"|"inf"|"-inf"}                          {"$complex": [re, im]}
    {"$dict": [[k, v], ...]}     (non-str keys, or str keys that start with "$")
    {"$datetime": [iso, zone, fold]}  {"$date": iso}  {"$time": [iso, zone, fold]}
    {"$timedelta": [days, seconds, microseconds]}       {"$uuid": "..."}
    {"$path": [pathlib class name, str]}                {"$enum": ["mod:Qual", member]}
    {"$dataclass": ["mod:Qual", {field: value}]}        {"$namedtuple": ["mod:Qual", [...]]}
    {"$ext": [registered name, value]}                  {"$slice": [start, stop, step]}
    {"$obj": ["mod:Qual", {"base": ..., "new": [...], "state": ...}]}   (see below)

Plain JSON objects are only ever produced for dicts whose keys are all strings
not starting with ``$``, so a user's dict can never be mistaken for a tag.
Set members and ``$dict`` pairs are sorted by their canonical bytes, so equal
values give equal bytes whatever their insertion order.

Loose mode (``loose=True``) freezes tuples as lists, for users who want the
weaker contract "same items, sequence type does not matter".  It is opt-in
per oracle because it gives up injectivity.

Values that cannot be frozen (open files, sockets, generators, locks, objects
with no registered encoder) raise :class:`~lockstep.errors.CanonError` naming
the path inside the value, e.g. ``args[1]["conn"]``.  Where a non-string dict
key is part of that path it is written with ``repr`` only for types whose
``repr`` is the same in every process (numbers, bytes, tuples of them, ...);
any other key is written as its type, ``value[<pkg.Key>]``, never with a memory
address.

Decoding is inert
-----------------
Oracle files arrive in pull requests, so :func:`decode` treats them as data and
never as instructions: it imports no module and calls nothing named in the data.

* ``$enum``, ``$dataclass`` and ``$namedtuple`` name a class as ``module:QualName``.
  The name resolves only to a class *of the tagged kind* (an :class:`enum.Enum`
  subclass; a dataclass; a tuple subclass with ``_fields``) that is either
  registered with :func:`register_type` or **already imported**: its module is
  in ``sys.modules`` and the name is found in the module's and classes'
  ``__dict__`` (no ``getattr``, so no module ``__getattr__`` runs).  Replay
  imports the configured target first, so the target's own types, and the types
  of the modules it imports, resolve.  Anything else -- a module not imported,
  ``os:system``, a class of another kind -- is a one-line :class:`CanonError`
  naming the path and the name, and nothing is imported or called.
* Building a value of such a class runs none of its code: an enum member is
  looked up in ``__members__``; a dataclass instance is made with
  ``object.__new__`` and its fields set with ``object.__setattr__`` (no
  ``__init__``, no ``__post_init__``); a named tuple with ``tuple.__new__``.  The
  only code of a decoded class that may run is its own ``__hash__``/``__eq__``,
  when an instance is a set member or a dict key.
* ``$ext`` resolves only to an encoder registered with :func:`register_encoder`
  in this process; its ``from_json`` is the user's own code.  ``$path`` names one
  of the six :mod:`pathlib` classes, nothing else.  A ``$datetime``/``$time``
  zone must be a key of :func:`zoneinfo.available_timezones`.

Limits
------
Both directions enforce the same limits, so whatever :func:`encode` accepts
:func:`decode` gives back, and neither lets anything but :class:`CanonError`
escape for bad input (no ``RecursionError``, ``OverflowError``,
``decimal.InvalidOperation`` or ``ValueError``):

* **nesting**: at most :data:`MAX_DEPTH` (200) levels of JSON arrays and objects
  in the frozen form.  A list of lists may nest 200 deep; a tuple of tuples 100
  (each tuple is a tag object around an array); a reference cycle is refused
  the same way.
* **integers**: at most :data:`MAX_INT_DIGITS` (4300) characters of decimal text,
  sign included (a negative int: 4299 digits) -- the most the JSON parser under
  :func:`loads` and every oracle reader reads, and Python's default
  ``int_max_str_digits``.
* **strings** must be valid Unicode text: a lone surrogate (``"\\udcff"``, what
  ``os.fsdecode`` makes of undecodable bytes) cannot be written as UTF-8, so
  :func:`encode` refuses it with the path; encode such text to bytes first.
* **enums** freeze by member name, so a :class:`enum.Flag` combination (no member
  of that name) is refused when it is frozen rather than failing at replay.
* **every tag checks its payload's shape** and accepts only the canonical form
  the encoder writes: ``{"$set": "ab"}``, ``{"$tuple": {"x": 1}}``, base64 with
  stray padding bits, ``{"$decimal": "1e3"}`` (the encoder writes ``"1E+3"``), a
  member given twice in a set, are all refused.  ``$decimal`` accepts what
  :class:`decimal.Decimal` accepts (exponents within ±999999999999999999);
  ``$timedelta`` parts must be in :class:`datetime.timedelta`'s normalized ranges.
* :func:`loads` of text that is not JSON is a :class:`CanonError`.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import enum
import functools
import json
import marshal
import math
import pathlib
import re
import sys
import threading
import types
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeAlias, TypeVar

import msgspec

from lockstep.errors import CanonError

if TYPE_CHECKING:
    import datetime as dt
    import uuid

# datetime, uuid and zoneinfo are imported where a value of theirs is frozen or thawed (the
# rare paths below), not here: a replay whose renders return plain JSON, the usual case,
# never pays for them.  The checks are unchanged: a datetime reaches ``_stdlib`` whether or
# not this module imported its class first.

JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None
"""A value made only of JSON types: what the tagged form is built from."""

DEFAULT_STEM: Final = 48
"""Default length of a frozen exception's message stem."""

MAX_DEPTH: Final = 200
"""Most levels of JSON arrays and objects a frozen value may nest (encode and decode)."""

MAX_INT_DIGITS: Final = 4300
"""Most characters of a frozen integer's decimal text, sign included: what the JSON parser
reads (and Python's default ``int_max_str_digits``), so a negative int has one digit less."""

_INT_HIGH: Final = 10**MAX_INT_DIGITS
_INT_LOW: Final = -(10 ** (MAX_INT_DIGITS - 1))
_LONG_DIGITS: Final = re.compile(b"(?<![0-9])[0-9]{%d}" % (MAX_INT_DIGITS - 1))
"""A run of digits that may be an int past the limit: the fast path then checks slowly.
(The lookbehind starts a match only where a run starts, so the search stays linear.)"""

_TOO_DEEP: Final = f"nested more than {MAX_DEPTH} levels deep, or holds a reference cycle"

_PATH_CLASSES: Final = {
    cls.__name__: cls
    for cls in (
        pathlib.Path,
        pathlib.PosixPath,
        pathlib.WindowsPath,
        pathlib.PurePath,
        pathlib.PurePosixPath,
        pathlib.PureWindowsPath,
    )
}

_encoder = msgspec.json.Encoder(order="sorted")
_checker = msgspec.json.Encoder()  # writes nothing kept: only proves a value can be written
_decoder = msgspec.json.Decoder()

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class _Unfreezable(Exception):
    """Raised inside the encoder; carries the path segments back up to the caller."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.segments: list[str] = []


class _TooDeep(_Unfreezable):
    """More than :data:`MAX_DEPTH` levels: reported at the value's root, not 200 segments down."""

    def __init__(self) -> None:
        super().__init__(_TOO_DEEP)


class Extension(NamedTuple):
    """A user-registered encoder for one type."""

    name: str
    cls: type[Any]
    to_json: Callable[[Any], Any]
    from_json: Callable[[Any], Any]


_T = TypeVar("_T", bound=type[Any])

_EXT_BY_TYPE: dict[type[Any], Extension] = {}
_EXT_BY_NAME: dict[str, Extension] = {}
_TYPES_BY_NAME: dict[str, type[Any]] = {}
_OBJECT_PLANS: dict[type[Any], str | None] = {}
"""Per type, the qualified name when its objects freeze as just ``__dict__`` (the common
plain class: the hot path encodes those inline), else None; cleared when the scope changes."""


def register_encoder(
    cls: type[Any],
    to_json: Callable[[Any], Any],
    from_json: Callable[[Any], Any],
    *,
    name: str | None = None,
) -> None:
    """Teach the codec to freeze instances of ``cls``.

    ``to_json`` returns any freezable value (it is itself canonicalized, so it may
    return tuples, Decimals, ...); ``from_json`` rebuilds the instance from the
    thawed value.  ``name`` is what the oracle file records (default
    ``module:QualName``); keep it stable, because renaming it changes every
    recorded value of that type.
    """
    ext_name = name or qualified_name(cls)
    ext = Extension(ext_name, cls, to_json, from_json)
    _EXT_BY_TYPE[cls] = ext
    _EXT_BY_NAME[ext_name] = ext
    _OBJECT_PLANS.clear()
    LEAF_ENCODERS.pop(cls, None)


def unregister_encoder(cls: type[Any]) -> None:
    """Forget a registered encoder (mostly for tests)."""
    ext = _EXT_BY_TYPE.pop(cls, None)
    if ext is not None:
        _EXT_BY_NAME.pop(ext.name, None)
    if cls in _BUILTIN_LEAVES:
        LEAF_ENCODERS[cls] = _BUILTIN_LEAVES[cls]


def register_type(cls: _T) -> _T:
    """Let :func:`decode` thaw ``cls`` (an Enum, a dataclass or a NamedTuple) by its name.

    Needed only for a class that decoding cannot find already imported by
    ``module:QualName``: one defined inside a function, or in a module that is
    not imported when values are thawed.  Usable as a class decorator.
    """
    if not any(check(cls) for check, _ in _KINDS.values()):
        raise TypeError(f"{cls!r} is not an Enum, a dataclass or a NamedTuple class")
    _TYPES_BY_NAME[qualified_name(cls)] = cls
    return cls


def unregister_type(cls: type[Any]) -> None:
    """Forget a class registered with :func:`register_type` (mostly for tests)."""
    name = qualified_name(cls)
    if _TYPES_BY_NAME.get(name) is cls:
        del _TYPES_BY_NAME[name]


def qualified_name(cls: type[Any]) -> str:
    """``module:QualName`` for a class: importable, unlike ``repr``."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@functools.cache
def _stable_repr() -> frozenset[type[Any]]:
    """Key types whose ``repr`` is the same text in every process (for error messages)."""
    import datetime as dt
    import uuid

    return frozenset(
        {
            int,
            float,
            bool,
            type(None),
            bytes,
            Decimal,
            complex,
            uuid.UUID,
            dt.date,
            dt.datetime,
            dt.time,
            dt.timedelta,
            *_PATH_CLASSES.values(),
        }
    )


def _key_text(key: Any) -> str:
    """A dict key as a path segment shows it: the same text in every process."""
    t = type(key)
    if t is str:
        text = json.dumps(key, ensure_ascii=False)
        return json.dumps(key) if _SURROGATE.search(text) else text  # a message must be UTF-8
    if t is int:
        try:
            return repr(key)
        except ValueError:  # more digits than this process turns into text
            return f"<int of {key.bit_length()} bits>"
    if t in _stable_repr():
        return repr(key)
    if t is tuple:
        inner = ", ".join(_key_text(k) for k in key)
        return f"({inner}{',' if len(key) == 1 else ''})"
    if t is frozenset:
        return "frozenset({" + ", ".join(sorted(_key_text(k) for k in key)) + "})"
    if isinstance(key, enum.Enum):
        return f"{t.__qualname__}.{key.name}"
    return f"<{t.__module__}.{t.__qualname__}>"


def _key_segment(key: Any) -> str:
    return f"[{_key_text(key)}]"


def _sorted_by_bytes(items: Iterable[JSON]) -> list[JSON]:
    return sorted(items, key=_encoder.encode)


def _check_text(s: str) -> str:
    if not s.isascii():
        bad = _SURROGATE.search(s)
        if bad is not None:
            raise _Unfreezable(
                f"a string with a lone surrogate (U+{ord(bad.group()):04X} at index "
                f"{bad.start()}) cannot be written as UTF-8; encode such text to bytes first"
            )
    return s


def _check_int(v: int) -> int:
    if _INT_LOW < v < _INT_HIGH:
        return v
    raise _Unfreezable(
        f"an int of more than {MAX_INT_DIGITS} characters (sign included) cannot be frozen"
    )


def _level(level: int) -> None:
    if level > MAX_DEPTH:
        raise _TooDeep


def _is_enum_class(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, enum.Enum)


def _is_dataclass_class(cls: Any) -> bool:
    return isinstance(cls, type) and dataclasses.is_dataclass(cls)


def _is_namedtuple_class(cls: Any) -> bool:
    if not (isinstance(cls, type) and issubclass(cls, tuple)):
        return False
    fields = getattr(cls, "_fields", None)
    return type(fields) is tuple and all(type(f) is str for f in fields)


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
    if _combine_flags(t, members) != v or any(_enum_name(m) is None for m in members):
        raise _Unfreezable(f"{v!r} holds bits no member of {qualified_name(t)} names")
    return names


def _combine_flags(cls: Any, members: list[Any]) -> Any:
    combined = cls(0)
    for member in members:
        combined |= member
    return combined


class _Encoder:
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
            return _check_text(v)
        if t is int:
            return _check_int(v)
        if t is float:
            if math.isfinite(v):
                return v  # type: ignore[no-any-return]
            _level(depth)
            return {"$float": "nan" if v != v else ("inf" if v > 0 else "-inf")}
        if t is list or (t is tuple and self.loose):
            _level(depth)
            return self._seq(v, depth + 1)
        if t is tuple:
            _level(depth + 1)
            return {"$tuple": self._seq(v, depth + 2)}
        if t is dict:
            return self._dict(v, depth)
        ext = _EXT_BY_TYPE.get(t)
        if ext is not None:
            return self._ext(ext, v, depth)
        if t is bytes or t is bytearray:
            _level(depth)
            return {"$bytes" if t is bytes else "$bytearray": _b64(bytes(v))}
        if t is Decimal:
            _level(depth)
            return {"$decimal": str(v)}
        if t is set or t is frozenset:
            _level(depth + 1)
            members = [self._child(m, "[<member>]", depth + 2) for m in v]
            return {"$set" if t is set else "$frozenset": _sorted_by_bytes(members)}
        return self._rare(v, t, depth)

    def _ext(self, ext: Extension, v: Any, depth: int) -> JSON:
        _level(depth + 1)
        try:
            inner = ext.to_json(v)
        except Exception as e:
            raise _Unfreezable(
                f"the encoder registered as {ext.name!r} raised {type(e).__name__}: {e}"
            ) from None
        return {"$ext": [ext.name, self._child(inner, "", depth + 2)]}

    def _rare(self, v: Any, t: type[Any], depth: int) -> JSON:
        """Types outside the hot path: user classes, the standard library, builtin subclasses."""
        if isinstance(v, enum.Enum):
            name = _enum_name(v)
            if name is None and isinstance(v, enum.Flag):
                _level(depth + 2)
                return {"$enum": [qualified_name(t), _flag_names(v, t)]}
            if name is None:
                raise _Unfreezable(
                    f"{v!r} is not a member of {t.__module__}.{t.__qualname__} (a Flag "
                    "combination?); register an encoder with lockstep.register_encoder()"
                )
            _level(depth + 1)
            return {"$enum": [qualified_name(t), name]}
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            _level(depth + 2)
            fields = {
                f.name: self._child(getattr(v, f.name), f".{f.name}", depth + 3)
                for f in dataclasses.fields(v)
            }
            return {"$dataclass": [qualified_name(t), fields]}
        if isinstance(v, tuple) and _is_namedtuple_class(t) and len(v) == len(t._fields):
            _level(depth + 2)
            return {"$namedtuple": [qualified_name(t), self._seq(v, depth + 3)]}
        stdlib = self._stdlib(v, t, depth)
        if stdlib is not None:
            return stdlib
        if t is IterItems:
            _level(depth + 1)
            return {"$iter": self._seq(v.items, depth + 2)}
        if t in _CALLABLE_TYPES or isinstance(v, type):
            _level(depth)
            return {"$fn": _callable_name(v)}
        for ext in _EXT_BY_TYPE.values():
            if isinstance(v, ext.cls):
                return self._ext(ext, v, depth)
        if _freezes_by_structure(t) and not isinstance(v, BaseException):
            return _freeze_object(self, v, t, depth)
        return self._builtin_subclass(v, t, depth)

    def _stdlib(self, v: Any, t: type[Any], depth: int) -> JSON | None:
        """Dates, times, UUIDs, complex numbers and paths; None for anything else."""
        import datetime as dt
        import uuid

        if t is dt.datetime:
            _level(depth + 1)
            zone = _freeze_tzinfo(self, v.tzinfo, depth + 2)
            return {"$datetime": [v.isoformat(), zone, v.fold]}
        if t is dt.date:
            _level(depth)
            return {"$date": v.isoformat()}
        if t is dt.time:
            _level(depth + 1)
            zone = _freeze_tzinfo(self, v.tzinfo, depth + 2)
            return {"$time": [v.isoformat(), zone, v.fold]}
        if t is dt.timedelta:
            _level(depth + 1)
            return {"$timedelta": [v.days, v.seconds, v.microseconds]}
        if t is uuid.UUID:
            _level(depth)
            return {"$uuid": str(v)}
        if t is slice:
            _level(depth + 1)
            return {
                "$slice": [self._child(part, "", depth + 2) for part in (v.start, v.stop, v.step)]
            }
        if t is complex:
            _level(depth + 1)
            return {"$complex": [self.enc(v.real, depth + 2), self.enc(v.imag, depth + 2)]}
        if t.__name__ in _PATH_CLASSES and _PATH_CLASSES[t.__name__] is t:
            _level(depth + 1)
            return {"$path": [t.__name__, _check_text(str(v))]}
        return None

    def _builtin_subclass(self, v: Any, t: type[Any], depth: int) -> JSON:
        """Builtin subclasses (OrderedDict, defaultdict, str/int subclasses) freeze as their
        base type: they compare equal to it, so the contract is the same."""
        if isinstance(v, dict):
            return self._dict(v, depth)
        if isinstance(v, list):
            _level(depth)
            return self._seq(v, depth + 1)
        if isinstance(v, bool):
            return bool(v)
        if isinstance(v, str):
            return _check_text(str(v))
        if isinstance(v, int):
            return _check_int(int(v))
        if isinstance(v, float):
            return self.enc(float(v), depth)
        raise _Unfreezable(
            f"cannot freeze a {t.__module__}.{t.__qualname__}; "
            "register an encoder with lockstep.register_encoder()"
        )

    def _child(self, v: Any, segment: str, depth: int) -> JSON:
        try:
            return self.enc(v, depth)
        except _Unfreezable as e:
            e.segments.append(segment)
            raise

    def _seq(self, v: Iterable[Any], depth: int) -> list[JSON]:
        out: list[JSON] = []
        append = out.append
        enc = self.enc
        for i, item in enumerate(v):
            try:
                append(enc(item, depth))
            except _Unfreezable as e:
                e.segments.append(f"[{i}]")
                raise
        return out

    def _dict(self, v: dict[Any, Any], depth: int) -> JSON:
        enc = self.enc
        plain = True
        for k in v:
            if type(k) is not str or k.startswith("$"):
                plain = False
                break
        if plain:
            _level(depth)
            out: dict[str, JSON] = {}
            for k, item in v.items():
                try:
                    out[_check_text(k)] = enc(item, depth + 1)
                except _Unfreezable as e:
                    e.segments.append(_key_segment(k))
                    raise
            return out
        _level(depth + 2)
        pairs: list[JSON] = []
        for k, item in v.items():
            try:
                pairs.append([enc(k, depth + 3), enc(item, depth + 3)])
            except _Unfreezable as e:
                e.segments.append(_key_segment(k))
                raise
        return {"$dict": sorted(pairs, key=_encoder.encode)}


_STRICT = _Encoder(loose=False)
_LOOSE = _Encoder(loose=True)


def _fast_encoder(slow: _Encoder) -> Callable[[Any, int], JSON]:  # noqa: C901 -- see enc below
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
        plan = plans[t] if t in plans else _object_plan(t)
        if plan is not None:  # a plain object of the project's own class: its __dict__
            if d + 2 > limit:
                raise _TooDeep  # a cycle too: the slow path names it
            state = v.__dict__
            return {"$obj": [plan, {"state": enc(state, d + 3)} if state else {}]}
        return rare(v, t, d)

    return enc


_FAST_STRICT = _fast_encoder(_STRICT)
_FAST_LOOSE = _fast_encoder(_LOOSE)


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
    except Exception:  # the slow path below raises the right, path-naming error
        pass
    return _slow_encode(value, loose, path)


def _slow_encode(value: Any, loose: bool, path: str) -> JSON:
    """Encode again, tracking the path, to say where a value cannot be frozen."""
    try:
        out = (_LOOSE if loose else _STRICT).enc(value, 1)
        _checker.encode(out)
    except _TooDeep:
        raise CanonError(_TOO_DEEP, path) from None
    except _Unfreezable as e:
        raise CanonError(e.reason, path + "".join(reversed(e.segments))) from None
    except RecursionError:
        raise CanonError(_TOO_DEEP, path) from None
    except ValueError as e:  # a limit of this process (int_max_str_digits) below the codec's
        raise CanonError(f"cannot be written as JSON: {e}", path) from None
    return out


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
    except Exception:  # encode() below raises the right, path-naming error
        pass
    enc_args = encode(list(args), path="args")  # type: ignore[assignment]
    enc_kwargs = encode(kwargs, path="kwargs")
    return enc_args, enc_kwargs  # type: ignore[return-value]


# --------------------------------------------------------------------------- the project's own objects
#
# Real code passes and returns objects of its own classes (a Duration, a Version, a Money).
# Such an object freezes by structure, the way pickle's state protocol sees it:
#
#     {"$obj": ["pkg.mod:Qual", {"base": ..., "new": [...], "state": ...}]}
#
# * ``base``: for a subclass of a builtin value type (str, int, float, complex, bytes,
#   bytearray, tuple, list, dict, set, frozenset, Decimal, date, datetime, time, timedelta),
#   the value as that exact builtin, read through the builtin's own slots (never a method
#   the subclass overrides, such as ``__str__`` or ``__iter__``);
# * ``new``: the arguments of ``cls.__new__`` when the class's own ``__reduce_ex__`` says so in
#   pickle's ``copyreg.__newobj__`` form (any other reduce form is refused);
# * ``state``: ``__getstate__()`` -- the class's own where it defines one, else Python's
#   default (``__dict__``, and ``(__dict__, {slot: value})`` for ``__slots__``).
#
# Neither ``__repr__`` nor ``__eq__`` is ever asked, so a changed attribute is a changed
# frozen form even where ``__eq__`` would call the objects equal.
#
# Which classes: the project's own, i.e. defined under a package allowed with
# :func:`allow_callables_from` (the configured targets' packages) or matching a pattern given
# to :func:`allow_classes_matching` (``[lockstep] freeze_classes``); and tzinfo classes of any
# library, since a tz-aware datetime must keep its zone.  Decoding is as inert as for
# ``$dataclass``: the name resolves only to a class already imported (no import, no
# ``getattr``) that passes the same test; the object is made with the builtin base's
# ``__new__`` (``object.__new__`` for a plain class) -- or, for the ``new`` form, the class's
# own ``__new__`` -- and its state set with ``__setstate__`` where the class defines it,
# else straight into ``__dict__`` and the slots.  The only code that runs is the project's
# own class's (its ``__new__``/``__setstate__``/``__getstate__``), never a class named
# only by the data.  A reference cycle through objects is refused with the class named;
# an object reached twice is frozen twice (identity is not part of the contract).

_CLASS_PATTERNS: list[str] = []
"""``fnmatch`` patterns of ``module.QualName`` whose classes freeze by structure too."""

_ACTIVE_OBJECTS: Final = threading.local()
"""Per thread, ``ids``: the objects being frozen, outermost first (a cycle meets one again)."""


def allow_classes_matching(*patterns: str) -> None:
    """Let classes whose ``module.QualName`` matches one of ``patterns`` freeze by structure."""
    _CLASS_PATTERNS.extend(p for p in patterns if p and p not in _CLASS_PATTERNS)
    _OBJECT_PLANS.clear()


def _own_class(cls: type[Any]) -> bool:
    """Whether ``cls`` is the project's own: under an allowed package, or matched by a pattern."""
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
    import datetime as dt

    return issubclass(cls, dt.tzinfo) and cls not in (dt.tzinfo, dt.timezone)


def _freezes_by_structure(cls: type[Any]) -> bool:
    return isinstance(cls, type) and (_own_class(cls) or _tzinfo_class(cls))


@functools.cache
def _value_bases() -> tuple[type[Any], ...]:
    """Builtin value types a project class may extend, most derived first (bool cannot be)."""
    import datetime as dt

    return (
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


def _from_base(cls: type[Any], base: type[Any], value: Any) -> Any:
    """A ``cls`` instance holding the builtin ``value``, made by the builtin's ``__new__``."""
    import datetime as dt

    if base in (list, dict, set, bytearray):
        obj = base.__new__(cls)
        grow: Any = getattr(base, "extend" if base in (list, bytearray) else "update")
        grow(obj, value)
        return obj
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
    self: _Encoder, v: Any, t: type[Any], depth: int, *, reduce: bool
) -> dict[str, JSON]:
    """The ``{"base", "new", "state"}`` body of an object; ``reduce`` heeds the class's own
    ``__reduce__`` when it is in pickle's ``copyreg.__newobj__`` form (any other form, such as
    a singleton's ``(factory, ())``, is passed over for the default state: the verification
    refuses a row whose objects that state does not rebuild)."""
    body: dict[str, JSON] = {}
    base = _value_base(t)
    if base is not None:
        body["base"] = self._child(_as_base(v, base), "", depth + 1)
    reduced = _newobj_reduction(v, t) if reduce and _own_reduce(t) else None
    if reduced is not None:
        new_args, state = reduced
        if base is None:
            body["new"] = self._child(new_args, ".__new__", depth + 1)
    else:
        state = v.__getstate__() if _custom(t, "__getstate__") else object.__getstate__(v)
    if state is not None:
        body["state"] = self._child(state, "", depth + 1)
    return body


def _newobj_reduction(v: Any, t: type[Any]) -> tuple[list[Any], Any] | None:
    """``(__new__ arguments, state)`` when ``v.__reduce_ex__(2)`` has the form
    ``(copyreg.__newobj__, (cls, *args), state, ...)``; None for any other form."""
    import copyreg

    try:
        reduced = v.__reduce_ex__(2)
    except Exception:
        return None
    if (
        isinstance(reduced, tuple)
        and len(reduced) >= 2
        and reduced[0] is copyreg.__newobj__  # type: ignore[attr-defined]
        and isinstance(reduced[1], tuple)
        and reduced[1][:1] == (t,)
    ):
        return list(reduced[1][1:]), reduced[2] if len(reduced) > 2 else None
    return None


def _object_plan(t: type[Any]) -> str | None:
    """Whether objects of ``t`` freeze as ``{"state": __dict__}`` and nothing else."""
    plan: str | None = None
    try:
        name = qualified_name(t)
        if (
            _freezes_by_structure(t)
            and not issubclass(t, BaseException | enum.Enum | tuple)
            and not dataclasses.is_dataclass(t)
            and _value_base(t) is None
            and not _custom(t, "__getstate__")
            and not _own_reduce(t)
            and not any("__slots__" in vars(c) for c in t.__mro__)
            and not any(issubclass(t, ext.cls) for ext in _EXT_BY_TYPE.values())
            and "<" not in t.__qualname__
            and _already_imported(name) is t
        ):
            plan = name
    except Exception:
        plan = None
    _OBJECT_PLANS[t] = plan
    return plan


class _NoKey(Exception):
    """A value :func:`object_key` does not cover (or too large to be worth it)."""


_KEY_LEAVES: Final = frozenset({int, str, bytes, bool, float, type(None)})
_STR_ONLY: Final = {str}

KEY_BUDGET: Final = 256
"""Most containers and objects :func:`object_key` walks in one call before giving up."""


def _flat(state: dict[Any, Any]) -> bool:
    """Whether marshal may write an object's ``__dict__`` as it is: string names, and values
    that are scalars or tuples or lists of scalars (marshal keeps a tuple, a list and each
    scalar type apart, as canon does; it would not keep a bytearray apart from bytes)."""
    leaves = _KEY_LEAVES
    for x in state.values():
        kind = type(x)
        if kind not in leaves and not (
            (kind is tuple or kind is list) and set(map(type, x)) <= leaves
        ):
            return False
    return set(map(type, state)) == _STR_ONLY


def object_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes | None:
    """A cheap key of a call's arguments made of plain objects of the project's own classes,
    builtin containers and scalars: two calls with equal keys freeze to equal canonical
    bytes (the key may tell apart more, which costs only a miss).  None for anything else.

    A recorder remembers an input it has seen by this key, so a repeated call with an
    object argument is not frozen again (and its object result is compared by key too).
    """
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
        plan = plans[t] if t in plans else _object_plan(t)
        if plan is None:
            raise _NoKey
        state = v.__dict__
        if not state:
            return ("o", plan)
        if _flat(state):
            return ("o", plan, state)  # marshal writes the dict itself, in C
        return ("o", plan, form(state, depth))

    try:
        return marshal.dumps((form(args, 0), form(kwargs, 0) if kwargs else None), 2)
    except (_NoKey, RecursionError, ValueError):
        return None


def _freeze_object(self: _Encoder, v: Any, t: type[Any], depth: int) -> JSON:
    name = qualified_name(t)
    if "<" in t.__qualname__ or _already_imported(name) is not t:
        raise _Unfreezable(
            f"cannot freeze a {name}: the class is not reachable by its name "
            "(defined inside a function?), so it could not be rebuilt"
        )
    active: list[int] | None = getattr(_ACTIVE_OBJECTS, "ids", None)
    if active is None:
        active = _ACTIVE_OBJECTS.ids = []
    if id(v) in active:
        raise _Unfreezable(f"a {name} holds a reference cycle back to itself")
    _level(depth + 2)
    active.append(id(v))
    try:
        body = _object_body(self, v, t, depth + 2, reduce=_own_class(t))
    except _Unfreezable:
        raise
    except RecursionError:
        raise _TooDeep from None
    except Exception as e:
        raise _Unfreezable(
            f"cannot freeze a {name}: reading its state raised {type(e).__name__}: {e}"
        ) from None
    finally:
        active.pop()
    return {"$obj": [name, body]}


def _freeze_tzinfo(self: _Encoder, tz: Any, depth: int) -> JSON:
    """The zone of a datetime or time: null (none, or a fixed ``datetime.timezone`` offset,
    which the ISO text carries), a ``zoneinfo`` key, or any other tzinfo by structure."""
    if tz is None:
        return None
    import datetime as dt
    import zoneinfo

    t = type(tz)
    if t is dt.timezone:
        if tz.tzname(None) != dt.timezone(tz.utcoffset(None)).tzname(None):
            raise _Unfreezable(
                f"cannot keep the named fixed offset {tz.tzname(None)!r} of a datetime "
                "(only its offset would come back)"
            )
        return None
    if t is zoneinfo.ZoneInfo:
        return tz.key  # type: ignore[no-any-return]
    try:
        return _freeze_object(self, tz, t, depth)
    except _Unfreezable as e:
        raise _Unfreezable(f"cannot keep the datetime's tzinfo: {e.reason}") from None


# --------------------------------------------------------------------------- one value at once


def _float_leaf(v: float) -> JSON:
    if math.isfinite(v):
        return v
    return {"$float": "nan" if v != v else ("inf" if v > 0 else "-inf")}


_BUILTIN_LEAVES: Final[dict[type[Any], Callable[[Any], JSON]]] = {
    type(None): lambda v: None,
    bool: lambda v: v,
    float: _float_leaf,
    Decimal: lambda v: {"$decimal": str(v)},
    bytes: lambda v: {"$bytes": binascii.b2a_base64(v, newline=False).decode("ascii")},
    bytearray: lambda v: {"$bytearray": binascii.b2a_base64(v, newline=False).decode("ascii")},
}

LEAF_ENCODERS: Final[dict[type[Any], Callable[[Any], JSON]]] = dict(_BUILTIN_LEAVES)
"""The frozen form of a value of one of these exact types, by one lookup and one call.

Each is what :func:`encode` writes for such a value: one scalar or one tag around ASCII
text, never refused, never nested.  A recorder freezing an argument on every call
looks its type up here before walking the value.  A type given its own encoder with
:func:`register_encoder` leaves this table (the full encoder then decides).
"""


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
                    elif (leaf := leaves.get(u)) is not None:
                        items.append(leaf(y))
                    else:
                        items.append(fast(y, 4))
                enc_args.append({"$tuple": items})
            else:
                enc_args.append(fast(x, 2))
        enc_kwargs: dict[str, JSON] = {}
        for k, x in kwargs.items():
            t = type(x)
            if k[:1] == "$":
                enc_kwargs = fast(kwargs, 1)  # type: ignore[assignment]
                break
            if t in plain:
                enc_kwargs[k] = x
            elif (leaf := leaves.get(t)) is not None:
                enc_kwargs[k] = leaf(x)
            else:
                enc_kwargs[k] = fast(x, 2)
        key = _encoder.encode([enc_args, enc_kwargs])
        if len(key) < MAX_INT_DIGITS - 1 or _LONG_DIGITS.search(key) is None:
            return enc_args, enc_kwargs, key
    except Exception:  # encode_call() below raises the right, path-naming error
        pass
    slow_args, slow_kwargs = encode_call(args, kwargs)
    return slow_args, slow_kwargs, canonical_json([slow_args, slow_kwargs])


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
    except Exception:  # the slow path below raises the right, path-naming error
        pass
    return _encoder.encode(_slow_encode(value, loose, path))


def loads_json(data: bytes | str, *, path: str = "value") -> JSON:
    """Parse JSON text to plain JSON values (no thawing); text that is not JSON, or nests
    deeper than the parser goes, is a :class:`CanonError`."""
    try:
        return _decoder.decode(data)  # type: ignore[no-any-return]
    except msgspec.DecodeError as e:
        raise CanonError(f"not valid JSON: {e}", path) from None
    except RecursionError:
        raise CanonError(_TOO_DEEP, path) from None


def equal(a: Any, b: Any, *, loose: bool = False) -> bool:
    """True when two values freeze to the same canonical bytes."""
    return dumps(a, loose=loose) == dumps(b, loose=loose)


# --------------------------------------------------------------------------- decoding


class _Kind(NamedTuple):
    """What a class-naming tag may resolve to."""

    check: Callable[[Any], bool]
    noun: str


_KINDS: Final = {
    "$enum": _Kind(_is_enum_class, "an Enum class"),
    "$dataclass": _Kind(_is_dataclass_class, "a dataclass"),
    "$namedtuple": _Kind(_is_namedtuple_class, "a NamedTuple class"),
}


def _already_imported(name: str) -> Any:
    """The class ``module:Qual.Name`` if its module is in ``sys.modules``, else None.

    Looks in ``__dict__`` only: no import, no ``getattr`` (a module's ``__getattr__``
    or a lazy module would run code), and the class found must carry that very name.
    """
    found = _imported_object(name)
    if isinstance(found, type) and qualified_name(found) == name:
        return found
    return None


def _imported_object(name: str) -> Any:
    """What ``module:Qual.Name`` names in an already-imported module, or None.

    Walks ``__dict__``s only (module, then classes): no import, no ``getattr``.
    """
    module_name, sep, qualname = name.partition(":")
    module = sys.modules.get(module_name) if sep else None
    if not isinstance(module, types.ModuleType) or not qualname:
        return None
    namespace: Any = object.__getattribute__(module, "__dict__")
    found: Any = None
    for part in qualname.split("."):
        if not isinstance(namespace, dict | types.MappingProxyType):
            return None
        found = namespace.get(part)
        namespace = found.__dict__ if isinstance(found, type) else None
    return found


def _resolve(tag: str, name: str, path: str) -> Any:
    """The class a tag names: registered or already imported, and of the tagged kind."""
    kind = _KINDS[tag]
    cls = _TYPES_BY_NAME.get(name)
    if cls is None:
        cls = _already_imported(name)
    if cls is None or not kind.check(cls):
        raise CanonError(
            f"{tag} names {_short(name)}, which is not {kind.noun} already imported or registered",
            path,
        )
    return cls


def _short(text: str, limit: int = 80) -> str:
    """``repr`` of a string from a file, cut: an error message stays one readable line."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _json_kind(value: Any) -> str:
    t = type(value)
    if value is None:
        return "null"
    if t is list:
        return f"an array of {len(value)}"
    names = {list: "an array", dict: "an object", str: "a string", bool: "a bool", int: "an int"}
    return names.get(t, "a float" if t is float else f"a {t.__name__}")


def _malformed(tag: str, want: str, payload: Any, path: str) -> CanonError:
    return CanonError(f"malformed {tag} value: expected {want}, got {_json_kind(payload)}", path)


def _str_payload(tag: str, payload: Any, path: str) -> str:
    if type(payload) is not str:
        raise _malformed(tag, "a string", payload, path)
    return payload


def _list_payload(tag: str, payload: Any, path: str, depth: int, want: str = "") -> list[Any]:
    """The payload array of a tag object at ``depth``, of the length ``want`` shows if given."""
    if type(payload) is not list or (want and len(payload) != want.count(",") + 1):
        raise _malformed(tag, want or "an array", payload, path)
    if depth + 1 > MAX_DEPTH:
        raise _TooDeep
    return payload


def _not_canonical(tag: str, payload: str, path: str) -> CanonError:
    return CanonError(
        f"malformed {tag} value: {_short(payload)} is not the form lockstep writes", path
    )


def _dec_tuple(payload: Any, path: str, depth: int) -> tuple[Any, ...]:
    return tuple(_dec_list(_list_payload("$tuple", payload, path, depth), path, depth + 2))


def _dec_bytes(payload: Any, path: str, depth: int, tag: str = "$bytes") -> bytes:
    text = _str_payload(tag, payload, path)
    data = base64.b64decode(text, validate=True)
    if _b64(data) != text:
        raise _not_canonical(tag, text, path)
    return data


def _dec_bytearray(payload: Any, path: str, depth: int) -> bytearray:
    return bytearray(_dec_bytes(payload, path, depth, "$bytearray"))


def _dec_decimal(payload: Any, path: str, depth: int) -> Decimal:
    text = _str_payload("$decimal", payload, path)
    try:
        value = Decimal(text)
    except ArithmeticError:  # decimal.InvalidOperation: not a number, or an exponent too large
        raise CanonError(
            f"malformed $decimal value: {_short(text)} is not a decimal number lockstep can read",
            path,
        ) from None
    if str(value) != text:
        raise _not_canonical("$decimal", text, path)
    return value


def _dec_float(payload: Any, path: str, depth: int) -> float:
    if type(payload) is not str or payload not in ("nan", "inf", "-inf"):
        raise CanonError(f"bad $float payload {payload!r}", path)
    return float(payload)


def _dec_complex(payload: Any, path: str, depth: int) -> complex:
    want = "[real, imag] floats"
    parts = _list_payload("$complex", payload, path, depth, want)
    real, imag = (_dec(p, path, depth + 2) for p in parts)
    if type(real) is not float or type(imag) is not float:
        raise CanonError(f"malformed $complex value: expected {want}", path)
    return complex(real, imag)


def _dec_members(tag: str, payload: Any, path: str, depth: int) -> list[Any]:
    items = _list_payload(tag, payload, path, depth)
    return [_dec(m, f"{path}[<member>]", depth + 2) for m in items]


def _dec_set(payload: Any, path: str, depth: int) -> set[Any]:
    members = _dec_members("$set", payload, path, depth)
    out = set(members)
    if len(out) != len(members):
        raise CanonError("malformed $set value: a member appears twice", path)
    return out


def _dec_frozenset(payload: Any, path: str, depth: int) -> frozenset[Any]:
    members = _dec_members("$frozenset", payload, path, depth)
    out = frozenset(members)
    if len(out) != len(members):
        raise CanonError("malformed $frozenset value: a member appears twice", path)
    return out


def _dec_dict(payload: Any, path: str, depth: int) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for pair in _list_payload("$dict", payload, path, depth):
        k, v = _list_payload("$dict", pair, path, depth + 1, "[key, value] pairs")
        key = _dec(k, path, depth + 3)
        if key in out:
            raise CanonError(f"malformed $dict value: key {_key_text(key)} appears twice", path)
        out[key] = _dec(v, f"{path}{_key_segment(key)}", depth + 3)
    return out


@functools.cache
def _zone_keys() -> frozenset[str]:
    import zoneinfo

    return frozenset(zoneinfo.available_timezones())


def _dec_tz(key: Any, path: str, depth: int) -> dt.tzinfo | None:
    if key is None:
        return None
    if type(key) is dict:
        import datetime as dt

        tz = _dec(key, f"{path}.tzinfo", depth)
        if not isinstance(tz, dt.tzinfo):
            raise CanonError(f"a time zone must be a tzinfo, not {type(tz).__name__}", path)
        return tz
    if type(key) is not str or key not in _zone_keys():
        raise CanonError(f"unknown time zone {key!r}", path)
    import zoneinfo

    return zoneinfo.ZoneInfo(key)


def _dec_clock(tag: str, payload: Any, path: str, depth: int) -> Any:
    """``$datetime`` and ``$time``: ``[iso, zone key or null, fold]``, checked to be canonical."""
    iso, zone, fold = _list_payload(tag, payload, path, depth, "[iso text, zone, fold]")
    text = _str_payload(tag, iso, path)
    if type(fold) is not int or fold not in (0, 1):
        raise CanonError(f"malformed {tag} value: fold must be 0 or 1, got {fold!r}", path)
    import datetime as dt

    value = (dt.datetime if tag == "$datetime" else dt.time).fromisoformat(text)
    tz = _dec_tz(zone, path, depth + 2)
    if tz is not None:
        value = value.replace(tzinfo=tz)
    if fold:
        value = value.replace(fold=fold)
    if value.isoformat() != text:
        raise _not_canonical(tag, text, path)
    return value


def _dec_datetime(payload: Any, path: str, depth: int) -> dt.datetime:
    return _dec_clock("$datetime", payload, path, depth)  # type: ignore[no-any-return]


def _dec_time(payload: Any, path: str, depth: int) -> dt.time:
    return _dec_clock("$time", payload, path, depth)  # type: ignore[no-any-return]


def _dec_date(payload: Any, path: str, depth: int) -> dt.date:
    text = _str_payload("$date", payload, path)
    import datetime as dt

    value = dt.date.fromisoformat(text)
    if value.isoformat() != text:
        raise _not_canonical("$date", text, path)
    return value


_TIMEDELTA_PARTS: Final = (
    ("days", -999_999_999, 999_999_999),
    ("seconds", 0, 86_399),
    ("microseconds", 0, 999_999),
)


def _dec_timedelta(payload: Any, path: str, depth: int) -> dt.timedelta:
    parts = _list_payload("$timedelta", payload, path, depth, "[days, seconds, microseconds]")
    for value, (name, low, high) in zip(parts, _TIMEDELTA_PARTS, strict=True):
        if type(value) is not int or not low <= value <= high:
            raise CanonError(
                f"malformed $timedelta value: {name} must be an int in {low}..{high}", path
            )
    days, seconds, microseconds = parts
    import datetime as dt

    return dt.timedelta(days=days, seconds=seconds, microseconds=microseconds)


def _dec_uuid(payload: Any, path: str, depth: int) -> uuid.UUID:
    text = _str_payload("$uuid", payload, path)
    import uuid

    value = uuid.UUID(text)
    if str(value) != text:
        raise _not_canonical("$uuid", text, path)
    return value


def _dec_path(payload: Any, path: str, depth: int) -> pathlib.PurePath:
    name, text = _list_payload("$path", payload, path, depth, "[class name, path]")
    cls = _PATH_CLASSES.get(name) if type(name) is str else None
    if cls is None:
        raise CanonError(f"malformed $path value: {name!r} is not a pathlib class", path)
    value = cls(_str_payload("$path", text, path))
    if str(value) != text:
        raise _not_canonical("$path", text, path)
    return value


def _dec_enum(payload: Any, path: str, depth: int) -> Any:
    name, member = _list_payload("$enum", payload, path, depth, "[type name, member]")
    cls = _resolve("$enum", _str_payload("$enum", name, path), path)
    if type(member) is list and issubclass(cls, enum.Flag):
        members: list[Any] = [cls.__members__.get(m) if type(m) is str else None for m in member]
        values: list[Any] = [getattr(m, "value", None) for m in members]
        if None in members or values != sorted(set(values)):
            raise CanonError(f"malformed $enum value: {member!r} are not {name} flags", path)
        return _combine_flags(cls, members)
    found = cls.__members__.get(member) if type(member) is str else None
    if found is None:
        raise CanonError(f"{name} has no member {member!r}", path)
    return found


def _dec_dataclass(payload: Any, path: str, depth: int) -> Any:
    name, fields = _list_payload("$dataclass", payload, path, depth, "[type name, fields]")
    cls = _resolve("$dataclass", _str_payload("$dataclass", name, path), path)
    if type(fields) is not dict:
        raise _malformed("$dataclass", "an object of fields", fields, path)
    if depth + 2 > MAX_DEPTH:
        raise _TooDeep
    expected = [f.name for f in dataclasses.fields(cls)]
    if sorted(fields) != sorted(expected):
        raise CanonError(
            f"malformed $dataclass value: {name} has the fields ({', '.join(expected)}), "
            f"not ({', '.join(_short(k, 40)[1:-1] for k in fields)})",
            path,
        )
    obj = object.__new__(cls)
    for field_name, item in fields.items():
        object.__setattr__(obj, field_name, _dec(item, f"{path}.{field_name}", depth + 3))
    return obj


def _dec_namedtuple(payload: Any, path: str, depth: int) -> Any:
    name, items = _list_payload("$namedtuple", payload, path, depth, "[type name, items]")
    cls = _resolve("$namedtuple", _str_payload("$namedtuple", name, path), path)
    items = _list_payload("$namedtuple", items, path, depth + 1)
    if len(items) != len(cls._fields):
        raise CanonError(
            f"malformed $namedtuple value: {name} has {len(cls._fields)} fields "
            f"({', '.join(cls._fields)}), not {len(items)}",
            path,
        )
    return tuple.__new__(cls, _dec_list(items, path, depth + 3))


def _dec_ext(payload: Any, path: str, depth: int) -> Any:
    name, inner = _list_payload("$ext", payload, path, depth, "[encoder name, value]")
    ext = _EXT_BY_NAME.get(name) if type(name) is str else None
    if ext is None:
        raise CanonError(f"no encoder is registered under the name {name!r}", path)
    value = _dec(inner, path, depth + 2)
    try:
        return ext.from_json(value)
    except Exception as e:
        raise CanonError(
            f"the encoder registered as {name!r} could not rebuild the value: "
            f"{type(e).__name__}: {e}",
            path,
        ) from None


# --------------------------------------------------------------------------- callables, iterators
#
# A module-level function or class passed as an argument (a ``key=``, a ``format=``
# callback) freezes by its name, ``{"$fn": "pkg.mod:qualname"}``.  Data must never name
# code to run, so a name resolves only (a) inside a package a caller allowed with
# :func:`allow_callables_from` (the ledger's target's own package: the recorder and
# replay allow it), looked up in an already-imported module's ``__dict__`` without an
# import or a ``getattr``; (b) to a class registered with :func:`register_type`; or
# (c) to one of a few side-effect-free builtins (:data:`_PURE_BUILTINS`, ``str.lower``
# and the like).  Lambdas, closures, bound methods and partials have no such name and
# stay refused.  Encoding applies the same rule, so a name that froze always thaws.
#
# ``{"$iter": [...]}`` is an iterator argument the recorder materialized at call time
# (:class:`IterItems`); it thaws to a fresh :class:`IterItems` over the same items.

_CALLABLE_TYPES: Final = frozenset(
    {types.FunctionType, types.BuiltinFunctionType, types.MethodDescriptorType}
)
_PURE_BUILTINS: Final = frozenset(
    [
        "abs",
        "bool",
        "bytes",
        "chr",
        "float",
        "frozenset",
        "int",
        "len",
        "list",
        "max",
        "min",
        "ord",
        "repr",
        "round",
        "sorted",
        "str",
        "sum",
        "tuple",
    ]
)
_PURE_METHOD_OWNERS: Final = (str, bytes, int, float)
_CALLABLE_SCOPE: set[str] = set()
"""Top-level packages whose functions and classes ``$fn`` may name (see above)."""


class IterItems:
    """An iterator over items materialized before the call: what a target is handed for an
    iterator argument, at record and at replay alike.  It freezes as ``{"$iter": [...]}``
    with all its items however far it was consumed, so it thaws and freezes alike."""

    __slots__ = ("_rest", "items")

    def __init__(self, items: list[Any]) -> None:
        self.items = items
        self._rest = iter(items)

    def __iter__(self) -> IterItems:
        return self

    def __next__(self) -> Any:
        return next(self._rest)

    def __repr__(self) -> str:
        return f"<iterator over {len(self.items)} materialized item(s)>"


def allow_callables_from(*packages: str) -> None:
    """Let ``$fn`` name functions and classes of these top-level packages (and their modules)."""
    _CALLABLE_SCOPE.update(p.split(".")[0] for p in packages if p)
    _OBJECT_PLANS.clear()


def _in_scope(name: str) -> bool:
    module, _, qualname = name.partition(":")
    if module == "builtins":
        owner, _, method = qualname.partition(".")
        if not method:
            return owner in _PURE_BUILTINS
        return owner in {c.__name__ for c in _PURE_METHOD_OWNERS} and "." not in method
    return module.split(".")[0] in _CALLABLE_SCOPE or name in _TYPES_BY_NAME


def _named_callable(name: str) -> Any:
    """The function or class ``module:Qual.Name`` in an imported module's namespace, or None."""
    found = _imported_object(name)
    if type(found) in _CALLABLE_TYPES or isinstance(found, type):
        return found
    return None


def _callable_name(v: Any) -> str:
    """``pkg.mod:qualname`` of a function or class that thaws back to itself, or refuse it."""
    owner = getattr(v, "__objclass__", None)
    module = getattr(owner if owner is not None else v, "__module__", None)
    if type(v) is types.BuiltinFunctionType and not isinstance(
        getattr(v, "__self__", None), types.ModuleType
    ):
        module = None  # a bound builtin method ([].append): no name reaches it
    qualname = getattr(v, "__qualname__", "")
    name = f"{module}:{qualname}"
    if not module or "<" in qualname or _named_callable(name) is not v:
        raise _Unfreezable(
            f"cannot freeze {type(v).__name__} {qualname or v!r}: only module-level functions "
            "and classes freeze (by name); a lambda, closure, bound method or partial does not"
        )
    if not _in_scope(name):
        raise _Unfreezable(
            f"cannot freeze {name}: a callable argument freezes by name only from the "
            "target's own package (or a few pure builtins such as len, str.lower)"
        )
    return name


def _dec_fn(payload: Any, path: str, depth: int) -> Any:
    name = _str_payload("$fn", payload, path)
    found = _named_callable(name) if _in_scope(name) else None
    if found is None:
        raise CanonError(
            f"$fn names {_short(name)}, which is not a function or class of the target's "
            "package already imported (or a pure builtin)",
            path,
        )
    return found


def _dec_iter(payload: Any, path: str, depth: int) -> Any:
    items = _list_payload("$iter", payload, path, depth)
    return IterItems(_dec_list(items, path, depth + 2))


def _dec_slice(payload: Any, path: str, depth: int) -> slice:
    parts = _list_payload("$slice", payload, path, depth, "[start, stop, step]")
    return slice(*_dec_list(parts, path, depth + 2))


def _dec_obj(payload: Any, path: str, depth: int) -> Any:
    name, body = _list_payload("$obj", payload, path, depth, "[type name, body]")
    name = _str_payload("$obj", name, path)
    cls = _TYPES_BY_NAME.get(name) or _already_imported(name)
    if cls is None or not _freezes_by_structure(cls) or issubclass(cls, BaseException):
        raise CanonError(
            f"$obj names {_short(name)}, which is not a class of the project (or a tzinfo "
            "class) already imported",
            path,
        )
    if type(body) is not dict or not set(body) <= {"base", "new", "state"}:
        raise _malformed("$obj", 'an object of "base", "new" and "state"', body, path)
    if depth + 2 > MAX_DEPTH:
        raise _TooDeep
    base = _value_base(cls)
    if ("base" in body) != (base is not None) or ("new" in body and not _own_reduce(cls)):
        raise CanonError(f"malformed $obj value: not the form lockstep writes for {name}", path)
    if base is not None:
        value = _dec(body["base"], path, depth + 3)
        if type(value) is not base:
            raise CanonError(f"malformed $obj value: the base of {name} is not a {base}", path)
        obj = _from_base(cls, base, value)
    elif "new" in body:
        args = _dec(body["new"], path, depth + 3)
        if type(args) is not list:
            raise _malformed("$obj", "a list of __new__ arguments", body["new"], path)
        obj = cls.__new__(cls, *args)
    else:
        obj = _allocate(cls)
    if "state" in body:
        state = _dec(body["state"], path, depth + 3)
        if state is None:
            raise CanonError(f"malformed $obj value: a null state of {name}", path)
        _set_state(obj, cls, state, path)
    return obj


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
        obj.__setstate__(state)
        return
    slots: Any = None
    if type(state) is tuple and len(state) == 2:
        state, slots = state
    for part in (state, slots):
        if part is not None and (type(part) is not dict or any(type(k) is not str for k in part)):
            raise CanonError(f"malformed $obj value: the state of {qualified_name(cls)}", path)
    if state:
        object.__getattribute__(obj, "__dict__").update(state)
    for key, value in (slots or {}).items():
        object.__setattr__(obj, key, value)


_TAGS: Final[dict[str, Callable[[Any, str, int], Any]]] = {
    "$tuple": _dec_tuple,
    "$bytes": _dec_bytes,
    "$bytearray": _dec_bytearray,
    "$decimal": _dec_decimal,
    "$float": _dec_float,
    "$complex": _dec_complex,
    "$set": _dec_set,
    "$frozenset": _dec_frozenset,
    "$dict": _dec_dict,
    "$datetime": _dec_datetime,
    "$date": _dec_date,
    "$time": _dec_time,
    "$timedelta": _dec_timedelta,
    "$uuid": _dec_uuid,
    "$path": _dec_path,
    "$enum": _dec_enum,
    "$dataclass": _dec_dataclass,
    "$namedtuple": _dec_namedtuple,
    "$ext": _dec_ext,
    "$fn": _dec_fn,
    "$iter": _dec_iter,
    "$obj": _dec_obj,
    "$slice": _dec_slice,
}

KNOWN_TAGS: Final = frozenset(_TAGS)


def _dec_list(items: list[Any], path: str, depth: int) -> list[Any]:
    return [_dec(item, f"{path}[{i}]", depth) for i, item in enumerate(items)]


def _dec_tag(key: str, payload: Any, path: str, depth: int) -> Any:
    handler = _TAGS.get(key)
    if handler is None:
        raise CanonError(f"unknown tag {_short(key, 40)}", path)
    try:
        return handler(payload, path, depth)
    except (CanonError, _TooDeep, RecursionError):
        raise
    except Exception as e:  # what the standard library says of a bad payload, as one line
        raise CanonError(f"malformed {key} value: {e}", path) from None


def _dec(obj: Any, path: str, depth: int) -> Any:
    """The path-tracking decoder; ``depth`` is the level ``obj`` sits at (1 = outermost)."""
    t = type(obj)
    if t in (str, int, float, bool) or obj is None:
        return obj
    if t is list:
        if depth > MAX_DEPTH:
            raise _TooDeep
        return _dec_list(obj, path, depth + 1)
    if t is not dict:
        raise CanonError(f"not a JSON value: {t.__name__}", path)
    if depth > MAX_DEPTH:
        raise _TooDeep
    for key in obj:
        if type(key) is not str:
            raise CanonError(f"not a JSON object key: {type(key).__name__}", path)
    if len(obj) == 1:
        ((key, payload),) = obj.items()
        if key.startswith("$"):
            return _dec_tag(key, payload, path, depth)
    for key in obj:
        if key.startswith("$"):
            raise CanonError(f"tag {_short(key, 40)} must be the only key of its object", path)
    return {k: _dec(v, f"{path}{_key_segment(k)}", depth + 1) for k, v in obj.items()}


def _fast_decoder() -> Callable[[Any, int], Any]:  # noqa: C901 -- one flat dispatch, as in the encoder
    """The hot path of :func:`decode`: plain JSON, tuples and bytes without path bookkeeping.

    Replay thaws every row's arguments, so this mirrors :func:`_fast_encoder`:
    it handles the common shapes inline and hands every other tag to the same
    handlers as the slow path.  Anything unusual (an unknown or misplaced tag, a
    malformed payload, too deep) raises, and :func:`decode` runs the slow decoder
    again to name the place in the message; so both paths always agree on the result.
    """
    plain = frozenset({str, int, float, bool, type(None)})
    tags = _TAGS
    b64decode = base64.b64decode
    b64encode = binascii.b2a_base64
    limit = MAX_DEPTH

    def dec(obj: Any, d: int) -> Any:
        t = type(obj)
        if t in plain:
            return obj
        if d > limit:
            raise _TooDeep
        if t is list:
            d += 1
            return [x if type(x) in plain else dec(x, d) for x in obj]
        if t is not dict:
            raise _TooDeep  # not JSON: the slow path says so
        if len(obj) == 1:
            (key,) = obj
            if type(key) is str and key[:1] == "$":
                payload = obj[key]
                if key == "$tuple" and type(payload) is list and d < limit:
                    d += 2
                    return tuple([x if type(x) in plain else dec(x, d) for x in payload])
                if key == "$bytes" and type(payload) is str:
                    data = b64decode(payload, validate=True)
                    if b64encode(data, newline=False) != payload.encode("ascii"):
                        raise _TooDeep  # not canonical: the slow path says so
                    return data
                return tags[key](payload, "value", d)
        for key in obj:
            if type(key) is not str or key[:1] == "$":
                raise _TooDeep  # a misplaced tag: the slow path says so
        d += 1
        return {k: (x if type(x) in plain else dec(x, d)) for k, x in obj.items()}

    return dec


_FAST_DEC: Final = _fast_decoder()


def decode(obj: JSON, *, path: str = "value") -> Any:
    """Thaw a tagged value back to the Python value it was frozen from.

    Imports nothing and calls nothing named in ``obj`` (see "Decoding is inert"
    above); a value that is not what :func:`encode` writes is a :class:`CanonError`.
    """
    try:
        return _FAST_DEC(obj, 1)
    except Exception:  # the slow path below raises the right, path-naming error
        pass
    try:
        return _dec(obj, path, 1)
    except (_TooDeep, RecursionError):
        raise CanonError(_TOO_DEEP, path) from None


def loads(data: bytes | str, *, path: str = "value") -> Any:
    """Parse canonical JSON bytes and thaw them (inverse of :func:`dumps`)."""
    return decode(loads_json(data, path=path), path=path)


# --------------------------------------------------------------------------- exceptions


class FrozenException(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An exception as an oracle keeps it: qualified type name and message stem.

    The stem is whitespace-folded and cut, so that messages embedding an id or a
    long repr do not make every replay drift, while the start of the message
    (which is what callers usually match on) is still frozen.
    """

    exc_type: str
    exc_stem: str


def exception_type_name(exc: BaseException) -> str:
    """``ValueError`` for builtins, ``pkg.mod.Qual`` otherwise."""
    t = type(exc)
    if t.__module__ == "builtins":
        return t.__qualname__
    return f"{t.__module__}.{t.__qualname__}"


def message_stem(message: str, length: int = DEFAULT_STEM) -> str:
    """Fold runs of whitespace to one space, strip, and keep the first ``length`` characters."""
    return " ".join(message.split())[:length]


def freeze_exception(exc: BaseException, *, stem_length: int = DEFAULT_STEM) -> FrozenException:
    """Freeze an exception to the form every oracle compares."""
    return FrozenException(exception_type_name(exc), message_stem(str(exc), stem_length))
