"""The project's objects held twice inside one object are written once (``{"$same": n}``
after) and thaw shared again; identity stays outside the contract.

A parsed document (tomlkit's ``Container``: a dict of its items that keeps the same
items again in a body list) froze as a tree, doubling at every level, and its thawed
copies did not change together the way the recorded object's parts did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import GitRepo, pytest_in, recorded, red_after_change, rows_of, run_cli
from lockstep import canon
from lockstep.canon.shared import unshared
from lockstep.canon.text import value_text
from lockstep.errors import CanonError


class Item:
    def __init__(self, name: str, value: Any) -> None:
        self.name = name
        self.value = value


class Doc(dict[str, Any]):
    """A dict of items that keeps the same items, in order, in ``body``."""

    def __init__(self) -> None:
        super().__init__()
        self.body: list[Item] = []

    def add(self, item: Item) -> None:
        self[item.name] = item
        self.body.append(item)


class Tag:
    """Hashable by value, so it may sit in a set and in a list at once."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __hash__(self) -> int:
        return len(self.text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tag) and other.text == self.text


@pytest.fixture(autouse=True)
def _own_classes() -> None:
    canon.allow_callables_from(__name__)


def _doc(values: list[int], nested: bool) -> Doc:
    doc = Doc()
    for i, value in enumerate(values):
        doc.add(Item(f"k{i}", value))
    if nested:
        inner = _doc(values[:2], False)
        doc.add(Item("inner", inner))
    return doc


def _copied(value: Any) -> Any:
    """``value`` with a new object at every place: nothing shared."""
    if isinstance(value, Doc):
        out = Doc()
        dict.update(out, {k: _copied(v) for k, v in value.items()})
        out.body = [_copied(i) for i in value.body]
        return out
    if isinstance(value, Item):
        return Item(value.name, _copied(value.value))
    if isinstance(value, list):
        return [_copied(x) for x in value]
    return value


def _places(value: Any, out: list[Any]) -> list[Any]:
    """Every object of the project inside ``value``, in one fixed walk."""
    if isinstance(value, Doc):
        out.append(value)
        for k in sorted(value):
            _places(dict.__getitem__(value, k), out)
        for item in value.body:
            _places(item, out)
    elif isinstance(value, Item):
        out.append(value)
        _places(value.value, out)
    elif isinstance(value, list):
        for x in value:
            _places(x, out)
    return out


def _identity(places: list[Any]) -> list[int]:
    """For each place, the first place holding the very same object."""
    return [next(j for j, q in enumerate(places) if q is p) for p in places]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(st.integers(-5, 5), min_size=1, max_size=5),
    nested=st.booleans(),
    twice=st.booleans(),
)
def test_a_shared_object_thaws_shared_and_equals_its_copies(
    values: list[int], nested: bool, twice: bool
) -> None:
    doc = _doc(values, nested)
    value: Any = [doc, doc] if twice else doc
    if twice:
        value = Item("pair", value)  # one object around both: one scope
    frozen = canon.encode(value)
    written = canon.canonical_json(frozen)
    assert b'"$same"' in written
    thawed = canon.loads(written)
    assert canon.dumps(thawed) == written  # the sharing came back, so the bytes do
    assert _identity(_places(thawed, [])) == _identity(_places(value, []))
    copies = _copied(value)
    assert b'"$same"' not in canon.dumps(copies)
    assert canon.canonical_json(unshared(frozen)) == canon.dumps(copies)
    assert canon.equal(value, copies) and canon.same_form(frozen, canon.encode(copies))
    assert value_text(frozen) == value_text(canon.encode(copies))


def test_a_form_is_written_at_its_first_place_in_the_written_order() -> None:
    item = Item("a", 1)
    holder = Item("holder", {"z": item, "b": [item]})  # met first under "z", written under "b"
    frozen = canon.encode(holder)
    state = frozen["$obj"][1]["state"]["value"]  # type: ignore[index,call-overload]
    assert "$obj" in state["b"][0] and state["z"] == {"$same": 1}
    reordered = Item("holder", {"b": [item], "z": item})
    assert canon.dumps(reordered) == canon.canonical_json(frozen)  # insertion order is not kept


def test_an_object_in_a_set_keeps_its_full_form_there() -> None:
    tag = Tag("x")
    holder = Item("tags", [tag, frozenset({tag}), tag])
    written = canon.dumps(holder)
    frozen = json.loads(written)
    parts = frozen["$obj"][1]["state"]["value"]
    assert "$obj" in parts[0] and parts[2] == {"$same": 1}
    assert "$obj" in parts[1]["$frozenset"][0]  # no place in the written order: in full
    thawed = canon.loads(written)
    assert thawed.value[0] is thawed.value[2]
    assert canon.dumps(thawed) == written


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"$same": 0}, "not inside an object of the project"),
        ([1, {"$same": 0}], "not inside an object of the project"),
        (
            {"$obj": [f"{__name__}:Item", {"state": {"name": "a", "value": {"$same": 3}}}]},
            "names no object written before it",
        ),
        (
            {"$obj": [f"{__name__}:Item", {"state": {"name": "a", "value": {"$same": "0"}}}]},
            "names no object written before it",
        ),
        (
            {"$obj": [f"{__name__}:Item", {"state": {"name": "a", "value": {"$same": -1}}}]},
            "names no object written before it",
        ),
    ],
)
def test_a_same_that_names_nothing_is_a_one_line_error(value: Any, message: str) -> None:
    with pytest.raises(CanonError, match=message) as caught:
        canon.loads(json.dumps(value))
    assert "\n" not in str(caught.value)


def test_a_same_naming_an_object_around_it_thaws_to_that_object_not_a_loop() -> None:
    looped = {"$obj": [f"{__name__}:Item", {"state": {"name": "a", "value": {"$same": 0}}}]}
    thawed = canon.loads(json.dumps(looped))
    assert thawed.value is thawed
    assert "…" not in value_text(looped)  # text that cannot read it says so, never loops
    with_base = {"$obj": [f"{__name__}:Doc", {"base": {"k": {"$same": 0}}, "state": {"body": []}}]}
    with pytest.raises(CanonError, match="names an object that holds it"):
        canon.loads(json.dumps(with_base))


# -- a package recorded under its suite -----------------------------------------------

DOCS = """
class Item:
    def __init__(self, name, value):
        self.name = name
        self.value = value


class Doc(dict):
    def __init__(self):
        super().__init__()
        self.body = []

    def add(self, name, value):
        item = Item(name, value)
        self[name] = item
        self.body.append(item)
        return self

    def bump(self, name):
        for item in self.body:
            if item.name == name:
                item.value += 1
        return self[name].value

    def render(self):
        return ";".join(f"{i.name}={i.value}" for i in self.body)


def parse(text):
    doc = Doc()
    for part in text.split(";"):
        name, _, value = part.partition("=")
        doc.add(name, int(value))
    return doc
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "docs"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/docs/__init__.py": "from docs.doc import Doc, parse\n",
    "src/docs/doc.py": DOCS,
    "tests/test_doc.py": (
        "from docs import parse\n\n\n"
        "def test_bump():\n"
        "    doc = parse('a=1;b=2')\n"
        "    assert doc.bump('a') == 2\n"
        "    assert doc.render() == 'a=2;b=2'\n\n\n"
        "def test_nested():\n"
        "    doc = parse('x=5')\n"
        "    doc.add('inner', parse('y=1;z=2'))\n"
        "    assert doc.bump('x') == 6\n"
    ),
}

BUMP = "lockstep/docs.doc.Doc.bump.ledger.jsonl"


def test_a_document_method_that_changes_shared_parts_records_and_replays(
    tmp_path: Path,
) -> None:
    repo = GitRepo(tmp_path / "project")
    run = recorded(repo.root, FILES)
    assert "refused" not in run.stdout.replace("refused 0", ""), run.output
    repo.commit("docs, recorded")
    root = repo.root
    header = json.loads((root / BUMP).read_text().splitlines()[0])
    assert header["lockstep_ledger"] == 6
    rows = rows_of(root / BUMP)
    assert len(rows) == 2 and all(b'"$same"' in canon.canonical_json(r.args) for r in rows)
    assert run_cli("replay", cwd=root).code == 0
    red = red_after_change(
        root, "src/docs/doc.py", "item.value += 1", "item.value += 2", "docs.doc.Doc.bump"
    )
    assert "Doc.bump" in red.stdout


def test_a_ledger_written_before_in_full_forms_replays_green(tmp_path: Path) -> None:
    """A ledger an older lockstep wrote repeats each shared object in full: today's
    values, written once, are the same values."""
    from lockstep.oracles.ledger.file import write_rows
    from lockstep.oracles.ledger.format import LedgerRow, input_key, row_id
    from lockstep.oracles.ledger.kind import read_header

    repo = GitRepo(tmp_path / "project")
    recorded(repo.root, FILES)
    path = repo.root / "lockstep/docs.doc.parse.ledger.jsonl"
    assert '"$same"' in path.read_text()  # each result's items, in the dict and the body
    header = read_header(path)
    old: list[LedgerRow] = []
    for r in rows_of(path):
        fields = {f: getattr(r, f) for f in r.__struct_fields__}
        fields["args"] = unshared(r.args)
        fields["mutated"] = unshared(r.mutated)
        fields["result"] = unshared(r.result)
        fields["id"] = row_id(input_key(fields["args"], r.kwargs, r.clock, r.on))
        old.append(LedgerRow(**fields))
    write_rows(path, header.fn, header.signature, header.stem_length, old)
    text = path.read_text()
    assert '"$same"' not in text and json.loads(text.splitlines()[0])["lockstep_ledger"] == 2
    result = run_cli("replay", cwd=repo.root)
    assert result.code == 0, result.output
    assert pytest_in(repo.root, "--lockstep", "-q", "tests").code == 0


def _layers(depth: int, leaf: int) -> Item:
    """An object holding the one below it twice, ``depth`` levels deep: frozen, each
    level's second place is ``{"$same": n}``; written out, ``2 ** depth`` leaves."""
    part = Item("leaf", leaf)
    for level in range(depth):
        part = Item(f"level{level}", [part, part])
    return part


def test_forms_sharing_parts_at_every_level_compare_without_being_written_out() -> None:
    """marshmallow's nested schemas share parts at every level: their forms were written
    out in full to be compared, 86 s for one test file.  Twenty-four levels written out
    are sixteen million leaves; compared as graphs, they take no time, and a change at
    the bottom still shows."""
    deep = canon.encode(_layers(24, 1))
    assert b'"$same"' in canon.canonical_json(deep)
    # the top level's two places hold two equal objects, not one: other bytes, same value
    copied_top = canon.encode(Item("level23", [_layers(23, 1), _layers(23, 1)]))
    assert canon.canonical_json(copied_top) != canon.canonical_json(deep)
    assert canon.same_form(deep, copied_top)
    assert not canon.same_form(deep, canon.encode(_layers(24, 2)))
    assert not canon.same_form(copied_top, canon.encode(_layers(24, 2)))
    # the same value with nothing shared (a ledger recorded before, or a refactor that
    # copies where the code shared) is still the same value, at a size that can be written
    small, copies = _layers(8, 1), _copied(_layers(8, 1))
    assert canon.same_form(canon.encode(small), canon.encode(copies))
    assert not canon.same_form(canon.encode(small), canon.encode(_copied(_layers(8, 3))))


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, -0.0, 1.0, 1.5]),
    st.sampled_from(["", "a", "1", "true"]),
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "$x"]), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(a=_json, b=_json)
def test_comparing_forms_as_graphs_agrees_with_their_canonical_bytes(a: Any, b: Any) -> None:
    from lockstep.canon.shared import same_unshared

    assert same_unshared(a, b) == (canon.canonical_json(a) == canon.canonical_json(b))
    assert same_unshared(a, a)
