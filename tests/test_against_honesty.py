"""``replay --against REV`` counts only the inputs it compared, names the ones it could
not compare and why, is not green when those are all it has, and runs at a revision that
lacks a generated file git ignores (it copies the working tree's in, and says so)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import GitRepo, run_cli

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


CONFIG = """
[[ledger]]
name = "cells"
target = "refs.cells:parse_cell"
driver = "refs.drive:main"
"""

DRIVER = """
from refs.cells import parse_cell


def main():
    for raw in ["abc", "x", "ok"]:
        parse_cell(raw)
"""

UNFREEZABLE = """
import threading


def parse_cell(raw):
    if raw == "ok" and KEEP_OK:
        return "OK"
    return threading.Semaphore()  # no case can hold a semaphore
"""

TODAY = """
def parse_cell(raw):
    return raw.upper()
"""


def _repo(tmp_path: Path, keep_ok: bool) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.commit(
        "a version whose outcomes cannot be frozen",
        {
            "lockstep.toml": CONFIG,
            "refs/__init__.py": "",
            "refs/cells.py": f"KEEP_OK = {keep_ok}\n" + UNFREEZABLE,
            "refs/drive.py": DRIVER,
            ".gitignore": "__pycache__/\n",
        },
    )
    repo.commit("today's version", {"refs/cells.py": TODAY})
    record = run_cli("record", "cells", cwd=repo.root)
    assert record.code == 0, record.output
    repo.commit("freeze")
    return repo


def test_inputs_rev_cannot_freeze_are_named_and_not_counted(tmp_path: Path) -> None:
    repo = _repo(tmp_path, keep_ok=True)
    result = run_cli("replay", "--against", "HEAD~2", "--generate", "0", cwd=repo.root)
    assert result.code == 0, result.output
    assert "1 input(s) compared (1 recorded, 0 generated), 2 not compared" in result.stdout
    assert "cells: 2 input(s) not compared: their outcome at HEAD~2 could not be frozen" in (
        result.stdout
    )
    assert "parse_cell('abc'): " in result.stdout and "parse_cell('x'): " in result.stdout
    assert "no difference" in result.stdout


def test_a_run_that_could_compare_nothing_is_not_green(tmp_path: Path) -> None:
    repo = _repo(tmp_path, keep_ok=False)
    result = run_cli("replay", "--against", "HEAD~2", "--generate", "0", cwd=repo.root)
    assert result.code == 1, result.output
    assert "0 input(s) compared" in result.stdout and "3 not compared" in result.stdout
    assert "nothing compared, so nothing is proven" in result.stdout
    assert "no difference" not in result.stdout


def test_a_generated_file_git_ignores_is_copied_into_the_revision(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit(
        "a package whose version module is generated at install time",
        {
            "lockstep.toml": CONFIG,
            "refs/__init__.py": "from refs.version import VERSION\n",
            "refs/cells.py": TODAY,
            "refs/drive.py": DRIVER,
            ".gitignore": "__pycache__/\nrefs/version.py\n",
        },
    )
    (repo.root / "refs/version.py").write_text("VERSION = '1.0'\n", encoding="utf-8")
    assert run_cli("record", "cells", cwd=repo.root).code == 0
    repo.commit("freeze")
    result = run_cli("replay", "--against", "HEAD~1", "--generate", "0", cwd=repo.root)
    assert result.code == 0, result.output
    assert (
        "copied 1 file(s) git ignores from the working tree into the worktree of HEAD~1, "
        "which lacks them (generated, never committed): refs/version.py"
    ) in result.stdout
    assert "3 input(s) compared (3 recorded, 0 generated), no difference" in result.stdout


def test_a_method_whose_self_is_an_object_of_the_project_compares(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit(
        "a method target",
        {
            "lockstep.toml": (
                '[[ledger]]\nname = "show"\ntarget = "refs.money:Money.show"\n'
                'driver = "refs.drive:main"\n'
            ),
            "refs/__init__.py": "",
            "refs/money.py": (
                "class Money:\n"
                "    def __init__(self, cents):\n        self.cents = cents\n\n"
                "    def show(self):\n        return f'{self.cents / 100:.2f} EUR'\n"
            ),
            "refs/drive.py": (
                "from refs.money import Money\n\n\ndef main():\n"
                "    for cents in (0, 150, 99999):\n        Money(cents).show()\n"
            ),
            ".gitignore": "__pycache__/\n",
        },
    )
    assert run_cli("record", "show", cwd=repo.root).code == 0
    repo.commit("freeze")
    money = repo.root / "refs/money.py"
    money.write_text(money.read_text().replace(":.2f} EUR", ":.1f} EUR"))
    result = run_cli("replay", "--against", "HEAD", "--generate", "0", cwd=repo.root)
    assert result.code == 1, result.output
    assert "3 input(s) compared (3 recorded, 0 generated)" in result.stdout
    assert "the versions differ" in result.stdout
