"""Cancelling a replay (SIGTERM from ``timeout`` or a CI cancel, Ctrl-C's SIGINT) stops every
running case and warm server at once, whole process trees, and exits 143 or 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import GitRepo, run_cli

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


PROG = """
import os, subprocess, sys, time
case = sys.argv[1]
if os.path.exists("slow"):
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    os.makedirs("pids", exist_ok=True)
    for pid in (os.getpid(), helper.pid):
        with open(os.path.join("pids", f"{case}-{pid}"), "w"):
            pass
    time.sleep(600)
print("done", case)
"""

CASES = "".join(f'[[case]]\nid = "c{i}"\nargv = ["c{i}"]\n\n' for i in range(3))

CONFIG = """
[[pins]]
name = "prog"
command = ["python", "prog.py"]
cases = "cases/prog.toml"
timeout = 900
warm = {warm}
"""


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting to be reaped has stopped running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _still_running(pids: list[int], within: float = 10.0) -> list[int]:
    """Those of ``pids`` still running after ``within`` seconds.  A process killed a moment
    ago takes a while to end on a loaded machine (a case's own child is reparented, so
    nothing of lockstep's can wait for it); one left running sleeps for 600 s."""
    deadline = time.monotonic() + within
    while True:
        running = [p for p in pids if _alive(p)]
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.05)


def _running_pids(root: Path, want: int) -> list[int]:
    """The pids the cases wrote once ``want`` of them have (each case writes its own and a child's)."""
    pids = root / "pids"
    for _ in range(6000):
        found = list(pids.iterdir()) if pids.is_dir() else []
        if len(found) >= want:
            return [int(p.name.rsplit("-", 1)[1]) for p in found]
        time.sleep(0.05)
    raise AssertionError(f"the cases never started: {sorted(p.name for p in found)}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process trees are read in /proc")
@pytest.mark.parametrize("warm", ["false", "true"])
@pytest.mark.parametrize(
    ("signum", "code", "word"),
    [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")],
)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_signal_stops_every_case_and_server(
    git_repo: GitRepo, warm: str, signum: int, code: int, word: str, jobs: str
) -> None:
    root = git_repo.root
    git_repo.commit(
        "pins",
        {
            "lockstep.toml": CONFIG.replace("{warm}", warm),
            "prog.py": PROG,
            "cases/prog.toml": CASES,
        },
    )
    recorded = run_cli("record", cwd=root)
    assert recorded.code == 0, recorded.output
    (root / "slow").write_text("")
    env = dict(os.environ, NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("LOCKSTEP_CONFIG", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "lockstep", "replay", "--jobs", jobs],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    pids: list[int] = []
    servers: list[int] = []
    try:
        pids = _running_pids(root, 2 * int(jobs))
        servers = _children_of(proc.pid)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)  # the cases would sleep 600 s
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        survivors = _still_running(pids + servers)
        for pid in survivors:  # a failing run leaves no sleeper behind
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == code, err.decode()
    assert f"lockstep: {word}" in err.decode()
    assert survivors == []
    assert warm == "false" or servers, "the warm server was not found among lockstep's children"


def _children_of(pid: int) -> list[int]:
    """lockstep's own children right now (the warm servers; cases run in their own sessions)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


@pytest.mark.parametrize(
    ("signum", "raised"), [(signal.SIGTERM, "Terminated"), (signal.SIGINT, "KeyboardInterrupt")]
)
def test_a_signal_inside_a_gc_callback_is_not_lost(signum: int, raised: str) -> None:
    """Python prints and drops an exception raised in a gc callback (Hypothesis installs
    one): the signal must still stop the run at the next case, with nothing printed."""
    import gc

    from lockstep import cancel
    from lockstep.cli.signals import cancel_on_signals

    dropped: list[object] = []
    fired: list[bool] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and not fired:
            fired.append(True)
            os.kill(os.getpid(), signum)
            for _ in range(1000):  # the handler runs here, inside the callback
                pass

    previous_hook = sys.unraisablehook
    sys.unraisablehook = dropped.append
    gc.callbacks.append(callback)
    cancel.reset()
    try:
        with pytest.raises(BaseException) as caught, cancel_on_signals():
            gc.collect()
            cancel.raise_pending()  # what the loops call between cases
    finally:
        gc.callbacks.remove(callback)
        sys.unraisablehook = previous_hook
        cancel.reset()
    assert fired
    assert type(caught.value).__name__ == raised
    assert dropped == []


SLOW_RENDER = """
import os, time


def render(path):
    if os.path.exists("slow"):
        os.makedirs("pids", exist_ok=True)
        open(os.path.join("pids", f"render-{os.getpid()}"), "w").close()
        time.sleep(600)
    return open(path).read().upper()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="processes are read in /proc")
def test_sigterm_kills_the_render_workers_of_a_parallel_corpus_replay(git_repo: GitRepo) -> None:
    """With --jobs 2 the renders run in worker processes; the pool's exit would wait for
    the batches running (here 600 s): SIGTERM kills the workers and exits 143 at once."""
    root = git_repo.root
    fixtures = {f"docs/d{i}.txt": f"doc {i}\n" for i in range(600)}  # 2 batches or more
    git_repo.commit(
        "corpus",
        {
            "lockstep.toml": '[[corpus]]\nname = "docs"\nfixtures = "docs/*.txt"\n'
            'render = "shout:render"\n',
            "shout.py": SLOW_RENDER,
            **fixtures,
        },
    )
    recorded = run_cli("record", cwd=root)
    assert recorded.code == 0, recorded.output
    (root / "slow").write_text("")
    env = dict(os.environ, NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("LOCKSTEP_CONFIG", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "lockstep", "replay", "--jobs", "2"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    workers: list[int] = []
    try:
        workers = _running_pids(root, 2)  # one render per worker process, each asleep
        assert proc.pid not in workers, "the renders ran in lockstep's own process"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)  # the renders would sleep 600 s
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        survivors = [p for p in workers if _alive(p)]
        for pid in survivors:
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 143, err.decode()
    assert "lockstep: terminated" in err.decode()
    assert survivors == []
