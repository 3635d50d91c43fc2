"""A recorded member the package no longer has is red, never dropped from the replay.

A ``package`` ledger's oracles are its members as today's source has them.  A refactor
that renamed or removed a recorded method took its ledger out of ``lockstep replay``,
``lockstep status`` and ``pytest --lockstep`` without a word: hyperlink's ``URL.fromText``
renamed, its suite failed two tests, and the replay was green with 858 of 860 cases.  Its
file still in the oracle folder, each of its rows is now an error that names the member
and says to delete the file where the change is meant; nothing of it is called.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import pytest_in, recorded, run_cli

SHAPES = """
class Square:
    def __init__(self, side):
        self.side = _checked(side)

    def area(self):
        return self.side * self.side

    def scaled(self, by):
        return Square(self.side * by)


def _checked(side):
    if side < 0:
        raise ValueError(f"negative side: {side}")
    return side
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "shapes"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/shapes/__init__.py": "",
    "src/shapes/square.py": SHAPES,
    "tests/test_square.py": (
        "from shapes.square import Square, _checked\n\n\n"
        "def test_area():\n"
        "    assert Square(3).area() == 9\n"
        "    assert Square(2).scaled(3).area() == 36\n\n\n"
        "def test_checked():\n"
        "    assert _checked(5) == 5\n"
    ),
}

SCALED = "lockstep/shapes.square.Square.scaled.ledger.jsonl"
CHECKED = "lockstep/shapes.square._checked.ledger.jsonl"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("former") / "project"
    recorded(root, FILES)
    assert (root / SCALED).exists() and (root / CHECKED).exists()
    assert run_cli("replay", cwd=root).code == 0
    return root


def _changed(project: Path, tmp_path: Path, old: str, new: str) -> Path:
    root = tmp_path / "project"
    shutil.copytree(project, root)
    path = root / "src/shapes/square.py"
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))
    return root


def test_a_renamed_method_is_red_with_its_rows(project: Path, tmp_path: Path) -> None:
    root = _changed(project, tmp_path, "def scaled(self, by):", "def times(self, by):")
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "ERROR shapes.square.Square.scaled::" in red.stdout
    assert "package 'shapes' no longer has 'square.Square.scaled'" in red.stdout
    assert "delete that file" in red.stdout
    table = {line.split()[0]: line.split()[1:] for line in red.stdout.splitlines() if line}
    assert table["shapes.square.Square.area"][0] != "·"  # the others replayed as ever
    status = run_cli("status", cwd=root)
    assert "shapes.square.Square.scaled" in status.stdout
    assert "no longer a member" in status.stdout


def test_a_renamed_private_member_beyond_the_surface_is_red(project: Path, tmp_path: Path) -> None:
    root = _changed(project, tmp_path, "def _checked(side):", "def _valid(side):")
    (root / "src/shapes/square.py").write_text(
        (root / "src/shapes/square.py").read_text().replace("_checked(side)", "_valid(side)")
    )
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "no longer has 'square._checked'" in red.stdout


def test_deleting_the_ledger_accepts_the_removal(project: Path, tmp_path: Path) -> None:
    removed = "    def scaled(self, by):\n        return Square(self.side * by)\n"
    root = _changed(project, tmp_path, removed, "")
    (root / "tests/test_square.py").write_text(
        "from shapes.square import Square, _checked\n\n\n"
        "def test_area():\n    assert Square(3).area() == 9\n\n\n"
        "def test_checked():\n    assert _checked(5) == 5\n"
    )
    assert run_cli("replay", cwd=root).code == 1
    items = pytest_in(root, "--lockstep", "-q", "lockstep")
    assert items.code == 1 and "no longer has 'square.Square.scaled'" in items.output
    (root / SCALED).unlink()
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output


def test_a_planted_file_is_red_and_nothing_it_names_runs(project: Path, tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(project, root)
    header, *rows = (json.loads(line) for line in (root / SCALED).read_text().splitlines())
    header["fn"] = "os:system"
    for row in rows:
        row["fn"] = "os:system"
        row["args"] = ["touch RAN"]
    planted = root / "lockstep/shapes.square.evil.ledger.jsonl"
    planted.write_text("".join(json.dumps(x) + "\n" for x in (header, *rows)))
    red = run_cli("replay", cwd=root)
    assert red.code in (1, 2), red.output
    assert "shapes.square.evil" in red.output
    assert not (root / "RAN").exists()


def test_keeping_to_the_public_surface_makes_no_former_member(
    project: Path, tmp_path: Path
) -> None:
    """``private = false`` after a recording that wrote ledgers beyond the surface: their
    members are still the package's, only out of the surface now, and replay as before
    (they are no oracles then), never as members the package no longer has."""
    root = tmp_path / "project"
    shutil.copytree(project, root)
    (root / "lockstep.toml").write_text('[[ledger]]\npackage = "shapes"\nprivate = false\n')
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output
    assert "no longer has" not in green.output


def test_a_module_that_no_longer_parses_is_red_not_a_configuration_error(
    project: Path, tmp_path: Path
) -> None:
    """A one-line change that leaves a public module unparsable: the surface cannot be
    listed, and the gate is red (exit 1) with the file and line, as for a target that no
    longer imports; it is no configuration error (exit 2), and nothing is written."""
    root = _changed(project, tmp_path, "def area(self):", "def area(self,,):")
    before = {p.name: p.read_bytes() for p in (root / "lockstep").iterdir()}
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "src/shapes/square.py, line 5: invalid syntax" in red.stderr  # def area
    assert "module 'shapes.square' of package 'shapes' does not parse" in red.stderr
    assert len(red.stderr.strip().splitlines()) == 1
    assert run_cli("status", cwd=root).code == 1
    assert {p.name: p.read_bytes() for p in (root / "lockstep").iterdir()} == before


def test_a_private_module_no_member_imports_may_not_parse(project: Path, tmp_path: Path) -> None:
    """A private module is no part of the surface, and one no member imports changes no
    behaviour: the replay stays green."""
    root = tmp_path / "project"
    shutil.copytree(project, root)
    (root / "src/shapes/_unused.py").write_text("def broken(:\n")
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output
