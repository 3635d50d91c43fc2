"""The standard library's dated tuples: ``time.struct_time`` and ``datetime.IsoCalendarDate``.

``timetuple()``, ``time.localtime()``, ``time.strptime()`` and ``isocalendar()`` return
them, so every date library's methods of those names do.  Frozen as plain tuples they
would thaw without their field names (``t.tm_year``, ``d.week``) and a struct_time would
lose the zone it carries beyond its nine items, so each has a tag of its own:

* ``{"$struct_time": [year, month, day, hour, minute, second, weekday, yearday, isdst,
  zone, gmtoff]}``: the nine items, then ``tm_zone`` and ``tm_gmtoff`` (null when unset);
* ``{"$isocalendar": [year, week, weekday]}``.

Both thaw by their own constructors from those ints and strings: the classes are the
standard library's, named by the tag, never by the data.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any, Final

from lockstep.canon._core import JSON, check_level
from lockstep.canon.decoding import TAG_DECODERS, _malformed, list_payload
from lockstep.canon.encoding import FALLBACK_ENCODERS, Encoder
from lockstep.errors import CanonError

_ISO_CALENDAR: Final[type[Any]] = type(dt.date(2000, 1, 1).isocalendar())
_ITEMS: Final = 9
"""A struct_time's items; two more fields (zone, UTC offset) are reached by name only."""


def _enc_time_tuple(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    t = type(v)
    if t is time.struct_time:
        check_level(depth + 1)
        items: list[JSON] = [*(int(x) for x in v)]
        items += [_text_or_none(v.tm_zone), _int_or_none(v.tm_gmtoff)]
        return {"$struct_time": items}
    if t is _ISO_CALENDAR:
        check_level(depth + 1)
        return {"$isocalendar": [int(x) for x in v]}
    return None


def _text_or_none(value: Any) -> str | None:
    return value if type(value) is str else None


def _int_or_none(value: Any) -> int | None:
    return value if type(value) is int else None


def _dec_struct_time(payload: Any, path: str, depth: int) -> time.struct_time:
    items = list_payload("$struct_time", payload, path, depth)
    if len(items) != _ITEMS + 2 or any(type(x) is not int for x in items[:_ITEMS]):
        raise _malformed("$struct_time", "9 ints, then a zone and a UTC offset", payload, path)
    zone, offset = items[_ITEMS:]
    if (zone is not None and type(zone) is not str) or (
        offset is not None and (type(offset) is not int or not -86400 < offset < 86400)
    ):
        raise _malformed(
            "$struct_time", "a zone name and seconds east of UTC, or nulls", payload, path
        )
    try:
        return time.struct_time(items)
    except (OverflowError, TypeError, ValueError) as e:
        raise CanonError(f"malformed $struct_time value: {e}", path) from None


def _dec_isocalendar(payload: Any, path: str, depth: int) -> Any:
    items = list_payload("$isocalendar", payload, path, depth, "[year, week, weekday]")
    year, week, weekday = items
    if not (
        type(year) is int
        and type(week) is int
        and type(weekday) is int
        and dt.MINYEAR <= year <= dt.MAXYEAR
        and 1 <= week <= 53
        and 1 <= weekday <= 7
    ):
        raise _malformed("$isocalendar", "a year, a week 1..53 and a weekday 1..7", payload, path)
    return _ISO_CALENDAR(year, week, weekday)


FALLBACK_ENCODERS.append(_enc_time_tuple)
TAG_DECODERS["$struct_time"] = _dec_struct_time
TAG_DECODERS["$isocalendar"] = _dec_isocalendar
