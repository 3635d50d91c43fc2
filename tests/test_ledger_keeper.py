"""The process ``pytest --lockstep`` keeps for its ledgers: one answer per name, in turn;
what it raised raised here; once it is gone, it is never asked again."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from lockstep.errors import LockstepError, TargetError
from lockstep.model import Outcome, Status
from lockstep.oracles.ledger import keeper

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the keeper is a fork")


def _replay(name: str) -> Iterator[Outcome]:
    if name == "raises":
        raise LockstepError("cannot import module 'gone'")
    if name == "dies":
        os._exit(3)
    print(f"printed while replaying {name}")
    yield Outcome(name, "a", Status.PASS)
    yield Outcome(name, "b", Status.DRIFT, note="recorded 1, got 2")


@pytest.fixture
def kept() -> Iterator[keeper.Keeper]:
    started = keeper.start(_replay, lambda: None)
    assert started is not None and keeper.current() is started
    try:
        yield started
    finally:
        keeper.stop()
    assert keeper.current() is None


def test_each_ledger_is_answered_in_turn_with_what_it_printed(
    kept: keeper.Keeper, capfd: pytest.CaptureFixture[str]
) -> None:
    first = list(kept.replay("money"))
    assert [(o.case_id, o.status) for o in first] == [("a", Status.PASS), ("b", Status.DRIFT)]
    assert first[1].note == "recorded 1, got 2"
    assert "printed while replaying money" in capfd.readouterr().err
    with pytest.raises(LockstepError, match="cannot import module 'gone'"):
        list(kept.replay("raises"))
    again = list(kept.replay("dates"))  # a raise leaves it answering
    assert [o.oracle for o in again] == ["dates", "dates"]


def test_one_that_ends_while_replaying_is_asked_no_more(kept: keeper.Keeper) -> None:
    with pytest.raises(TargetError, match="ended before its answer"):
        list(kept.replay("dies"))
    assert keeper.current() is None  # the next ledger replays in a fork of this process
    with pytest.raises(TargetError, match="ended"):  # its pipe may still take the name
        list(kept.replay("money"))
