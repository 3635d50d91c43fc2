"""``zoneinfo`` zones as values of their own: ``{"$zoneinfo": "Europe/London"}``.

A datetime's zone already freezes as its key inside ``$datetime``.  Modern date code also
passes and keeps the zone itself (astral's ``sun(observer, tzinfo=ZoneInfo(...))``, a
``Location`` holding its zone), and a :class:`zoneinfo.ZoneInfo` keeps its state in C
fields no structure shows, so it freezes by the key that names it, and thaws to
``ZoneInfo(key)``: the very object the zone's cache hands the code.

The key must be one of :func:`zoneinfo.available_timezones` when frozen (a zone read with
``ZoneInfo.from_file`` has no key, and a key the machine's list lacks would not thaw
elsewhere: both are refused) and when thawed (the data names a zone, never a file).  A
subclass of ``ZoneInfo`` is not frozen this way: its own class may change what it does.
"""

from __future__ import annotations

import sys
from typing import Any

from lockstep.canon._core import JSON, Unfreezable
from lockstep.canon.decoding import TAG_DECODERS, _malformed, _zone_keys
from lockstep.canon.objects import ZONE_ENCODERS
from lockstep.errors import CanonError


def _freeze_zoneinfo(v: Any, t: type[Any], depth: int) -> JSON | None:
    """``$zoneinfo`` for a :class:`zoneinfo.ZoneInfo` itself; None for any other class."""
    zoneinfo = sys.modules.get("zoneinfo")
    if zoneinfo is None or t is not zoneinfo.ZoneInfo:
        return None
    key = v.key
    if type(key) is not str:
        raise Unfreezable("cannot freeze a zoneinfo.ZoneInfo read from a file: it has no key")
    if key not in _zone_keys():
        raise Unfreezable(
            f"cannot freeze the zone {key[:80]!r}: it is not one of this machine's "
            "zoneinfo.available_timezones(), so it would not thaw"
        )
    return {"$zoneinfo": key}


def _dec_zoneinfo(payload: Any, path: str, depth: int) -> Any:
    if type(payload) is not str:
        raise _malformed("$zoneinfo", "a zone key", payload, path)
    if payload not in _zone_keys():
        raise CanonError(f"$zoneinfo names {payload[:80]!r}, which is not a zone known here", path)
    import zoneinfo

    return zoneinfo.ZoneInfo(payload)


ZONE_ENCODERS.append(_freeze_zoneinfo)
TAG_DECODERS["$zoneinfo"] = _dec_zoneinfo
