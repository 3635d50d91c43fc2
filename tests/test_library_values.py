"""What a project's objects hold beyond its own classes: another library's plain objects (a
ring of nodes, as orderedmultidict's item list), a bare ``object()`` marker that library
keeps, a bound method kept as a callback, and a lambda that is a parameter's default.

Before, each made every call touching such an object a skipped call, so a gate recorded
from furl's suite saw almost none of it.  Here a project shaped like furl is recorded under
its suite, replays green unchanged, and goes red for a one-line change reached only through
those values; and the codec refuses every form that would name code or state it must not.
"""

from __future__ import annotations

import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import recorded, red_after_change, rows_of, run_cli
from lockstep import canon
from lockstep.canon import library_classes
from lockstep.canon.callables import callables_from
from lockstep.errors import CanonError

RINGLIB = """
_absent = object()


class node:
    def __init__(self, prev=None, next=None, key=_absent, value=_absent):
        self.prev, self.next, self.key, self.value = prev, next, key, value


class ring:
    \"\"\"A doubly linked ring of (key, value) nodes around a root node.\"\"\"

    def __init__(self, items=()):
        self.root = node()
        self.root.next = self.root.prev = self.root
        self.size = 0
        for key, value in items:
            self.append(key, value)

    def append(self, key, value):
        tail = self.root.prev
        item = node(tail, self.root, key, value)
        tail.next = item
        self.root.prev = item
        self.size += 1
        return item

    def __iter__(self):
        current = self.root.next
        while current is not self.root:
            yield current.key, current.value
            current = current.next


class indexed:
    # a ring and an index from each key to its nodes (orderedmultidict's shape)

    def __init__(self, items=(), order=None):
        self.items = ring()
        self.index = {}
        for key, value in items:
            self.index.setdefault(key, []).append(self.items.append(key, value))
        if order is not None:  # the same index, its keys inserted in another order
            self.index = {key: self.index[key] for key in order}
"""

URLKIT = """
from ringlib import ring


class UrlError(ValueError):
    pass


class Query:
    def __init__(self, text="", separator="&"):
        self.params = ring()
        self.separator = separator
        for part in filter(None, text.split(separator)):
            key, _, value = part.partition("=")
            self.params.append(key, value)

    def add(self, key, value):
        self.params.append(key, value)
        return self

    def encode(self):
        return self.separator.join(f"{k}={v}" for k, v in self.params)


class Path:
    def __init__(self, path="", force_absolute=lambda _: False):
        self.segments = [s for s in path.split("/") if s]
        self._force_absolute = force_absolute

    def render(self):
        lead = "/" if self._force_absolute(self) else ""
        return lead + "/".join(self.segments)


class Url:
    def __init__(self, host, path="", query=""):
        self.host = host
        self.path = Path(path, force_absolute=self._force_absolute)
        self.query = Query(query)

    def _force_absolute(self, path):
        return bool(self.host)

    def render(self):
        tail = "?" + self.query.encode() if self.query.params.size else ""
        return f"http://{self.host}{self.path.render()}{tail}"
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "urlkit"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/ringlib/__init__.py": RINGLIB,
    "src/urlkit/__init__.py": URLKIT,
    "tests/test_urlkit.py": (
        "from urlkit import Path, Query, Url\n\n\n"
        "def test_query():\n"
        "    q = Query('a=1&b=2')\n"
        "    assert q.add('c', '3').encode() == 'a=1&b=2&c=3'\n"
        "    assert Query('x=1;y=2', separator=';').encode() == 'x=1;y=2'\n\n\n"
        "def test_path():\n"
        "    assert Path('a/b/').render() == 'a/b'\n\n\n"
        "def test_url():\n"
        "    url = Url('example.com', 'a/b', 'q=1')\n"
        "    assert url.render() == 'http://example.com/a/b?q=1'\n"
        "    assert url.path.render() == '/a/b'\n"
    ),
}


def test_a_project_holding_library_objects_is_recorded_and_guarded(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "no call skipped" in run.output and "most skipped" not in run.output, run.output
    encode = rows_of(root / "lockstep/urlkit.Query.encode.ledger.jsonl")
    assert len(encode) == 2
    assert all('"ringlib:node"' in msgspec.json.encode(row.args[0]).decode() for row in encode)
    path_rows = rows_of(root / "lockstep/urlkit.Path.render.ledger.jsonl")
    frozen = [msgspec.json.encode(row.args[0]).decode() for row in path_rows]
    assert any('{"$default":["urlkit:Path.__init__","force_absolute"]}' in f for f in frozen)
    assert any('"$method"' in f and '"_force_absolute"' in f for f in frozen)
    assert any('{"$sentinel":"ringlib:_absent"}' in f for f in frozen)
    assert run_cli("replay", cwd=root).code == 0

    source = "src/urlkit/__init__.py"
    original = (root / source).read_text()
    # reached only through the ring's nodes: the value of each item
    red = red_after_change(root, source, 'f"{k}={v}"', 'f"{v}={k}"', "urlkit.Query.encode")
    assert "DRIFT urlkit.Query.encode" in red.stdout
    # reached only through the bound method the path keeps
    (root / source).write_text(original)
    red = red_after_change(root, source, "return bool(self.host)", "return not self.host")
    assert "DRIFT urlkit.Path.render" in red.stdout


@pytest.fixture
def libraries(tmp_path: Path) -> Iterator[types.ModuleType]:
    """``ringlib`` (another library) and ``urlkit`` (the project) imported from files, the
    project's callables allowed; both forgotten afterwards."""
    for name, text in (("ringlib", RINGLIB), ("urlkit", URLKIT)):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    sys.path.insert(0, str(tmp_path))
    try:
        import urlkit

        with callables_from("urlkit"):
            yield urlkit
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("ringlib", "urlkit"):
            sys.modules.pop(name, None)


def _ring_items(query: Any) -> list[tuple[Any, Any]]:
    return list(query.params)


def test_a_ring_with_its_marker_round_trips(libraries: types.ModuleType) -> None:
    query = libraries.Query("a=1&b=2&a=3")
    frozen = canon.dumps(query)
    back = canon.loads(frozen)
    assert type(back.params).__module__ == "ringlib"
    assert _ring_items(back) == [("a", "1"), ("b", "2"), ("a", "3")]
    assert back.params.root.key is sys.modules["ringlib"]._absent  # the very marker
    assert canon.dumps(back) == frozen
    assert back.encode() == "a=1&b=2&a=3"


def test_a_bound_method_and_a_default_lambda_round_trip(libraries: types.ModuleType) -> None:
    url = libraries.Url("example.com", "a/b")
    back = canon.loads(canon.dumps(url.path))
    assert back.render() == "/a/b"
    assert back._force_absolute.__self__.host == "example.com"
    plain = canon.loads(canon.dumps(libraries.Path("x")))
    assert plain._force_absolute is libraries.Path.__init__.__defaults__[1]


@settings(max_examples=40)
@given(
    st.lists(
        st.tuples(st.text(max_size=4), st.one_of(st.integers(), st.text(max_size=4))),
        max_size=12,
    )
)
def test_any_ring_thaws_to_equal_items_and_freezes_alike(items: list[tuple[str, Any]]) -> None:
    import ringlib_prop  # a library module of its own, for hypothesis (no fixture per example)

    built = ringlib_prop.ring(items)
    frozen = canon.dumps(built)
    back = canon.loads(frozen)
    assert list(back) == items
    assert canon.dumps(back) == frozen


@settings(max_examples=40)
@given(
    st.lists(st.tuples(st.sampled_from("abcde"), st.integers(0, 9)), max_size=10),
    st.randoms(use_true_random=False),
)
def test_an_index_into_a_ring_keeps_its_nodes_and_its_bytes_ignore_insertion_order(
    items: list[tuple[str, int]], random: Any
) -> None:
    import ringlib_prop

    keys = list(dict.fromkeys(key for key, _ in items))
    shuffled = random.sample(keys, len(keys))
    built = ringlib_prop.indexed(items)
    frozen = canon.dumps(built)
    assert canon.dumps(ringlib_prop.indexed(items, order=shuffled)) == frozen
    back = canon.loads(frozen)
    assert list(back.items) == items
    ring_nodes = []
    node = back.items.root.next
    while node is not back.items.root:
        ring_nodes.append(node)
        node = node.next
    for key, nodes in back.index.items():  # the very nodes of the ring, not copies
        assert all(any(n is r for r in ring_nodes) for n in nodes)
        assert [n.value for n in nodes] == [v for k, v in items if k == key]
    assert len(frozen) < 400 + 120 * len(items)  # each node once, not once per index entry


@pytest.fixture(autouse=True, scope="module")
def _ringlib_prop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    folder = tmp_path_factory.mktemp("prop")
    (folder / "ringlib_prop.py").write_text(textwrap.dedent(RINGLIB))
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("ringlib_prop", None)


@pytest.mark.parametrize(
    ("frozen", "message"),
    [
        ('{"$obj":["threading:Thread",{"state":{}}]}', "not a class of the project"),
        ('{"$obj":["subprocess:Popen",{"state":{}}]}', "not a class of the project"),
        ('{"$sentinel":"ringlib:ring"}', "which is not a marker"),
        ('{"$sentinel":"os:sep"}', "which is not a marker"),
        ('{"$method":[{"$graph":[{"$node":0},[["ringlib:ring",{}]]]},"nope"]}', "does not hold"),
        ('{"$method":[{"$graph":[{"$node":0},[["ringlib:ring",{}]]]},"size"]}', "does not hold"),
        ('{"$obj":["ringlib:ring",{"state":{}}]}', "not a class of the project"),
        ('{"$obj":["urlkit:UrlError",{"state":{}}]}', "an exception class: an exception is"),
        ('{"$graph":[{"$node":0},[["threading:Thread",{}]]]}', "not a plain class of another"),
        ('{"$graph":[{"$node":0},[["urlkit:Query",{}]]]}', "not a plain class of another"),
        ('{"$graph":[{"$node":1},[["ringlib:ring",{}]]]}', "names no node"),
        ('{"$node":0}', "names no node"),
        ('{"$graph":[{"$node":0},[["ringlib:ring",{"base":1}]]]}', 'an object of "state"'),
        ('{"$method":[{"$set":[]},"add"]}', "does not hold"),
        ('{"$default":["urlkit:Path.__init__","path"]}', "defaulting to a function"),
        ('{"$default":["os:walk","onerror"]}', "defaulting to a function"),
    ],
)
def test_forms_naming_what_they_must_not_are_refused(
    libraries: types.ModuleType, frozen: str, message: str
) -> None:
    with pytest.raises(CanonError) as info:
        canon.loads(frozen.encode())
    assert message in str(info.value)


def test_which_library_classes_freeze_unnamed() -> None:
    plain = types.new_class("plain")
    plain.__module__ = "somelib.values"
    finalized = types.new_class("finalized", (), exec_body=lambda ns: ns.update(__del__=print))
    finalized.__module__ = "somelib.values"
    stateful = types.new_class(
        "stateful", (), exec_body=lambda ns: ns.update(__setstate__=lambda s, x: None)
    )
    stateful.__module__ = "somelib.values"
    assert library_classes.library_plain(plain)
    assert not library_classes.library_plain(finalized)
    assert not library_classes.library_plain(stateful)
    import threading

    assert not library_classes.library_plain(threading.Thread)  # the standard library's
    assert not library_classes.library_plain(pytest.MonkeyPatch)  # the run's machinery
    helper = types.new_class("helper")
    helper.__module__ = "tests.test_things"  # a suite's own helper class
    assert not library_classes.library_plain(helper)
    # the refusal names the way out
    stateful.__qualname__ = "stateful"
    sys.modules.setdefault("somelib", types.ModuleType("somelib"))
    with pytest.raises(CanonError) as info:
        canon.dumps(stateful())
    assert "defines __setstate__" in str(info.value)
    assert "freeze_classes" in str(info.value)


def test_a_library_slot_that_is_a_property_is_not_set_by_thawing(tmp_path: Path) -> None:
    (tmp_path / "slotlib.py").write_text(
        "class point:\n    __slots__ = ('x',)\n\n"
        "class guarded:\n    @property\n    def x(self):\n        return 1\n"
        "    @x.setter\n    def x(self, value):\n        raise SystemExit('ran')\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        import slotlib

        p = slotlib.point()
        p.x = 3
        assert canon.loads(canon.dumps(p)).x == 3
        with pytest.raises(CanonError, match="does not fit it"):  # no __dict__ to fill
            canon.loads(b'{"$graph":[{"$node":0},[["slotlib:point",{"state":{"y":1}}]]]}')
        with pytest.raises(CanonError, match=r"not a slot of slotlib:guarded"):
            canon.loads(
                b'{"$graph":[{"$node":0},'
                b'[["slotlib:guarded",{"state":{"$tuple":[null,{"x":1}]}}]]]}'
            )
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("slotlib", None)
