"""pytz's time zones: ``$pytz``, by the zone's name and the offset a datetime was localized to.

Legacy code that predates :mod:`zoneinfo` localizes its datetimes with pytz, and a pytz
zone cannot freeze by structure: each zone is an object of a class pytz builds at run time
(``pytz.tzfile.Europe/Paris``, reachable by no name), ``pytz.utc`` is an object whose class
name the module rebinds to it, and the localized copies of one zone share a table
(``_tzinfos``) that a copy would not.  So a pytz zone freezes by what names it:

* ``{"$pytz": ["Europe/Paris", null]}``: the zone as :func:`pytz.timezone` returns it (also
  ``"UTC"`` and the static zones such as ``"EST"``);
* ``{"$pytz": ["Europe/Paris", [7200, 3600, "CEST"]]}``: the zone localized to that UTC
  offset, DST offset (seconds) and abbreviation, as ``localize()`` and ``normalize()``
  leave it on a datetime;
* ``{"$pytz": [null, -330]}``: ``pytz.FixedOffset(-330)`` (minutes).

Thawing asks pytz for that very object: ``pytz.timezone(name)``, then the localized entry
of its own table, or ``pytz.FixedOffset(minutes)``, so a thawed datetime compares, hashes
and ``normalize()``-s as the recorded one did.  The data names only a zone: the name must
be one of ``pytz.all_timezones_set`` and the localized offsets one of that zone's own, or
the value is a one-line :class:`~lockstep.errors.CanonError`.  pytz is imported by its
fixed name when the data holds such a zone (it is a dependency of the code that recorded
it); no name in the data is ever imported.
"""

from __future__ import annotations

import datetime as dt
import importlib
import sys
from typing import Any, Final

from lockstep.canon._core import JSON, Unfreezable, check_level
from lockstep.canon.decoding import TAG_DECODERS, _malformed, list_payload
from lockstep.canon.objects import ZONE_ENCODERS
from lockstep.errors import CanonError

_MODULES: Final = frozenset({"pytz", "pytz.tzfile", "pytz.tzinfo", "pytz.reference"})
"""The modules whose classes a pytz zone has: the run-time zone classes live in
``pytz.tzfile``, UTC and the fixed offsets in ``pytz``."""

_MINUTES: Final = 1440
"""A fixed offset is strictly within a day either side of UTC, as pytz requires."""


def _seconds(delta: dt.timedelta) -> int:
    return delta.days * 86400 + delta.seconds


def _freeze_pytz(v: Any, t: type[Any], depth: int) -> JSON | None:
    """``$pytz`` for a pytz zone; None for any other class."""
    if t.__module__ not in _MODULES:
        return None
    pytz = sys.modules.get("pytz")
    if pytz is None:  # a class of that name with no pytz loaded: not a zone of pytz's
        return None
    check_level(depth + 2)
    if v is pytz.utc:
        return {"$pytz": ["UTC", None]}
    if isinstance(v, pytz._FixedOffset):
        minutes = v._minutes
        if type(minutes) is not int or not -_MINUTES < minutes < _MINUTES:
            raise Unfreezable(f"cannot freeze pytz.FixedOffset({minutes!r}): not whole minutes")
        return {"$pytz": [None, minutes]}
    zone = getattr(v, "zone", None)
    if not isinstance(v, pytz.BaseTzInfo) or type(zone) is not str:
        return None  # another class of pytz's modules: frozen as any other would be
    if _zone(pytz, zone) is not v and not isinstance(v, pytz.tzinfo.DstTzInfo):
        raise Unfreezable(f"cannot freeze the pytz zone {zone!r}: it is not pytz's own object")
    if _zone(pytz, zone) is v:
        return {"$pytz": [zone, None]}
    key = (v._utcoffset, v._dst, v._tzname)
    if v._tzinfos.get(key) is not v or _zone(pytz, zone)._tzinfos is not v._tzinfos:
        raise Unfreezable(
            f"cannot freeze the pytz zone {zone!r} at {v._tzname}: it is not one of the "
            "zone's own localized objects"
        )
    return {"$pytz": [zone, [_seconds(v._utcoffset), _seconds(v._dst), v._tzname]]}


def _zone(pytz: Any, name: str) -> Any:
    try:
        return pytz.timezone(name)
    except Exception:  # pytz.UnknownTimeZoneError: a zone pytz no longer knows
        return None


def _pytz(path: str) -> Any:
    """pytz itself: in this process already, or imported by its fixed name."""
    module = sys.modules.get("pytz")
    if module is not None:
        return module
    try:
        return importlib.import_module("pytz")
    except ImportError:
        raise CanonError(
            "$pytz names a pytz time zone, and pytz is not installed here", path
        ) from None


def _dec_pytz(payload: Any, path: str, depth: int) -> dt.tzinfo:
    name, detail = list_payload("$pytz", payload, path, depth, "[zone name, offsets]")
    if name is None:
        if type(detail) is not int or not -_MINUTES < detail < _MINUTES:
            raise _malformed("$pytz", f"whole minutes within ±{_MINUTES}", detail, path)
        fixed: dt.tzinfo = _pytz(path).FixedOffset(detail)
        return fixed
    if type(name) is not str:
        raise _malformed("$pytz", "a zone name or null", name, path)
    pytz = _pytz(path)
    if name not in pytz.all_timezones_set:
        raise CanonError(f"$pytz names {name[:80]!r}, which is not a zone pytz knows", path)
    zone = pytz.timezone(name)
    if detail is None:
        return zone  # type: ignore[no-any-return]
    offsets = list_payload("$pytz", detail, path, depth + 1, "[UTC offset, DST offset, name]")
    offset, dst, abbreviation = offsets
    if type(offset) is not int or type(dst) is not int or type(abbreviation) is not str:
        raise _malformed("$pytz", "[seconds, seconds, abbreviation]", detail, path)
    table = getattr(zone, "_tzinfos", None)
    if not isinstance(table, dict) or not (-86400 < offset < 86400 and -86400 < dst < 86400):
        raise CanonError(f"$pytz: the zone {name!r} has no offset {detail!r}", path)
    key = (dt.timedelta(seconds=offset), dt.timedelta(seconds=dst), abbreviation)
    localized = table.get(key)
    if localized is None or localized is zone:
        raise CanonError(
            f"$pytz: the zone {name!r} has no offset {offset}s, DST {dst}s, {abbreviation!r}"
            + (" other than its first, written null" if localized is zone else ""),
            path,
        )
    return localized  # type: ignore[no-any-return]


ZONE_ENCODERS.append(_freeze_pytz)
TAG_DECODERS["$pytz"] = _dec_pytz
