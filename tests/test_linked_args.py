"""A row refused because two arguments held one object (frozen apart, it thaws as two)
names that as its cause, first."""

from __future__ import annotations

from pathlib import Path

from helpers import GitRepo, pytest_in, write_files

TREE = """
class Node:
    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent
        self.children = []
        if parent is not None:
            parent.children.append(self)

    def has_ancestor(self, other):
        node = self.parent
        while node is not None:
            if node is other:
                return True
            node = node.parent
        return False
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "tree"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/tree/__init__.py": "from tree.node import Node\n",
    "src/tree/node.py": TREE,
    "tests/test_tree.py": (
        "from tree import Node\n\n\n"
        "def test_ancestor():\n"
        "    root = Node('root')\n"
        "    leaf = Node('leaf', Node('branch', root))\n"
        "    assert leaf.has_ancestor(root)\n"
    ),
}


def test_a_refusal_names_two_arguments_holding_one_object(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    write_files(repo.root, FILES)
    run = pytest_in(repo.root, "--lockstep-record", "-q", "tests")
    assert run.code == 0, run.output
    refusal = next(line for line in run.output.splitlines() if "has_ancestor(" in line)
    assert "holds a tree.node.Node like args[" in refusal, run.output
    assert "(cause: args[" in run.output  # named first
