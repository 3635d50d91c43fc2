"""A weak reference held in a value freezes as what it points at, and thaws to a new
reference to that object: bidict's inverse keeps its forward mapping by one, and every
call that touched ``.inverse`` was skipped."""

from __future__ import annotations

import json
import weakref
from pathlib import Path
from typing import Any

import pytest

from helpers import GitRepo, recorded, red_after_change, rows_of, run_cli
from lockstep import canon
from lockstep.canon.text import value_text
from lockstep.errors import CanonError


class Node:
    def __init__(self, name: str, link: Any = None) -> None:
        self.name = name
        self.link = link


@pytest.fixture(autouse=True)
def _own_classes() -> None:
    canon.allow_callables_from(__name__)


def test_a_weak_reference_back_to_the_object_around_it_thaws_to_that_object() -> None:
    forward = Node("forward")
    forward.link = Node("inverse", weakref.ref(forward))
    written = canon.dumps(forward)
    assert b'{"$weakref":{"$ref":1}}' in written
    thawed = canon.loads(written)
    assert type(thawed.link.link) is weakref.ReferenceType
    assert thawed.link.link() is thawed
    assert canon.dumps(thawed) == written
    assert "weakref.ref(" in value_text(json.loads(written))


def test_a_reference_to_an_object_the_value_holds_nowhere_around_it_is_refused() -> None:
    elsewhere = Node("elsewhere")
    with pytest.raises(CanonError, match="does not hold around it"):
        canon.encode(Node("holder", weakref.ref(elsewhere)))


def test_a_dead_reference_thaws_dead() -> None:
    holder = Node("holder", weakref.ref(Node("gone")))
    written = canon.dumps(holder)
    assert b'{"$weakref":null}' in written
    assert canon.loads(written).link() is None


def test_a_reference_with_a_callback_or_of_a_subclass_is_refused() -> None:
    target = Node("t")
    with pytest.raises(CanonError, match="callback"):
        canon.encode(Node("h", weakref.ref(target, lambda _: None)))
    with pytest.raises(CanonError, match=r"WeakMethod|weakref"):
        canon.encode(Node("h", weakref.WeakMethod(target.__init__)))


def test_a_reference_to_what_cannot_be_referenced_is_a_one_line_error() -> None:
    with pytest.raises(CanonError, match="cannot be weakly referenced") as caught:
        canon.loads('{"$weakref": 5}')
    assert "\n" not in str(caught.value)


PAIRS = """
import weakref


class Pairs:
    def __init__(self):
        self.fwd = {}
        self._inv = None

    def put(self, key, value):
        self.fwd[key] = value
        return self

    @property
    def inverse(self):
        if self._inv is None:
            inv = Pairs()
            inv.fwd = {v: k for k, v in self.fwd.items()}
            inv._back = weakref.ref(self)
            self._inv = inv
        return self._inv

    def lookup(self, value):
        return self.inverse.fwd[value]
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "pairs"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/pairs/__init__.py": "from pairs.core import Pairs\n",
    "src/pairs/core.py": PAIRS,
    "tests/test_pairs.py": (
        "from pairs import Pairs\n\n\n"
        "def test_lookup():\n"
        "    p = Pairs().put('a', 1).put('b', 2)\n"
        "    assert p.inverse.fwd == {1: 'a', 2: 'b'}\n"
        "    assert p.lookup(2) == 'b'\n"
    ),
}


def test_calls_on_an_object_holding_a_weak_reference_record_and_replay(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    run = recorded(repo.root, FILES)
    # the inverse alone holds its link back to a mapping outside it: that call is skipped
    assert "weakref to a Pairs that the value does not hold around it" in run.output
    repo.commit("pairs, recorded")
    assert len(rows_of(repo.root / "lockstep/pairs.core.Pairs.lookup.ledger.jsonl")) == 1
    assert run_cli("replay", cwd=repo.root).code == 0
    red = red_after_change(
        repo.root,
        "src/pairs/core.py",
        "return self.inverse.fwd[value]",
        "return self.inverse.fwd.get(value, 'b')[0].upper()",
    )
    assert "Pairs.lookup" in red.stdout
