"""The clock the fresh interpreter verifies new cases on: years after the recording's.

A case whose outcome depends on today's date (``naturalday(d)`` says "today", a parser
that completes a two-digit year from the current one, an object that keeps the year it
was made in) replays green all day and red on a later one, with no code changed.  Such a
case does not vary from one call to the next, so replaying it twice shows nothing.  So
the verifying interpreter runs on a clock :data:`SHIFT` ahead of the real one (ticking,
with time-machine, which every reader of the clock sees: ``time.time``, ``datetime.now``,
``date.today``, ``time.localtime``), from before it imports any target: such a case is
refused at record, and :func:`real_clock` lets it be replayed once more on the real clock
to name the cause.

A row recorded under a clock a test froze keeps that instant and is replayed there
(:mod:`lockstep.oracles.ledger.clock`): the shift does not reach it.
"""

from __future__ import annotations

import datetime
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from lockstep.oracles.travel import time_machine_module

SHIFT: Final = datetime.timedelta(days=1213, hours=7, minutes=29)
"""How far ahead the verifying clock runs: another year, month, day of the month, day of
the week, hour and minute than the recording's."""

_ELSEWHERE: Final = datetime.timezone(datetime.timedelta(hours=1))
"""A destination's zone: a fixed offset that is not UTC's, so time-machine leaves the
process's zone alone (it makes a UTC or ``ZoneInfo`` destination the process's zone)."""

_SHIFTED: list[Any] = []
"""The travel :func:`shift` started in this process (one at most)."""


def shift() -> bool:
    """Run this process's clock :data:`SHIFT` ahead from now on (once; a fork inherits it).
    False where time-machine cannot be imported or cannot move this platform's clock: the
    cases are then verified on the real clock, as before."""
    if _SHIFTED:
        return True
    try:
        machine = time_machine_module()
        real = datetime.datetime.now(datetime.UTC)
        traveller = machine.travel((real + SHIFT).astimezone(_ELSEWHERE), tick=True)
        traveller.start()
    except Exception:
        return False
    _SHIFTED.append(traveller)
    return True


def shifted() -> bool:
    """Whether this process runs on the shifted clock."""
    return bool(_SHIFTED)


@contextmanager
def real_clock() -> Iterator[None]:
    """The block on the real clock (ticking), then back on the shifted one."""
    if not _SHIFTED:
        yield
        return
    machine = sys.modules["time_machine"]
    real = machine.escape_hatch.datetime.datetime.now(datetime.UTC)
    with machine.travel(real.astimezone(_ELSEWHERE), tick=True):
        yield
