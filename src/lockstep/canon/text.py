"""Frozen values as Python-like text: how every report writes a recorded value or call.

A drift message should read like code (``parse_amount('9.99', strict=True)
returned (Decimal('9.99'), 'USD')``), so the tagged form is written back as the
Python it stands for: tuples in parentheses, bytes as ``b'...'``, ``Decimal('1.10')``,
``float('nan')``, ``datetime('2024-01-31T12:00:00', 'Europe/Paris')``, a dataclass
as ``Point(x=1, y=2)``.

The text is made by walking the tags, never by thawing the value:

* oracle files are data, never instructions, so rendering imports no module
  and calls no constructor named in a file (thawing an enum or a dataclass
  would import its module);
* a report is where a corrupt value shows up, so rendering never raises: a tag
  it cannot read is shown as ``<unreadable {...}>`` with the stored JSON;
* the text depends only on the canonical form (plain dicts are written with
  sorted keys, as they are stored), and two frozen values that differ give
  different text, a tuple never reading as a list, ``1`` never as ``1.0`` or
  ``True``.

Each oracle kind keeps its own sentence around the value (the ledger writes
``returned X``, the tape ``-> X``); the value text comes from here.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Final

import msgspec

from lockstep.canon.shared import numbered

_json: Final = msgspec.json.Encoder(order="sorted")


SHOWN_VALUE: Final = 240
"""Characters of each value a row's call shows in a report line (then "…"): a method of a
parsed document holds the whole document as ``self``, and a refusal or drift line of a
megabyte names nothing better than one of a few hundred characters.  The ledger file
keeps the value whole."""


class _Unreadable(Exception):
    """A tag whose payload is not what the codec writes: shown as stored, not guessed at."""


def value_text(value: object, *, limit: int | None = None) -> str:
    """Python-like text for a frozen (tagged JSON) value, cut to ``limit`` characters with "…".

    With a ``limit``, rendering stops once the scalars written so far pass it (the rest of
    the value shows as "…", past the cut): a parse tree of a megabyte rendered whole only
    to keep its first 240 characters took seconds per refused row.  Without one, at most
    :data:`WHOLE_MOST` characters are written: a value whose objects share parts
    (``{"$same": n}``, each place written out in full) can read as a text exponentially
    longer than its form, and rendering a marshmallow schema's whole to find where two of
    them differ ran until the verifying fork was killed, ten minutes later."""
    budget = _BUDGET.set([WHOLE_MOST if limit is None else limit])
    try:
        text = _render(value)
    except RecursionError:
        text = "<a value nested too deeply to show>"
    finally:
        _BUDGET.reset(budget)
    return clip(text, limit)


_BUDGET: ContextVar[list[int] | None] = ContextVar("lockstep_text_budget", default=None)
"""Characters :func:`value_text` may still write before the cut (each scalar's, and one per
container or object walked: what bounds the walk of a form with few scalars)."""

WHOLE_MOST: Final = 1 << 20
"""Characters a value's text holds at most when no limit is asked (then "…")."""


def clip(text: str, limit: int | None) -> str:
    """``text`` cut to ``limit`` characters, the last one "…" (whole with None)."""
    if limit is not None and len(text) > limit:
        return text[: max(limit - 1, 0)] + "…"
    return text


LEAD: Final = 60
"""Characters kept before the first difference when two long texts are cut around it."""


def around_difference(expected: str, actual: str, limit: int) -> tuple[str, str]:
    """Both texts cut to ``limit`` characters, as :func:`clip` cuts them; but where they
    agree past the cut, each from a little before their first difference ("…" marks what
    was left out), so the reason shows what differs.  croniter's ``__init__`` rows, cut
    alike at ``start_…``, ended exactly before the field that differed."""
    if len(expected) <= limit and len(actual) <= limit:
        return expected, actual
    same = _common_prefix(expected, actual)
    if same < limit - LEAD:
        return clip(expected, limit), clip(actual, limit)
    start = same - LEAD
    return clip("…" + expected[start:], limit), clip("…" + actual[start:], limit)


_BLOCK: Final = 1 << 12


def _common_prefix(left: str, right: str) -> int:
    """How many leading characters two texts share: compared a block at a time (a
    recorded value of 50 MB is compared in C, not a character at a time)."""
    end = min(len(left), len(right))
    start = 0
    while start < end and left[start : start + _BLOCK] == right[start : start + _BLOCK]:
        start += _BLOCK
    start = min(start, end)
    stop = min(start + _BLOCK, end)
    return next((i for i in range(start, stop) if left[i] != right[i]), stop)


def call_text(
    name: str,
    args: Sequence[object],
    kwargs: Mapping[str, object],
    *,
    limit: int | None = None,
) -> str:
    """``name(arg, key=value)``, keywords sorted as they are stored; ``limit`` cuts each value."""
    parts = [value_text(a, limit=limit) for a in args]
    parts += [f"{k}={value_text(kwargs[k], limit=limit)}" for k in sorted(kwargs)]
    return f"{name}({', '.join(parts)})"


def raised_text(exc_type: object, exc_stem: object) -> str:
    """``raised ValueError: bad amount``, or ``raised KeyError`` when the message is empty."""
    return f"raised {exc_type}: {exc_stem}" if exc_stem else f"raised {exc_type}"


def mutated_text(mutated: Mapping[str, object], *, limit: int | None = None) -> str:
    """``args[0] -> [1, 2], key -> 3``: arguments changed in place (``"0"`` is the first
    positional); ``limit`` cuts each value."""
    return ", ".join(
        f"{'args[' + k + ']' if k.isdigit() else k} -> {value_text(v, limit=limit)}"
        for k, v in sorted(mutated.items())
    )


def outcome_text(
    ok: bool,
    result: object,
    exc_type: object,
    exc_stem: object,
    mutated: object = None,
    *,
    returned: str = "returned",
    limit: int | None = None,
) -> str:
    """``returned ('9.99', 'USD')`` or ``raised ValueError: bad amount``, plus ``; mutated ...``.

    ``returned`` is the word before a value (the tape writes ``->``); ``mutated``
    is counted only when it is a non-empty mapping (an absent field may be any
    sentinel).
    """
    text = (
        f"{returned} {value_text(result, limit=limit)}" if ok else raised_text(exc_type, exc_stem)
    )
    if isinstance(mutated, Mapping) and mutated:
        text += f"; mutated {mutated_text(mutated, limit=limit)}"
    return text


def short_name(target: str) -> str:
    """``parse_amount`` for ``refs.messy:parse_amount``; ``Cart.total`` for a method."""
    qualname = target.rpartition(":")[2] or target
    return qualname.rpartition("<locals>.")[2]


# --------------------------------------------------------------------------- walking


def _render(value: object) -> str:
    budget = _BUDGET.get()
    if budget is not None:
        if budget[0] <= 0:
            return "…"  # past the cut: never shown
        if type(value) in _SCALARS:
            text = _scalar(value)
            budget[0] -= len(text)
            return text
        budget[0] -= 1  # a container: what bounds a walk of few scalars
    return _scalar(value) if type(value) in _SCALARS else _container(value)


_SCALARS: Final = frozenset({type(None), str, bool, int, float})


def _scalar(value: object) -> str:
    if type(value) is int:
        return _int(value)
    if type(value) is float:
        return _float(value)
    return repr(value)


def _container(value: object) -> str:
    if type(value) is list:
        return "[" + _items(value) + "]"
    if type(value) is dict:
        return _dict(value)
    return f"<not a frozen value: {type(value).__name__}>"


def _int(value: int) -> str:
    try:
        return repr(value)
    except ValueError:  # more digits than Python converts to text
        return f"<int of {value.bit_length()} bits>"


def _float(value: float) -> str:
    if math.isfinite(value):
        return repr(value)
    return f"float({repr(value)!r})"


def _items(items: list[object]) -> str:
    budget = _BUDGET.get()
    if budget is None:
        return ", ".join(_render(v) for v in items)
    out: list[str] = []
    for v in items:
        if budget[0] <= 0:
            out.append("…")  # the rest of a long list: past the cut
            break
        out.append(_render(v))
    return ", ".join(out)


def _dict(value: dict[object, object]) -> str:
    if len(value) == 1:
        ((key, payload),) = value.items()
        if isinstance(key, str) and key.startswith("$"):
            try:
                return _tag(key, payload)
            except _Unreadable:
                return f"<unreadable {_stored(value)}>"
    pairs = sorted(value.items(), key=lambda kv: str(kv[0]))
    return "{" + ", ".join(f"{_render(k)}: {_render(v)}" for k, v in pairs) + "}"


def _stored(value: object) -> str:
    try:
        return _json.encode(value).decode("utf-8", "replace")
    except (TypeError, ValueError, OverflowError, RecursionError, msgspec.EncodeError):
        return "…"


def _tag(tag: str, payload: object) -> str:
    render = _TAGS.get(tag)
    if render is None:
        raise _Unreadable(tag)
    return render(payload)


def _iter_result(payload: dict[object, object]) -> str:
    """An iterator result: the items consumed, then how it ended."""
    items = _items(_list(payload.get("items")))
    end = payload.get("end")
    if end == "exhausted":
        return f"an iterator of [{items}], then the end"
    if end == "raised":
        exc = f"{_str(payload.get('exc_type'))}({_str(payload.get('exc_stem'))!r})"
        return f"an iterator of [{items}], then raised {exc}"
    if end == "open":
        return f"an iterator of [{items}] (not consumed further)"
    raise _Unreadable(payload)


def _str(payload: object) -> str:
    if not isinstance(payload, str):
        raise _Unreadable(payload)
    return payload


def _list(payload: object, length: int | None = None) -> list[object]:
    if not isinstance(payload, list) or (length is not None and len(payload) != length):
        raise _Unreadable(payload)
    return payload


def _class_name(name: object) -> str:
    """``Point`` for ``geo.shapes:Point``: the qualified name a reader knows the type by."""
    return _str(name).rpartition(":")[2]


def _tuple(payload: object) -> str:
    items = _list(payload)
    return "(" + _items(items) + ("," if len(items) == 1 else "") + ")"


def _set(payload: object) -> str:
    items = _list(payload)
    return "{" + _items(items) + "}" if items else "set()"


def _frozenset(payload: object) -> str:
    items = _list(payload)
    return "frozenset({" + _items(items) + "})" if items else "frozenset()"


def _bytes(payload: object) -> str:
    try:
        return repr(base64.b64decode(_str(payload), validate=True))
    except (binascii.Error, ValueError):
        raise _Unreadable(payload) from None


def _special_float(payload: object) -> str:
    if payload not in ("nan", "inf", "-inf"):
        raise _Unreadable(payload)
    return f"float({payload!r})"


def _complex_part(part: object) -> str:
    if type(part) in (int, float):
        return _render(part)
    if isinstance(part, dict) and list(part) == ["$float"]:
        return _special_float(part["$float"])
    raise _Unreadable(part)


def _complex(payload: object) -> str:
    real, imag = _list(payload, 2)
    return f"complex({_complex_part(real)}, {_complex_part(imag)})"


def _dict_pairs(payload: object) -> str:
    pairs = [_list(pair, 2) for pair in _list(payload)]
    return "{" + ", ".join(f"{_render(k)}: {_render(v)}" for k, v in pairs) + "}"


def _sorted(payload: object) -> str:
    name, key, items = _list(payload, 3)
    shown_key = "" if key is None else f"{_render(key)}, "
    if name == "SortedDict":
        return f"SortedDict({shown_key}{_dict_pairs(items)})"
    if name not in ("SortedList", "SortedKeyList", "SortedSet"):
        raise _Unreadable(payload)
    return f"{name}({shown_key}[{_items(_list(items))}])"


def _defaultdict(payload: object) -> str:
    factory, pairs = _list(payload, 2)
    return f"defaultdict({_render(factory)}, {_dict_pairs(pairs)})"


def _moment(kind: str) -> Callable[[object], str]:
    """``datetime('2024-01-31T12:00:00', 'Europe/Paris')``; ``fold=1`` when it is set."""

    def render(payload: object) -> str:
        iso, zone, fold = _list(payload, 3)
        if not (zone is None or isinstance(zone, str | dict)) or type(fold) is not int:
            raise _Unreadable(payload)
        shown = _render(zone) if isinstance(zone, dict) else repr(zone)
        parts = [repr(_str(iso))] + ([shown] if zone else []) + (["fold=1"] if fold else [])
        return f"{kind}({', '.join(parts)})"

    return render


def _timedelta(payload: object) -> str:
    days, seconds, micro = _list(payload, 3)
    for part in (days, seconds, micro):
        if type(part) is not int:
            raise _Unreadable(part)
    named = zip(("days", "seconds", "microseconds"), (days, seconds, micro), strict=True)
    parts = [f"{unit}={n}" for unit, n in named if n]
    return f"timedelta({', '.join(parts) or '0'})"


def _enum(payload: object) -> str:
    cls, member = _list(payload, 2)
    if isinstance(member, list):  # a Flag combination
        return (
            " | ".join(f"{_class_name(cls)}.{_str(m)}" for m in member) or f"{_class_name(cls)}(0)"
        )
    return f"{_class_name(cls)}.{_str(member)}"


def _path(payload: object) -> str:
    cls, text = _list(payload, 2)
    return f"{_str(cls)}({_str(text)!r})"


def _dataclass(payload: object) -> str:
    cls, fields = _list(payload, 2)
    if not isinstance(fields, dict):
        raise _Unreadable(fields)
    inner = ", ".join(f"{k}={_render(v)}" for k, v in fields.items())
    return f"{_class_name(cls)}({inner})"


def _namedtuple(payload: object) -> str:
    """``Point(1, 2)``; attributes it also holds as ``name=value`` after the fields."""
    parts = _list(payload)
    if len(parts) not in (2, 3):
        raise _Unreadable(payload)
    shown = _items(_list(parts[1]))
    if len(parts) == 3:
        attrs = parts[2]
        if not isinstance(attrs, dict):
            raise _Unreadable(attrs)
        shown += "".join(f", {k}={_render(v)}" for k, v in attrs.items())
    return f"{_class_name(parts[0])}({shown})"


class _Shared:
    """The outermost ``$obj`` being written (``root``) and its forms in their numbered
    order (``table``, read at its first ``$same``), for :func:`_same`."""

    __slots__ = ("root", "table", "writing")

    def __init__(self, root: object) -> None:
        self.root = root
        self.table: list[object] | None = None
        self.writing: list[object] = [root]


_SHARED: ContextVar[_Shared | None] = ContextVar("lockstep_text_shared", default=None)


def _obj(payload: object) -> str:
    """An object of the project's class; the outermost one opens the scope its
    ``{"$same": n}`` places are read in (:mod:`~lockstep.canon.shared`)."""
    scope = _SHARED.get()
    if scope is not None:
        scope.writing.append(payload)
        try:
            return _obj_text(payload)
        finally:
            scope.writing.pop()
    token = _SHARED.set(_Shared(payload))
    try:
        return _obj_text(payload)
    finally:
        _SHARED.reset(token)


def _same(payload: object) -> str:
    """``{"$same": n}`` reads as the object it names: identity is not part of the value."""
    scope = _SHARED.get()
    if scope is None or type(payload) is not int:
        raise _Unreadable(payload)
    if scope.table is None:
        scope.table = numbered({"$obj": scope.root})  # type: ignore[dict-item]
    if not 0 <= payload < len(scope.table):
        raise _Unreadable(payload)
    target = scope.table[payload]
    if any(target is p for p in scope.writing):
        raise _Unreadable(payload)  # names an object around it: not what lockstep writes
    scope.writing.append(target)
    try:
        return _obj_text(target)
    finally:
        scope.writing.pop()


def _obj_text(payload: object) -> str:
    """``Duration(months=1, tdelta=timedelta(days=2))``; a builtin base first:
    ``Money(Decimal('1.50'))``; ``__new__`` arguments as ``__new__=[...]``."""
    cls, body = _list(payload, 2)
    if not isinstance(body, dict):
        raise _Unreadable(body)
    parts = [_render(body["base"])] if "base" in body else []
    if "new" in body:
        parts.append(f"__new__={_render(body['new'])}")
    state = body.get("state")
    halves = state.get("$tuple") if isinstance(state, dict) else None
    if (  # (__dict__, {slot: value}); any other tuple is a __setstate__'s own state
        isinstance(halves, list)
        and len(halves) == 2
        and all(
            h is None or (isinstance(h, dict) and not any(k[:1] == "$" for k in h)) for h in halves
        )
    ):
        attrs: dict[str, object] = {}
        for half in halves:
            if isinstance(half, dict):
                attrs.update(half)
        parts += [f"{k}={_render(v)}" for k, v in attrs.items()]
    elif isinstance(state, dict) and not any(k.startswith("$") for k in state):
        parts += [f"{k}={_render(v)}" for k, v in state.items()]
    elif "state" in body:
        parts.append(f"state={_render(state)}")
    return f"{_class_name(cls)}({', '.join(parts)})"


def _ext(payload: object) -> str:
    name, inner = _list(payload, 2)
    return f"{_class_name(name)}({_render(inner)})"


def _partial(payload: object) -> str:
    func, args, keywords = _list(payload, 3)
    parts = [_render(func), _items(_list(args))]
    if isinstance(keywords, dict):
        parts += [f"{k}={_render(v)}" for k, v in keywords.items()]
    return f"partial({', '.join(p for p in parts if p)})"


def _graph(payload: object) -> str:
    """The value, then each object of another library it holds: ``#n = itemnode(...)``."""
    value, table = _list(payload, 2)
    nodes = [f"#{i} = {_obj(_list(entry, 2))}" for i, entry in enumerate(_list(table))]
    return f"{_render(value)} where {'; '.join(nodes)}" if nodes else _render(value)


def _method(payload: object) -> str:
    owner, name = _list(payload, 2)
    if isinstance(name, dict):  # a module's function bound to the object
        return f"<{_render(name)} bound to {_render(owner)}>"
    return f"{_render(owner)}.{_str(name)}"


def _default(payload: object) -> str:
    function, parameter = _list(payload, 2)
    return f"<the default of {_class_name(function)}'s {_str(parameter)}>"


def _lambda(payload: object) -> str:
    function, index = _list(payload, 2)
    return f"<lambda {_render(index)} of {_class_name(function)}>"


def _held(payload: object) -> str:
    """``<lambda in DEFAULT_OPERATORS[In]>``: the module's table and the key it is under."""
    table, key = _list(payload, 2)
    return f"<lambda in {_class_name(table)}[{_render(key)}]>"


def _closure(payload: object) -> str:
    """``<with_warning of deprecated (func=…)>``: the code's place and its variables."""
    parts = _list(payload)
    if len(parts) not in (4, 5) or not isinstance(parts[3], dict):
        raise _Unreadable(payload)
    shown = ", ".join(f"{k}={_render(v)}" for k, v in parts[3].items())
    return f"<{_str(parts[1])} of {_class_name(parts[0])} ({shown})>"


def _element(payload: object) -> str:
    """``<p class='x'>…</p>``: the element's tag, attributes and how many children."""
    tag, attrib, _text, _tail, children = _list(payload, 5)
    name = _str(tag) if isinstance(tag, str) else f"!{_str(_list(tag, 1)[0])}"
    pairs = "".join(
        f" {_render(p[0])}={_render(p[1])}"
        for p in _list(attrib)
        if isinstance(p, list) and len(p) == 2
    )
    return f"<Element {name}{pairs} ({len(_list(children))} children)>"


def _exc(payload: object) -> str:
    """``SchemaError('bad', autos=[...])``, ``from KeyError('k')`` when it has a cause."""
    name, args, state, chain = _list(payload, 4)
    parts = [_items(_list(args))] if args else []
    if isinstance(state, dict):
        parts += [f"{k}={_render(v)}" for k, v in state.items()]
    text = f"{_class_name(name)}({', '.join(p for p in parts if p)})"
    if isinstance(chain, list) and len(chain) == 3 and chain[0] is not None:
        text += f" from {_render(chain[0])}"
    return text


def _pytz(payload: object) -> str:
    """``pytz.timezone('Europe/Paris')``, at ``CEST+2:00 DST`` when localized."""
    zone, detail = _list(payload, 2)
    if zone is None:
        return f"pytz.FixedOffset({detail!r})"
    if detail is None:
        return f"pytz.timezone({_str(zone)!r})"
    offset, dst, name = _list(detail, 3)
    if type(offset) is not int or type(dst) is not int:
        raise _Unreadable(detail)
    hours = f"{'-' if offset < 0 else '+'}{abs(offset) // 3600}:{abs(offset) % 3600 // 60:02d}"
    return f"pytz.timezone({_str(zone)!r}) at {_str(name)}{hours}{' DST' if dst else ''}"


def _escaped_str(payload: object) -> str:
    """A text holding a lone surrogate, as Python writes it (``'a\\udca9'``)."""
    from lockstep.canon.decoding import TAG_DECODERS

    try:
        return repr(TAG_DECODERS["$str"](payload, "value", 0))
    except Exception:
        return f"<$str {_str(payload)!r}>"


def _struct_time(payload: object) -> str:
    items = _list(payload, 11)
    names = ("year", "mon", "mday", "hour", "min", "sec", "wday", "yday", "isdst", "zone")
    shown = [f"tm_{n}={x!r}" for n, x in zip(names, items, strict=False) if x is not None]
    return f"time.struct_time({', '.join(shown)})"


_TAGS: Final[dict[str, Callable[[object], str]]] = {
    "$tuple": _tuple,
    "$set": _set,
    "$frozenset": _frozenset,
    "$bytes": _bytes,
    "$str": _escaped_str,
    "$bytearray": lambda p: f"bytearray({_bytes(p)})",
    "$decimal": lambda p: f"Decimal({_str(p)!r})",
    "$float": _special_float,
    "$complex": _complex,
    "$dict": _dict_pairs,
    "$odict": lambda p: f"OrderedDict({_dict_pairs(p)})",
    "$counter": lambda p: f"Counter({_dict_pairs(p)})",
    "$defaultdict": _defaultdict,
    "$sorted": _sorted,
    "$datetime": _moment("datetime"),
    "$date": lambda p: f"date({_str(p)!r})",
    "$time": _moment("time"),
    "$timedelta": _timedelta,
    "$uuid": lambda p: f"UUID({_str(p)!r})",
    "$path": _path,
    "$enum": _enum,
    "$dataclass": _dataclass,
    "$namedtuple": _namedtuple,
    "$ext": _ext,
    "$fn": lambda p: _class_name(p),
    "$iter": lambda p: _iter_result(p) if isinstance(p, dict) else f"iter([{_items(_list(p))}])",
    "$calls": lambda p: f"<a callable called {len(_list(p))} time(s)>",
    "$obj": _obj,
    "$slice": lambda p: f"slice({_items(_list(p, 3))})",
    "$range": lambda p: f"range({_items(_list(p, 3))})",
    "$const": lambda p: _str(p) if _str(p) in ("NotImplemented", "Ellipsis") else repr(p),
    "$re": lambda p: f"re.compile({_items(_list(p, 2))})",
    "$regex": lambda p: f"regex.compile({_items(_list(p, 2))})",
    "$match": lambda p: f"{_render(_list(p, 4)[0])}.search({_items(_list(p, 4)[1:])})",
    "$partial": _partial,
    "$timezone": lambda p: f"timezone({_items([x for x in _list(p, 2) if x is not None])})",
    "$ref": lambda p: f"<cycle: the object {p} level(s) out>" if type(p) is int else repr(p),
    "$same": _same,
    "$weakref": lambda p: "<a dead weakref>" if p is None else f"weakref.ref({_render(p)})",
    "$kept": lambda p: _str(p).replace(":", ".", 1) if type(p) is str else repr(p),
    "$sentinel": lambda p: _str(p).replace(":", ".", 1) if type(p) is str else repr(p),
    "$graph": _graph,
    "$node": lambda p: f"#{p}" if type(p) is int else repr(p),
    "$method": _method,
    "$default": _default,
    "$lambda": _lambda,
    "$held": _held,
    "$closure": _closure,
    "$local": lambda p: f"threading.local({_render(p)})",
    "$element": _element,
    "$pytz": _pytz,
    "$struct_time": _struct_time,
    "$isocalendar": lambda p: f"IsoCalendarDate({_items(_list(p, 3))})",
    "$zoneinfo": lambda p: f"ZoneInfo({_str(p)!r})",
    "$exc": _exc,
    "$module": lambda p: f"<module {_str(p)!r}>",
    "$fraction": lambda p: f"Fraction({_items(_list(p, 2))})",
    "$ip": lambda p: f"{_str(_list(p, 2)[0])}({_str(_list(p, 2)[1])!r})",
    "$deque": lambda p: f"deque([{_items(_list(_list(p, 2)[0]))}], maxlen={_list(p, 2)[1]!r})",
    "$namespace": lambda p: f"namespace({_render(p)})",
    "$argparse": lambda p: f"argparse.Namespace({_render(p)})",
    "$codec": lambda p: f"codecs.lookup({_str(p)!r})",
    "$logger": lambda p: f"logging.getLogger({'' if p is None else repr(_str(p))})",
    "$lock": lambda p: f"threading.{_str(p)}()",
    "$chainmap": lambda p: f"ChainMap({_items(_list(p))})",
    "$iterator": lambda p: f"iter([{_items(_list(p))}])",
    "$array": lambda p: f"array({_str(_list(p, 2)[0])!r}, [{_items(_list(_list(p, 2)[1]))}])",
    "$stringio": lambda p: f"StringIO({_render(_list(p, 3)[0])}, pos={_list(p, 3)[2]!r})",
    "$bytesio": lambda p: f"BytesIO({_render(_list(p, 2)[0])}, pos={_list(p, 2)[1]!r})",
}
