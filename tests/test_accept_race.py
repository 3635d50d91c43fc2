"""``lockstep accept`` racing ``lockstep record --new-only`` on one oracle: both land.

Record reads the oracle, runs its cases and writes; accept re-records the accepted case.
Each holds the oracle's lock for the whole of that, so neither writes back a copy it read
before the other's write: the accepted case stays accepted, the new case is added.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import GitRepo, run_cli

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


PROG = """
import sys
case = sys.argv[1]
if case == "a":
    print("a", open("version").read().strip())
else:
    print("case", case)
"""

ROUNDS = 10
"""Rounds of one accept racing one record, each round on a grown oracle."""

CONFIG = """
[[pins]]
name = "prog"
command = ["python", "prog.py"]
cases = "cases/prog.toml"
"""


def _cases(extra: int) -> str:
    ids = ["a", "b", *(f"new{i}" for i in range(extra))]
    return "".join(f'[[case]]\nid = "{i}"\nargv = ["{i}"]\n\n' for i in ids)


def _start(root: Path, *args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1", COLUMNS="200")
    env.pop("LOCKSTEP_CONFIG", None)
    return subprocess.Popen(
        [sys.executable, "-m", "lockstep", *args],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def test_accept_and_record_new_only_at_once_both_land(git_repo: GitRepo) -> None:
    root = git_repo.root
    git_repo.commit(
        "pins",
        {"lockstep.toml": CONFIG, "prog.py": PROG, "version": "0\n", "cases/prog.toml": _cases(0)},
    )
    assert run_cli("record", cwd=root).code == 0
    git_repo.commit("record")
    for round_ in range(1, ROUNDS + 1):
        git_repo.commit(
            f"round {round_}", {"version": f"{round_}\n", "cases/prog.toml": _cases(round_)}
        )
        kept = run_cli("replay", "--keep-pending", "-q", cwd=root)
        assert kept.code == 1 and "a" in kept.output, kept.output
        accept = _start(root, "accept", "--case", "a", "--why", "a prints its new version")
        record = _start(root, "record", "prog", "--new-only")
        accepted = accept.communicate(timeout=300)[0].decode()
        recorded = record.communicate(timeout=300)[0].decode()
        assert accept.returncode == 0, accepted
        assert "accepted" in accepted
        assert record.returncode == 0, recorded
        after = run_cli("replay", "-v", cwd=root)
        assert after.code == 0, (
            f"round {round_}: {after.output}\naccept: {accepted}\nrecord: {recorded}"
        )
        assert f"new{round_ - 1}" in after.output
        git_repo.commit(f"accepted {round_}")
