"""What boltons' suite showed a recording could not yet see, or changed.

* A factory that names its class's module after its caller (``namedtuple``, boltons'
  ``make_sentinel``) found the recording wrapper's frame: its classes said they were
  defined in lockstep, and the suite's pickling tests failed only while recording.
* A factory's marker (``_MISSING = make_sentinel(...)``, an object of a class made
  inside the factory) could not freeze, so every call touching an object holding one was
  skipped; neither could a ``range``.
* A parameter whose default is another function of the surface (``visit=default_visit``)
  was written ``<default>`` while the module held the recorder's wrapper, and by name in
  the verifying interpreter: the ledger was refused as changed, on every recording.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import recorded, red_after_change, rows_of, run_cli
from lockstep import canon
from lockstep.errors import CanonError

KIT = """
import sys


def make_sentinel(name):
    class Sentinel:
        def __repr__(self):
            return name

        def __reduce__(self):
            return name  # pickled as the global of that name in its module

    Sentinel.__module__ = sys._getframe(1).f_globals.get("__name__", "__main__")
    return Sentinel()


_MISSING = make_sentinel("_MISSING")


def namedpair(typename):
    cls = type(typename, (tuple,), {"__slots__": ()})
    cls.__module__ = sys._getframe(1).f_globals.get("__name__", "__main__")
    return cls


def default_visit(key, value):
    return key, value


def remap(items, visit=default_visit):
    return dict(visit(k, v) for k, v in items)


class Slots:
    def __init__(self, size):
        self.items = [_MISSING] * size

    def fill(self, index, value):
        self.items[index] = value
        return [i for i, x in enumerate(self.items) if x is _MISSING]


def chunk_ranges(total, size):
    return [range(i, min(i + size, total)) for i in range(0, total, size)]
"""

TESTS = """
import pickle

from kit import Slots, chunk_ranges, default_visit, make_sentinel, namedpair, remap

Pair = namedpair("Pair")
NOT_SET = make_sentinel("NOT_SET")


def test_factories_name_the_callers_module():
    assert Pair.__module__ == __name__
    pair = Pair((1, 2))
    assert pickle.loads(pickle.dumps(pair)) == pair
    assert pickle.loads(pickle.dumps(NOT_SET)) is NOT_SET


def test_remap():
    assert remap([("a", 1)]) == {"a": 1}
    assert remap([("b", 2)], visit=default_visit) == {"b": 2}


def test_slots():
    slots = Slots(3)
    assert slots.fill(1, "x") == [0, 2]


def test_ranges():
    assert chunk_ranges(5, 2) == [range(0, 2), range(2, 4), range(4, 5)]
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "kit"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/kit/__init__.py": KIT,
    "tests/test_kit.py": TESTS,
}


def _frozen(root: Path, name: str) -> list[str]:
    rows = rows_of(root / f"lockstep/kit.{name}.ledger.jsonl")
    return [msgspec.json.encode(row).decode() for row in rows]


def test_factories_markers_ranges_and_wrapped_defaults_record_and_guard(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)  # the pickling test passes while recording, too
    assert "lockstep: error" not in run.output, run.output
    # only the factories' own results, made while the test module was imported, before a
    # name held them: nothing can name them yet (the summary says so)
    assert "SKIPPED 2 call(s)" in run.output, run.output
    assert any('{"$sentinel":"kit:_MISSING"}' in f for f in _frozen(root, "Slots.fill"))
    assert any('{"$range":[4,5,1]}' in f for f in _frozen(root, "chunk_ranges"))
    header = (root / "lockstep/kit.remap.ledger.jsonl").read_text().splitlines()[0]
    assert '"default":{"$fn":"kit:default_visit"}' in header, header
    assert len(_frozen(root, "remap")) == 2
    assert run_cli("replay", cwd=root).code == 0

    source = "src/kit/__init__.py"
    original = (root / source).read_text()
    red = red_after_change(root, source, "min(i + size, total)", "i + size", "kit")
    assert "DRIFT kit.chunk_ranges" in red.stdout and "range(4, 6, 1)" in red.stdout, red.stdout
    (root / source).write_text(original)
    red = red_after_change(root, source, "if x is _MISSING]", "if x is None]", "kit")
    assert "DRIFT kit.Slots.fill" in red.stdout, red.stdout
    (root / source).write_text(original)
    red = red_after_change(root, source, "return key, value\n", "return key, [value]\n", "kit")
    assert "DRIFT kit.remap" in red.stdout, red.stdout


@given(start=st.integers(), stop=st.integers(), step=st.integers().filter(bool))
def test_any_range_round_trips_with_its_own_start_stop_and_step(
    start: int, stop: int, step: int
) -> None:
    value = range(start, stop, step)
    back = canon.decode(canon.encode(value))
    assert type(back) is range and (back.start, back.stop, back.step) == (start, stop, step)
    assert canon.encode(value) != canon.encode(list(itertools.islice(value, 5)))


@pytest.mark.parametrize(
    "document",
    [
        {"$range": [0, 5, 0]},
        {"$range": [0, 5]},
        {"$range": [0, 5, 1, 2]},
        {"$range": [0, 5.0, 1]},
        {"$range": [False, 5, 1]},
        {"$range": "0:5"},
        {"$sentinel": "kit_absent:_MISSING"},
        {"$sentinel": "os:sep"},
    ],
)
def test_a_hostile_range_or_marker_is_a_one_line_error(document: object) -> None:
    with pytest.raises(CanonError) as caught:
        canon.decode(document)
    assert "\n" not in str(caught.value)
