"""Each ledger replays with Python's ``random`` seeded alike, so a replay is a function of
its rows.

Code that draws from the ``random`` module's global generator answers otherwise from one
run to the next.  Where a draw decides a row's own outcome, the row varies between calls
and recording refuses it.  Where it decides what the *next* rows see, it did not:
jmespath's parser cache evicts half of its entries, chosen by ``random.sample``, once it
is full, so whether a later call finds its expression cached was left to chance.
Verification replayed the rows once and passed the calls that happened to find the same
entries; ``lockstep replay`` then drifted on one or two of them under five seeds of
eight, on unchanged code.

Seeded alike at the start of every ledger's replay (the verification's fork, each round
of it, and ``lockstep replay``), the draws are the same each time: verification and every
later replay see the same cache, and what verification keeps replays the same way after.
The caller's own generator state is put back after (a replay inside a pytest run must
not change what the tests draw next).  A generator the code makes itself
(``random.Random()``, ``secrets``, ``os.urandom``) is left as it is: a row that depends
on one is refused as varying.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

REPLAY_RANDOM_SEED: Final = 0
"""What ``random.seed`` is given before each ledger's rows replay."""


@contextmanager
def seeded_random() -> Iterator[None]:
    """The global ``random`` generator seeded with :data:`REPLAY_RANDOM_SEED` for the
    block, and its state as it was put back after."""
    state = random.getstate()
    random.seed(REPLAY_RANDOM_SEED)
    try:
        yield
    finally:
        random.setstate(state)


__all__ = ["REPLAY_RANDOM_SEED", "seeded_random"]
