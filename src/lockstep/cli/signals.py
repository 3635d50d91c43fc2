"""SIGTERM as a way out that cleans up, like Ctrl-C.

``timeout`` and a cancelled CI job send SIGTERM; Python's default is to die at once,
which leaves what a ``finally`` would remove (a ``git worktree`` and its temporary
tree, a private temp folder).  Inside :func:`terminate_cleanly` SIGTERM raises
:class:`Terminated` in the main thread instead, so every ``finally`` on the way out
runs, and the command exits 143 (128 + SIGTERM) with one line on stderr.
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

EXIT_TERMINATED: Final = 128 + signal.SIGTERM


class Terminated(BaseException):
    """SIGTERM arrived (a BaseException: no ``except Exception`` may swallow it)."""


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextlib.contextmanager
def terminate_cleanly(what: str) -> Iterator[None]:
    """Run the body with SIGTERM raising :class:`Terminated`; on it, say so and exit 143."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    except Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM: let cleanup finish
        click.echo(f"lockstep: terminated; {what}", err=True)
        sys.exit(EXIT_TERMINATED)
    finally:
        signal.signal(signal.SIGTERM, previous)
