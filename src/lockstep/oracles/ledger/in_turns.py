"""Verify a pytest recording's ledgers two at a time, its summary in the targets' order.

Each ledger's verification is mostly a wait: a fork of a verifying interpreter replays its
candidate while the pytest process idles.  With two cores, two threads take turns
(:meth:`~lockstep.oracles.verify_session.VerifySession.taking_turns`): one merges, screens
and writes a ledger while the other's fork replays.  lockstep's own code runs in one
thread at a time, so nothing in it needs to be thread-safe; each thread writes what it
found for its target into a :class:`Sink` of its own, and the sinks are joined in the
targets' order, so the summary reads the same whichever fork finishes first.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from lockstep.store.atomic import joined_batch, this_threads_batch

if TYPE_CHECKING:
    from lockstep.oracles.verify_session import VerifySession

T = TypeVar("T")
O = TypeVar("O")  # noqa: E741 - an outcome
C = TypeVar("C")  # call counts


@dataclass
class Sink(Generic[O, C]):
    """What writing one target's ledger found: its outcome, or why it wrote none."""

    outcomes: list[O] = field(default_factory=list)
    unwritten: list[tuple[str, C]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def write_in_turns(
    verifier: VerifySession | None,
    width: int,
    targets: Sequence[T],
    write: Callable[[T, Sink[O, C]], None],
) -> list[Sink[O, C]]:
    """``write(target, sink)`` for every target, ``width`` threads taking turns (one target
    after the other in this thread when there is no verifying session, one core or one
    target); the sinks in the targets' order.  The caller's folder-sync batch (if any)
    takes the threads' writes."""
    if verifier is None or width < 2 or len(targets) < 2:
        sinks: list[Sink[O, C]] = []
        for target in targets:
            sinks.append(Sink())
            write(target, sinks[-1])
        return sinks
    batch = this_threads_batch()

    def one(target: T) -> Sink[O, C]:
        sink: Sink[O, C] = Sink()
        with verifier.taking_turns(), joined_batch(batch):
            write(target, sink)
        return sink

    with ThreadPoolExecutor(width, thread_name_prefix="lockstep-verify") as pool:
        # each task in a copy of this context: the active verifying session travels with it
        done = [pool.submit(contextvars.copy_context().run, one, t) for t in targets]
        return [future.result() for future in done]
