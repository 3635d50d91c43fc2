"""Cancellation: SIGTERM or SIGINT stops every running case at once.

The command line's signal handler calls :func:`cancel` (it only sets a flag: no
lock is taken in a signal handler) and then raises in the main thread.  From
then on every case still running, in any thread, is killed with its whole tree
within one polling slice (:func:`lockstep.process.run` checks :func:`cancelled`
between slices of waiting and raises :class:`Cancelled` once it has cleaned up),
no new case starts, and warm servers are killed rather than waited for.

Python drops an exception raised inside a garbage-collector callback or a
``__del__`` (it prints "Exception ignored in ..." and carries on), and Hypothesis
installs such a callback: a SIGTERM landing there would be lost and the run would
go on to its end.  So the handler does not raise there (:func:`raising_is_lost`),
and the loops that run many cases in the main thread call :func:`raise_pending`
between them, which raises what the signal would have.
"""

from __future__ import annotations

import gc
import signal
from types import FrameType
from typing import Final


class Cancelled(BaseException):
    """The run was cancelled (a BaseException: no ``except Exception`` may swallow it)."""


class Terminated(BaseException):
    """SIGTERM arrived (a BaseException: no ``except Exception`` may swallow it)."""


class _Flag:
    def __init__(self) -> None:
        self.set = False
        self.signum: int | None = None


_FLAG: Final = _Flag()

_FRAMES_LOOKED_AT: Final = 64


def cancel(signum: int | None = None) -> None:
    """Stop every case: safe to call from a signal handler.  ``signum``: the signal that
    cancelled the run, which :func:`raise_pending` raises as."""
    _FLAG.set = True
    if signum is not None and _FLAG.signum is None:
        _FLAG.signum = signum


def cancelled_by() -> int | None:
    """The signal that cancelled the run, if a signal did."""
    return _FLAG.signum


def raise_pending() -> None:
    """In the main thread, between cases: raise what the cancelling signal raises
    (:class:`Terminated` for SIGTERM, :class:`KeyboardInterrupt` for SIGINT,
    :class:`Cancelled` otherwise) if the run was cancelled.  The signal handler's own
    raise may have been dropped (see above); this one is not."""
    if not _FLAG.set:
        return
    if _FLAG.signum == signal.SIGTERM:
        raise Terminated
    if _FLAG.signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Cancelled


def raising_is_lost(frame: FrameType | None) -> bool:
    """True when an exception raised in ``frame`` would be printed and dropped by Python:
    the frame is inside a garbage-collector callback or a ``__del__`` method."""
    callbacks = {getattr(callback, "__code__", None) for callback in gc.callbacks}
    for _ in range(_FRAMES_LOOKED_AT):
        if frame is None:
            return False
        if frame.f_code in callbacks or frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def cancelled() -> bool:
    """True once :func:`cancel` was called (and not :func:`reset` since)."""
    return _FLAG.set


def reset() -> None:
    """Start a new command with nothing cancelled (one process may run several)."""
    _FLAG.set = False
    _FLAG.signum = None


def check() -> None:
    """Raise :class:`Cancelled` if the run was cancelled."""
    if _FLAG.set:
        raise Cancelled
