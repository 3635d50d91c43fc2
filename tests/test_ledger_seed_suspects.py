"""Objects that file their items by ``hash()`` are verified under several hash seeds.

pyrsistent's ``PMap`` keeps each key in bucket ``hash(key) % len(buckets)``.  Frozen by
structure, a map keeps the buckets of the recording's hash seed; the interpreter that
verifies new rows, under one other seed, put a key in the same bucket by chance often
enough that such rows were written, and ``lockstep replay`` on unchanged code then
failed under most seeds.  Such rows are now replayed under the further verifying seeds
as rows holding sets are, and refused unless every one reproduces them.
"""

from __future__ import annotations

from pathlib import Path

from helpers import recorded, rows_of, run_cli
from lockstep.oracles.ledger.seed_suspects import (
    calls_hash_outside_dunder,
    holds_hashing_class,
    ordered_texts,
)

TABLE = """
class Table:
    '''A hash table written in Python, as legacy code and persistent-data libraries do.'''

    def __init__(self, size=4):
        self.buckets = [[] for _ in range(size)]

    def put(self, key, value):
        bucket = self.buckets[hash(key) % len(self.buckets)]
        bucket[:] = [(k, v) for k, v in bucket if k != key] + [(key, value)]
        return self

    def get(self, key):
        for k, v in self.buckets[hash(key) % len(self.buckets)]:
            if k == key:
                return v
        raise KeyError(key)


def table_of(pairs):
    table = Table()
    for key, value in pairs:
        table.put(key, value)
    return table


def lookup(table, key):
    return table.get(key)
"""

TESTS = """
from store.table import lookup, table_of


def test_lookup():
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    table = table_of([(w, i) for i, w in enumerate(words)])
    for i, w in enumerate(words):
        assert lookup(table, w) == i
"""


def test_rows_of_a_table_filed_by_hash_replay_green_under_every_seed(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    result = recorded(
        root,
        {
            "store/__init__.py": "",
            "store/table.py": TABLE,
            "tests/test_table.py": TESTS,
            "lockstep.toml": '[[ledger]]\npackage = "store"\n',
        },
    )
    assert "does not reproduce" in result.stdout  # refused: the hash seed's
    for seed in ("0", "1", "2", "3", "4", "5", "6", "7", "11", "12"):
        green = run_cli("replay", cwd=root, env={"PYTHONHASHSEED": seed})
        assert green.code == 0, (seed, green.output)


def test_a_module_that_files_by_hash_is_told_from_one_that_only_defines_hash() -> None:
    filing = b"def bucket(k, n):\n    return hash(k) % n\n"
    hashing = b"class V:\n    def __hash__(self):\n        return hash((self.a,))\n"
    assert calls_hash_outside_dunder(filing)
    assert calls_hash_outside_dunder(hashing + filing)
    assert not calls_hash_outside_dunder(hashing)
    assert not calls_hash_outside_dunder(b"def rehash(x):\n    return x.hash(1)\n")


def test_a_row_naming_no_class_of_such_a_module_is_no_suspect() -> None:
    assert not holds_hashing_class(b'{"args":[1,"a"],"result":2}')
    assert not holds_hashing_class(b'{"args":[{"$obj":["no.such.module:Thing",{}]}]}')


GRID = """
class Grid:
    def __init__(self, cells):
        self.cells = cells

    def __repr__(self):
        raise RuntimeError("legacy repr: no grid is ever printed")


def grid(n):
    return Grid([[i * j for j in range(8)] for i in range(n)])
"""

GRID_TESTS = """
from shapes.grid import grid


def test_grid():
    assert len(grid(12).cells) == 12
"""


def test_a_drifted_value_whose_repr_raises_is_shown_frozen_and_replay_goes_on(
    tmp_path: Path,
) -> None:
    """The drift's diff pretty-prints both values thawed; a ``__repr__`` that raises made
    ``lockstep replay`` end with a traceback (pyrsistent's map rebuilt under another
    seed).  It now prints their frozen forms instead."""
    from helpers import red_after_change

    root = tmp_path / "proj"
    recorded(
        root,
        {
            "shapes/__init__.py": "",
            "shapes/grid.py": GRID,
            "tests/test_grid.py": GRID_TESTS,
            "lockstep.toml": '[[ledger]]\npackage = "shapes"\n',
        },
    )
    red = red_after_change(root, "shapes/grid.py", "i * j for j", "i + j for j")
    assert "Traceback" not in red.output
    assert "shapes.grid.grid" in red.stdout
    verbose = run_cli("replay", "-v", cwd=root)
    assert verbose.code == 1 and "Traceback" not in verbose.output


TAGS = """
def label(items):
    return ", ".join(set(items))


def unique(items):
    return list(set(items))


def lengths(items):
    return [(item, len(item)) for item in set(items)]


def shout(word):
    return word.upper() + ", " + word.upper()
"""

TAGS_TESTS = """
import pytest

from shop.tags import label, lengths, shout, unique

PAIRS = [["red", "blue"], ["north", "south"], ["alpha", "beta"], ["cat", "dog"]]


@pytest.mark.parametrize("pair", PAIRS)
def test_tags(pair):
    assert sorted(label(pair).split(", ")) == sorted(pair)
    assert sorted(unique(pair)) == sorted(pair)
    assert sorted(lengths(pair)) == sorted((p, len(p)) for p in pair)
    assert shout(pair[0]).startswith(pair[0].upper())
"""


def test_texts_ordered_by_a_set_are_refused_not_written_to_fail_replay_later(
    tmp_path: Path,
) -> None:
    """``", ".join(set(tags))`` answers in the order of the string hash seed.  With one
    verifying seed such rows were written about one time in two, and ``lockstep replay``
    of unchanged code then drifted under most seeds: a gate that is red at random."""
    root = tmp_path / "proj"
    result = recorded(
        root,
        {
            "shop/__init__.py": "",
            "shop/tags.py": TAGS,
            "tests/test_tags.py": TAGS_TESTS,
            "lockstep.toml": '[[ledger]]\npackage = "shop"\n',
        },
    )
    assert "hash-seed dependence" in result.stdout
    # what depends on no set is kept, under every seed alike
    assert len(rows_of(root / "lockstep/shop.tags.shout.ledger.jsonl")) == 4
    for seed in ("0", "1", "2", "5", "8", "13", "21", "34"):
        green = run_cli("replay", cwd=root, env={"PYTHONHASHSEED": seed})
        assert green.code == 0, (seed, green.output)


def test_an_outcome_holds_ordered_texts_when_a_set_could_have_ordered_them() -> None:
    assert ordered_texts("sun, moon")
    assert ordered_texts(["red", "blue"])
    assert ordered_texts({"$obj": ["m:C", {"state": {"names": ["x", "y"]}}]})
    # items holding texts, in a sequence's order: [(name, 1) for name in set(names)]
    assert ordered_texts([{"$tuple": ["x", 1]}, {"$tuple": ["y", 2]}])
    assert ordered_texts({"$tuple": ["x", "y"]})
    assert ordered_texts({"$odict": [["b", 1], ["a", 2]]})
    assert ordered_texts({"$namedtuple": ["m:Pair", ["x", "y"]]})
    assert ordered_texts({"$bytes": "YSwgYg=="})  # b"a, b"
    assert ordered_texts({"$set": [["x", "y"]]})  # a set's items are sorted, not theirs
    assert not ordered_texts("#ff0000")
    assert not ordered_texts(["red", 1])
    assert not ordered_texts(12.5)
    assert not ordered_texts({"$tuple": [1, 2]})


def test_orders_every_comparison_ignores_are_no_suspects() -> None:
    """A dict's key order, a set's, an object's attributes' and a class's name beside its
    body: the frozen form sorts them, so no seed can make a replay drift through them.
    (semver's ``Version`` objects, whose attributes were a dict of five keys, made a third
    of its rows suspects, each replayed under four more seeds.)"""
    assert not ordered_texts({"a": 1, "b": 2})
    assert not ordered_texts({"$dict": [[1, "y"], [2, "x"]]})
    assert not ordered_texts({"$counter": [["a", 2], ["b", 1]]})
    assert not ordered_texts({"$set": ["a", "b"]})
    assert not ordered_texts({"$defaultdict": [{"$fn": "builtins:list"}, [["a", [2]]]]})
    state = {"_major": 1, "_minor": 2, "_patch": 3, "_prerelease": "rc.1", "_build": None}
    assert not ordered_texts({"$obj": ["semver.version:Version", {"state": state}]})
    assert not ordered_texts({"$dataclass": ["m:Point", {"x": 1, "y": 2}]})
    assert not ordered_texts({"$enum": ["m:Color", "RED"]})
    assert not ordered_texts({"$datetime": ["2024-01-01T00:00:00", None, 0]})
    # a match by what it searched: a pattern is no order, a joined text may be
    assert not ordered_texts({"$match": [{"$re": ["a|b", 32]}, "xay", 0, 3]})
    assert ordered_texts({"$match": [{"$re": ["a", 32]}, "b, a", 0, 4]})


LOGGED = """
import os


def tidy(items):
    with open(os.environ["REPLAY_LOG"], "a") as f:
        f.write((os.environ.get("PYTHONHASHSEED") or "run") + " " + repr(items) + "\\n")
    if len(items) > 1:
        return sorted(set(items))  # texts in order: a seed suspect (sorted, so it holds)
    return len(items)
"""

LOGGED_TESTS = """
import pytest

from shop.logged import tidy


def test_names():
    assert tidy(["b", "a"]) == ["a", "b"]


@pytest.mark.parametrize("n", range(6))
def test_counts(n):
    assert tidy([n]) == 1
"""


def test_the_further_seeds_replay_only_the_rows_a_seed_could_order(tmp_path: Path) -> None:
    """A ledger's rows under the four further verifying seeds: only its suspects (an
    outcome of texts a set could have ordered), not every row of the ledger; the first
    verifying seed still replays every row."""
    from helpers import pytest_in, write_files

    root = tmp_path / "proj"
    log = tmp_path / "replays.log"
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/logged.py": LOGGED,
            "tests/test_logged.py": LOGGED_TESTS,
            "lockstep.toml": '[[ledger]]\npackage = "shop"\n',
        },
    )
    result = pytest_in(root, "--lockstep-record", "-q", "tests", env={"REPLAY_LOG": str(log)})
    assert result.code == 0, result.output
    assert len(rows_of(root / "lockstep/shop.logged.tidy.ledger.jsonl")) == 7  # all hold
    by_seed: dict[str, list[str]] = {}
    for line in log.read_text().splitlines():
        seed, _, items = line.partition(" ")
        by_seed.setdefault(seed, []).append(items)
    assert len(by_seed["run"]) == 7  # the suite's own calls
    assert len(by_seed["1"]) == 7  # the first verifying seed: every row
    for further in ("3", "4", "5", "6"):
        assert by_seed[further] == ["['b', 'a']"], further  # the suspect alone
