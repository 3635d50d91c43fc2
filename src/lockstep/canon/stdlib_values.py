"""Value classes of the standard library that legacy code passes, keeps and returns.

A billing export writes its lines to the file object it is given (``io.StringIO`` in its
tests); money is split in ``Fraction``s; a host is an ``ipaddress`` object; the last few
rows sit in a ``deque``; a row is a ``SimpleNamespace``.  Each of these made its call a
skipped one ("cannot freeze a fractions.Fraction").  Each now freezes by what defines it,
and thaws to an equal object of its exact class:

* ``{"$fraction": [numerator, denominator]}``, in lowest terms, the denominator positive;
* ``{"$ip": ["IPv4Network", "10.0.0.0/8"]}``: the six classes of :mod:`ipaddress`, by
  their text, which must read back to itself;
* ``{"$deque": [[items], maxlen or null]}``;
* ``{"$namespace": {attributes}}``: a ``types.SimpleNamespace``; ``{"$argparse":
  {attributes}}``: an ``argparse.Namespace``, a script's parsed ``args`` handed on;
* ``{"$chainmap": [{map}, ...]}``: a ``collections.ChainMap`` of dicts;
* ``{"$array": [typecode, [items]]}``: an ``array.array``;
* ``{"$codec": "utf-8"}``: a ``codecs.CodecInfo``, as ``codecs.lookup`` gives it;
* ``{"$logger": "billing"}``: a logger ``logging.getLogger`` hands out (null: the root);
  what it logs goes to its handlers, which are no part of the value;
* ``{"$lock": "Lock"}`` or ``{"$lock": "RLock"}``: a ``threading`` lock an object keeps
  to guard its cache (dateutil's ``rrule``), unheld; it thaws to a new one, unheld.  A
  held lock is refused: thawed held, it would stop the replayed call for good;
* ``{"$stringio": [text, newline, position]}`` and ``{"$bytesio": [{"$bytes": ...},
  position]}``: an in-memory file, as its own ``__getstate__`` gives it.  A file argument
  the call writes to is frozen again after the call, so what it wrote is compared as the
  argument's change (``mutated``).  A closed one, one of a subclass, or one positioned past
  its end (a write there pads the gap: a forged position would allocate gigabytes) is
  refused.

Only these exact classes: a subclass may change what its objects do.  The data names no
module and imports nothing.
"""

from __future__ import annotations

import array
import codecs
import collections
import fractions
import io
import ipaddress
import math
import sys
import threading
import types
from typing import Any, Final

from lockstep.canon._core import JSON, Unfreezable, check_level
from lockstep.canon.decoding import (
    TAG_DECODERS,
    _malformed,
    decode_at,
    decode_items,
    list_payload,
)
from lockstep.canon.encoding import FALLBACK_ENCODERS, Encoder
from lockstep.canon.open_files import OPEN_FILE_TYPES, freeze_open_file
from lockstep.errors import CanonError

_IP_CLASSES: Final[dict[str, type[Any]]] = {
    cls.__name__: cls
    for cls in (
        ipaddress.IPv4Address,
        ipaddress.IPv6Address,
        ipaddress.IPv4Network,
        ipaddress.IPv6Network,
        ipaddress.IPv4Interface,
        ipaddress.IPv6Interface,
    )
}
_NEWLINES: Final = (None, "", "\n", "\r", "\r\n")
_FILE_TYPES: Final = frozenset({io.StringIO, io.BytesIO, *OPEN_FILE_TYPES})
_LOCKS: Final[dict[type[Any], str]] = {
    type(threading.Lock()): "Lock",
    type(threading.RLock()): "RLock",
}


def _enc_stdlib_value(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    t = type(v)
    if t is fractions.Fraction:
        check_level(depth + 1)
        return {
            "$fraction": [
                encoder.child(v.numerator, ".numerator", depth + 2),
                encoder.child(v.denominator, ".denominator", depth + 2),
            ]
        }
    if t.__module__ == "ipaddress" and _IP_CLASSES.get(t.__name__) is t:
        check_level(depth + 1)
        return {"$ip": [t.__name__, str(v)]}
    if t is collections.deque:
        check_level(depth + 2)
        return {"$deque": [encoder.seq(v, depth + 2), v.maxlen]}
    if t is types.SimpleNamespace or _argparse_namespace(t):
        attributes = vars(v)
        if any(type(key) is not str for key in attributes):
            raise Unfreezable(f"cannot freeze a {t.__name__} with an attribute not named by a str")
        check_level(depth + 1)
        tag = "$namespace" if t is types.SimpleNamespace else "$argparse"
        return {tag: encoder.child(dict(attributes), ".__dict__", depth + 1)}
    if t is collections.ChainMap:
        if any(type(m) is not dict for m in v.maps):
            raise Unfreezable("cannot freeze a ChainMap of other mappings than dicts")
        check_level(depth + 1)
        return {"$chainmap": encoder.seq(v.maps, depth + 2)}
    if t is array.array:
        check_level(depth + 2)
        return {"$array": [v.typecode, encoder.seq(v.tolist(), depth + 3)]}
    if t in _FILE_TYPES:  # an in-memory file, or a file open for reading
        freeze = freeze_open_file if t in OPEN_FILE_TYPES else _freeze_memory_file
        return freeze(encoder, v, t, depth)
    if t is codecs.CodecInfo:
        return _freeze_codec(v, depth)
    if t in _LOCKS:
        return _freeze_lock(v, t, depth)
    return _freeze_logger(v, t, depth)


def _freeze_lock(v: Any, t: type[Any], depth: int) -> JSON:
    """An unheld lock, by its kind (what a lock guards is no part of the value)."""
    kind = _LOCKS[t]
    held = v.locked() if kind == "Lock" else not repr(v).startswith("<unlocked")
    if held:
        raise Unfreezable(f"cannot freeze a held threading.{kind}: thawed held, it would block")
    check_level(depth + 1)
    return {"$lock": kind}


def _freeze_codec(v: Any, depth: int) -> JSON:
    """A codec by its name, when ``codecs.lookup`` gives that codec back: the same
    functions and classes, each method bound to a codec object of the same class and
    state (a charmap codec, ``iso8859-2``, binds its methods to a new ``Codec()`` for each
    name it is looked up by: webencodings' encodings all looked unfreezable)."""
    name = getattr(v, "name", None)
    try:
        found = codecs.lookup(name) if type(name) is str else None
    except LookupError:
        found = None
    if found is None or not _same_codec(found, v):
        raise Unfreezable(f"cannot freeze the codec {name!r}: codecs.lookup does not give it back")
    check_level(depth)
    return {"$codec": name}


def _same_codec(found: codecs.CodecInfo, v: Any) -> bool:
    mine, theirs = vars(found), vars(v)
    if mine.keys() != theirs.keys() or len(found) != len(v):
        return False
    pairs = [*zip(found, v, strict=True), *((mine[k], theirs[k]) for k in mine)]
    return all(a == b or _same_bound(a, b) for a, b in pairs)


def _same_bound(a: Any, b: Any) -> bool:
    """Two methods of one function, each bound to an object of one class, in one state."""
    func_a, func_b = getattr(a, "__func__", None), getattr(b, "__func__", None)
    if func_a is None or func_a is not func_b:
        return False
    self_a, self_b = getattr(a, "__self__", None), getattr(b, "__self__", None)
    try:
        return type(self_a) is type(self_b) and vars(self_a) == vars(self_b)
    except TypeError:  # no __dict__: nothing to tell them apart by but what they are
        return self_a is self_b


def _freeze_logger(v: Any, t: type[Any], depth: int) -> JSON | None:
    """A logger ``logging.getLogger`` hands out, by its name (null: the root logger); None
    for anything else.  What it logs goes to its handlers, which are not the call's value."""
    logging = sys.modules.get("logging")
    if logging is None or not isinstance(v, logging.Logger):
        return None
    check_level(depth)
    if v is logging.root:
        return {"$logger": None}
    name = v.name
    if t is not logging.Logger or type(name) is not str or logging.getLogger(name) is not v:
        raise Unfreezable(f"cannot freeze the logger {name!r}: logging.getLogger does not give it")
    return {"$logger": name}


def _argparse_namespace(t: type[Any]) -> bool:
    """Whether ``t`` is ``argparse.Namespace`` (a script's ``args``, passed to its functions)."""
    argparse = sys.modules.get("argparse")
    return argparse is not None and t is getattr(argparse, "Namespace", None)


def _freeze_memory_file(encoder: Encoder, v: Any, t: type[Any], depth: int) -> JSON:
    try:
        state = v.__getstate__()
    except ValueError:  # "I/O operation on closed file"
        raise Unfreezable(f"cannot freeze a closed {t.__name__}") from None
    if state[-1]:
        raise Unfreezable(f"cannot freeze a {t.__name__} with attributes set on it")
    if state[-2] > len(state[0]):  # a write there would pad the gap: a forged one, gigabytes
        raise Unfreezable(f"cannot freeze a {t.__name__} positioned past its end")
    check_level(depth + 2)
    if t is io.StringIO:
        text, newline, position, _ = state
        return {"$stringio": [encoder.child(text, ".getvalue()", depth + 2), newline, position]}
    data, position, _ = state
    return {"$bytesio": [encoder.child(data, ".getvalue()", depth + 2), position]}


def _whole(value: Any) -> bool:
    return type(value) is int


def _dec_fraction(payload: Any, path: str, depth: int) -> Any:
    numerator, denominator = decode_items(
        list_payload("$fraction", payload, path, depth, "[numerator, denominator]"),
        path,
        depth + 1,
    )
    if not (_whole(numerator) and _whole(denominator)) or denominator <= 0:
        raise _malformed("$fraction", "[int, positive int]", payload, path)
    if math.gcd(numerator, denominator) != 1:
        raise _malformed("$fraction", "a fraction in lowest terms", payload, path)
    return fractions.Fraction(numerator, denominator)


def _dec_ip(payload: Any, path: str, depth: int) -> Any:
    name, text = list_payload("$ip", payload, path, depth, "[class name, text]")
    cls = _IP_CLASSES.get(name) if type(name) is str else None
    if cls is None or type(text) is not str:
        raise _malformed("$ip", "[an ipaddress class name, text]", payload, path)
    try:
        value = cls(text)
    except ValueError as e:
        raise CanonError(f"malformed $ip value: {e}", path) from None
    if str(value) != text:
        raise _malformed("$ip", f"the text {name} writes ({str(value)!r})", text, path)
    return value


def _dec_deque(payload: Any, path: str, depth: int) -> Any:
    items, maxlen = list_payload("$deque", payload, path, depth, "[items, maxlen]")
    if type(items) is not list or not (maxlen is None or (_whole(maxlen) and maxlen >= 0)):
        raise _malformed("$deque", "[items, maxlen (int or null)]", payload, path)
    if maxlen is not None and len(items) > maxlen:
        raise _malformed("$deque", f"at most {maxlen} items", payload, path)
    return collections.deque(decode_items(items, path, depth + 2), maxlen)


def _attributes(tag: str, payload: Any, path: str, depth: int) -> dict[str, Any]:
    attributes = decode_at(payload, f"{path}.__dict__", depth + 1)
    if type(attributes) is not dict or any(type(k) is not str for k in attributes):
        raise _malformed(tag, "an object of attributes", payload, path)
    return attributes


def _dec_namespace(payload: Any, path: str, depth: int) -> Any:
    return types.SimpleNamespace(**_attributes("$namespace", payload, path, depth))


def _dec_argparse(payload: Any, path: str, depth: int) -> Any:
    import argparse  # the standard library's, by its fixed name: the data names no module

    return argparse.Namespace(**_attributes("$argparse", payload, path, depth))


def _dec_chainmap(payload: Any, path: str, depth: int) -> Any:
    maps = decode_items(list_payload("$chainmap", payload, path, depth), path, depth + 1)
    if any(type(m) is not dict for m in maps):
        raise _malformed("$chainmap", "a list of dicts", payload, path)
    return collections.ChainMap(*maps)


def _dec_array(payload: Any, path: str, depth: int) -> Any:
    typecode, items = list_payload("$array", payload, path, depth, "[typecode, items]")
    if type(typecode) is not str or typecode not in array.typecodes or type(items) is not list:
        raise _malformed("$array", "[a typecode of array.typecodes, items]", payload, path)
    try:
        return array.array(typecode, decode_items(items, path, depth + 2))
    except (TypeError, ValueError, OverflowError) as e:
        raise CanonError(f"malformed $array value: {e}", path) from None


def _dec_stringio(payload: Any, path: str, depth: int) -> Any:
    text, newline, position = list_payload(
        "$stringio", payload, path, depth, "[text, newline, pos]"
    )
    text = decode_at(text, f"{path}.getvalue()", depth + 1)
    if type(text) is not str or newline not in _NEWLINES or not _whole(position):
        raise _malformed("$stringio", "[text, newline, position]", payload, path)
    if not 0 <= position <= len(text):
        raise _malformed(
            "$stringio", f"a position within its {len(text)} characters", position, path
        )
    made: Any = io.StringIO()  # typeshed does not list StringIO.__setstate__
    made.__setstate__((text, newline, position, None))
    return made


def _dec_bytesio(payload: Any, path: str, depth: int) -> Any:
    data, position = list_payload("$bytesio", payload, path, depth, "[bytes, position]")
    data = decode_at(data, f"{path}.getvalue()", depth + 1)
    if type(data) is not bytes or not _whole(position):
        raise _malformed("$bytesio", "[bytes, position]", payload, path)
    if not 0 <= position <= len(data):
        raise _malformed("$bytesio", f"a position within its {len(data)} bytes", position, path)
    made: Any = io.BytesIO()  # typeshed does not list BytesIO.__setstate__
    made.__setstate__((data, position, None))
    return made


def _dec_codec(payload: Any, path: str, depth: int) -> Any:
    if type(payload) is not str:
        raise _malformed("$codec", "a codec's name", payload, path)
    try:
        found = codecs.lookup(payload)
    except LookupError:
        raise CanonError(f"$codec names {payload[:80]!r}, which no codec here is", path) from None
    if found.name != payload:
        raise _malformed("$codec", f"the codec's own name ({found.name!r})", payload, path)
    return found


def _dec_lock(payload: Any, path: str, depth: int) -> Any:
    if payload == "Lock":
        return threading.Lock()
    if payload == "RLock":
        return threading.RLock()
    raise _malformed("$lock", '"Lock" or "RLock"', payload, path)


def _dec_logger(payload: Any, path: str, depth: int) -> Any:
    import logging  # the standard library's, by its fixed name: the data names no module

    if payload is None:
        return logging.getLogger()
    if type(payload) is not str or not payload or payload == "root":
        raise _malformed("$logger", "a logger's name, or null for the root", payload, path)
    return logging.getLogger(payload)


FALLBACK_ENCODERS.append(_enc_stdlib_value)
TAG_DECODERS.update(
    {
        "$fraction": _dec_fraction,
        "$ip": _dec_ip,
        "$deque": _dec_deque,
        "$namespace": _dec_namespace,
        "$argparse": _dec_argparse,
        "$chainmap": _dec_chainmap,
        "$array": _dec_array,
        "$stringio": _dec_stringio,
        "$bytesio": _dec_bytesio,
        "$codec": _dec_codec,
        "$logger": _dec_logger,
        "$lock": _dec_lock,
    }
)
