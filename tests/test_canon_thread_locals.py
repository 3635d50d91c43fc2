"""A ``threading.local`` freezes as what the running thread sees of it (``$local``).

parsedatetime's ``Calendar`` keeps its context stack in one: every calendar call under its
suite was skipped (85% of its calls), and one-line changes were caught 1 of 10 times."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from helpers import GitRepo, recorded, red_after_change, run_cli
from lockstep import canon
from lockstep.errors import CanonError


def test_a_thread_local_thaws_holding_its_attributes() -> None:
    held = threading.local()
    held.stack = [1, (2, 3)]
    frozen = canon.encode(held)
    assert frozen == {"$local": {"stack": [1, {"$tuple": [2, 3]}]}}
    thawed = canon.decode(frozen)
    assert type(thawed) is threading.local and thawed.stack == [1, (2, 3)]
    assert canon.encode(threading.local()) == {"$local": {}}


def test_a_subclass_of_thread_local_is_refused() -> None:
    class Counter(threading.local):
        def __init__(self) -> None:
            self.n = 0

    with pytest.raises(CanonError, match="runs its __init__ again in each thread"):
        canon.encode(Counter())


def test_a_malformed_local_is_refused() -> None:
    with pytest.raises(CanonError, match="malformed"):
        canon.decode({"$local": [1]})


FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "dates"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/dates/__init__.py": (
        "from threading import local\n\n\n"
        "class Calendar:\n"
        "    def __init__(self):\n"
        "        self._ctx = local()\n"
        "        self._ctx.stack = []\n\n"
        "    def parse(self, text):\n"
        "        self._ctx.stack.append(text)\n"
        "        day, month = text.split('/')\n"
        "        return int(day), int(month)\n"
    ),
    "tests/test_dates.py": (
        "from dates import Calendar\n\n\n"
        "def test_parse():\n"
        "    assert Calendar().parse('3/12') == (3, 12)\n"
    ),
}


def test_calls_on_an_object_holding_a_thread_local_record_and_replay(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    run = recorded(repo.root, FILES)
    assert "no call skipped" in run.stdout and "refused (" not in run.stdout, run.output
    repo.commit("recorded")
    assert run_cli("replay", cwd=repo.root).code == 0
    red_after_change(
        repo.root, "src/dates/__init__.py", "int(day), int(month)", "int(month), int(day)"
    )
