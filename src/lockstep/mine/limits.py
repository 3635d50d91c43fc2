"""A time limit on one call of the code under freeze, where Python can interrupt it.

Mining runs generated inputs and mutants in its own process, and ``replay --against``
runs each input in one interpreter per version: a call that never returns (a loop on a
generated ``0``, a mutant, a change) would stop them for good.  The limit is a one-shot
``SIGALRM`` timer, in the main thread only (where Python runs signal handlers); elsewhere
the call runs unbounded.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["TooSlow", "time_limit"]


class TooSlow(BaseException):
    """Raised by the alarm inside a call that runs too long: a looping mutant, or a
    generated input the code under freeze loops on (a BaseException: ``except Exception``
    in the code under freeze does not swallow it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` where an interval timer exists (the main
    thread on POSIX); elsewhere the block runs unbounded."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def alarm(signum: int, frame: object) -> None:
        raise TooSlow

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
