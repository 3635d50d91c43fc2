"""Bounded parallel execution, written once for every kind that spreads work.

Two shapes, both yielding results in submission order while holding at most
``2 * jobs`` results at a time, so memory stays flat however many tasks there
are:

* :func:`run_parallel` — threads, for tasks that wait on a child process (pins,
  probe runs): a thread costs nothing while it waits.
* :func:`map_processes` — a process pool with a per-process initializer, for
  in-process kinds whose work is Python code (corpus renders, ledger rows):
  each worker builds its state once and then receives batches.

:mod:`concurrent.futures` (and the multiprocessing machinery behind it) is
imported only when work is actually spread: a serial replay never pays for it.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future

T = TypeVar("T")
B = TypeVar("B")
X = TypeVar("X")


def _windowed(submit: Callable[[X], Future[T]], items: Iterable[X], jobs: int) -> Iterator[T]:
    """Submit ``items`` one by one, keeping at most ``2 * jobs`` unfinished or unread."""
    window: deque[Future[T]] = deque()
    try:
        for item in items:
            window.append(submit(item))
            if len(window) >= 2 * jobs:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()
    finally:
        for pending in window:
            pending.cancel()


def run_parallel(tasks: Iterable[Callable[[], T]], *, jobs: int) -> Iterator[T]:
    """Run ``tasks`` on up to ``jobs`` threads, yielding results in task order."""
    if jobs <= 1:
        for task in tasks:
            yield task()
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="lockstep-run") as pool:
        yield from _windowed(pool.submit, tasks, jobs)


def map_processes(
    work: Callable[[B], T],
    batches: Iterable[B],
    *,
    jobs: int,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
) -> Iterator[T]:
    """``work(batch)`` in ``jobs`` processes, each set up once by ``initializer(*initargs)``.

    ``work``, ``initializer`` and their arguments must be picklable (module-level).
    """
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs, initializer=initializer, initargs=initargs) as pool:

        def submit(batch: B) -> Future[T]:
            return pool.submit(work, batch)

        try:
            yield from _windowed(submit, batches, jobs)
        except BaseException:
            # SIGTERM, Ctrl-C, an error or a reader that stopped: the pool's exit would
            # wait for every batch already running (a slow render, minutes), so its
            # workers are killed first.
            _kill_workers(pool)
            raise


def _kill_workers(pool: Any) -> None:
    """Kill a ``ProcessPoolExecutor``'s worker processes now.  Python 3.14 names this
    ``kill_workers()``; before it, the pool keeps them in ``_processes``."""
    kill = getattr(pool, "kill_workers", None)
    if kill is not None:
        kill()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(OSError, ValueError):  # already gone, or closed
            process.kill()


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` (the last one shorter), lazily."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
