"""A ``lockstep.toml`` that is a link configures the folder it is found in: the
project's root is where the link is, not where it points."""

from __future__ import annotations

from pathlib import Path

from helpers import GitRepo, recorded, run_cli

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "calc"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/calc/__init__.py": "def double(x):\n    return x * 2\n",
    "tests/test_calc.py": "from calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
}


def test_a_linked_configuration_configures_the_folder_of_the_link(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    recorded(repo.root, FILES)
    shared = tmp_path / "shared" / "lockstep.toml"
    shared.parent.mkdir()
    shared.write_text(FILES["lockstep.toml"])
    (repo.root / "lockstep.toml").unlink()
    (repo.root / "lockstep.toml").symlink_to(shared)
    run = run_cli("replay", cwd=repo.root)
    assert run.code == 0, run.output
    assert "1 passed" in run.stdout
