"""What the encoder remembers per class stays true when the class's world changes.

An object graph (a parsed document, a token tree) asks the same questions of every node:
is the class the project's own, is it a time zone, what is its name.  The encoder answers
them once per class and then only checks the answer is still the one for today's class.
These tests change what the answers depend on under a class already frozen and freeze its
objects again: the encoder must answer as it would have the first time.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import project_module, write_files
from lockstep import canon
from lockstep.canon.callables import callables_from

MODULE = "class_facts_probe"

SOURCE = """
class Node:
    def __init__(self, label, parent=None):
        self.label = label
        self.parent = parent
        self.children = []
        if parent is not None:
            parent.children.append(self)  # a cycle: the path-tracking encoder freezes it


class Outer:
    class Inner:
        def __init__(self, size):
            self.size = size
"""


@pytest.fixture
def module(tmp_path: Path) -> Iterator[types.ModuleType]:
    with project_module(tmp_path, MODULE, SOURCE) as module:
        yield module


def _tree(module: types.ModuleType) -> object:
    root = module.Node("root")
    return [module.Node("a", root), module.Node("b", root), module.Outer.Inner(3)]


def test_a_tree_freezes_alike_the_first_time_and_every_time_after(
    module: types.ModuleType,
) -> None:
    from lockstep.canon import registry

    first = canon.encode(_tree(module))
    assert module.Node in registry._OWN_ROUTE  # the second time goes the short way
    assert canon.encode(_tree(module)) == first
    assert canon.encode(canon.decode(first)) == first
    assert "class_facts_probe:Outer.Inner" in str(first)


def test_a_class_given_another_module_is_named_after_it(module: types.ModuleType) -> None:
    """A factory's class may be given its caller's module after it was made and frozen
    (the recorder does it): the name and what the class is follow the new module."""
    canon.encode(module.Node("a"))
    moved = types.ModuleType("class_facts_moved")
    moved.Node = module.Node
    module.Node.__module__ = "class_facts_moved"
    sys.modules["class_facts_moved"] = moved
    try:
        with callables_from("class_facts_moved"):
            frozen = canon.encode(module.Node("a"))
        assert "class_facts_moved:Node" in str(frozen)
        assert "class_facts_probe:Node" not in str(frozen)
    finally:
        sys.modules.pop("class_facts_moved", None)


def test_a_class_outside_the_project_again_freezes_as_before_it_was_the_projects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another library's class freezes as a node of a graph; inside a block that makes its
    module the project's it freezes as ``$obj``; after the block it freezes as it did
    before, whatever the encoder decided for it inside."""
    write_files(tmp_path, {f"{MODULE}.py": SOURCE})
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(MODULE, None)
    try:
        node = importlib.import_module(MODULE).Node("a")
        before = canon.encode(node)
        with callables_from(MODULE):
            inside = canon.encode(node)
        after = canon.encode(node)
    finally:
        sys.modules.pop(MODULE, None)
    assert "$obj" in str(inside)
    assert "$obj" not in str(before)
    assert after == before
