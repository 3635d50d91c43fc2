"""``pytest --lockstep-record`` in suites shaped like real projects': a ``conftest.py`` in the
tests folder (pytest then asks every plugin object to be hashable), and runs that stop before
the end (a collection error, an interrupt), which must leave no ledger behind."""

from __future__ import annotations

from pathlib import Path

from helpers import run_pytest, write_files

CONFIG = """
[lockstep]
dir = "lockstep"

[[ledger]]
name = "grade"
target = "school.marks:grade"
"""

MARKS = """
def grade(score):
    if score >= 90:
        return "A"
    if score >= 50:
        return "pass"
    return None
"""

CONFTEST = """
import pytest


@pytest.fixture
def passing():
    return 50
"""

TESTS = """
from school.marks import grade


def test_grades(passing):
    assert grade(95) == "A"
    assert grade(passing) == "pass"
    assert grade(3) is None
"""


def _project(root: Path, **extra: str) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": CONFIG,
            "school/__init__.py": "",
            "school/marks.py": MARKS,
            "tests/__init__.py": "",
            "tests/conftest.py": CONFTEST,
            "tests/test_marks.py": TESTS,
            **extra,
        },
    )
    return root


def test_a_conftest_in_the_tests_folder_records_and_replays(tmp_path: Path) -> None:
    root = _project(tmp_path)
    result = run_pytest("-p", "no:xdist", "--lockstep-record=grade", cwd=root)
    assert result.code == 0, result.output
    assert "INTERNALERROR" not in result.output
    ledger = root / "lockstep" / "grade.ledger.jsonl"
    assert len(ledger.read_text().splitlines()) == 4  # header + three rows
    replay = run_pytest("-p", "no:xdist", "--lockstep", "lockstep", cwd=root)
    assert replay.code == 0, replay.output
    assert "3 passed" in replay.output


def test_a_run_that_collects_nothing_writes_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path)
    result = run_pytest("-p", "no:xdist", "--lockstep-record=grade", "-k", "no_such_test", cwd=root)
    assert result.code == 5, result.output
    assert not list(root.glob("lockstep/*"))


def test_an_interrupted_run_writes_nothing(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        **{
            "tests/test_stop.py": (
                "from school.marks import grade\n\n\n"
                "def test_stop():\n    assert grade(70) == 'pass'\n    raise KeyboardInterrupt\n"
            )
        },
    )
    result = run_pytest("-p", "no:xdist", "--lockstep-record=grade", cwd=root)
    assert result.code == 2, result.output
    assert "nothing recorded: the run did not complete (interrupted)" in result.output
    assert not (root / "lockstep" / "grade.ledger.jsonl").exists()


def test_a_row_owed_to_an_environment_variable_is_refused_with_its_cause(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        **{
            "school/marks.py": MARKS.replace(
                "    return None", "    import os\n\n    return os.environ.get('RESIT_GRADE')"
            ),
            "tests/test_resit.py": (
                "from school.marks import grade\n\n\n"
                "def test_resit(monkeypatch):\n"
                "    monkeypatch.setenv('RESIT_GRADE', 'E')\n"
                "    assert grade(10) == 'E'\n"
            ),
        },
    )
    result = run_pytest("-p", "no:xdist", "--lockstep-record=grade", cwd=root)
    assert result.code == 0, result.output
    assert (
        "tests/test_resit.py::test_resit (cause: environment variable(s) changed: RESIT_GRADE)"
        in (result.output)
    )
    replay = run_pytest("-p", "no:xdist", "--lockstep", "lockstep", cwd=root)
    assert replay.code == 0, replay.output


def test_a_row_holding_a_test_modules_class_is_refused_and_the_rest_written(
    tmp_path: Path,
) -> None:
    """A NamedTuple defined in a test module freezes by name, but replay never imports
    the tests: the fresh interpreter cannot thaw that row.  It is refused with the reason
    and its test; the other rows are written (once, the whole record failed)."""
    root = _project(
        tmp_path,
        **{
            "tests/test_scores.py": (
                "from typing import NamedTuple\n\n"
                "from school.marks import grade\n\n\n"
                "class Score(NamedTuple):\n    points: int\n\n\n"
                "def test_named_score():\n"
                "    assert grade(Score(95)[0]) == 'A'\n"
                "    assert grade(Score(60)) is not None or True\n"
            ),
            "school/marks.py": MARKS.replace(
                "def grade(score):\n",
                "def grade(score):\n    score = score if isinstance(score, int) else score[0]\n",
            ),
        },
    )
    result = run_pytest("-p", "no:xdist", "--lockstep-record=grade", cwd=root)
    assert result.code == 0, result.output
    assert "a recorded value does not thaw in a fresh interpreter" in result.output
    assert "test_scores:Score" in result.output
    assert "tests/test_scores.py::test_named_score" in result.output
    ledger = root / "lockstep" / "grade.ledger.jsonl"
    assert len(ledger.read_text().splitlines()) == 4  # header + 95, 50, 3: Score(60) refused
    replay = run_pytest("-p", "no:xdist", "--lockstep", "lockstep", cwd=root)
    assert replay.code == 0, replay.output
