"""Each ledger replays with Python's ``random`` seeded alike: what verification kept, every
later replay gives again.

jmespath's parser cache evicts entries chosen by ``random.sample`` once it is full, so
whether a later call found its expression cached was left to chance: verification passed
the calls that happened to find the same entries, and ``lockstep replay`` of the
unchanged code drifted under five hash seeds of eight.
"""

from __future__ import annotations

import random
from pathlib import Path

from helpers import pytest_in, rows_of, run_cli, write_files
from lockstep.oracles.ledger.replay_random import seeded_random

CACHE = """
import random

_CACHE = {}


def lookup(key, call):
    '''A cache that, once full, forgets half of what it holds, chosen at random (``call``
    only tells the calls apart, as a parser's instance does).'''
    if key in _CACHE:
        return "hit"
    if len(_CACHE) >= 6:
        for old in random.sample(sorted(_CACHE), 3):
            del _CACHE[old]
    _CACHE[key] = True
    return "miss"
"""

CACHE_TESTS = """
from shop.cache import lookup


def test_lookups():
    for call in range(300):
        assert lookup(f"key{call * 7 % 11}", call) in ("hit", "miss")
"""


def test_a_ledger_whose_rows_draw_from_random_replays_as_verified(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/cache.py": CACHE,
            "tests/test_cache.py": CACHE_TESTS,
            "lockstep.toml": '[[ledger]]\npackage = "shop"\n',
        },
    )
    result = pytest_in(root, "--lockstep-record", "-q", "-p", "no:randomly", "tests")
    assert result.code == 0, result.output
    kept = rows_of(root / "lockstep/shop.cache.lookup.ledger.jsonl")
    assert kept  # the calls whose outcome the seeded draws give as recorded
    for seed in ("0", "1", "2", "3", "5", "8"):
        replay = run_cli("replay", cwd=root, env={"PYTHONHASHSEED": seed})
        assert replay.code == 0, (seed, replay.output)


def test_the_callers_draws_are_left_as_they_were() -> None:
    random.seed(1234)
    expected = [random.random() for _ in range(3)]
    random.seed(1234)
    with seeded_random():
        inside = [random.random() for _ in range(3)]
    with seeded_random():
        again = [random.random() for _ in range(3)]
    assert inside == again  # seeded alike each time
    assert [random.random() for _ in range(3)] == expected
