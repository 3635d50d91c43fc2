"""Two configured package surfaces, one holding the other's class: jsonpatch's objects keep
``pointer_cls = jsonpointer.JsonPointer``, and ``apply_patch(..., pointer_cls=JsonPointer)``
names it as a default.

Recording under the suite allowed both packages' classes and functions by name; replay
allowed only the ledger's own, so unchanged code replayed red ("'pointer_cls' changed its
default", and every row whose object held the class).  Now replay allows what the
configuration names, and a signature's defaults freeze with the target's own package
only, in every process."""

from __future__ import annotations

from pathlib import Path

from helpers import GitRepo, pytest_in, recorded, red_after_change, run_cli

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "patching"\n\n[[ledger]]\npackage = "pointers"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/pointers/__init__.py": (
        "class Pointer:\n"
        "    def __init__(self, path):\n"
        '        self.parts = [p for p in path.split("/") if p]\n\n'
        "    def resolve(self, doc):\n"
        "        for part in self.parts:\n"
        "            doc = doc[int(part)] if isinstance(doc, list) else doc[part]\n"
        "        return doc\n"
    ),
    "src/patching/__init__.py": (
        "from pointers import Pointer\n\n\n"
        "class Patch:\n"
        "    def __init__(self, ops, pointer_cls=Pointer):\n"
        "        self.ops = ops\n"
        "        self.pointer_cls = pointer_cls\n\n"
        "    def values(self, doc):\n"
        '        return [self.pointer_cls(op["path"]).resolve(doc) for op in self.ops]\n\n\n'
        "def first(doc, path, pointer_cls=Pointer):\n"
        "    return pointer_cls(path).resolve(doc)\n"
    ),
    "tests/test_patching.py": (
        "from patching import Patch, first\n\n\n"
        "def test_values():\n"
        '    patch = Patch([{"path": "/a/0"}, {"path": "/b"}])\n'
        '    assert patch.values({"a": [7], "b": 2}) == [7, 2]\n\n\n'
        "def test_first():\n"
        '    assert first({"a": {"b": 3}}, "/a/b") == 3\n'
    ),
}


def test_a_class_of_another_configured_package_replays_green(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    run = recorded(repo.root, FILES)
    assert "no call skipped" in run.stdout and "refused (" not in run.stdout, run.output
    repo.commit("recorded")
    rows = (repo.root / "lockstep" / "patching.Patch.values.ledger.jsonl").read_text()
    assert '"$fn":"pointers:Pointer"' in rows.replace(" ", "")  # the object, frozen whole
    green = run_cli("replay", cwd=repo.root)
    assert green.code == 0, green.output
    items = pytest_in(repo.root, "--lockstep", "-q", "-p", "no:randomly")
    assert items.code == 0, items.output
    red_after_change(
        repo.root, "src/pointers/__init__.py", "if p]", "if p][:1]", "patching.Patch.values"
    )
