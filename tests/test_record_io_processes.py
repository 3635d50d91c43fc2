"""``@record_io`` keeps the rows of every process that made calls: ``multiprocessing`` pools
(fork, spawn, forkserver; workers that finish and workers that are terminated), ``os.fork``
children and a process ended by SIGTERM.  Each test runs a real Python script."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import rows_of
from lockstep.oracles.ledger.kind import read_header

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow

TIMEOUT = 180

WORK = """\
from lockstep import record_io

@record_io(ledger="out.ledger.jsonl")
def square(x):
    return x * x
"""

START_METHODS = [
    m for m in ("fork", "spawn", "forkserver") if m in multiprocessing.get_all_start_methods()
]


def squares_in(path: Path) -> dict[int, int]:
    out: dict[int, int] = {}
    for row in rows_of(path):
        assert row.ok and isinstance(row.args, list) and isinstance(row.args[0], int)
        assert isinstance(row.result, int)
        out[row.args[0]] = row.result
    return out


def clean_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("LOCKSTEP_FLUSH_EVERY", None)
    env.pop("PYTHONWARNINGS", None)
    return env


def run(tmp_path: Path, script: str, *, env: dict[str, str] | None = None) -> tuple[int, str]:
    (tmp_path / "work.py").write_text(WORK)
    (tmp_path / "script.py").write_text(script)
    proc = subprocess.run(
        [sys.executable, "script.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env if env is not None else clean_env(),
        check=False,
    )
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("method", START_METHODS)
@pytest.mark.parametrize("ending", ["terminate", "close-join"])
def test_pool_workers_keep_every_row(tmp_path: Path, method: str, ending: str) -> None:
    """4,000 calls over Pool(4): ``with Pool()`` ends its workers by SIGTERM (terminate);
    close + join lets them finish (multiprocessing's exit callbacks, not atexit)."""
    finish = (
        "    pool.terminate()\n" if ending == "terminate" else "    pool.close()\n    pool.join()\n"
    )
    code, err = run(
        tmp_path,
        "import multiprocessing\n"
        "from work import square\n"
        "if __name__ == '__main__':\n"
        f"    pool = multiprocessing.get_context({method!r}).Pool(4)\n"
        "    assert pool.map(square, range(4000), chunksize=25) == [x * x for x in range(4000)]\n"
        + finish,
    )
    assert code == 0, err
    assert "lockstep" not in err and "Traceback" not in err, err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {x: x * x for x in range(4000)}
    assert read_header(tmp_path / "out.ledger.jsonl").fn == "work:square"


def test_terminating_pools_never_hangs(tmp_path: Path) -> None:
    """``Pool.terminate()`` sends each worker one SIGTERM, often just as it starts to wait on
    a lock that is never released, then joins it.  A Python-level handler alone misses such
    a signal (about two scripts in five hung like this); the workers' kicker thread must not."""
    code, err = run(
        tmp_path,
        "import multiprocessing\n"
        "from work import square\n"
        "if __name__ == '__main__':\n"
        "    ctx = multiprocessing.get_context('fork')\n"
        "    for i in range(25):\n"
        "        pool = ctx.Pool(4)\n"
        "        pool.map(square, range(i * 100, i * 100 + 100), chunksize=5)\n"
        "        pool.terminate()\n",
    )
    assert code == 0, err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {x: x * x for x in range(2500)}


@pytest.mark.parametrize("method", [m for m in ("fork", "spawn") if m in START_METHODS])
def test_a_sigterm_noted_just_before_a_wait_still_ends_the_child(
    tmp_path: Path, method: str
) -> None:
    """The race behind the hang, made certain: the C handler has noted a SIGTERM (its byte is
    in the wakeup fd) and the main thread then waits on a lock nothing releases.  The kicker
    sends SIGTERM to the main thread again; the rows are written and the child dies by it."""
    code, err = run(
        tmp_path,
        "import multiprocessing, os, signal, threading\n"
        "from work import square\n"
        "def child():\n"
        "    from lockstep.oracles.ledger.exit_hooks import EXIT\n"
        "    for x in range(20):\n"
        "        square(x)\n"
        "    os.write(EXIT.kicker.write_fd, bytes([signal.SIGTERM]))\n"
        "    lock = threading.Lock()\n"
        "    lock.acquire()\n"
        "    lock.acquire()\n"
        "if __name__ == '__main__':\n"
        f"    p = multiprocessing.get_context({method!r}).Process(target=child)\n"
        "    p.start()\n"
        "    p.join(60)\n"
        "    assert p.exitcode == -signal.SIGTERM, p.exitcode\n",
    )
    assert code == 0, err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {x: x * x for x in range(20)}


@pytest.mark.parametrize("method", [m for m in START_METHODS if m != "forkserver"])
def test_process_pool_executor_workers_keep_every_row(tmp_path: Path, method: str) -> None:
    code, err = run(
        tmp_path,
        "import concurrent.futures, multiprocessing\n"
        "from work import square\n"
        "if __name__ == '__main__':\n"
        f"    ctx = multiprocessing.get_context({method!r})\n"
        "    with concurrent.futures.ProcessPoolExecutor(3, mp_context=ctx) as ex:\n"
        "        list(ex.map(square, range(600), chunksize=20))\n",
    )
    assert code == 0, err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {x: x * x for x in range(600)}


def test_a_function_in_the_spawned_main_script_keeps_its_name(tmp_path: Path) -> None:
    """A spawn worker imports the main script as ``__mp_main__``: the rows still name the
    target the parent (and replay) use, ``script:cube``."""
    code, err = run(
        tmp_path,
        "import multiprocessing\n"
        "from lockstep import record_io\n"
        "@record_io(ledger='cube.ledger.jsonl')\n"
        "def cube(x):\n"
        "    return x ** 3\n"
        "if __name__ == '__main__':\n"
        "    cube(-1)\n"
        "    with multiprocessing.get_context('spawn').Pool(2) as pool:\n"
        "        pool.map(cube, range(200))\n",
    )
    assert code == 0, err
    path = tmp_path / "cube.ledger.jsonl"
    assert read_header(path).fn == "script:cube"
    assert sorted(row.args[0] for row in rows_of(path)) == list(range(-1, 200))


def test_os_fork_children_write_their_own_calls(tmp_path: Path) -> None:
    """A child that exits normally writes its calls; one ending by ``os._exit`` writes what
    it flushed and loses the rest (no exit hook runs); the parent writes its own calls."""
    code, err = run(
        tmp_path,
        "import os, sys\n"
        "from work import square\n"
        "def child(calls, end):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        for x in calls:\n"
        "            square(x)\n"
        "        end()\n"
        "    _, status = os.waitpid(pid, 0)\n"
        "    assert os.waitstatus_to_exitcode(status) == 0\n"
        "for x in range(10):\n"
        "    square(x)\n"
        "child(range(10, 20), lambda: sys.exit(0))\n"
        "child(range(20, 30), lambda: (square.lockstep_flush(), os._exit(0)))\n"
        "child(range(40, 50), lambda: os._exit(0))\n"
        "for x in range(30, 40):\n"
        "    square(x)\n",
    )
    assert code == 0, err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {x: x * x for x in range(40)}


def test_sigterm_is_never_left_blocked_after_a_fork(tmp_path: Path) -> None:
    """SIGTERM is held across ``os.fork`` (a worker must not lose one sent as it starts);
    both processes, and what the child runs, must get it back unblocked."""
    code, err = run(
        tmp_path,
        "import os, signal, subprocess, sys\n"
        "from work import square\n"
        "square(1)\n"
        "def blocked():\n"
        "    return signal.SIGTERM in signal.pthread_sigmask(signal.SIG_BLOCK, [])\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    square(2)\n"
        "    sleeper = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "    sleeper.terminate()\n"
        "    os._exit(10 * blocked() + (sleeper.wait(30) != -signal.SIGTERM))\n"
        "_, status = os.waitpid(pid, 0)\n"
        "assert os.waitstatus_to_exitcode(status) == 0, status\n"
        "assert not blocked()\n",
    )
    assert code == 0, err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {1: 1}


def test_a_child_writes_only_calls_made_after_the_fork(tmp_path: Path) -> None:
    """The parent's calls before the fork are the parent's to write: a child that adds
    nothing writes nothing, even when the parent then dies without writing."""
    code, err = run(
        tmp_path,
        "import os\n"
        "from work import square\n"
        "square(1)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    square(2)\n"
        "    raise SystemExit(0)\n"
        "os.waitpid(pid, 0)\n"
        "os._exit(0)\n",
    )
    assert code == 0, err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {2: 4}


SLEEPER = """\
import sys, time
from work import square
for x in range(100):
    square(x)
print("recorded", flush=True)
time.sleep(120)
"""


def sigterm_after_ready(tmp_path: Path, script: str) -> tuple[int, str]:
    (tmp_path / "work.py").write_text(WORK)
    (tmp_path / "script.py").write_text(script)
    proc = subprocess.Popen(
        [sys.executable, "script.py"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline() == "recorded\n"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
        proc.wait()
    return proc.returncode, err


def test_sigterm_keeps_the_rows_and_the_exit_status(tmp_path: Path) -> None:
    code, err = sigterm_after_ready(tmp_path, SLEEPER)
    assert code == -signal.SIGTERM, err
    assert "Traceback" not in err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {x: x * x for x in range(100)}


def test_a_sigterm_handler_of_the_program_is_left_alone(tmp_path: Path) -> None:
    """Installed before the decorator runs, it stays the handler; its ``sys.exit`` runs
    atexit, which writes the rows."""
    script = "import signal, sys\nsignal.signal(signal.SIGTERM, lambda *_: sys.exit(7))\n" + SLEEPER
    code, err = sigterm_after_ready(tmp_path, script)
    assert code == 7, err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {x: x * x for x in range(100)}


def test_sigterm_during_a_write_lets_it_finish_then_dies(tmp_path: Path) -> None:
    """SIGTERM arriving while this very thread writes the ledger: no deadlock, no torn file."""
    code, err = run(
        tmp_path,
        "import os, signal\n"
        "import lockstep.oracles.ledger.decorator as recorder\n"
        "from work import square\n"
        "real = recorder.merge_into_file\n"
        "def interrupted(*args, **kwargs):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    return real(*args, **kwargs)\n"
        "recorder.merge_into_file = interrupted\n"
        "for x in range(50):\n"
        "    square(x)\n"
        "square.lockstep_flush()\n"
        "print('survived')\n",
    )
    assert code == -signal.SIGTERM, err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {x: x * x for x in range(50)}


def test_sigterm_while_the_table_lock_is_held(tmp_path: Path) -> None:
    """The handler runs between two bytecodes, maybe while the interrupted thread holds the
    recorder's lock: the rows are still written."""
    code, err = run(
        tmp_path,
        "import os, signal\n"
        "from work import square\n"
        "for x in range(50):\n"
        "    square(x)\n"
        "square.lockstep_recorder._lock.acquire()\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n",
    )
    assert code == -signal.SIGTERM, err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {x: x * x for x in range(50)}


def test_an_outcome_differing_between_workers_is_reported(tmp_path: Path) -> None:
    """Two workers see ``mood(0)`` give two outcomes: the second's rows owe their outcome to
    the worker's state, so they do not reproduce in a fresh interpreter and are not written;
    stderr names them, and the ledger keeps the first one's rows only."""
    code, err = run(
        tmp_path,
        "import multiprocessing\n"
        "from lockstep import record_io\n"
        "MOOD = 'calm'\n"
        "@record_io(ledger='mood.ledger.jsonl')\n"
        "def mood(x):\n"
        "    return f'{MOOD}:{x}'\n"
        "def work(tag):\n"
        "    global MOOD\n"
        "    MOOD = tag\n"
        "    mood(0)\n"
        "    mood(len(tag))\n"
        "if __name__ == '__main__':\n"
        "    ctx = multiprocessing.get_context('fork')\n"
        "    for tag in ('calm', 'angry'):\n"
        "        p = ctx.Process(target=work, args=(tag,))\n"
        "        p.start()\n"
        "        p.join()\n"
        "        assert p.exitcode == 0\n",
    )
    assert code == 0, err
    rows = {row.args[0]: row for row in rows_of(tmp_path / "mood.ledger.jsonl")}
    assert {x: row.result for x, row in rows.items()} == {0: "calm:0", 4: "calm:4"}
    assert "LedgerRecordWarning" in err
    assert (
        f"mood(0) [{rows[0].id}]: does not reproduce in a fresh interpreter (result: recorded "
        "returned 'angry:0', fresh interpreter returned 'calm:0')"
    ) in err
    assert "mood(5) [" in err


def test_flush_every_bounds_what_sigkill_loses(tmp_path: Path) -> None:
    env = {**clean_env(), "LOCKSTEP_FLUSH_EVERY": "100"}
    code, err = run(
        tmp_path,
        "import os, signal\n"
        "from work import square\n"
        "for x in range(250):\n"
        "    square(x)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n",
        env=env,
    )
    assert code == -signal.SIGKILL, err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {x: x * x for x in range(200)}


def test_periodic_writes_are_silent_and_the_final_one_reports(tmp_path: Path) -> None:
    """Notes (here: calls skipped) are told once, at the end, with the final counts."""
    env = {**clean_env(), "LOCKSTEP_FLUSH_EVERY": "10"}
    code, err = run(
        tmp_path,
        "import threading\n"
        "from work import square\n"
        "lock = threading.Semaphore()\n"
        "for x in range(95):\n"
        "    square(x)\n"
        "    try:\n"
        "        square(lock)\n"
        "    except TypeError:\n"
        "        pass\n",
        env=env,
    )
    assert code == 0, err
    assert err.count("LedgerRecordWarning") == 1, err
    assert "skipped 95 call(s)" in err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {x: x * x for x in range(95)}


def test_a_bad_flush_every_is_reported_and_ignored(tmp_path: Path) -> None:
    env = {**clean_env(), "LOCKSTEP_FLUSH_EVERY": "often"}
    code, err = run(tmp_path, "from work import square\nsquare(3)\n", env=env)
    assert code == 0, err
    assert "LOCKSTEP_FLUSH_EVERY='often' is not a whole number of calls" in err
    assert squares_in(tmp_path / "out.ledger.jsonl") == {3: 9}


def test_the_process_the_user_started_reports_at_exit(tmp_path: Path) -> None:
    """``@record_io`` says what it wrote (calls seen, rows kept, saturation) on stderr at exit."""
    script = tmp_path / "job.py"
    script.write_text(
        "from lockstep import record_io\n\n\n"
        "@record_io(ledger='out.ledger.jsonl')\n"
        "def square(x):\n    return x * x\n\n\n"
        "for i in range(10):\n    square(i % 4)\n"
    )
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "lockstep: out.ledger.jsonl: job:square: saw 10 call(s), kept 4 distinct row(s)" in (
        proc.stderr
    )
