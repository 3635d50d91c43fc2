"""SIGKILL in the middle of a write: the old or the new complete file, and a clean next run.

Two kinds of trials:

* **writer trials** (most of them, cheap): a small single-threaded Python process
  that imported :mod:`lockstep.store` once forks one writer per trial (an
  ``atomic_write`` of a ~1 MB JSON file, an :class:`~lockstep.store.AtomicLines`
  JSONL file, or a blob batch plus its lock file, as a corpus record does); the
  test kills the writer with SIGKILL after a random delay spanning its whole
  write, then checks the file and runs one normal write.
* **CLI trials**: a real ``lockstep record rows --force`` on a corpus project
  (on disk), killed the same way, then a normal ``record --force``.
"""

from __future__ import annotations

import functools
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import invoke_cli, write_files
from lockstep import store
from test_corpus_cli import make_project

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


WRITER_TRIALS = 105
CLI_TRIALS = 10
ROWS = 1500  # ~230 kB of JSON: long enough to be killed in the middle of
BLOBS = 60

WRITER = r"""
import json, os, sys
from pathlib import Path
from lockstep import store

ROWS, BLOBS = int(sys.argv[1]), int(sys.argv[2])

def payload(kind, version):
    rows = [{"version": version, "n": n, "pad": "v%d-" % version + "x" * 120} for n in range(ROWS)]
    if kind == "lines":
        return [json.dumps(r, sort_keys=True).encode() for r in rows]
    return json.dumps({"version": version, "rows": rows}, sort_keys=True).encode()

def write(kind, path, version):
    path = Path(path)
    if kind == "atomic":
        store.atomic_write(path, payload(kind, version))
    elif kind == "lines":
        with store.AtomicLines(path) as out:
            for line in payload(kind, version):
                out.write(line)
    else:  # a corpus record: a batch of blobs, then the lock file naming them
        blobs = store.BlobStore(path.parent / "blobs")
        with blobs.batch() as batch:
            names = [batch.put(b"blob %d of version %d\n" % (n, version) * 50) for n in range(BLOBS)]
        store.atomic_write(path, json.dumps({"version": version, "blobs": names}).encode())

for line in sys.stdin:
    kind, path, version = line.split()
    pid = os.fork()
    if pid == 0:
        try:
            write(kind, path, int(version))
        finally:
            os._exit(0)
    print(pid, flush=True)
    sys.stdin.readline()  # "reap": the test has killed it (or let it finish)
    _, status = os.waitpid(pid, 0)
    print(status, flush=True)
"""


@functools.lru_cache(maxsize=8)
def _expected(kind: str, version: int) -> Any:
    rows = [{"version": version, "n": n, "pad": f"v{version}-" + "x" * 120} for n in range(ROWS)]
    if kind == "lines":
        return rows
    if kind == "atomic":
        return {"version": version, "rows": rows}
    names = [store.sha256_hex(b"blob %d of version %d\n" % (n, version) * 50) for n in range(BLOBS)]
    return {"version": version, "blobs": names}


def _parse(kind: str, path: Path) -> Any:
    data = path.read_bytes()
    if kind == "lines":
        return [json.loads(line) for line in data.splitlines()]
    return json.loads(data)


def _leftovers(folder: Path, *, skip: tuple[str, ...] = ()) -> list[str]:
    """Temp and lock files anywhere under ``folder`` (not under sub-folders named ``skip*``)."""
    found = []
    for where, folders, names in os.walk(folder):
        folders[:] = [f for f in folders if not f.startswith(skip)] if skip else folders
        found.extend(os.path.join(where, n) for n in names if n.endswith((".tmp", ".lock")))
    return sorted(found)


class Writer:
    """The forking writer process: one fork per trial, killed (or not) by the test."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(ROWS), str(BLOBS)],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    def _send(self, line: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def write(self, kind: str, path: Path, version: int, *, kill_after: float | None) -> bool:
        """One write; killed with SIGKILL after ``kill_after`` seconds. True if it was killed."""
        pid = int(self._send(f"{kind} {path} {version}"))
        if kill_after is not None:
            time.sleep(kill_after)
            os.kill(pid, signal.SIGKILL)  # a zombie until reaped, so the pid is still its own
        status = int(self._send("reap"))
        return os.WIFSIGNALED(status)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """A folder in memory (tmpfs) when there is one, else ``tmp_path``.

    A SIGKILL, unlike a power cut, does not undo what the page cache holds, so fsync
    is not what these trials exercise; on tmpfs it costs nothing, which keeps a
    hundred trials within a few seconds on a slow disk.
    """
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        with tempfile.TemporaryDirectory(dir=shm, prefix="lockstep-kill-") as folder:
            yield Path(folder).resolve()
    else:
        yield tmp_path


def test_sigkill_during_a_write_leaves_old_or_new_and_the_next_write_cleans_up(
    scratch: Path,
) -> None:
    root = scratch / "proj"
    folder = root / "lockstep"
    folder.mkdir(parents=True)
    (root / "lockstep.toml").write_text("")
    targets = {
        "atomic": folder / "big.lock.json",
        "lines": folder / "big.ledger.jsonl",
        "blobs": folder / "rows.lock.json",
    }
    rng = random.Random(20240610)
    writer = Writer(root)
    try:
        durations: dict[str, float] = {}
        versions: dict[str, int] = {}
        for kind, path in targets.items():
            times = []
            for version in (-2, -1, 0):
                started = time.monotonic()
                writer.write(kind, path, version, kill_after=None)
                times.append(time.monotonic() - started)
            durations[kind] = statistics.median(times)
            versions[kind] = 0
            assert _parse(kind, path) == _expected(kind, 0)
        outcomes = {"old": 0, "new": 0, "debris": 0, "killed": 0}
        for trial in range(WRITER_TRIALS):
            kind = ("atomic", "lines", "blobs")[trial % 3]
            path = targets[kind]
            # A fresh version each trial, so that a blob batch always has new blobs to write.
            old, new = versions[kind], 2 * trial + 2
            delay = rng.uniform(0, 1.3 * durations[kind])
            outcomes["killed"] += writer.write(kind, path, new, kill_after=delay)
            found = _parse(kind, path)
            assert found in (_expected(kind, old), _expected(kind, new)), f"trial {trial}: torn"
            outcomes["old" if found == _expected(kind, old) else "new"] += 1
            outcomes["debris"] += bool(_leftovers(folder))
            # The next normal run (of this file, or of another one in the folder) cleans up.
            versions[kind] = 2 * trial + 3
            writer.write(kind, path, versions[kind], kill_after=None)
            if trial % 4 == 3:
                other = ("atomic", "lines", "blobs")[(trial + 1) % 3]
                writer.write(other, targets[other], versions[other], kill_after=None)
            assert _leftovers(folder) == [], f"trial {trial}: leftovers after a normal run"
            assert _parse(kind, path) == _expected(kind, versions[kind])
    finally:
        writer.close()
    # The kills landed everywhere: before the rename, after it, and mid-write.
    assert outcomes["old"] and outcomes["new"] and outcomes["debris"] and outcomes["killed"], (
        outcomes
    )


# ---------------------------------------------------------------- through the real CLI


def _cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("LOCKSTEP_CONFIG", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _lock(root: Path) -> Any:
    return json.loads((root / "lockstep" / "rows.lock.json").read_bytes())


def _set_version(root: Path, version: int) -> None:
    write_files(
        root,
        {
            f"fixtures/rows/n{n:03d}.json": (
                f'{{"name": "row {n}", "price": "{n}.{version}5", "qty": {version + 1}}}'
            )
            for n in range(60)
        },
    )


def test_sigkill_during_lockstep_record_force(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    locks = {}
    for version, mode in ((1, ()), (0, ("--force",))):
        _set_version(root, version)
        assert invoke_cli("record", "rows", *mode, cwd=root).code == 0
        locks[version] = _lock(root)
    assert locks[0] != locks[1]
    rng = random.Random(7)
    started = time.monotonic()
    probe = subprocess.run(
        [sys.executable, "-m", "lockstep", "record", "rows", "--force"],
        cwd=root,
        env=_cli_env(),
        capture_output=True,
    )
    assert probe.returncode == 0, probe.stderr
    full = time.monotonic() - started
    current = 0
    for trial in range(CLI_TRIALS):
        new = 1 - current
        _set_version(root, new)
        proc = subprocess.Popen(
            [sys.executable, "-m", "lockstep", "record", "rows", "--force"],
            cwd=root,
            env=_cli_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # Most of a CLI run is start-up: aim the kills at its second half, where it writes.
        time.sleep(rng.uniform(0.4 * full, 1.1 * full))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert _lock(root) in (locks[current], locks[new]), f"trial {trial}: torn lock file"
        result = invoke_cli("record", "rows", "--force", cwd=root)
        assert result.code == 0, result.output
        assert _lock(root) == locks[new]
        assert _leftovers(root / "lockstep") == [], f"trial {trial}"
        current = new
    assert invoke_cli("replay", "rows", cwd=root).code == 0


def test_a_record_killed_while_verifying_leaves_nothing_after_the_next_run(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    assert invoke_cli("record", "rows", cwd=root).code == 0
    before = _lock(root)
    (root / "fixtures" / "rows" / "e_new.json").write_text('{"price": "2"}')
    # The render stalls only in the verifying interpreter (record runs it with
    # PYTHONHASHSEED=1 when its own seed is 0), so the kill always lands mid-verify.
    harness = root / "legacy" / "harness.py"
    plain = harness.read_text()
    harness.write_text(
        "import os as _os\nimport time as _time\n\n"
        + harness.read_text()
        + "\n\n_render = render\n\n\ndef render(path):\n"
        "    if _os.environ.get('PYTHONHASHSEED') == '1':\n        _time.sleep(60)\n"
        "    return _render(path)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "lockstep", "record", "rows", "--new-only"],
        cwd=root,
        env={**_cli_env(), "PYTHONHASHSEED": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    folder = root / "lockstep"
    deadline = time.monotonic() + 60
    while not any(n.startswith(".verify") for n in os.listdir(folder)):
        assert proc.poll() is None, "record ended without verifying the new fixture"
        assert time.monotonic() < deadline, "no verify folder within 60 s"
        time.sleep(0.005)
    time.sleep(0.2)  # the verifying child is running, the candidate written
    os.killpg(proc.pid, signal.SIGKILL)  # record and its verifying child, as a kill -9 of a job
    proc.wait()
    harness.write_text(plain)
    assert _lock(root) == before
    result = invoke_cli("record", "rows", "--new-only", cwd=root)
    assert result.code == 0, result.output
    assert sorted(os.listdir(folder)) == ["blobs", "rows.lock.json"]
