"""A project class extending ``OrderedDict`` or ``defaultdict`` keeps what a plain dict
does not: the order of its own links, and its factory.

Rebuilt as a plain dict, an ``OrderedDict`` subclass iterated as empty while its keys
still looked up (icalendar's ``Component``: ``to_ical`` wrote an empty event, and all but
one of its rows were refused as varying), and a ``defaultdict`` subclass lost its
factory."""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from pathlib import Path
from typing import Any

import pytest

from helpers import GitRepo, recorded, red_after_change, run_cli
from lockstep import canon


class Bag(OrderedDict[str, Any]):
    def __setitem__(self, key: str, value: Any) -> None:  # runs on the user's calls only
        super().__setitem__(key.upper(), value)


class Tally(defaultdict[str, int]):
    pass


@pytest.fixture(autouse=True)
def _own_classes() -> None:
    canon.allow_callables_from(__name__)


def test_an_ordered_dict_subclass_thaws_in_its_own_order_without_its_code() -> None:
    bag = Bag()
    bag["b"] = 1
    bag["a"] = 2
    bag.move_to_end("B")  # the links' order, not the dict's
    thawed = canon.loads(canon.dumps(bag))
    assert type(thawed) is Bag and list(thawed.items()) == [("A", 2), ("B", 1)]
    assert canon.dumps(thawed) == canon.dumps(bag)
    other = Bag()
    other["b"] = 1
    other["a"] = 2
    assert not canon.equal(bag, other)  # OrderedDict's == holds the order too


def test_a_defaultdict_subclass_keeps_its_factory() -> None:
    tally = Tally(int, a=1)
    thawed = canon.loads(canon.dumps(tally))
    assert type(thawed) is Tally and thawed.default_factory is int
    assert thawed["b"] == 0 and dict(thawed) == {"a": 1, "b": 0}


def test_a_form_written_as_a_plain_dict_still_thaws() -> None:
    old = {"$obj": [f"{__name__}:Bag", {"base": {"A": 2, "B": 1}}]}
    assert list(canon.decode(old).items()) == [("A", 2), ("B", 1)]


FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "bags"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/bags/__init__.py": (
        "from collections import OrderedDict, defaultdict\n\n\n"
        "class Bag(OrderedDict):\n    pass\n\n\n"
        "class Tally(defaultdict):\n    pass\n\n\n"
        "def render(bag):\n"
        '    return ";".join(f"{k}={v}" for k, v in bag.items())\n\n\n'
        "def count(tally, key):\n"
        "    return tally[key] + 1\n"
    ),
    "tests/test_bags.py": (
        "from bags import Bag, Tally, count, render\n\n\n"
        "def test_render():\n"
        '    assert render(Bag(a=1, b=2)) == "a=1;b=2"\n\n\n'
        "def test_count():\n"
        '    assert count(Tally(int, a=1), "b") == 1\n'
    ),
}


def test_calls_on_mapping_subclasses_record_and_replay(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    run = recorded(repo.root, FILES)
    assert "refused (" not in run.stdout, run.output
    repo.commit("bags, recorded")
    assert run_cli("replay", cwd=repo.root).code == 0
    red_after_change(repo.root, "src/bags/__init__.py", '";".join', '",".join', "bags.render")
