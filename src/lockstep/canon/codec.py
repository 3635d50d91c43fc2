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
    {"$ext": [registered name, value]}

Plain JSON objects are only ever produced for dicts whose keys are all strings
not starting with ``$``, so a user's dict can never be mistaken for a tag.
Set members and ``$dict`` pairs are sorted by their canonical bytes, so equal
values give equal bytes whatever their insertion order.

Loose mode (``loose=True``) freezes tuples as lists, for users who want the
weaker contract "same items, sequence type does not matter".  It is opt-in
per oracle because it gives up injectivity.

Values that cannot be frozen (open files, sockets, generators, locks, objects
with no registered encoder) raise :class:`~lockstep.errors.CanonError` naming
the path inside the value, e.g. ``args[1]["conn"]``.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as dt
import enum
import importlib
import json
import math
import pathlib
import uuid
import zoneinfo
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any, Final, NamedTuple, TypeAlias

import msgspec

from lockstep.errors import CanonError

JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None
"""A value made only of JSON types: what the tagged form is built from."""

DEFAULT_STEM: Final = 48
"""Default length of a frozen exception's message stem."""

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
_decoder = msgspec.json.Decoder()


class _Unfreezable(Exception):
    """Raised inside the encoder; carries the path segments back up to the caller."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.segments: list[str] = []


class Extension(NamedTuple):
    """A user-registered encoder for one type."""

    name: str
    cls: type[Any]
    to_json: Callable[[Any], Any]
    from_json: Callable[[Any], Any]


_EXT_BY_TYPE: dict[type[Any], Extension] = {}
_EXT_BY_NAME: dict[str, Extension] = {}


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


def unregister_encoder(cls: type[Any]) -> None:
    """Forget a registered encoder (mostly for tests)."""
    ext = _EXT_BY_TYPE.pop(cls, None)
    if ext is not None:
        _EXT_BY_NAME.pop(ext.name, None)


def qualified_name(cls: type[Any]) -> str:
    """``module:QualName`` for a class: importable, unlike ``repr``."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _key_segment(key: Any) -> str:
    if isinstance(key, str):
        return f"[{json.dumps(key, ensure_ascii=False)}]"
    return f"[{key!r}]"


def _sorted_by_bytes(items: Iterable[JSON]) -> list[JSON]:
    return sorted(items, key=_encoder.encode)


class _Encoder:
    """One encoding pass; ``loose`` is fixed for the pass."""

    __slots__ = ("loose",)

    def __init__(self, loose: bool) -> None:
        self.loose = loose

    def enc(self, v: Any) -> JSON:  # noqa: C901 -- one flat type dispatch; a call per branch costs
        t = type(v)
        if t is str or v is None or t is bool:
            return v  # type: ignore[no-any-return]
        if t is int:
            return v  # type: ignore[no-any-return]
        if t is float:
            if math.isfinite(v):
                return v  # type: ignore[no-any-return]
            return {"$float": "nan" if v != v else ("inf" if v > 0 else "-inf")}
        if t is list:
            return self._seq(v)
        if t is tuple:
            return self._seq(v) if self.loose else {"$tuple": self._seq(v)}
        if t is dict:
            return self._dict(v)
        ext = _EXT_BY_TYPE.get(t)
        if ext is not None:
            return {"$ext": [ext.name, self._child(ext.to_json(v), "")]}
        if t is bytes:
            return {"$bytes": _b64(v)}
        if t is bytearray:
            return {"$bytearray": _b64(bytes(v))}
        if t is Decimal:
            return {"$decimal": str(v)}
        if t is set or t is frozenset:
            members = [self._child(m, "[<member>]") for m in v]
            return {"$set" if t is set else "$frozenset": _sorted_by_bytes(members)}
        return self._rare(v, t)

    def _rare(self, v: Any, t: type[Any]) -> JSON:
        """Types outside the hot path: user classes, the standard library, builtin subclasses."""
        if isinstance(v, enum.Enum):
            return {"$enum": [qualified_name(t), v.name]}
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            fields = {
                f.name: self._child(getattr(v, f.name), f".{f.name}") for f in dataclasses.fields(v)
            }
            return {"$dataclass": [qualified_name(t), fields]}
        if isinstance(v, tuple) and hasattr(t, "_fields"):
            return {"$namedtuple": [qualified_name(t), self._seq(v)]}
        stdlib = self._stdlib(v, t)
        if stdlib is not None:
            return stdlib
        for ext in _EXT_BY_TYPE.values():
            if isinstance(v, ext.cls):
                return {"$ext": [ext.name, self._child(ext.to_json(v), "")]}
        return self._builtin_subclass(v, t)

    def _stdlib(self, v: Any, t: type[Any]) -> JSON | None:
        """Dates, times, UUIDs, complex numbers and paths; None for anything else."""
        if t is dt.datetime:
            return {"$datetime": [v.isoformat(), _zone_key(v.tzinfo), v.fold]}
        if t is dt.date:
            return {"$date": v.isoformat()}
        if t is dt.time:
            return {"$time": [v.isoformat(), _zone_key(v.tzinfo), v.fold]}
        if t is dt.timedelta:
            return {"$timedelta": [v.days, v.seconds, v.microseconds]}
        if t is uuid.UUID:
            return {"$uuid": str(v)}
        if t is complex:
            return {"$complex": [self.enc(v.real), self.enc(v.imag)]}
        if t.__name__ in _PATH_CLASSES and _PATH_CLASSES[t.__name__] is t:
            return {"$path": [t.__name__, str(v)]}
        return None

    def _builtin_subclass(self, v: Any, t: type[Any]) -> JSON:
        """Builtin subclasses (OrderedDict, defaultdict, str/int subclasses) freeze as their
        base type: they compare equal to it, so the contract is the same."""
        if isinstance(v, dict):
            return self._dict(v)
        if isinstance(v, list):
            return self._seq(v)
        if isinstance(v, bool):
            return bool(v)
        if isinstance(v, str):
            return str(v)
        if isinstance(v, int):
            return int(v)
        if isinstance(v, float):
            return self.enc(float(v))
        raise _Unfreezable(
            f"cannot freeze a {t.__module__}.{t.__qualname__}; "
            "register an encoder with lockstep.register_encoder()"
        )

    def _child(self, v: Any, segment: str) -> JSON:
        try:
            return self.enc(v)
        except _Unfreezable as e:
            e.segments.append(segment)
            raise

    def _seq(self, v: Iterable[Any]) -> list[JSON]:
        out: list[JSON] = []
        append = out.append
        enc = self.enc
        for i, item in enumerate(v):
            try:
                append(enc(item))
            except _Unfreezable as e:
                e.segments.append(f"[{i}]")
                raise
        return out

    def _dict(self, v: dict[Any, Any]) -> JSON:
        enc = self.enc
        plain = True
        for k in v:
            if type(k) is not str or k.startswith("$"):
                plain = False
                break
        if plain:
            out: dict[str, JSON] = {}
            for k, item in v.items():
                try:
                    out[k] = enc(item)
                except _Unfreezable as e:
                    e.segments.append(_key_segment(k))
                    raise
            return out
        pairs: list[JSON] = []
        for k, item in v.items():
            try:
                pairs.append([enc(k), enc(item)])
            except _Unfreezable as e:
                e.segments.append(_key_segment(k))
                raise
        return {"$dict": sorted(pairs, key=_encoder.encode)}


_STRICT = _Encoder(loose=False)
_LOOSE = _Encoder(loose=True)


def _zone_key(tz: dt.tzinfo | None) -> str | None:
    if isinstance(tz, zoneinfo.ZoneInfo):
        return tz.key
    return None


def _fast_encoder(slow: _Encoder) -> Callable[[Any], JSON]:  # noqa: C901 -- see enc below
    """The hot path: the same encoding as ``slow`` without tracking where it is in the value.

    Recording wraps every call of a target, so freezing small arguments must cost
    about a microsecond.  This encoder inlines the common types and leaves path
    bookkeeping out; when it meets something it cannot freeze, :func:`encode`
    runs the slow, path-tracking encoder again to name the place in the message.
    """
    loose = slow.loose
    plain = frozenset({str, int, bool, type(None)})
    b64 = binascii.b2a_base64
    isfinite = math.isfinite
    ext_by_type = _EXT_BY_TYPE
    sort_key = _encoder.encode
    rare = slow._rare

    # One flat type dispatch, kept inline on purpose: this runs once per recorded argument,
    # and splitting it into helpers adds a call per value on the hot path.
    def enc(v: Any) -> JSON:  # noqa: C901
        t = type(v)
        if t in plain:
            return v  # type: ignore[no-any-return]
        if t is list:
            return [x if type(x) in plain else enc(x) for x in v]
        if t is tuple:
            items = [x if type(x) in plain else enc(x) for x in v]
            return items if loose else {"$tuple": items}
        if t is dict:
            for k in v:
                if type(k) is not str or k[:1] == "$":
                    return {"$dict": sorted(([enc(k), enc(x)] for k, x in v.items()), key=sort_key)}
            return {k: (x if type(x) in plain else enc(x)) for k, x in v.items()}
        if t is float:
            if isfinite(v):
                return v  # type: ignore[no-any-return]
            return {"$float": "nan" if v != v else ("inf" if v > 0 else "-inf")}
        if ext_by_type:
            ext = ext_by_type.get(t)
            if ext is not None:
                return {"$ext": [ext.name, enc(ext.to_json(v))]}
        if t is bytes:
            return {"$bytes": b64(v, newline=False).decode("ascii")}
        if t is Decimal:
            return {"$decimal": str(v)}
        if t is bytearray:
            return {"$bytearray": b64(v, newline=False).decode("ascii")}
        if t is set or t is frozenset:
            members = sorted((enc(m) for m in v), key=sort_key)
            return {"$set" if t is set else "$frozenset": members}
        return rare(v, t)

    return enc


_FAST_STRICT = _fast_encoder(_STRICT)
_FAST_LOOSE = _fast_encoder(_LOOSE)


def encode(value: Any, *, loose: bool = False, path: str = "value") -> JSON:
    """Freeze ``value`` to its tagged JSON-compatible form.

    ``path`` names the value in error messages (``args``, ``kwargs``, ``result``).
    """
    try:
        return (_FAST_LOOSE if loose else _FAST_STRICT)(value)
    except (_Unfreezable, RecursionError):
        pass
    # Something could not be frozen: encode again, slowly, to say where.
    try:
        return (_LOOSE if loose else _STRICT).enc(value)
    except _Unfreezable as e:
        raise CanonError(e.reason, path + "".join(reversed(e.segments))) from None
    except RecursionError:
        raise CanonError("value is nested too deeply or contains a reference cycle", path) from None


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
        enc_args = [x if type(x) in plain else fast(x) for x in args]
        enc_kwargs = fast(kwargs) if kwargs else {}
    except (_Unfreezable, RecursionError):
        enc_args = encode(list(args), path="args")  # type: ignore[assignment]
        enc_kwargs = encode(kwargs, path="kwargs")
    return enc_args, enc_kwargs  # type: ignore[return-value]


def canonical_json(obj: JSON) -> bytes:
    """Canonical bytes of an already-encoded value: sorted keys, no spaces, UTF-8 unescaped."""
    return _encoder.encode(obj)


def dumps(value: Any, *, loose: bool = False, path: str = "value") -> bytes:
    """Canonical JSON bytes of a Python value (``encode`` then ``canonical_json``)."""
    return _encoder.encode(encode(value, loose=loose, path=path))


def loads_json(data: bytes | str) -> JSON:
    """Parse JSON text to plain JSON values (no thawing)."""
    return _decoder.decode(data)  # type: ignore[no-any-return]


def equal(a: Any, b: Any, *, loose: bool = False) -> bool:
    """True when two values freeze to the same canonical bytes."""
    return dumps(a, loose=loose) == dumps(b, loose=loose)


# --------------------------------------------------------------------------- decoding


def _import_qualified(name: str, path: str) -> Any:
    module_name, _, qualname = name.partition(":")
    if not module_name or not qualname:
        raise CanonError(f"malformed type name {name!r}", path)
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise CanonError(f"cannot import type {name!r}: {e}", path) from None
    return obj


def _dec_tz(key: Any, path: str) -> dt.tzinfo | None:
    if key is None:
        return None
    try:
        return zoneinfo.ZoneInfo(str(key))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as e:
        raise CanonError(f"unknown time zone {key!r}: {e}", path) from None


def _dec_dataclass(payload: Any, path: str) -> Any:
    name, fields = payload
    cls = _import_qualified(name, path)
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise CanonError(f"{name} is not a dataclass", path)
    obj = object.__new__(cls)
    for field_name, item in fields.items():
        object.__setattr__(obj, field_name, _dec(item, f"{path}.{field_name}"))
    return obj


def _dec_datetime(payload: Any, path: str) -> dt.datetime:
    iso, zone, fold = payload
    value = dt.datetime.fromisoformat(iso)
    tz = _dec_tz(zone, path)
    if tz is not None:
        value = value.replace(tzinfo=tz)
    return value.replace(fold=fold) if fold else value


def _dec_time(payload: Any, path: str) -> dt.time:
    iso, zone, fold = payload
    value = dt.time.fromisoformat(iso)
    tz = _dec_tz(zone, path)
    if tz is not None:
        value = value.replace(tzinfo=tz)
    return value.replace(fold=fold) if fold else value


def _dec_float(payload: Any, path: str) -> float:
    if payload not in ("nan", "inf", "-inf"):
        raise CanonError(f"bad $float payload {payload!r}", path)
    return float(payload)


def _dec_enum(payload: Any, path: str) -> Any:
    name, member = payload
    cls = _import_qualified(name, path)
    try:
        return cls[member]
    except (KeyError, TypeError):
        raise CanonError(f"{name} has no member {member!r}", path) from None


def _dec_ext(payload: Any, path: str) -> Any:
    name, inner = payload
    ext = _EXT_BY_NAME.get(name)
    if ext is None:
        raise CanonError(f"no encoder is registered under the name {name!r}", path)
    return ext.from_json(_dec(inner, path))


def _dec_set(payload: list[Any], path: str) -> set[Any]:
    return {_dec(m, path) for m in payload}


def _dec_dict(payload: list[Any], path: str) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for pair in payload:
        k, v = pair
        key = _dec(k, path)
        out[key] = _dec(v, f"{path}{_key_segment(key)}")
    return out


_TAGS: Final[dict[str, Callable[[Any, str], Any]]] = {
    "$tuple": lambda p, path: tuple(_dec_list(p, path)),
    "$bytes": lambda p, path: base64.b64decode(p, validate=True),
    "$bytearray": lambda p, path: bytearray(base64.b64decode(p, validate=True)),
    "$decimal": lambda p, path: Decimal(p),
    "$float": _dec_float,
    "$complex": lambda p, path: complex(_dec(p[0], path), _dec(p[1], path)),
    "$set": _dec_set,
    "$frozenset": lambda p, path: frozenset(_dec_set(p, path)),
    "$dict": _dec_dict,
    "$datetime": _dec_datetime,
    "$date": lambda p, path: dt.date.fromisoformat(p),
    "$time": _dec_time,
    "$timedelta": lambda p, path: dt.timedelta(days=p[0], seconds=p[1], microseconds=p[2]),
    "$uuid": lambda p, path: uuid.UUID(p),
    "$path": lambda p, path: _PATH_CLASSES[p[0]](p[1]),
    "$enum": _dec_enum,
    "$dataclass": _dec_dataclass,
    "$namedtuple": lambda p, path: _import_qualified(p[0], path)(*_dec_list(p[1], path)),
    "$ext": _dec_ext,
}

KNOWN_TAGS: Final = frozenset(_TAGS)


def _dec_list(items: list[Any], path: str) -> list[Any]:
    return [_dec(item, f"{path}[{i}]") for i, item in enumerate(items)]


def _dec(obj: Any, path: str) -> Any:
    t = type(obj)
    if t is dict:
        if len(obj) == 1:
            (key,) = obj
            if key.startswith("$"):
                handler = _TAGS.get(key)
                if handler is None:
                    raise CanonError(f"unknown tag {key!r}", path)
                try:
                    return handler(obj[key], path)
                except CanonError:
                    raise
                except (TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
                    raise CanonError(f"malformed {key} value: {e}", path) from None
        for key in obj:
            if key.startswith("$"):
                raise CanonError(f"tag {key!r} must be the only key of its object", path)
        return {k: _dec(v, f"{path}{_key_segment(k)}") for k, v in obj.items()}
    if t is list:
        return _dec_list(obj, path)
    if t in (str, int, float, bool) or obj is None:
        return obj
    raise CanonError(f"not a JSON value: {t.__name__}", path)


def _fast_decoder() -> Callable[[Any], Any]:
    """The hot path of :func:`decode`: plain JSON, tuples and bytes without path bookkeeping.

    Replay thaws every row's arguments, so this mirrors :func:`_fast_encoder`:
    it handles the common shapes inline and hands every other tag to the same
    handlers as the slow path.  Anything unusual (an unknown or misplaced tag, a
    malformed payload) raises, and :func:`decode` runs the slow decoder again to
    name the place in the message; so both paths always agree on the result.
    """
    plain = frozenset({str, int, float, bool, type(None)})
    tags = _TAGS
    b64decode = base64.b64decode

    def dec(obj: Any) -> Any:
        t = type(obj)
        if t in plain:
            return obj
        if t is list:
            return [x if type(x) in plain else dec(x) for x in obj]
        if t is not dict:
            raise _Unfreezable("not a JSON value")
        if len(obj) == 1:
            (key,) = obj
            if key[:1] == "$":
                payload = obj[key]
                if key == "$tuple" and type(payload) is list:
                    return tuple([x if type(x) in plain else dec(x) for x in payload])
                if key == "$bytes":
                    return b64decode(payload, validate=True)
                return tags[key](payload, "value")
        for key in obj:
            if key[:1] == "$":
                raise _Unfreezable("misplaced tag")
        return {k: (x if type(x) in plain else dec(x)) for k, x in obj.items()}

    return dec


_FAST_DEC: Final = _fast_decoder()


def decode(obj: JSON, *, path: str = "value") -> Any:
    """Thaw a tagged value back to the Python value it was frozen from."""
    try:
        return _FAST_DEC(obj)
    except Exception:  # the slow path below raises the right, path-naming error
        pass
    return _dec(obj, path)


def loads(data: bytes | str, *, path: str = "value") -> Any:
    """Parse canonical JSON bytes and thaw them (inverse of :func:`dumps`)."""
    return decode(loads_json(data), path=path)


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
