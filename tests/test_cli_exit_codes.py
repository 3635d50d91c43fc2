"""Exit codes mean the same thing in every command, and a closed stdout ends no work:
``status`` says a corrupt oracle file with exit 2 as ``replay`` does; ``replay --report FILE |
head`` still writes the report and exits with the replay's verdict; a report that cannot be
written says so in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import GitRepo, run_cli

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


CONFIG = """\
[[corpus]]
name = "pages"
fixtures = "fixtures/*.txt"
render = "render:render"
"""
RENDER = """\
def render(path):
    n = int(path.read_text())
    return "".join(f"line {i}{MARK}\\n" for i in range(n))
"""


def _project(root: Path, fixtures: int = 60) -> GitRepo:
    repo = GitRepo(root)
    files: dict[str, str | bytes] = {
        "lockstep.toml": CONFIG,
        "render.py": RENDER.replace("{MARK}", ""),
    }
    files.update({f"fixtures/f{i:03}.txt": "1000\n" for i in range(fixtures)})
    repo.commit("pages", files)
    recorded = run_cli("record", cwd=root)
    assert recorded.code == 0, recorded.output
    repo.commit("record")
    return repo


def test_status_says_a_corrupt_ledger_with_exit_2_as_replay_does(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "p")
    repo.commit(
        "ledger",
        {
            "lockstep.toml": '[[ledger]]\nname = "add"\ntarget = "calc:add"\n',
            "calc.py": "def add(a, b):\n    return a + b\n",
            "lockstep/add.ledger.jsonl": '{"id": "x", "not a row"\n',
        },
    )
    replay = run_cli("replay", cwd=repo.root)
    status = run_cli("status", cwd=repo.root)
    assert replay.code == 2, replay.output
    assert status.code == 2, status.output
    assert "unreadable" in status.stdout
    line = status.stderr.strip()
    assert line.startswith("lockstep: error: ") and "\n" not in line
    assert "add.ledger.jsonl:1" in line


def test_a_closed_stdout_still_gets_the_report_written_and_the_verdict(tmp_path: Path) -> None:
    repo = _project(tmp_path / "p")
    (repo.root / "render.py").write_text(RENDER.replace("{MARK}", "!"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "lockstep", "replay", "--show", "0", "--report", "r.html"],
        cwd=repo.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"DRIFT pages::")
    proc.stdout.close()  # `| head -1`: the reader is gone long before the 60 diffs are out
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1, err  # drift: the replay's verdict, not a pipe error
    assert err == ""
    assert (repo.root / "r.html").read_text().count("pages::") >= 60


def test_a_report_that_cannot_be_written_says_so_in_one_line(tmp_path: Path) -> None:
    repo = _project(tmp_path / "p", fixtures=2)
    result = run_cli("replay", "--report", "lockstep.toml/r.html", cwd=repo.root)
    assert result.code == 2, result.output
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("lockstep: error: cannot write the report lockstep.toml/r.html")
