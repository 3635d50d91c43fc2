"""``replay --against`` and its git worktrees: added with hooks off, removed on SIGTERM, and the
leftovers of a SIGKILLed run pruned by the next one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from helpers import GitRepo, run_cli

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


SLOW = """
import time


def parse_cell(raw):
    time.sleep(0.05)
    return raw.strip().upper()
"""
FILES: dict[str, str | bytes] = {
    "lockstep.toml": '[[ledger]]\nname = "cells"\ntarget = "refs.cells:parse_cell"\n'
    'driver = "refs.drive:main"\n',
    "refs/__init__.py": "",
    "refs/cells.py": SLOW,
    "refs/drive.py": "from refs.cells import parse_cell\n\n\ndef main():\n"
    "    for raw in ['abc', ' x ']:\n        parse_cell(raw)\n",
    ".gitignore": "__pycache__/\n",
}


@pytest.fixture
def cells(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("cells", FILES)
    assert run_cli("record", "cells", cwd=repo.root).code == 0
    repo.commit("freeze cells")
    return repo


def _worktrees(repo: GitRepo) -> list[str]:
    return [
        line.removeprefix("worktree ")
        for line in repo.git("worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ") and Path(line.removeprefix("worktree ")) != repo.root
    ]


def test_the_revisions_post_checkout_hook_does_not_run(cells: GitRepo, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    hook = cells.root / ".githooks/post-checkout"
    hook.parent.mkdir()
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    cells.commit("hooks")
    cells.git("config", "core.hooksPath", ".githooks")
    plain = tmp_path / "plain"
    cells.git("worktree", "add", "--detach", "--quiet", str(plain), "HEAD")
    assert marker.exists()  # a plain worktree add runs it
    cells.git("worktree", "remove", "--force", str(plain))
    marker.unlink()
    against = run_cli("replay", "--against", "HEAD", "--generate", "3", cwd=cells.root)
    assert against.code == 0, against.output
    assert not marker.exists()
    assert _worktrees(cells) == []


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_leftovers_of_a_killed_run_are_pruned_by_the_next(cells: GitRepo) -> None:
    # what a SIGKILLed run leaves: its worktree registered, its temporary tree on disk
    stale = Path(tempfile.mkdtemp(prefix=f"lockstep-against-{_dead_pid()}-"))
    cells.git("worktree", "add", "--detach", "--quiet", str(stale / "tree"), "HEAD")
    # someone else's worktree, and one of a lockstep run still going, are left alone
    theirs = Path(tempfile.mkdtemp(prefix="mine-"))
    cells.git("worktree", "add", "--detach", "--quiet", str(theirs / "tree"), "HEAD")
    alive = Path(tempfile.mkdtemp(prefix=f"lockstep-review-{os.getppid()}-"))
    cells.git("worktree", "add", "--detach", "--quiet", str(alive / "tree"), "HEAD")
    try:
        against = run_cli("replay", "--against", "HEAD", "--generate", "3", cwd=cells.root)
        assert against.code == 0, against.output
        assert not stale.exists()
        assert sorted(_worktrees(cells)) == sorted([str(theirs / "tree"), str(alive / "tree")])
    finally:
        for tree in (theirs, alive):
            cells.git("worktree", "remove", "--force", str(tree / "tree"))
            tree.rmdir()


def test_sigterm_removes_the_worktree_and_exits_143(cells: GitRepo) -> None:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "lockstep", "replay", "--against", "HEAD", "--generate", "5000"],
        cwd=cells.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not _worktrees(cells) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        trees = _worktrees(cells)
        if not trees and proc.poll() is not None:
            _, early = proc.communicate(timeout=60)
            raise AssertionError(
                f"the run ended (exit {proc.returncode}) before it added "
                f"its worktree: {early.decode()[-2000:]}"
            )
        assert trees, "the run never added its worktree within 60 s"
        time.sleep(0.5)  # well into the comparison
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert err.decode().strip() == "lockstep: terminated; the temporary worktree is removed"
    assert _worktrees(cells) == []
    assert not Path(trees[0]).parent.exists()
