"""What changes an object in place (``b[k] = v``, ``del b[k]``, ``b |= other``) is on
its class's surface: the row holds the object before and after the call."""

from __future__ import annotations

from pathlib import Path

from helpers import GitRepo, recorded, red_after_change, rows_of, run_cli

PAIRS = """
class Pairs:
    def __init__(self):
        self.fwd = {}
        self.inv = {}

    def __setitem__(self, key, value):
        self.fwd[key] = value
        self.inv[value] = key

    def __delitem__(self, key):
        del self.inv[self.fwd.pop(key)]

    def __ior__(self, other):
        for key, value in other.fwd.items():
            self[key] = value
        return self
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "pairs"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/pairs/__init__.py": "from pairs.core import Pairs\n",
    "src/pairs/core.py": PAIRS,
    "tests/test_pairs.py": (
        "from pairs import Pairs\n\n\n"
        "def test_pairs():\n"
        "    p = Pairs()\n"
        "    p['a'] = 1\n"
        "    p['b'] = 2\n"
        "    del p['a']\n"
        "    q = Pairs()\n"
        "    q['c'] = 3\n"
        "    p |= q\n"
        "    assert p.inv == {2: 'b', 3: 'c'}\n"
    ),
}


def test_item_assignment_deletion_and_in_place_or_are_recorded(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    recorded(repo.root, FILES)
    repo.commit("pairs, recorded")
    root = repo.root / "lockstep"
    setitem = rows_of(root / "pairs.core.Pairs.__setitem__.ledger.jsonl")
    assert len(setitem) == 3 and all(r.mutated for r in setitem)  # p['a'], p['b'], q['c']
    assert len(rows_of(root / "pairs.core.Pairs.__delitem__.ledger.jsonl")) == 1
    assert len(rows_of(root / "pairs.core.Pairs.__ior__.ledger.jsonl")) == 1
    assert run_cli("replay", cwd=repo.root).code == 0
    red = red_after_change(
        repo.root, "src/pairs/core.py", "self.inv[value] = key", "self.inv[key] = value"
    )
    assert "Pairs.__setitem__" in red.stdout


BAG = """
class Bag(dict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value

    def __delattr__(self, name):
        del self[name]

    def __dir__(self):
        return sorted(self)


class Counts(dict):
    def __missing__(self, key):
        self[key] = 0
        return 0
"""

BAG_FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "bag"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/bag/__init__.py": BAG,
    "tests/test_bag.py": (
        "from bag import Bag, Counts\n\n\n"
        "def test_bag():\n"
        "    b = Bag()\n"
        "    b.size = 3\n"
        "    b.colour = 'red'\n"
        "    del b.size\n"
        "    assert dir(b) == ['colour']\n"
        "    c = Counts()\n"
        "    assert c['x'] == 0 and c == {'x': 0}\n"
    ),
}


def test_attribute_assignment_deletion_listing_and_missing_keys_are_recorded(
    tmp_path: Path,
) -> None:
    """An attribute-style container's ``b.x = v`` and ``del b.x`` (munch's ``Munch``), its
    ``dir(b)``, and a dict subclass's ``__missing__``: each a member, each row holding
    the object before and after."""
    repo = GitRepo(tmp_path / "project")
    recorded(repo.root, BAG_FILES)
    repo.commit("bag, recorded")
    root = repo.root / "lockstep"
    setattr_rows = rows_of(root / "bag.Bag.__setattr__.ledger.jsonl")
    assert len(setattr_rows) == 2 and all(r.mutated for r in setattr_rows)
    assert len(rows_of(root / "bag.Bag.__delattr__.ledger.jsonl")) == 1
    assert len(rows_of(root / "bag.Bag.__dir__.ledger.jsonl")) == 1
    assert len(rows_of(root / "bag.Counts.__missing__.ledger.jsonl")) == 1
    assert run_cli("replay", cwd=repo.root).code == 0
    red = red_after_change(repo.root, "src/bag/__init__.py", "self[name] = value", "self[name] = 0")
    assert "Bag.__setattr__" in red.stdout
    red = red_after_change(repo.root, "src/bag/__init__.py", "self[key] = 0", "self[key] = 1")
    assert "Counts.__missing__" in red.stdout
