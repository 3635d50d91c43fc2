"""A class that makes its objects in ``__new__`` has that constructor recorded where the
tests call it, as ``__init__`` is.

isoweek's ``Week`` is a named tuple whose ``__new__`` carries a week past the year's last
into the next year: a one-line change there replayed green, the suite red."""

from __future__ import annotations

from pathlib import Path

from helpers import GitRepo, pytest_in, recorded, red_after_change, run_cli

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "weeks"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/weeks/__init__.py": (
        "from collections import namedtuple\n\n\n"
        "class Week(namedtuple('Week', ('year', 'week'))):\n"
        "    def __new__(cls, year, week):\n"
        "        if week > 52:\n"
        "            year, week = year + 1, week - 52\n"
        "        return super().__new__(cls, year, week)\n\n"
        "    def label(self):\n"
        "        return '%04dW%02d' % self\n"
    ),
    "tests/test_weeks.py": (
        "import copy\n\nfrom weeks import Week\n\n\n"
        "def test_carry():\n"
        "    assert Week(2011, 53) == (2012, 1)\n"
        "    assert copy.copy(Week(2011, 2)).label() == '2011W02'\n"
    ),
}


def test_a_constructor_written_as_new_is_recorded_and_guards(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    run = recorded(repo.root, FILES)
    assert "refused (" not in run.stdout, run.output
    rows = (repo.root / "lockstep" / "weeks.Week.__new__.ledger.jsonl").read_text()
    assert '"args":[{"$fn":"weeks:Week"},2011,53]' in rows
    repo.commit("recorded")
    assert run_cli("replay", cwd=repo.root).code == 0
    assert pytest_in(repo.root, "--lockstep", "-q", "-p", "no:randomly").code == 0
    red_after_change(
        repo.root, "src/weeks/__init__.py", "week > 52", "week > 53", "weeks.Week.__new__"
    )
