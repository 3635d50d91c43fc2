"""Reference cycles through the project's objects (a key that lists itself, a child that
points at its parent) freeze as ``{"$ref": n}`` and thaw to the same cycle; a class whose
own ``__reduce_ex__`` hands its own ``__setstate__`` a state freezes that state."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from helpers import pytest_in, rows_of, run_cli, write_files
from lockstep import canon
from lockstep.canon.text import value_text
from lockstep.errors import CanonError

TREE = """
class Key:
    def __init__(self, name):
        self.name = name
        self._keys = [self]  # a key that lists itself

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return isinstance(other, Key) and other.name == self.name


class Node:
    def __init__(self, name, parent=None):
        self.key = Key(name)
        self.parent = parent
        self.children = []
        if parent is not None:
            parent.children.append(self)


class Doc(dict):
    def __init__(self, body=None, flag=False):
        super().__init__()
        self._body = body or []
        self._flag = flag

    def __reduce_ex__(self, protocol):  # not pickle's __newobj__ form
        return self.__class__, (), (self._body, self._flag)

    def __setstate__(self, state):
        self._body, self._flag = state


def parse(text):
    root = Node("root")
    for name in text.split():
        Node(name, root)
    return root


def names(node):
    return [child.key.name for child in node.children]


def document(text):
    doc = Doc([(k, len(k)) for k in text.split()], flag=True)
    doc.update(doc._body)
    return doc


def render(doc):
    return ";".join(f"{k}={v}" for k, v in doc._body) + ("!" if doc._flag else "")
"""

TESTS = """
from tree import document, names, parse, render


def test_tree():
    root = parse("a b")
    assert root.children[0].parent is root
    assert names(root) == ["a", "b"]
    assert names(parse("x")) == ["x"]


def test_document():
    assert render(document("ab c")) == "ab=2;c=1!"
"""


def _project(root: Path) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "tree"\n',
            "src/tree/__init__.py": TREE,
            "tests/test_tree.py": TESTS,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        },
    )
    return root


def test_objects_in_a_cycle_record_replay_and_a_change_is_red(tmp_path: Path) -> None:
    root = _project(tmp_path)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert "SKIPPED" not in recorded.output and "refused 0;" in recorded.output
    parse_rows = rows_of(root / "lockstep/tree.parse.ledger.jsonl")
    assert len(parse_rows) == 2
    assert '{"$ref": 0}' in json.dumps(parse_rows[0].result)  # Key._keys and Node.parent
    assert len(rows_of(root / "lockstep/tree.names.ledger.jsonl")) == 2
    assert len(rows_of(root / "lockstep/tree.render.ledger.jsonl")) == 1
    for seed in ("1", "2"):
        green = run_cli("replay", cwd=root, env={"PYTHONHASHSEED": seed})
        assert green.code == 0, green.output

    source = root / "src/tree/__init__.py"
    original = source.read_text()
    for old, new in [
        ("self.parent = parent", "self.parent = None"),  # the cycle itself
        ('"!" if doc._flag', '"!" if not doc._flag'),  # the state __setstate__ restored
    ]:
        source.write_text(original.replace(old, new))
        red = run_cli("replay", cwd=root)
        assert red.code == 1, (old, red.output)
    source.write_text(original)


class Ring:
    def __init__(self, label: str) -> None:
        self.label = label
        self.next: Ring = self


def _ring(*labels: str) -> Ring:
    rings = [Ring(label) for label in labels]
    for a, b in zip(rings, rings[1:] + rings[:1], strict=True):
        a.next = b
    return rings[0]


@pytest.fixture(autouse=True)
def _this_module_is_the_project() -> Any:
    from lockstep.canon.callables import callables_from

    with callables_from(__name__):
        yield


@pytest.mark.parametrize("labels", [("a",), ("a", "b"), ("a", "b", "c")])
def test_a_cycle_thaws_to_the_same_cycle_and_freezes_alike(labels: tuple[str, ...]) -> None:
    ring = _ring(*labels)
    frozen = canon.encode([ring, ring])  # the same ring twice: each copy holds its cycle
    thawed = canon.decode(json.loads(json.dumps(frozen)))
    for start in thawed:
        node = start
        for label in labels:
            assert node.label == label
            node = node.next
        assert node is start
    assert canon.encode(thawed) == frozen
    assert "<cycle: the object" in value_text(frozen)


def test_a_changed_link_in_a_cycle_freezes_differently() -> None:
    ring = _ring("a", "b")
    before = canon.encode(ring)
    ring.next.next = ring.next  # b now points at itself
    assert canon.encode(ring) != before


@pytest.mark.parametrize(
    "payload",
    [
        {"$ref": 0},  # outside any object
        [{"$ref": 0}],
        {"$obj": [f"{__name__}:Ring", {"state": {"label": "a", "next": {"$ref": 1}}}]},
        {"$obj": [f"{__name__}:Ring", {"state": {"label": "a", "next": {"$ref": "0"}}}]},
        {"$obj": [f"{__name__}:Ring", {"state": {"label": "a", "next": {"$ref": -1}}}]},
    ],
)
def test_a_ref_that_names_no_enclosing_object_is_one_canon_error(payload: Any) -> None:
    with pytest.raises(CanonError, match=re.escape("malformed $ref value")):
        canon.decode(payload)


class Registry:
    """Handlers kept in ``__slots__`` (the fast encoder hands such an object to the slow
    one's ``freeze_object``), each keeping the application: markdown's shape."""

    __slots__ = ("items",)

    def __init__(self, items: list[Any]) -> None:
        self.items = items


class Handler:
    def __init__(self, app: Any, name: str) -> None:
        self.app = app
        self.name = name


class App:
    def __init__(self, registries: int = 8, handlers: int = 4) -> None:
        for r in range(registries):
            items = [Handler(self, f"h{r}.{h}") for h in range(handlers)]
            setattr(self, f"registry{r}", Registry(items))


def test_a_cycle_through_the_fast_encoders_object_is_frozen_once_not_per_attribute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each registry's handlers keep the application the fast encoder was inside.  The
    registries were frozen apart, none knowing the application was open around it, so each
    froze the whole application again down to the cycle: a ``markdown.Markdown`` took half
    a second per call.  Met inside itself, the application now ends the fast attempt, and
    the slow encoder freezes the value once, to the same frozen form."""
    from lockstep.canon import encoding, objects

    app = App()
    expected = encoding._slow_encode(app, False, "value")
    frozen_objects = 0
    real = objects._freeze_own

    def counting(*args: Any) -> Any:
        nonlocal frozen_objects
        frozen_objects += 1
        return real(*args)

    monkeypatch.setattr(objects, "_freeze_own", counting)
    assert canon.encode(app) == expected
    # the slow encoder's own walk: each object about once (here 1 + 8 + 32 objects)
    assert frozen_objects < 200, frozen_objects
    thawed = canon.decode(json.loads(json.dumps(expected)))
    assert thawed.registry3.items[2].app is thawed
    assert objects.fast_open() == []  # nothing left open after the fast attempt ended
