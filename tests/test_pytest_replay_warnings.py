"""``pytest --lockstep`` replays a case under the warning filters a fresh interpreter has,
as ``lockstep replay`` does: a project's ``-Werror`` is its tests' setting, not the
recorded call's."""

from __future__ import annotations

from pathlib import Path

from helpers import GitRepo, pytest_in, recorded, run_cli

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "wpkg"\n',
    "pyproject.toml": ('[tool.pytest.ini_options]\npythonpath = ["src"]\naddopts = "-Werror"\n'),
    "src/wpkg/__init__.py": (
        "import warnings\n\n\n"
        "def scale(x):\n"
        "    if isinstance(x, float):\n"
        "        warnings.warn('floats are deprecated', DeprecationWarning, stacklevel=2)\n"
        "    return x * 2\n"
    ),
    "tests/test_w.py": (
        "import pytest\n\nfrom wpkg import scale\n\n\n"
        "def test_scale():\n"
        "    with pytest.warns(DeprecationWarning):\n"
        "        assert scale(1.5) == 3.0\n"
    ),
}


def test_a_project_running_its_tests_with_werror_replays_green(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    recorded(repo.root, FILES)
    repo.commit("wpkg, recorded")
    assert run_cli("replay", cwd=repo.root).code == 0
    items = pytest_in(repo.root, "--lockstep", "-q")
    assert items.code == 0, items.output
    assert "2 passed" in items.output
