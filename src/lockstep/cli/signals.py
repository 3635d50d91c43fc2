"""SIGTERM and Ctrl-C as ways out that stop every case and clean up.

``timeout`` and a cancelled CI job send SIGTERM; Python's default is to die at once,
which leaves what a ``finally`` would remove (a ``git worktree`` and its temporary
tree, a private temp folder).  Inside :func:`terminate_cleanly` SIGTERM raises
:class:`Terminated` in the main thread instead, so every ``finally`` on the way out
runs, and the command exits 143 (128 + SIGTERM) with one line on stderr.

Every command runs inside :func:`cancel_on_signals`: SIGTERM and SIGINT first mark the
run cancelled (:mod:`lockstep.cancel`), so cases running on worker threads and
warm servers are killed with their whole trees at once instead of being waited for,
then raise in the main thread (:class:`Terminated`, :class:`KeyboardInterrupt`); the
command group turns those into exit 143 and 130.  Where Python would drop that raise
(a garbage-collector callback, a ``__del__``) the handler only marks the run, and the
next :func:`lockstep.cancel.raise_pending` between cases raises instead.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Final

import click

from lockstep.cancel import Cancelled, Terminated, cancel, cancelled_by, raising_is_lost

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "Terminated",
    "cancel_on_signals",
    "terminate_cleanly",
]

EXIT_TERMINATED: Final = 128 + signal.SIGTERM
EXIT_INTERRUPTED: Final = 128 + signal.SIGINT


def _raise(signum: int, frame: FrameType | None) -> None:
    cancel(signum)
    if not raising_is_lost(frame):
        raise Terminated


def _interrupt(signum: int, frame: FrameType | None) -> None:
    cancel(signum)
    if not raising_is_lost(frame):
        raise KeyboardInterrupt


@contextlib.contextmanager
def cancel_on_signals() -> Iterator[None]:
    """Run the body with SIGTERM and SIGINT cancelling every case, then raising (see above)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, h) for s, h in _HANDLERS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


_HANDLERS: Final = ((signal.SIGTERM, _raise), (signal.SIGINT, _interrupt))


@contextlib.contextmanager
def terminate_cleanly(what: str) -> Iterator[None]:
    """Run the body with SIGTERM raising :class:`Terminated`; on it, say so and exit 143."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    except (Terminated, Cancelled) as e:
        if isinstance(e, Cancelled) and cancelled_by() != signal.SIGTERM:
            raise
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM: let cleanup finish
        click.echo(f"lockstep: terminated; {what}", err=True)
        sys.exit(EXIT_TERMINATED)
    finally:
        signal.signal(signal.SIGTERM, previous)
