"""Which files a corpus glob matches: the one-folder fast path agrees with :mod:`glob`."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import pytest

from helpers import write_files
from lockstep.config import Project, load_project
from lockstep.errors import ConfigError
from lockstep.oracles.corpus.fixtures import fixtures
from lockstep.oracles.corpus.spec import CorpusSpec


def project_with(root: Path, pattern: str) -> tuple[Project, CorpusSpec]:
    write_files(
        root,
        {
            "lockstep.toml": (
                f'[[corpus]]\nname = "rows"\nfixtures = "{pattern}"\nrender = "h:render"\n'
            ),
            "h.py": "def render(path):\n    return path.read_text()\n",
        },
    )
    project = load_project(root)
    spec = project.oracle("rows")
    assert isinstance(spec, CorpusSpec)
    return project, spec


def tree(root: Path) -> None:
    write_files(
        root,
        {
            "fx/a.json": "{}",
            "fx/b.json": "{}",
            "fx/.hidden.json": "{}",
            "fx/notes.txt": "x",
            "fx/sub/c.json": "{}",
            "fx/dir.json/inner.json": "{}",
            "other/d.json": "{}",
        },
    )
    os.symlink(root / "other" / "d.json", root / "fx" / "link.json")
    os.symlink(root / "other", root / "fx" / "linkdir.json")
    os.symlink(root / "fx" / "missing.json", root / "fx" / "dangling.json")


@pytest.mark.parametrize("pattern", ["fx/*.json", "fx/[ab].json", "fx/.*.json", "fx/*"])
def test_one_folder_patterns_match_what_glob_matches(tmp_path: Path, pattern: str) -> None:
    tree(tmp_path)
    project, spec = project_with(tmp_path, pattern)
    found = fixtures(project, spec)
    expected = sorted(Path(p).name for p in glob.glob(str(tmp_path / pattern)) if os.path.isfile(p))
    assert list(found) == expected
    assert all(path == tmp_path / "fx" / name for name, path in found.items())


def test_a_recursive_pattern_still_goes_through_glob(tmp_path: Path) -> None:
    tree(tmp_path)
    project, spec = project_with(tmp_path, "fx/**/*.json")
    found = fixtures(project, spec)
    assert "sub/c.json" in found and "a.json" in found and "link.json" in found


def test_a_symlink_out_of_the_project_is_refused_on_the_fast_path(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write_files(tmp_path, {"outside.json": "{}", "proj/fx/a.json": "{}"})
    os.symlink(tmp_path / "outside.json", root / "fx" / "out.json")
    project, spec = project_with(root, "fx/*.json")
    with pytest.raises(ConfigError, match="escapes the project root"):
        fixtures(project, spec)
