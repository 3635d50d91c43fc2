"""A replayed call that never returns is that row's ERROR, not a replay that hangs.

A one-line change can turn a loop into one that never ends (``i += 1`` dropped, a bound
moved past its end).  Replaying such a change ran the row's call forever: ``lockstep
replay`` and the pytest items waited until someone killed them, and a gate in CI ended as a
cancelled job rather than as red.  Now each ledger's rows replay under a deadline of the
ledger's ``timeout`` (seconds, 30 by default, the same as a pinned run's): a call still
running past it is interrupted, and its row is an ERROR that says so.

Why a ticking timer rather than an alarm per row: arming and disarming ``setitimer`` costs
about 1.4 µs, a third of what replaying a whole passing row costs.  Here one interval timer
ticks a few times per ``timeout`` for the whole ledger, and a row only marks itself as the
one running (one attribute store before its call, one after).  A tick that sees the same
row running for ``timeout`` seconds raises :class:`RowTimedOut` in the call, between two of
its bytecodes; a row finishing as the tick lands is at most one tick late.

Why the ledger's later rows are not called after that: an exception thrown into the middle
of a call can leave what it was changing half-changed (a lock held, a cache half-filled),
so what later rows return in this process proves nothing.  They are ERRORs that name the
row that did not return; the other ledgers replay in processes of their own and are not
touched.

:class:`RowTimedOut` derives from :class:`BaseException`, so that the target's own ``except
Exception`` does not swallow it; a bare ``except:`` that does is interrupted again a
``timeout`` later.  The deadline is only armed in the main thread (where Python runs signal
handlers) and only where ``SIGALRM`` exists; elsewhere rows replay without one, as before.
A call that blocks inside C code without returning to Python is not interrupted.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Final

from lockstep.oracles import NOT_REPLAYED, TIMED_OUT

DEFAULT_TIMEOUT: Final = 30.0
"""Seconds a replayed call may run by default (a pinned run's default ``timeout`` too)."""

TICKS: Final = 4
"""Timer ticks per ``timeout``: a call is stopped between ``timeout`` and 1¼ × ``timeout``."""


class RowTimedOut(BaseException):
    """Raised into a replayed call that ran past the ledger's ``timeout``."""


class Deadline:
    """Which row is running, and whether one has already run past the deadline."""

    __slots__ = ("_seen", "_since", "running", "stuck", "timeout")

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.running: str | None = None
        """The id of the row whose call is running, or None between rows."""
        self.stuck: str | None = None
        """The id of the first row that did not return in time: later rows are not called."""
        self._seen: str | None = None
        self._since = 0.0

    def timed_out_note(self) -> str:
        return (
            f"{TIMED_OUT} {self.timeout:g} s (the ledger's timeout): its call "
            "was stopped (a loop that never ends, or a call slower than the timeout)"
        )

    def not_called_note(self) -> str:
        return (
            f"{NOT_REPLAYED}{self.stuck} of this ledger {TIMED_OUT} "
            f"{self.timeout:g} s, and the call stopped in the middle may have left "
            "this process changed"
        )

    def _tick(self, signum: int, frame: FrameType | None) -> None:
        running = self.running
        if running is None:
            self._seen = None
            return
        now = time.monotonic()
        if running != self._seen:
            self._seen, self._since = running, now
            return
        if now - self._since >= self.timeout:
            self._seen = None  # a swallowed stop is repeated a whole timeout later
            raise RowTimedOut(running)


@contextlib.contextmanager
def armed(timeout: float, deadline: Deadline | None = None) -> Iterator[Deadline]:
    """``deadline`` (a new one by default) with its timer ticking while the block runs (in
    the main thread, where ``SIGALRM`` exists); the handler and timer found before are put
    back afterwards."""
    if deadline is None:
        deadline = Deadline(timeout)
    main = threading.current_thread() is threading.main_thread()
    if not main or not hasattr(signal, "setitimer"):
        yield deadline
        return
    tick = timeout / TICKS
    previous = signal.signal(signal.SIGALRM, deadline._tick)
    before = signal.setitimer(signal.ITIMER_REAL, tick, tick)
    try:
        yield deadline
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
        if before[0] > 0:  # an alarm someone else had set: it still goes off
            signal.setitimer(signal.ITIMER_REAL, *before)


__all__ = ["DEFAULT_TIMEOUT", "Deadline", "RowTimedOut", "armed"]
