"""An ``xml.etree.ElementTree.Element`` freezes as its parts (``$element``) and thaws to an
element that writes the same document.

Python-Markdown keeps the tree it renders from: 838 of 840 ``Markdown.convert`` calls
under its suite were skipped ("cannot freeze a xml.etree.ElementTree.Element")."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers import GitRepo, recorded, red_after_change, run_cli
from lockstep import canon
from lockstep.errors import CanonError


def test_an_element_thaws_writing_the_same_document() -> None:
    root = ET.Element("div", {"b": "1", "a": "2"})
    root.text = "hi"
    para = ET.SubElement(root, "p")
    para.text, para.tail = "x", "\n"
    root.append(ET.Comment("note"))
    root.append(ET.ProcessingInstruction("php", "echo 1;"))
    frozen = canon.encode(root)
    assert frozen["$element"][:4] == ["div", [["b", "1"], ["a", "2"]], "hi", None]
    thawed = canon.decode(frozen)
    assert ET.tostring(thawed) == ET.tostring(root)  # attributes in the order they were set
    assert canon.encode(thawed) == frozen
    other = ET.Element("div", {"a": "2", "b": "1"})
    assert canon.encode(other) != canon.encode(ET.Element("div", {"b": "1", "a": "2"}))


@pytest.mark.parametrize(
    "payload",
    [
        [1, [], None, None, []],
        [["os.system"], [], None, None, []],
        ["p", {"a": 1}, None, None, []],
        ["p", [["a"]], None, None, []],
        ["p", [], None, None, [1]],
        ["p", [], None, None],
    ],
)
def test_a_malformed_element_is_refused(payload: object) -> None:
    with pytest.raises(CanonError):
        canon.decode({"$element": payload})


FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "pages"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/pages/__init__.py": (
        "import xml.etree.ElementTree as ET\n\n\n"
        "class Page:\n"
        "    def __init__(self):\n"
        "        self.root = ET.Element('div')\n\n"
        "    def add(self, text):\n"
        "        item = ET.SubElement(self.root, 'p', {'class': 'item'})\n"
        "        item.text = text.strip()\n"
        "        return ET.tostring(self.root, encoding='unicode')\n"
    ),
    "tests/test_pages.py": (
        "from pages import Page\n\n\n"
        "def test_add():\n"
        "    page = Page()\n"
        "    page.add(' a ')\n"
        "    assert page.add('b') == '<div><p class=\"item\">a</p><p class=\"item\">b</p></div>'\n"
    ),
}


def test_calls_on_an_object_holding_a_tree_record_and_replay(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    run = recorded(repo.root, FILES)
    assert "no call skipped" in run.stdout and "refused (" not in run.stdout, run.output
    repo.commit("recorded")
    assert run_cli("replay", cwd=repo.root).code == 0
    red_after_change(repo.root, "src/pages/__init__.py", "text.strip()", "text")
