"""Trees of dict subclasses whose children point back at their parent thaw as they froze.

configobj's ``Section`` is a ``dict`` whose child sections keep ``parent`` (and ``main``),
and it pickles through a ``__reduce__`` naming its own ``__newobj__`` with the state
``(dict(self), self.__dict__)``.  lockstep froze such a tree with ``{"$ref": n}`` for a
child's parent, written while the parent's items were open, but thawed the items before
it made the parent, so the reference named nothing; and it passed over the reduction,
handing the class's ``__setstate__`` a ``__dict__`` it cannot read.  221 of configobj's 262
rows were refused as varying, and a drift of the others read as a corrupt ledger.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import project_module
from lockstep import canon

TREES = """
def __newobj__(cls, *args):
    return cls.__new__(cls, *args)


class Node(dict):
    def __init__(self, parent=None):
        dict.__init__(self)
        self.parent = parent


class Section(dict):
    def __init__(self, parent, name):
        dict.__init__(self)
        self.parent = parent
        self.main = parent.main if parent is not None else self
        self.name = name

    def __setstate__(self, state):
        dict.update(self, state[0])
        self.__dict__.update(state[1])

    def __reduce__(self):
        return (__newobj__, (self.__class__,), (dict(self), self.__dict__))
"""


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    with project_module(tmp_path_factory.mktemp("trees"), "parenttrees", TREES) as module:
        yield module


def _round_trip(value: Any) -> Any:
    form = canon.encode(value)
    back = canon.decode(form)
    assert canon.encode(back) == form
    return back


def test_a_child_pointing_at_its_parent_thaws_to_it(trees: ModuleType) -> None:
    root = trees.Node()
    root["kid"] = trees.Node(root)
    root["kid"]["leaf"] = trees.Node(root["kid"])
    back = _round_trip(root)
    assert type(back) is trees.Node and back == root
    assert back["kid"].parent is back and back["kid"]["leaf"].parent is back["kid"]


def test_a_section_reduced_through_its_own_newobj_thaws(trees: ModuleType) -> None:
    main = trees.Section(None, "main")
    main["a"] = "1"
    main["s"] = trees.Section(main, "s")
    main["s"]["b"] = "2"
    back = _round_trip(main)
    assert back == main and back.name == "main" and back.main is back
    assert back["s"].parent is back and back["s"].main is back and back["s"].name == "s"


@settings(max_examples=40, deadline=None)
@given(st.recursive(st.just("leaf"), lambda kids: st.dictionaries(st.text(max_size=3), kids)))
def test_any_tree_of_nodes_thaws_with_its_parents(trees: ModuleType, shape: Any) -> None:
    def build(node_shape: Any, parent: Any) -> Any:
        if not isinstance(node_shape, dict):
            return node_shape
        node = trees.Node(parent)
        for key, child in node_shape.items():
            node[key] = build(child, node)
        return node

    def parents_hold(node: Any, parent: Any) -> None:
        if isinstance(node, trees.Node):
            assert node.parent is parent
            for child in node.values():
                parents_hold(child, node)

    root = build(shape, None)
    back = _round_trip(root)
    assert back == root
    parents_hold(back, None)
