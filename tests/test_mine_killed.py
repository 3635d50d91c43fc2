"""A ``lockstep mine`` killed while it records leaves no unrecorded ``mined-*.json`` fixture;
the next ``mine`` removes what the killed one left (its temp folder and lock file)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from helpers import GitRepo, run_cli

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


# While the file "block" exists, rendering a mined fixture that is on its way into the
# fixture folder (that is: being recorded, not drawn) hangs, so the test can kill mine there.
HARNESS = """
import json, os, time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def render(path):
    path = Path(path)
    inside = HERE / "fixtures" in path.resolve().parents
    if path.name.startswith("mined-") and inside and (HERE / "block").exists():
        (HERE / "blocked").write_text(str(os.getpid()))
        time.sleep(600)
    doc = json.loads(path.read_text(encoding="utf-8"))
    lines = [f"item: {doc['name']}"]
    price = doc["price"]
    lines.append("price: unknown" if price == "n/a" else f"price: {float(price):.2f}")
    if "discount" in doc:
        lines.append(f"discount: {doc['discount']}%")
    return "\\n".join(lines) + "\\n"
"""

CONFIG = """
[[corpus]]
name = "items"
fixtures = "fixtures/*.json"
render = "harness:render"
"""


def test_killed_mine_writes_no_unrecorded_fixture_and_the_next_cleans_up(
    git_repo: GitRepo,
) -> None:
    root = git_repo.root
    git_repo.commit(
        "items",
        {
            "lockstep.toml": CONFIG,
            "harness.py": HARNESS,
            ".gitignore": "__pycache__/\nblock\nblocked\n",
            "fixtures/apple.json": '{"name": "apple", "price": "1.5"}\n',
            "fixtures/pear.json": '{"name": "pear", "price": "2"}\n',
        },
    )
    assert run_cli("record", "items", cwd=root).code == 0
    git_repo.commit("recorded")
    (root / "block").write_text("")
    env = dict(os.environ, NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("LOCKSTEP_CONFIG", None)
    # --no-mutants: a mutant of the harness's "inside" test would hang it on a drawn input
    mine = subprocess.Popen(
        [sys.executable, "-m", "lockstep", "mine", "items", "--seed", "1", "--no-mutants"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        for _ in range(6000):
            if (root / "blocked").exists() or mine.poll() is not None:
                break
            time.sleep(0.05)
        assert (root / "blocked").exists(), mine.communicate(timeout=60)[0].decode()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(mine.pid, signal.SIGKILL)
        mine.wait()

    fixtures = root / "fixtures"
    assert sorted(p.name for p in fixtures.glob("*.json")) == ["apple.json", "pear.json"]
    left = [p.name for p in fixtures.iterdir() if p.name.startswith(".mined.")]
    assert len(left) == 1 and (fixtures / left[0]).is_dir()  # the kill came mid-record
    assert run_cli("replay", "items", cwd=root).code == 0

    (root / "block").unlink()
    again = run_cli("mine", "items", "--seed", "1", cwd=root)
    assert again.code == 0, again.output
    assert sorted(p.name for p in fixtures.iterdir() if p.name.startswith(".")) == []
    assert sorted(p.name for p in (root / "lockstep").iterdir() if p.name.endswith(".lock")) == []
    mined = {p.name for p in fixtures.glob("mined-*.json")}
    assert mined
    lock = json.loads((root / "lockstep/items.lock.json").read_text(encoding="utf-8"))
    assert {e["id"] for e in lock["entries"]} == mined | {"apple.json", "pear.json"}
    assert run_cli("replay", "items", cwd=root).code == 0
