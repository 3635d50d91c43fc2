"""The clock a row was recorded under, when a test froze it: kept with the row, replayed there.

A suite freezes the clock to test code that reads it (``naturalday``, "3 days ago", a
token that expires): freezegun's ``@freeze_time("2020-02-02")`` or time-machine's
``travel(..., tick=False)``.  A row recorded there owes its outcome to that instant, so
a fresh interpreter on the real clock would refuse it, and a change to such a function
would escape the ledger.  Instead the recorder keeps the instant with the row
(:class:`Clock`, the row's ``clock`` field), and every replay of the row -- ``lockstep
replay``, the verifying interpreter, ``replay --against`` -- runs the call with the
clock travelled to that instant, standing still, and back afterwards
(:func:`travelling`, with time-machine, which patches the clock at C level so every
reader sees it: ``time.time``, ``datetime.now``, ``date.today``, ``time.localtime``...).

Only a clock that stands still is kept: under a clock that ticks (freezegun
``tick=True`` or ``auto_tick_seconds``, time-machine's default ``tick=True``) the
outcome depends on when the call ran, so the row is left to the verification on the
real clock, and the context watch names the ticking clock as the cause when it is refused.

:func:`now` is asked on every recorded call; it costs an identity check and a dict
lookup while the clock is real.
"""

from __future__ import annotations

import datetime
import os
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import msgspec

from lockstep.oracles.travel import time_machine_module

MAX_OFFSET: Final = 24 * 3600
"""A ``tz_offset`` is less than a day either way (seconds east of UTC)."""

_AT: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{6})?Z")
"""The one spelling of an instant: UTC, seconds, microseconds only when not zero."""

_REAL_TIME: Final = (time.time,)
"""In a tuple: freezegun rebinds every module global that *is* ``time.time`` to its fake."""
_UTC: Final = datetime.UTC
_EPOCH: Final = datetime.datetime(1970, 1, 1, tzinfo=_UTC)
_ELSEWHERE: Final = datetime.timezone(datetime.timedelta(hours=1))
_TRAVELLING: list[Clock] = []
"""The clocks :func:`travelling` set in this process, innermost last: a call recorded
there (``replay --against`` freezing an input at REV) is keyed by the very clock the row had."""


class Clock(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The frozen instant a row was recorded under (its ``clock`` field).

    ``at`` is the instant in UTC (``2020-02-02T00:00:00Z``, with ``.ffffff`` when it has
    microseconds); ``tz_offset`` is the offset of local time from UTC the call saw, in
    seconds: freezegun's ``tz_offset`` (its ``datetime.now()`` and ``date.today()`` are UTC
    plus that offset), or under time-machine the offset of the process's zone at that
    instant.  Absent (a row written by hand): replay keeps the machine's zone.
    """

    at: str
    tz_offset: int | msgspec.UnsetType = msgspec.UNSET

    def __post_init__(self) -> None:
        if _AT.fullmatch(self.at) is None:
            raise ValueError(
                f"clock `at` must be a UTC instant like 2020-02-02T00:00:00Z, not {self.at[:40]!r}"
            )
        try:
            instant = datetime.datetime.fromisoformat(self.at)
        except ValueError as e:
            raise ValueError(f"clock `at` {self.at!r} is not a date and time: {e}") from None
        if _spelled(instant) != self.at:
            raise ValueError(f"clock `at` {self.at!r} is not written as lockstep writes it")
        offset = self.tz_offset
        if offset is not msgspec.UNSET and not -MAX_OFFSET < offset < MAX_OFFSET:
            raise ValueError(f"clock `tz_offset` {offset} is not within a day of UTC (seconds)")

    def instant(self) -> datetime.datetime:
        """``at`` as an aware datetime in UTC."""
        return datetime.datetime.fromisoformat(self.at)

    def describe(self) -> str:
        """``2020-02-02T00:00:00Z`` (``, local time UTC+01:00`` when freezegun set an offset)."""
        if self.tz_offset is msgspec.UNSET or self.tz_offset == 0:
            return self.at
        sign = "+" if self.tz_offset >= 0 else "-"
        hours, rest = divmod(abs(self.tz_offset), 3600)
        return f"{self.at}, local time UTC{sign}{hours:02}:{rest // 60:02}"


def _spelled(instant: datetime.datetime) -> str:
    """An aware instant in the one spelling :class:`Clock` accepts."""
    utc = instant.astimezone(_UTC).replace(tzinfo=None)
    return utc.isoformat(timespec="microseconds" if utc.microsecond else "seconds") + "Z"


def as_json(clock: Clock) -> dict[str, Any]:
    """The clock as it sits in a row (and in the row's input, which its id digests)."""
    out: dict[str, Any] = {"at": clock.at}
    if clock.tz_offset is not msgspec.UNSET:
        out["tz_offset"] = clock.tz_offset
    return out


def now() -> Clock | None:
    """The clock this call runs under when it stands frozen; None when it is the real one,
    ticks, or is replaced in a way that names no instant (``mock.patch("time.time")``)."""
    if _REAL_TIME[0] is time.time and "time_machine" not in sys.modules:
        return None
    found = state()
    return found if isinstance(found, Clock) else None


def may_be_frozen() -> bool:
    """Whether a call now may run under a frozen clock (:func:`now` may not be None): a
    clock function replaced (freezegun), a travel of this process's (:func:`travelling`),
    or a travel of time-machine's in effect.  time-machine merely imported (its pytest
    plugin imports it in every run where it is installed, as lockstep's own dependency)
    does not make a call one whose clock must be looked up."""
    if _REAL_TIME[0] is not time.time or _TRAVELLING:
        return True
    machine = sys.modules.get("time_machine")
    return machine is not None and bool(
        getattr(machine, "traveller_stack", None) or getattr(machine, "coordinates_stack", None)
    )


def state() -> Clock | str | None:
    """The frozen clock (a :class:`Clock`), why a replaced clock is not kept (a reason:
    it ticks), or None when no clock library has frozen it."""
    if _TRAVELLING:
        return _TRAVELLING[-1]
    api = sys.modules.get("freezegun.api")
    factories = getattr(api, "freeze_factories", None)
    if factories:
        return _freezegun(api, factories[-1])
    machine = sys.modules.get("time_machine")
    # the travels in effect: ``traveller_stack`` from time-machine 3, ``coordinates_stack`` before
    stack = getattr(machine, "traveller_stack", None) or getattr(machine, "coordinates_stack", None)
    if stack:
        return _time_machine(stack[-1])
    return None


def _freezegun(api: Any, factory: Any) -> Clock | str:
    kind = type(factory).__name__
    if kind == "TickingDateTimeFactory":
        return "ticking clock (freezegun freeze_time(..., tick=True))"
    if kind == "StepTickTimeFactory":
        return "ticking clock (freezegun freeze_time(..., auto_tick_seconds=...))"
    if kind != "FrozenDateTimeFactory":
        return f"frozen clock of an unknown freezegun factory ({kind})"
    try:
        frozen = factory()
        offsets = getattr(api, "tz_offsets", None) or [datetime.timedelta()]
        offset = offsets[-1]
        at = _spelled(frozen.replace(tzinfo=_UTC))
    except Exception as e:  # a freezegun we do not know: the row is verified on the real clock
        return f"frozen clock that could not be read ({type(e).__name__}: {e})"
    seconds = offset.total_seconds()
    if seconds != int(seconds) or not -MAX_OFFSET < seconds < MAX_OFFSET:
        return f"frozen clock with a tz_offset of {offset}, not whole seconds within a day"
    return Clock(at=at, tz_offset=int(seconds))


def _time_machine(coordinates: Any) -> Clock | str:
    if getattr(coordinates, "_tick", True):
        return "ticking clock (time_machine.travel(...) without tick=False)"
    try:
        micros = (coordinates.time_ns() + 500) // 1000
        at = _spelled(_EPOCH + datetime.timedelta(microseconds=micros))
        # time-machine keeps the machine's zone (or the destination's ZoneInfo): the call saw
        # local time at this offset, which replay sets wherever it runs
        offset = time.localtime(micros // 1_000_000).tm_gmtoff
    except Exception as e:
        return f"travelled clock that could not be read ({type(e).__name__}: {e})"
    if not -MAX_OFFSET < offset < MAX_OFFSET:
        return f"travelled clock with a local offset of {offset} s, not within a day"
    return Clock(at=at, tz_offset=offset)


def _posix_tz(offset: int) -> str:
    """A POSIX ``TZ`` value for a fixed offset east of UTC (POSIX counts west: the sign flips)."""
    sign = "+" if offset >= 0 else "-"
    hours, rest = divmod(abs(offset), 3600)
    minutes, seconds = divmod(rest, 60)
    name = f"<{sign}{hours:02}{minutes:02}{seconds:02}>"
    return f"{name}{'-' if offset >= 0 else '+'}{hours}:{minutes:02}:{seconds:02}"


class ClockUnavailable(Exception):
    """A row recorded under a frozen clock cannot be replayed here: time-machine is not
    installed, or cannot set the clock to that instant."""


@contextmanager
def travelling(clock: Clock) -> Iterator[None]:
    """Run the block with the clock travelled to ``clock``, standing still, then back.

    freezegun's ``tz_offset`` becomes the process's time zone for the block (``TZ`` and
    ``time.tzset()``, where the platform has it), so ``datetime.now()`` and
    ``date.today()`` read what they read under freezegun.
    """
    try:
        time_machine = time_machine_module()
    except ImportError:
        raise ClockUnavailable(
            "this row was recorded under a frozen clock; replaying it needs time-machine "
            "(pip install time-machine)"
        ) from None
    zone = None
    if clock.tz_offset is not msgspec.UNSET and hasattr(time, "tzset"):
        zone = _posix_tz(clock.tz_offset)
    before = os.environ.get("TZ")
    if zone is not None:
        os.environ["TZ"] = zone
        time.tzset()
    _TRAVELLING.append(clock)
    try:
        # At a fixed offset that is not UTC's: time-machine 3 makes a UTC destination the
        # process's zone, and the zone is :func:`_posix_tz`'s to set (an instant is exact
        # either way: time-machine reads it as nanoseconds since the epoch)
        traveller = time_machine.travel(clock.instant().astimezone(_ELSEWHERE), tick=False)
        try:
            traveller.start()
        except Exception as e:  # an instant this platform's clock cannot show
            raise ClockUnavailable(
                f"cannot set the clock to {clock.at}: {type(e).__name__}: {e}"
            ) from None
        try:
            yield
        finally:
            traveller.stop()
    finally:
        _TRAVELLING.pop()
        if zone is not None:
            if before is None:
                os.environ.pop("TZ", None)
            else:
                os.environ["TZ"] = before
            time.tzset()
