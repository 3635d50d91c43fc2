"""An object held twice whose form points back at an object around it is written once too.

Python-Markdown's ``Markdown`` keeps its inline patterns in a registry, and its inline
tree processor keeps the same registry; every pattern points back at the ``Markdown``.
Such a form holds ``{"$ref": n}`` numbered from its own place, so it was frozen again at
each place and thawed as two registries: ``convert`` sorted the one its processor held,
the copy kept at ``md.inlinePatterns`` stayed unsorted, and 408 rows under its suite were
refused as varying.  Now it is written once, where it was frozen, and ``{"$same": n}`` at
its other places."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers import GitRepo, recorded, red_after_change, run_cli
from lockstep import canon
from lockstep.canon import objects, shared


class Pattern:
    def __init__(self, doc: Any, name: str) -> None:
        self.doc = doc
        self.name = name


class Registry:
    def __init__(self) -> None:
        self.items: list[Pattern] = []
        self.is_sorted = False


class Processor:
    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self.registry = doc.a_registry


class Doc:
    def __init__(self, first: str = "a_registry") -> None:
        registry = Registry()
        if first == "a_registry":
            self.a_registry = registry
            self.b_proc = Processor(self)
        else:  # frozen first inside the processor, written first at the doc's own key
            self.a_registry = registry
            del self.a_registry
            self.b_proc = Processor.__new__(Processor)
            self.b_proc.doc = self
            self.b_proc.registry = registry
            self.a_registry = registry
        registry.items = [Pattern(self, "emphasis"), Pattern(self, "link")]


@pytest.fixture(autouse=True)
def _own_classes() -> None:
    canon.allow_callables_from(__name__)


def _old_tree(value: Any) -> Any:
    """The form without back-referring objects written once (as lockstep wrote it before)."""
    objects._ACTIVE_OBJECTS.no_outward = True
    try:
        return canon.encode(value)
    finally:
        objects._ACTIVE_OBJECTS.no_outward = False


def test_a_registry_held_twice_pointing_back_thaws_shared() -> None:
    doc = Doc()
    frozen = canon.encode(doc)
    state = frozen["$obj"][1]["state"]
    assert state["b_proc"]["$obj"][1]["state"]["registry"] == {"$same": 1}
    assert '"$ref"' in canon.dumps(frozen).decode()
    thawed = canon.decode(frozen)
    assert thawed.b_proc.registry is thawed.a_registry
    assert thawed.a_registry.items[0].doc is thawed and thawed.b_proc.doc is thawed
    assert canon.encode(thawed) == frozen
    # the tree form a ledger recorded before holds: written out, they compare alike
    assert shared.unshared(frozen) == _old_tree(doc)
    assert canon.same_form(frozen, _old_tree(doc))


def test_one_met_again_before_the_place_it_was_frozen_at_is_frozen_in_full_again() -> None:
    doc = Doc(first="b_proc")
    frozen = canon.encode(doc)
    assert frozen == _old_tree(doc)  # the written order met the other place first
    thawed = canon.decode(frozen)
    assert thawed.a_registry.items[1].name == "link"
    assert thawed.b_proc.registry.items[0].doc is thawed


FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "marks"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/marks/__init__.py": (
        "class Pattern:\n"
        "    def __init__(self, md, name, tag):\n"
        "        self.md, self.name, self.tag = md, name, tag\n\n\n"
        "class Registry:\n"
        "    def __init__(self):\n"
        "        self.items = []\n"
        "        self.is_sorted = False\n\n"
        "    def ordered(self):\n"
        "        if not self.is_sorted:\n"
        "            self.items.sort(key=lambda p: p.name)\n"
        "            self.is_sorted = True\n"
        "        return self.items\n\n\n"
        "class Inline:\n"
        "    def __init__(self, md):\n"
        "        self.md = md\n"
        "        self.patterns = md.inline_patterns\n\n"
        "    def run(self, text):\n"
        "        for p in self.patterns.ordered():\n"
        "            text = text.replace(p.name, '<%s>' % p.tag)\n"
        "        return text\n\n\n"
        "class Markdown:\n"
        "    def __init__(self):\n"
        "        self.inline_patterns = Registry()\n"
        "        self.inline_patterns.items = [Pattern(self, 'em', 'i'), Pattern(self, 'b', 'strong')]\n"
        "        self.processor = Inline(self)\n\n"
        "    def convert(self, text):\n"
        "        return self.processor.run(text)\n"
    ),
    "tests/test_marks.py": (
        "from marks import Markdown\n\n\n"
        "def test_convert():\n"
        "    md = Markdown()\n"
        "    assert md.convert('em b') == '<i> <strong>'\n"
        "    assert md.convert('b') == '<strong>'\n"
    ),
}


def test_calls_on_a_document_with_a_registry_held_twice_record_and_replay(
    tmp_path: Path,
) -> None:
    repo = GitRepo(tmp_path / "project")
    run = recorded(repo.root, FILES)
    assert "refused (" not in run.stdout, run.output
    rows = (repo.root / "lockstep" / "marks.Markdown.convert.ledger.jsonl").read_text()
    assert '"$same"' in rows
    repo.commit("recorded")
    assert run_cli("replay", cwd=repo.root).code == 0
    red_after_change(repo.root, "src/marks/__init__.py", "'<%s>' % p.tag", "'[%s]' % p.tag")
