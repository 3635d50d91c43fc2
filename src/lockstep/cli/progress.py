"""Progress bars for runs longer than a moment, on a terminal only.

Every long command (record, replay, probe, strength) shows progress the same way:
``with progress(out, "replay transform", total=None) as tick:`` then ``tick()`` per
case done.  The engine below ``cli/`` never prints: it takes a plain callback
(``on_run``, ``on_case``) and the command passes ``tick``.

Nothing is drawn when stdout is not a terminal (pipes, CI logs, tests, the selftest
transcripts), so those stay plain, stable lines; and nothing is drawn for a run that
ends within :data:`DELAY`, so a quick command never flickers.  The bar is transient:
when the run ends it disappears and the command's own lines remain.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final

from lockstep.cli.output import Lines

if TYPE_CHECKING:
    from rich.console import Console

DELAY: Final = 0.5
"""Seconds a run may take before a bar appears."""

Tick = Callable[[], None]


def _noop() -> None:
    return None


@contextmanager
def progress(out: Console | Lines, label: str, total: int | None = None) -> Iterator[Tick]:
    """A ``tick()`` that advances a bar shown after :data:`DELAY` s on a terminal; else a no-op.

    ``total`` unknown (a streamed oracle) shows a count and the elapsed time.
    """
    from lockstep.cli.app import verbosity

    if verbosity() < 0 or not out.is_terminal:  # -q: no bars
        yield _noop
        return
    console = out.console if isinstance(out, Lines) else out
    from rich.progress import (  # only on a terminal: the bar's modules take a while to load
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = [SpinnerColumn(), TextColumn("{task.description}", markup=False)]
    if total is not None:
        columns += [BarColumn(), MofNCompleteColumn()]
    else:
        columns.append(TextColumn("{task.completed} done"))
    columns.append(TimeElapsedColumn())
    bar = Progress(*columns, console=console, transient=True)
    task = bar.add_task(label, total=total)
    began = time.monotonic()
    lock = threading.Lock()
    shown = False

    def show() -> None:
        nonlocal shown
        with lock:
            if not shown:
                shown = True
                bar.start()

    # The timer shows the bar of a run that never ticks (one long record); a tick past the
    # delay shows it at once, whatever the timer thread is doing.
    timer = threading.Timer(DELAY, show)
    timer.daemon = True
    timer.start()

    def tick() -> None:
        bar.advance(task)
        if not shown and time.monotonic() - began >= DELAY:
            show()

    try:
        yield tick
    finally:
        timer.cancel()
        timer.join()
        bar.stop()
