"""Compiled patterns, partials of named functions and fixed-offset zones: ``$re``,
``$partial`` and ``$timezone``.

Libraries keep both inside their own objects: a parser caches ``re.compile(...)`` in an
attribute the first time it is used (parse's ``Parser``), and a table of converters holds
``functools.partial(date_convert, ymd=1, hms=4)``.  Refusing them refused every call
whose argument, result or ``self`` held one.

* ``{"$re": [pattern, flags]}``: a :class:`re.Pattern` by its source (``str`` or a
  ``$bytes``) and its ``flags`` as the compiled pattern reports them.  It thaws with
  :func:`re.compile`, which runs no code named by the data; a payload whose flags are not
  what compiling its pattern gives is malformed (only the canonical form is read).
* ``{"$partial": [{"$fn": name}, [args...], {keyword: value}]}``: a
  :class:`functools.partial` (the class itself, not a subclass) over a function that
  freezes by name (``$fn``: the target's own package or a pure builtin) with frozen
  arguments.  It thaws to a new partial of the same parts; building it calls nothing.
* ``{"$timezone": [{"$timedelta": ...}, name or null]}``: a :class:`datetime.timezone`,
  its name null when it is the default one (``UTC+01:00``).  A ``datetime`` whose zone is
  a *named* fixed offset (tomlkit parses ``-08:00`` to ``timezone(-8h, "-08:00")``) keeps
  it as its zone in this form; an unnamed one keeps writing null (the ISO text has it).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Any

from lockstep.canon._core import JSON, Unfreezable, check_level
from lockstep.canon.decoding import TAG_DECODERS, _malformed, decode_at, list_payload
from lockstep.canon.encoding import FALLBACK_ENCODERS, Encoder
from lockstep.canon.objects import freeze_timezone
from lockstep.errors import CanonError


def _enc_pattern_or_partial(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    t = type(v)
    if t is re.Pattern:
        check_level(depth + 1)
        return {"$re": [encoder.child(v.pattern, ".pattern", depth + 2), v.flags]}
    if t is functools.partial:
        if getattr(v, "__dict__", None):
            raise Unfreezable("cannot freeze a functools.partial that holds attributes")
        check_level(depth + 2)
        func = encoder.child(v.func, ".func", depth + 2)
        if not (isinstance(func, dict) and "$fn" in func):
            raise Unfreezable(
                "cannot freeze a functools.partial over a callable object: only a partial "
                "of a function or class that freezes by name does"
            )
        check_level(depth + 2)
        args = encoder.seq(v.args, depth + 3)
        keywords = encoder.child(dict(v.keywords), ".keywords", depth + 2)
        return {"$partial": [func, args, keywords]}
    if t is dt.timezone:
        return freeze_timezone(encoder, v, depth)
    return None


def _dec_timezone(payload: Any, path: str, depth: int) -> dt.timezone:
    frozen_offset, name = list_payload("$timezone", payload, path, depth, "[offset, name]")
    offset = decode_at(frozen_offset, path, depth + 2)
    if type(offset) is not dt.timedelta or (name is not None and type(name) is not str):
        raise _malformed("$timezone", "[offset (a $timedelta), name or null]", payload, path)
    try:
        zone = dt.timezone(offset) if name is None else dt.timezone(offset, name)
    except ValueError as e:
        raise CanonError(f"malformed $timezone value: {e}", path) from None
    if name is not None and name == dt.timezone(offset).tzname(None):
        raise _malformed("$timezone", "null for the offset's default name", payload, path)
    return zone


def _dec_re(payload: Any, path: str, depth: int) -> re.Pattern[Any]:
    source, flags = list_payload("$re", payload, path, depth, "[pattern, flags]")
    pattern = decode_at(source, path + ".pattern", depth + 2)
    if type(pattern) not in (str, bytes) or type(flags) is not int:
        raise _malformed("$re", "[pattern (str or bytes), flags (int)]", payload, path)
    try:
        compiled = re.compile(pattern, flags)
    except (re.error, ValueError, TypeError, OverflowError, RecursionError) as e:
        raise CanonError(f"malformed $re value: the pattern does not compile: {e}", path) from None
    if compiled.flags != flags:
        raise _malformed("$re", f"the flags compiling it gives ({compiled.flags})", payload, path)
    return compiled


def _dec_partial(payload: Any, path: str, depth: int) -> functools.partial[Any]:
    func, args, keywords = list_payload("$partial", payload, path, depth, "[func, args, keywords]")
    if not (isinstance(func, dict) and len(func) == 1 and "$fn" in func):
        raise _malformed("$partial", "a $fn naming its function", func, path + ".func")
    if type(args) is not list:
        raise _malformed("$partial", "an array of arguments", args, path + ".args")
    found = decode_at(func, path + ".func", depth + 2)
    thawed_args = decode_at(args, path + ".args", depth + 2)
    thawed_keywords = decode_at(keywords, path + ".keywords", depth + 2)
    if type(thawed_keywords) is not dict or not all(type(k) is str for k in thawed_keywords):
        raise _malformed("$partial", "an object of keywords", keywords, path + ".keywords")
    return functools.partial(found, *thawed_args, **thawed_keywords)


FALLBACK_ENCODERS.append(_enc_pattern_or_partial)
TAG_DECODERS["$re"] = _dec_re
TAG_DECODERS["$partial"] = _dec_partial
TAG_DECODERS["$timezone"] = _dec_timezone
