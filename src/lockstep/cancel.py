"""Cancellation: SIGTERM or SIGINT stops every running case at once.

The command line's signal handler calls :func:`cancel` (it only sets a flag: no
lock is taken in a signal handler) and then raises in the main thread.  From
then on every case still running, in any thread, is killed with its whole tree
within one polling slice (:func:`lockstep.process.run` checks :func:`cancelled`
between slices of waiting and raises :class:`Cancelled` once it has cleaned up),
no new case starts, and warm servers are killed rather than waited for.
"""

from __future__ import annotations

from typing import Final


class Cancelled(BaseException):
    """The run was cancelled (a BaseException: no ``except Exception`` may swallow it)."""


class _Flag:
    def __init__(self) -> None:
        self.set = False


_FLAG: Final = _Flag()


def cancel() -> None:
    """Stop every case: safe to call from a signal handler."""
    _FLAG.set = True


def cancelled() -> bool:
    """True once :func:`cancel` was called (and not :func:`reset` since)."""
    return _FLAG.set


def reset() -> None:
    """Start a new command with nothing cancelled (one process may run several)."""
    _FLAG.set = False


def check() -> None:
    """Raise :class:`Cancelled` if the run was cancelled."""
    if _FLAG.set:
        raise Cancelled
