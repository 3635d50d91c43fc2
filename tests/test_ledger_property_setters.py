"""A property's setter is a member beyond the surface: ``obj.prop = value`` is recorded.

netaddr's ``IPNetwork.netmask`` setter checks the value's version; a one-line change there
failed its suite (a doctest assigns ``ip.netmask = '255.0.0.0'``) and replayed green: a
setter, written ``@prop.setter``, was no member at all.  It is now recorded where the tests
assign the property from outside the package, as ``pkg.mod:Class.prop.fset``: the object
before, the value, and the object after (or what it raised).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers import project_module, recorded, rows_of, run_cli
from lockstep.oracles.ledger.wrapping import Installation

ADDR = """
class Network:
    def __init__(self, text):
        base, _, bits = text.partition("/")
        self._base = base
        self.prefix = int(bits or 32)  # the package's own assignment: part of __init__'s row

    @property
    def prefix(self):
        return self._bits

    @prefix.setter
    def prefix(self, value):
        if not 0 <= value <= 32:
            raise ValueError(f"bad prefix: {value}")
        self._bits = value

    def __str__(self):
        return f"{self._base}/{self._bits}"
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "net"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/net/__init__.py": "",
    "src/net/addr.py": ADDR,
    "tests/test_addr.py": (
        "import pytest\n\nfrom net.addr import Network\n\n\n"
        "def test_prefix():\n"
        "    n = Network('10.0.0.0/8')\n"
        "    n.prefix = 16\n"
        "    assert str(n) == '10.0.0.0/16'\n"
        "    with pytest.raises(ValueError):\n"
        "        n.prefix = 40\n"
        "    n.prefix = 32\n"
        "    assert n.prefix == 32\n"
    ),
}

SETTER = "lockstep/net.addr.Network.prefix.fset.ledger.jsonl"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("setters") / "project"
    recorded(root, FILES)
    return root


def test_assignments_from_outside_are_rows(project: Path) -> None:
    rows = rows_of(project / SETTER)
    assert sorted((row.args[1], row.ok) for row in rows) == [(16, True), (32, True), (40, False)]
    assert all(row.fn == "net.addr:Network.prefix.fset" for row in rows)
    ok = next(row for row in rows if row.args[1] == 16)
    assert ok.result is None and ok.mutated is not None  # the object after the assignment
    listed = (project / "lockstep/beyond-surface.json").read_text()
    assert "net.addr.Network.prefix.fset" in listed
    assert run_cli("replay", cwd=project).code == 0


def test_a_changed_setter_drifts(project: Path, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "project"
    shutil.copytree(project, root)
    source = root / "src/net/addr.py"
    source.write_text(source.read_text().replace("<= value <= 32", "<= value < 32"))
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "DRIFT net.addr.Network.prefix.fset::" in red.stdout
    assert "raised ValueError: bad prefix: 32" in red.stdout


def test_the_getter_and_setter_wrapped_together_come_back_as_they_were(tmp_path: Path) -> None:
    with project_module(tmp_path, "netmod", ADDR) as module:
        original = vars(module.Network)["prefix"]
        installation = Installation()
        getter = installation.wrap("netmod:Network.prefix", tmp_path, where="t")
        setter = installation.wrap("netmod:Network.prefix.fset", tmp_path, where="t")
        n = module.Network("10.0.0.0/8")  # no surface given: its own assignment is a row too
        n.prefix = 24
        assert n.prefix == 24
        assert getter.recorder.calls == 1 and setter.recorder.calls == 2
        installation.undo()
        assert vars(module.Network)["prefix"] is original
        assert sys.modules["netmod"] is module
