"""A row whose call reads standard input replays with an empty one, as it was verified:
never waiting on the terminal, never reading pytest's captured stand-in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import GitRepo, pytest_in, recorded

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "tool"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/tool/__init__.py": "from tool.cli import main\n",
    "src/tool/cli.py": (
        "import sys\n\n\n"
        "def main(argv):\n"
        "    stream = sys.stdin if argv == ['-'] else open(argv[0])\n"
        "    for line in stream:\n"
        "        sys.stderr.write(line.strip())  # (what it prints would be compared)\n"
        "    sys.stdout.flush()\n"
        "    return 0\n"
    ),
    "tests/test_cli.py": (
        "import io\nimport sys\n\nfrom tool import main\n\n\n"
        "def test_stdin(monkeypatch):\n"
        "    monkeypatch.setattr(sys, 'stdin', io.StringIO('select 1\\n'))\n"
        "    assert main(['-']) == 0\n"
    ),
}


def test_a_call_reading_stdin_replays_without_waiting_for_it(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    recorded(repo.root, FILES)
    repo.commit("tool, recorded")
    ledger = repo.root / "lockstep/tool.cli.main.ledger.jsonl"
    assert '"rows":1' in ledger.read_text().splitlines()[0]
    env = {**os.environ, "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    read_end, write_end = os.pipe()  # a standard input that stays open, as a terminal's
    out = tmp_path / "out.txt"
    try:
        with out.open("wb") as sink:
            proc = subprocess.Popen(
                [sys.executable, "-m", "lockstep", "replay"],
                cwd=repo.root,
                env=env,
                stdin=read_end,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
            try:
                code = proc.wait(timeout=60)
            finally:
                proc.kill()
                proc.wait()
    finally:
        os.close(read_end)
        os.close(write_end)
    assert code == 0, out.read_text()
    assert "1 passed" in out.read_text()
    under_pytest = pytest_in(repo.root, "--lockstep", "-q", "tests")
    assert under_pytest.code == 0, under_pytest.output
