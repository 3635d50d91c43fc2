"""A repository's ``.lockstep-cache/`` is not lockstep's to trust: planted Hypothesis files do
not crash ``mine`` or ``replay --against``, and links committed there (or in place of the
folder) never make lockstep write outside the project; strength copies of a project skip
links that leave it and never loop."""

from __future__ import annotations

import gzip
import json
import os
import unicodedata
from pathlib import Path

import pytest

from helpers import GitRepo, run_cli, snapshot_tree, write_files

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


CELLS = """
def parse_cell(raw):
    text = raw.strip()
    if text.endswith("%"):
        return float(text[:-1]) / 100
    return text.upper()
"""
FILES: dict[str, str | bytes] = {
    "lockstep.toml": '[[ledger]]\nname = "cells"\ntarget = "refs.cells:parse_cell"\n'
    'driver = "refs.drive:main"\n',
    "refs/__init__.py": "",
    "refs/cells.py": CELLS,
    "refs/drive.py": "from refs.cells import parse_cell\n\n\ndef main():\n"
    "    for raw in ['abc', '1%']:\n        parse_cell(raw)\n",
    ".gitignore": "__pycache__/\n",
}


@pytest.fixture
def cells(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("cells", FILES)
    assert run_cli("record", "cells", cwd=repo.root).code == 0
    repo.commit("freeze cells")
    return repo


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    write_files(outside, {"keep.txt": "the user's own file\n"})
    return outside


def test_a_planted_hypothesis_charmap_is_never_read(cells: GitRepo) -> None:
    planted = cells.root / ".lockstep-cache/hypothesis/unicode_data"
    folder = planted / unicodedata.unidata_version
    folder.mkdir(parents=True)
    (folder / "charmap.json.gz").write_bytes(gzip.compress(json.dumps({"Lu": [[1, 0]]}).encode()))
    (folder / "codec-utf-8.json.gz").write_bytes(b"not gzip at all")
    cells.git("add", "-f", ".lockstep-cache")
    cells.commit("plant")

    against = run_cli("replay", "--against", "HEAD", "--generate", "20", cwd=cells.root)
    assert against.code == 0, against.output  # 1 would say "the versions differ"
    assert "Traceback" not in against.output
    assert "no difference" in against.stdout
    note = [line for line in against.stdout.splitlines() if line.startswith("note: ")]
    assert len(note) == 1 and "tracked by git" in note[0]

    mined = run_cli("mine", "cells", "--budget", "3s", cwd=cells.root)
    assert mined.code == 0, mined.output
    assert "Traceback" not in mined.output


@pytest.mark.parametrize("where", [".lockstep-cache", ".lockstep-cache/.gitignore"])
def test_a_linked_cache_folder_or_gitignore_is_refused_by_against(
    cells: GitRepo, tmp_path: Path, where: str
) -> None:
    outside = _outside(tmp_path)
    link = cells.root / where
    link.parent.mkdir(exist_ok=True)
    os.symlink(outside if where == ".lockstep-cache" else outside / "keep.txt", link)
    before = snapshot_tree(outside)
    against = run_cli("replay", "--against", "HEAD", "--generate", "5", cwd=cells.root)
    assert against.code == 2, against.output
    assert against.stderr.count("\n") == 1
    assert f"{where}: is a symbolic link" in against.stderr
    assert "nothing was written" in against.stderr
    assert snapshot_tree(outside) == before


def test_a_linked_hypothesis_folder_gets_nothing(cells: GitRepo, tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    (cells.root / ".lockstep-cache").mkdir()
    os.symlink(outside, cells.root / ".lockstep-cache/hypothesis")
    before = snapshot_tree(outside)
    against = run_cli("replay", "--against", "HEAD", "--generate", "20", cwd=cells.root)
    assert against.code == 0, against.output
    mined = run_cli("mine", "cells", "--budget", "3s", cwd=cells.root)
    assert mined.code == 0, mined.output
    assert snapshot_tree(outside) == before


def test_strength_with_a_linked_cache_keeps_no_verdicts_and_writes_nothing_outside(
    cells: GitRepo, tmp_path: Path
) -> None:
    outside = _outside(tmp_path)
    os.symlink(outside, cells.root / ".lockstep-cache")
    before = snapshot_tree(outside)
    result = run_cli("strength", "--mutants", "--json", cwd=cells.root)
    assert result.code == 0, result.output
    notes = json.loads(result.stdout)["mutants"]["notes"]
    assert any("verdicts not cached" in n and "symbolic link" in n for n in notes), notes
    assert snapshot_tree(outside) == before


def test_strength_copies_of_a_pins_project_skip_links_out_and_never_loop(
    tmp_path: Path,
) -> None:
    outside = _outside(tmp_path)
    write_files(outside, {f"big/{i}.bin": b"x" * 1000 for i in range(50)})
    root = tmp_path / "project"
    write_files(
        root,
        {
            "lockstep.toml": '[[pins]]\nname = "calc"\ncommand = ["python", "calc.py"]\n'
            'cases = "cases.toml"\n',
            "calc.py": "import sys\nn = int(sys.argv[1])\nprint(n * 2 if n > 1 else n)\n",
            "cases.toml": '[[case]]\nid = "three"\nargv = ["3"]\n',
        },
    )
    os.symlink(outside, root / "leak")
    os.symlink(".", root / "loop")
    assert run_cli("record", cwd=root).code == 0
    before = snapshot_tree(outside)
    result = run_cli("strength", "--mutants", "--json", cwd=root)
    assert result.code == 0, result.output
    assert json.loads(result.stdout)["mutants"]["counts"]["killed"] > 0
    assert snapshot_tree(outside) == before
