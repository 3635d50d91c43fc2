"""A ledger replays in the project's root, wherever ``lockstep replay`` is started.

Rows run where the fresh interpreter that verified them ran, the project's root: replayed
from the oracle folder, toml's ``load('test.toml')`` rows drifted as
``FileNotFoundError`` on unchanged code."""

from __future__ import annotations

from pathlib import Path

from helpers import GitRepo, recorded, red_after_change, run_cli

FILES = {
    "lockstep.toml": '[[ledger]]\nname = "first_word"\ntarget = "reader:first_word"\n',
    "reader.py": (
        "def first_word(path):\n"
        "    with open(path, encoding='utf-8') as fh:\n"
        "        return fh.read().split()[0]\n"
    ),
    "data.txt": "hello world\n",
    "tests/test_reader.py": (
        "from reader import first_word\n\n\n"
        "def test_first_word():\n"
        "    assert first_word('data.txt') == 'hello'\n"
    ),
}


def test_replay_from_a_subfolder_reads_paths_from_the_root(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    recorded(repo.root, FILES)
    repo.commit("recorded")
    for folder in (repo.root / "lockstep", repo.root / "tests"):
        green = run_cli("replay", cwd=folder)
        assert green.code == 0, green.output
    assert run_cli("replay", "--jobs", "1", cwd=repo.root / "lockstep").code == 0
    red_after_change(repo.root, "reader.py", "[0]", "[-1]")
