"""A ``lockstep.toml`` that is a link configures the folder it is found in: the
project's root is where the link is, not where it points."""

from __future__ import annotations

from pathlib import Path

from helpers import GitRepo, pytest_in, recorded, run_cli, write_files

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


def test_a_configuration_named_past_what_the_system_reads_is_one_line(tmp_path: Path) -> None:
    """A name too long for the file system, or a folder that is a link to itself, named as
    the configuration (``--config``, ``LOCKSTEP_CONFIG``, pytest's ``--lockstep-config``):
    one line naming it and why, exit 2 (pytest: a usage error), never a traceback.  (A
    folder linked to itself is a loop to Python 3.11 and 3.12, where the file is not found
    to 3.13, whose ``Path.resolve`` no longer raises on one: either is said.)"""
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    for named, said in (
        (str(tmp_path / ("a" * 300)), ("cannot read: File name too long",)),
        (str(loop / "lockstep.toml"), ("cannot read: Symlink loop", "config file not found")),
    ):
        for run in (
            run_cli("--config", named, "status", cwd=tmp_path),
            run_cli("status", cwd=tmp_path, env={"LOCKSTEP_CONFIG": named}),
        ):
            assert run.code == 2, run.output
            lines = run.output.strip().splitlines()
            assert len(lines) == 1 and any(why in lines[0] for why in said), run.output
        write_files(tmp_path / "project", {"tests/test_nothing.py": "def test_it():\n    pass\n"})
        ran = pytest_in(tmp_path / "project", "--lockstep-record", f"--lockstep-config={named}")
        assert ran.code == 4, ran.output
        assert "INTERNALERROR" not in ran.output
        errors = [line for line in ran.output.splitlines() if "lockstep:" in line]
        assert len(errors) == 1 and any(why in errors[0] for why in said), ran.output
