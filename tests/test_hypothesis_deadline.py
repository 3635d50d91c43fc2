"""Recording lifts Hypothesis's per-example deadline (the recording slows each example),
and puts the profile in force back when the run ends."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from hypothesis import _settings as hypothesis_settings
from hypothesis import settings

from helpers import GitRepo, pytest_in, write_files
from lockstep.pytest.hypothesis_deadline import lift_deadline


class _Config:
    def __init__(self) -> None:
        self.cleanups: list[Callable[[], None]] = []

    def add_cleanup(self, fn: Callable[[], None]) -> None:
        self.cleanups.append(fn)


def test_the_deadline_is_lifted_and_the_profile_in_force_comes_back() -> None:
    before = settings.default
    settings.register_profile("test-deadline-300", parent=before, deadline=300, max_examples=7)
    settings.load_profile("test-deadline-300")
    try:
        config = _Config()
        lift_deadline(config)  # type: ignore[arg-type]
        assert settings.default.deadline is None
        assert settings.default.max_examples == 7  # the rest of the profile in force
        for cleanup in config.cleanups:
            cleanup()
        assert settings.default.deadline == timedelta(milliseconds=300)
    finally:
        settings.register_profile("test-deadline-back", parent=before)
        settings.load_profile("test-deadline-back")


FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "slow"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/slow/__init__.py": "def square(x):\n    return x * x\n",
    "tests/conftest.py": (
        "from hypothesis import settings\n\n"
        "settings.register_profile('tight', deadline=1)\n"
        "settings.load_profile('tight')\n"
    ),
    "tests/test_slow.py": (
        "import time\n\nfrom hypothesis import given, strategies as st\n\n"
        "from slow import square\n\n\n"
        "@given(st.integers(0, 3))\n"
        "def test_square(x):\n"
        "    time.sleep(0.01)  # past the conftest's 1 ms deadline: fails unless lifted\n"
        "    assert square(x) == x * x\n"
    ),
}


def test_a_property_test_past_its_deadline_records(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    write_files(repo.root, FILES)
    plain = pytest_in(repo.root, "-q", "-p", "hypothesis", "tests")
    assert plain.code == 1 and "DeadlineExceeded" in plain.output  # the suite alone fails
    run = pytest_in(repo.root, "--lockstep-record", "-q", "-p", "hypothesis", "tests")
    assert run.code == 0, run.output
    assert (repo.root / "lockstep/slow.square.ledger.jsonl").exists()


_CI_VARIABLES = getattr(hypothesis_settings, "_CI_VARS", {"CI": None})
"""What makes Hypothesis load its "ci" profile (a private table: CI alone where it is gone)."""

LATE = {
    "lockstep.toml": '[[ledger]]\npackage = "slow"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/slow/__init__.py": "def square(x):\n    return x * x\n",
    "tests/test_plain.py": (
        "import sys\n\nfrom slow import square\n\n\n"
        "def test_square():\n"
        "    assert square(3) == 9\n"
        "    assert 'hypothesis' not in sys.modules  # nothing of the suite imported it\n"
    ),
}


def test_a_suite_without_hypothesis_records_without_importing_it(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    write_files(repo.root, LATE)
    run = pytest_in(repo.root, "--lockstep-record", "-q", "-p", "_hypothesis_pytestplugin", "tests")
    assert run.code == 0, run.output
    assert (repo.root / "lockstep/slow.square.ledger.jsonl").exists()


def test_the_deadline_is_lifted_when_a_test_module_imports_hypothesis_first(
    tmp_path: Path,
) -> None:
    """No conftest imports Hypothesis: the test module does, and builds its ``@settings``
    (which reads the default deadline then) as it is imported."""
    repo = GitRepo(tmp_path / "project")
    files = {
        **LATE,
        "tests/test_slow.py": (
            # a CI's environment makes Hypothesis load its "ci" profile (no deadline) as it
            # is imported: the module imports it outside one
            f"import os\nimport time\n\nfor name in {sorted(_CI_VARIABLES)!r}:\n"
            "    os.environ.pop(name, None)\n\n"
            "from hypothesis import given, settings, strategies as st\n\n"
            "from slow import square\n\n\n"
            "@settings(max_examples=2, derandomize=True)\n"
            "@given(st.integers(0, 3))\n"
            "def test_square(x):\n"
            "    time.sleep(0.3)  # past Hypothesis's default 200 ms deadline\n"
            "    assert square(x) == x * x\n"
        ),
    }
    del files["tests/test_plain.py"]
    write_files(repo.root, files)
    plain = pytest_in(repo.root, "-q", "-p", "_hypothesis_pytestplugin", "tests")
    assert plain.code == 1 and "DeadlineExceeded" in plain.output  # the suite alone fails
    run = pytest_in(repo.root, "--lockstep-record", "-q", "-p", "_hypothesis_pytestplugin", "tests")
    assert run.code == 0, run.output
    assert (repo.root / "lockstep/slow.square.ledger.jsonl").exists()
