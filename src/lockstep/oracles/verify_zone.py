"""The local time zone the fresh interpreter verifies new cases in: never the recording's.

A case whose outcome depends on the machine's zone (``datetime.fromtimestamp``, a naive
``now()``, ``time.localtime``, a frozen clock read as local time) replays green where it
was recorded and red on the next machine: a CI runner in UTC, a colleague in another
city.  Like the other hash seed, the verifying interpreter runs in another zone, so such
a case is refused at record, and :func:`recording_zone` lets it be replayed once more in
the recording's zone to name the cause.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

ZONES: Final = ("America/St_Johns", "Asia/Kathmandu")
"""Zones to verify in: odd offsets (-3:30 with summer time, +5:45 without) that no
whole-hour arithmetic and no UTC machine shares, one with summer time and one without."""
_POSIX: Final = {"America/St_Johns": "NST+3:30NDT,M3.2.0,M11.1.0", "Asia/Kathmandu": "<+0545>-5:45"}
"""The same rules as POSIX ``TZ`` strings, for a system without zone files."""
RECORDING_ZONE_ENV: Final = "LOCKSTEP_RECORDING_TZ"
"""Set for the verifying interpreter: ``TZ`` as the recording process had it
(``set:<value>``), or ``unset:``."""


def verifying_zone(second: bool = False) -> str:
    """``TZ`` for the fresh interpreter: a zone unlike this process's (``second``: the other
    of :data:`ZONES`, for rows a test recorded under a zone of its own).

    Where this process's zone has summer time, the verifying zone has none (Kathmandu),
    and the other way round (St John's): a row that asks whether a date is in summer time
    answers otherwise in one of the two on every date the recording's zone is in summer
    time, where two zones with the same rules (New York's and St John's) would agree on
    every date, and the row would replay red on the next runner in UTC."""
    first = 1 if time.daylight else 0
    name = ZONES[1 - first] if second else ZONES[first]
    if os.path.exists(os.path.join("/usr/share/zoneinfo", name)):
        return name
    return _POSIX[name]


def verifying_env(second_zone: bool = False) -> dict[str, str]:
    """What the verifying interpreter's environment adds: its zone, and the recording's."""
    tz = os.environ.get("TZ")
    return {
        "TZ": verifying_zone(second_zone),
        RECORDING_ZONE_ENV: "unset:" if tz is None else f"set:{tz}",
    }


def switched() -> bool:
    """Whether this process verifies in another zone than its recording's."""
    return RECORDING_ZONE_ENV in os.environ


@contextmanager
def recording_zone() -> Iterator[None]:
    """This process in the recording's zone for a block (``TZ`` and ``time.tzset``), then
    back.  A module that read the zone at import (a ``tzlocal()`` made then) keeps it: a
    case replayed here that still differs is simply not named as the zone's."""
    recorded = os.environ.get(RECORDING_ZONE_ENV, "")
    kind, _, value = recorded.partition(":")
    before = os.environ.get("TZ")
    _set_zone(value if kind == "set" else None)
    try:
        yield
    finally:
        _set_zone(before)


def _set_zone(tz: str | None) -> None:
    if tz is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = tz
    if hasattr(time, "tzset"):
        time.tzset()
