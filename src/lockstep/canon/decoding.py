"""Decoding: tagged JSON back to the Python value it was frozen from, inertly.

Each tag is decoded by its entry in :data:`TAG_DECODERS`; a module of this package adds
a tag family by adding entries (as :mod:`lockstep.canon.callables` does for ``$fn`` and
``$iter``).  Like encoding, a fast path handles the common shapes and the slow,
path-tracking decoder runs again to name the place of an error.
"""

from __future__ import annotations

import base64
import binascii
import collections
import dataclasses
import enum
import functools
import pathlib
import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeVar

import msgspec

from lockstep.canon._core import (
    _PATH_CLASSES,
    _TOO_DEEP,
    JSON,
    MAX_DEPTH,
    _b64,
    _decoder,
    _key_segment,
    _key_text,
    _short,
    _TooDeep,
    text_form,
)
from lockstep.canon.library_classes import test_module
from lockstep.canon.registry import (
    _EXT_BY_NAME,
    _KINDS,
    _TYPES_BY_NAME,
    class_named,
    combine_flags,
    no_longer_imports,
)
from lockstep.errors import CanonError, ThawError

if TYPE_CHECKING:
    import datetime as dt
    import uuid


def _resolve(tag: str, name: str, path: str) -> Any:
    """The class a tag names: registered or already imported, and of the tagged kind."""
    kind = _KINDS[tag]
    cls = _TYPES_BY_NAME.get(name)
    if cls is None:
        cls = class_named(name, importing=True)
    if cls is None:
        no_longer_imports(name, tag, path)
    if cls is None or not kind.check(cls):
        suite = (
            ": a class the tests define (list its module's file in [lockstep] test_modules)"
            if test_module(name.partition(":")[0])
            else ""
        )
        raise CanonError(
            f"{tag} names {_short(name)}, which is not {kind.noun} already imported or "
            f"registered{suite}",
            path,
        )
    return cls


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


def str_payload(tag: str, payload: Any, path: str) -> str:
    """The payload of ``tag``, which must be a string."""
    if type(payload) is not str:
        raise _malformed(tag, "a string", payload, path)
    return payload


def list_payload(tag: str, payload: Any, path: str, depth: int, want: str = "") -> list[Any]:
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
    return tuple(decode_items(list_payload("$tuple", payload, path, depth), path, depth + 2))


def _dec_bytes(payload: Any, path: str, depth: int, tag: str = "$bytes") -> bytes:
    text = str_payload(tag, payload, path)
    data = base64.b64decode(text, validate=True)
    if _b64(data) != text:
        raise _not_canonical(tag, text, path)
    return data


_STR_ESCAPE: Final = re.compile(r"\\(\\|u(d[89a-f][0-9a-f]{2}))")
"""What ``$str`` escapes: a backslash, and a lone surrogate as ``\\udcXX``."""


def _dec_str(payload: Any, path: str, depth: int) -> str:
    """A text holding a lone surrogate (:func:`~lockstep.canon._core.text_form`); refused
    unless it is the very form the encoder writes (it must hold one, each escape as
    written, nothing else escaped)."""
    text = str_payload("$str", payload, path)
    value = _STR_ESCAPE.sub(
        lambda m: "\\" if m.group(2) is None else chr(int(m.group(2), 16)), text
    )
    if text_form(value) != {"$str": text}:
        raise _not_canonical("$str", text, path)
    return value


def _dec_bytearray(payload: Any, path: str, depth: int) -> bytearray:
    return bytearray(_dec_bytes(payload, path, depth, "$bytearray"))


def _dec_decimal(payload: Any, path: str, depth: int) -> Decimal:
    text = str_payload("$decimal", payload, path)
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
    parts = list_payload("$complex", payload, path, depth, want)
    real, imag = (decode_at(p, path, depth + 2) for p in parts)
    if type(real) is not float or type(imag) is not float:
        raise CanonError(f"malformed $complex value: expected {want}", path)
    return complex(real, imag)


def _dec_members(tag: str, payload: Any, path: str, depth: int) -> list[Any]:
    items = list_payload(tag, payload, path, depth)
    return [decode_at(m, f"{path}[<member>]", depth + 2) for m in items]


_PLAIN_MEMBERS: Final = frozenset({str, int, float, bool, type(None), bytes, tuple, frozenset})
"""Types whose ``__hash__``/``__eq__`` are Python's own: two such members that collide were
written twice.  Any other member type brings its class's code to the comparison."""


def _twice(tag: str, what: str, members: Iterable[Any], path: str) -> CanonError:
    """A member (or key) appearing twice: a corrupt file, unless a member's class (the
    project's code, which may have changed) decided that two members are one."""
    if all(type(m) in _PLAIN_MEMBERS for m in members):
        return CanonError(f"malformed {tag} value: {what} appears twice", path)
    return ThawError(f"two recorded {tag} members are equal under today's code ({what})", path)


def _raised_by_members(tag: str, members: Iterable[Any], e: Exception, path: str) -> Exception:
    """What hashing or comparing ``members`` raising ``e`` means: the project's code failing
    (a member of a class of its own: its ``__hash__`` or ``__eq__`` ran), which replay
    reports as that case's, or a corrupt file (only the standard library's types: a list
    where a member must be hashable), which the caller words as malformed."""
    own = [m for m in members if type(m).__module__ != "builtins"]
    if not own:
        return e
    return ThawError(
        f"rebuilding the recorded {tag} ran {type(own[0]).__qualname__}'s __hash__ or __eq__, "
        f"which raised {type(e).__name__}: {e}",
        path,
    )


def _dec_set(payload: Any, path: str, depth: int) -> set[Any]:
    members = _dec_members("$set", payload, path, depth)
    try:
        out = set(members)
    except Exception as e:
        raise _raised_by_members("$set", members, e, path) from None
    if len(out) != len(members):
        raise _twice("$set", "a member", members, path)
    return out


def _dec_frozenset(payload: Any, path: str, depth: int) -> frozenset[Any]:
    members = _dec_members("$frozenset", payload, path, depth)
    try:
        out = frozenset(members)
    except Exception as e:
        raise _raised_by_members("$frozenset", members, e, path) from None
    if len(out) != len(members):
        raise _twice("$frozenset", "a member", members, path)
    return out


_D = TypeVar("_D", bound=dict[Any, Any])


def _fill(tag: str, out: _D, payload: Any, path: str, depth: int) -> _D:
    """Put the ``[key, value]`` pairs of ``payload`` (the array of a tag object at ``depth``)
    into ``out``, in their order; a key given twice is malformed."""
    for pair in list_payload(tag, payload, path, depth):
        k, v = list_payload(tag, pair, path, depth + 1, "[key, value] pairs")
        key = decode_at(k, path, depth + 3)
        try:
            seen = key in out
        except Exception as e:
            raise _raised_by_members(tag, [key, *out], e, path) from None
        if seen:
            raise _twice(tag, f"key {_key_text(key)}", [key, *out], path)
        value = decode_at(v, f"{path}{_key_segment(key)}", depth + 3)
        try:
            out[key] = value
        except Exception as e:
            raise _raised_by_members(tag, [key, *out], e, path) from None
    return out


def _dec_dict(payload: Any, path: str, depth: int) -> dict[Any, Any]:
    return _fill("$dict", {}, payload, path, depth)


def _dec_odict(payload: Any, path: str, depth: int) -> collections.OrderedDict[Any, Any]:
    return _fill("$odict", collections.OrderedDict(), payload, path, depth)


def _dec_counter(payload: Any, path: str, depth: int) -> collections.Counter[Any]:
    return _fill("$counter", collections.Counter(), payload, path, depth)


def _dec_defaultdict(payload: Any, path: str, depth: int) -> collections.defaultdict[Any, Any]:
    want = "[factory, pairs]"
    factory, pairs = list_payload("$defaultdict", payload, path, depth, want)
    made = decode_at(factory, f"{path}.default_factory", depth + 2)
    if made is not None and not (isinstance(factory, dict) and "$fn" in factory):
        raise _malformed("$defaultdict", "a $fn or null factory", factory, path)
    return _fill("$defaultdict", collections.defaultdict(made), pairs, path, depth + 1)


@functools.cache
def _zone_keys() -> frozenset[str]:
    import zoneinfo

    return frozenset(zoneinfo.available_timezones())


def _dec_tz(key: Any, path: str, depth: int) -> dt.tzinfo | None:
    """A zone: null, a ``zoneinfo`` key, or a tzinfo object (``$obj``, thawed by its rules)."""
    if key is None:
        return None
    if type(key) is dict:
        import datetime as dt

        tz = decode_at(key, f"{path}.tzinfo", depth)
        if not isinstance(tz, dt.tzinfo):
            raise CanonError(f"a time zone must be a tzinfo, not {type(tz).__name__}", path)
        if type(tz) is dt.timezone and tz.tzname(None) == dt.timezone(tz.utcoffset(None)).tzname(
            None
        ):
            raise CanonError("malformed time zone: an unnamed fixed offset is written null", path)
        return tz
    if type(key) is not str or key not in _zone_keys():
        raise CanonError(f"unknown time zone {key!r}", path)
    import zoneinfo

    return zoneinfo.ZoneInfo(key)


def _dec_clock(tag: str, payload: Any, path: str, depth: int) -> Any:
    """``$datetime`` and ``$time``: ``[iso, zone key or null, fold]``, checked to be canonical."""
    iso, zone, fold = list_payload(tag, payload, path, depth, "[iso text, zone, fold]")
    text = str_payload(tag, iso, path)
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
        raise _offset_moved(tag, text, value, tz, path) or _not_canonical(tag, text, path)
    return value


def _offset_moved(tag: str, text: str, value: Any, tz: Any, path: str) -> ThawError | None:
    """The error of a recorded clock whose zone gives it another UTC offset here (a zone
    that reads the machine's local time, or rules that changed): not a malformed file but
    where or when it runs, so replay reports the row (a :class:`ThawError`) and goes on."""
    import datetime as dt

    written = (dt.datetime if tag == "$datetime" else dt.time).fromisoformat(text)
    if tz is None or written.utcoffset() is None or written.isoformat() != text:
        return None
    start = len(written.replace(tzinfo=None).isoformat())
    offset, recorded = value.isoformat()[start:] or "none", text[start:]
    zone = type(tz)
    why = "the zone depends on where or when it runs"
    if zone.__module__.partition(".")[0] not in _ZONE_MODULES:  # a class of the project's
        why = f"the zone's code changed since, or {why}"
    return ThawError(
        f"{tag} {_short(text)}: its zone ({zone.__module__}:{zone.__qualname__}) gives it "
        f"the UTC offset {offset} here, not the recorded {recorded}: {why}",
        path,
    )


_ZONE_MODULES: Final = frozenset({"datetime", "zoneinfo", "pytz"})
"""Where the zones that only read the machine or a zone database come from; a zone of
another module runs code of its own (the project's ``tzinfo`` subclass, dateutil's
``tzfile``), which a change may have moved."""


def _dec_datetime(payload: Any, path: str, depth: int) -> dt.datetime:
    return _dec_clock("$datetime", payload, path, depth)  # type: ignore[no-any-return]


def _dec_time(payload: Any, path: str, depth: int) -> dt.time:
    return _dec_clock("$time", payload, path, depth)  # type: ignore[no-any-return]


def _dec_date(payload: Any, path: str, depth: int) -> dt.date:
    text = str_payload("$date", payload, path)
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
    parts = list_payload("$timedelta", payload, path, depth, "[days, seconds, microseconds]")
    for value, (name, low, high) in zip(parts, _TIMEDELTA_PARTS, strict=True):
        if type(value) is not int or not low <= value <= high:
            raise CanonError(
                f"malformed $timedelta value: {name} must be an int in {low}..{high}", path
            )
    days, seconds, microseconds = parts
    import datetime as dt

    return dt.timedelta(days=days, seconds=seconds, microseconds=microseconds)


def _dec_uuid(payload: Any, path: str, depth: int) -> uuid.UUID:
    text = str_payload("$uuid", payload, path)
    import uuid

    value = uuid.UUID(text)
    if str(value) != text:
        raise _not_canonical("$uuid", text, path)
    return value


def _dec_path(payload: Any, path: str, depth: int) -> pathlib.PurePath:
    name, text = list_payload("$path", payload, path, depth, "[class name, path]")
    cls = _PATH_CLASSES.get(name) if type(name) is str else None
    if cls is None:
        raise CanonError(f"malformed $path value: {name!r} is not a pathlib class", path)
    value = cls(str_payload("$path", text, path))
    if str(value) != text:
        raise _not_canonical("$path", text, path)
    return value


def _dec_enum(payload: Any, path: str, depth: int) -> Any:
    name, member = list_payload("$enum", payload, path, depth, "[type name, member]")
    cls = _resolve("$enum", str_payload("$enum", name, path), path)
    if type(member) is list and issubclass(cls, enum.Flag):  # a combination, by member names
        members: list[Any] = [cls.__members__.get(m) if type(m) is str else None for m in member]
        values: list[Any] = [getattr(m, "value", None) for m in members]
        if None in members or values != sorted(set(values)):
            raise CanonError(f"malformed $enum value: {member!r} are not {name} flags", path)
        return combine_flags(cls, members)
    found = cls.__members__.get(member) if type(member) is str else None
    if found is None:
        raise CanonError(f"{name} has no member {member!r}", path)
    return found


def _dec_dataclass(payload: Any, path: str, depth: int) -> Any:
    name, fields = list_payload("$dataclass", payload, path, depth, "[type name, fields]")
    cls = _resolve("$dataclass", str_payload("$dataclass", name, path), path)
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
        object.__setattr__(obj, field_name, decode_at(item, f"{path}.{field_name}", depth + 3))
    return obj


def _dec_namedtuple(payload: Any, path: str, depth: int) -> Any:
    """``[type name, items]``, or ``[type name, items, attributes]`` for one that also holds
    attributes in its ``__dict__``."""
    if type(payload) is list and len(payload) == 3:
        name, items, attrs = payload
    else:
        name, items = list_payload("$namedtuple", payload, path, depth, "[type name, items]")
        attrs = None
    cls = _resolve("$namedtuple", str_payload("$namedtuple", name, path), path)
    items = list_payload("$namedtuple", items, path, depth + 1)
    if len(items) != len(cls._fields):
        raise CanonError(
            f"malformed $namedtuple value: {name} has {len(cls._fields)} fields "
            f"({', '.join(cls._fields)}), not {len(items)}",
            path,
        )
    value = tuple.__new__(cls, decode_items(items, path, depth + 3))
    if attrs is not None:
        held = decode_at(attrs, f"{path}.__dict__", depth + 2)
        namespace = getattr(value, "__dict__", None)
        if type(held) is not dict or not held or not isinstance(namespace, dict):
            raise CanonError(
                f"malformed $namedtuple value: {name} holds no attributes of that form", path
            )
        for key in held:
            if type(key) is not str:
                raise CanonError(f"malformed $namedtuple value: attribute {key!r}", path)
        namespace.update(held)
    return value


def _dec_ext(payload: Any, path: str, depth: int) -> Any:
    name, inner = list_payload("$ext", payload, path, depth, "[encoder name, value]")
    ext = _EXT_BY_NAME.get(name) if type(name) is str else None
    if ext is None:
        raise CanonError(f"no encoder is registered under the name {name!r}", path)
    value = decode_at(inner, path, depth + 2)
    try:
        return ext.from_json(value)
    except Exception as e:
        raise CanonError(
            f"the encoder registered as {name!r} could not rebuild the value: "
            f"{type(e).__name__}: {e}",
            path,
        ) from None


def _dec_slice(payload: Any, path: str, depth: int) -> slice:
    parts = list_payload("$slice", payload, path, depth, "[start, stop, step]")
    return slice(*decode_items(parts, path, depth + 2))


def _dec_range(payload: Any, path: str, depth: int) -> range:
    start, stop, step = list_payload("$range", payload, path, depth, "[start, stop, step]")
    if not all(type(x) is int for x in (start, stop, step)) or step == 0:
        raise _malformed("$range", "three ints, the step not 0", payload, path)
    return range(start, stop, step)


_CONSTANTS: Final = {"NotImplemented": NotImplemented, "Ellipsis": Ellipsis}


def _dec_const(payload: Any, path: str, depth: int) -> Any:
    name = str_payload("$const", payload, path)
    if name not in _CONSTANTS:
        raise CanonError(
            f"malformed $const value: expected 'NotImplemented' or 'Ellipsis', got {_short(name)}",
            path,
        )
    return _CONSTANTS[name]


TagDecoder: TypeAlias = Callable[[Any, str, int], Any]
"""Thaws one tag's payload, given the path for messages and the level the tag object sits at."""

TAG_DECODERS: Final[dict[str, TagDecoder]] = {
    "$tuple": _dec_tuple,
    "$bytes": _dec_bytes,
    "$str": _dec_str,
    "$bytearray": _dec_bytearray,
    "$decimal": _dec_decimal,
    "$float": _dec_float,
    "$complex": _dec_complex,
    "$set": _dec_set,
    "$frozenset": _dec_frozenset,
    "$dict": _dec_dict,
    "$odict": _dec_odict,
    "$counter": _dec_counter,
    "$defaultdict": _dec_defaultdict,
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
    "$slice": _dec_slice,
    "$range": _dec_range,
    "$const": _dec_const,
}
"""The decoder of each tag by its name: the one place a tag is looked up."""


def loads_json(data: bytes | str, *, path: str = "value") -> JSON:
    """Parse JSON text to plain JSON values (no thawing); text that is not JSON, or nests
    deeper than the parser goes, is a :class:`CanonError`."""
    try:
        return _decoder.decode(data)  # type: ignore[no-any-return]
    except msgspec.DecodeError as e:
        raise CanonError(f"not valid JSON: {e}", path) from None
    except RecursionError:
        raise CanonError(_TOO_DEEP, path) from None


def decode_items(items: list[Any], path: str, depth: int) -> list[Any]:
    """Thaw each item of an array whose items sit at ``depth``; a path names the index."""
    return [decode_at(item, f"{path}[{i}]", depth) for i, item in enumerate(items)]


def _dec_tag(key: str, payload: Any, path: str, depth: int) -> Any:
    handler = TAG_DECODERS.get(key)
    if handler is None:
        raise CanonError(f"unknown tag {_short(key, 40)}", path)
    try:
        return handler(payload, path, depth)
    except (CanonError, _TooDeep, RecursionError):
        raise
    except Exception as e:  # what the standard library says of a bad payload, as one line
        raise CanonError(f"malformed {key} value: {e}", path) from None


def decode_at(obj: Any, path: str, depth: int) -> Any:
    """The path-tracking decoder; ``depth`` is the level ``obj`` sits at (1 = outermost)."""
    t = type(obj)
    if t in (str, int, float, bool) or obj is None:
        return obj
    if t is list:
        if depth > MAX_DEPTH:
            raise _TooDeep
        return decode_items(obj, path, depth + 1)
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
    return {k: decode_at(v, f"{path}{_key_segment(k)}", depth + 1) for k, v in obj.items()}


PATH_TAGS: set[str] = set()
"""Tags whose thawed value keeps the place it was thawed at (``$calls``: the argument a
drift names), so the fast path, which keeps no places, leaves them to the slow one."""


def _fast_decoder() -> Callable[[Any, int], Any]:  # noqa: C901 -- one flat dispatch, as in the encoder
    """The hot path of :func:`decode`: plain JSON, tuples and bytes without path bookkeeping.

    Replay thaws every row's arguments, so this mirrors :func:`_fast_encoder`:
    it handles the common shapes inline and hands every other tag to the same
    handlers as the slow path.  Anything unusual (an unknown or misplaced tag, a
    malformed payload, too deep) raises, and :func:`decode` runs the slow decoder
    again to name the place in the message; so both paths always agree on the result.
    """
    plain = frozenset({str, int, float, bool, type(None)})
    tags = TAG_DECODERS
    b64decode = base64.b64decode
    b64encode = binascii.b2a_base64
    limit = MAX_DEPTH

    def dec(obj: Any, d: int) -> Any:  # noqa: C901 -- the flat dispatch above
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
                if key in PATH_TAGS:
                    raise _TooDeep  # its value keeps its place: the slow path knows it
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
        return decode_at(obj, path, 1)
    except (_TooDeep, RecursionError):
        raise CanonError(_TOO_DEEP, path) from None


def loads(data: bytes | str, *, path: str = "value") -> Any:
    """Parse canonical JSON bytes and thaw them (inverse of :func:`dumps`)."""
    return decode(loads_json(data, path=path), path=path)
