"""A recording session verifies several ledgers side by side, and reports them in order.

The session's verifying interpreter forks for each ledger's candidate as it comes; the
pytest run writes several ledgers at once in threads that take turns (only one runs at a
time, and a thread gives its turn up only while it waits for its ledger's verdicts).  The
targets here log, in the verifying forks only, when each call starts and ends, so the
tests see whether two ledgers' forks ran at the same time; ``[lockstep] jobs = 1`` runs
them one after another.  Whatever order the forks end in, the summary keeps the order of
the configuration, and each ledger gets its own verdicts: one whose every row is refused,
replayed beside two that reproduce, does not lend them a refusal or take their output.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import recording_errors, run_cli, run_pytest, write_files
from lockstep.oracles.verify_session import HANDOFF_SECONDS, VerifySession, in_turns

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow

SLOW = """
import os
import sys
import time

LOG = os.path.join(os.path.dirname(__file__), "..", "..", "forks.log")  # beside the project


def _in_a_verifying_fork(name, seconds):
    if "--serve" not in sys.orig_argv:  # the recording itself: no wait
        return
    with open(LOG, "a") as log:
        log.write(f"{name} start {time.monotonic()}\\n")
    time.sleep(seconds)
    with open(LOG, "a") as log:
        log.write(f"{name} end {time.monotonic()}\\n")


def first(x):
    _in_a_verifying_fork("first", 1.5)  # the longest: it ends last when run side by side
    return x + 1


def second(x):
    _in_a_verifying_fork("second", 0.8)
    return x * 2


def third(x):
    _in_a_verifying_fork("third", 0.8)
    return x - 1


def here(x):
    return ("--serve" in sys.orig_argv, x)  # never what the verifying forks return
"""

TESTS = """
import pytest

from shop import slow


def test_first():
    assert slow.first(1) == 2


def test_second():
    assert slow.second(2) == 4


def test_third():
    assert slow.third(3) == 2


@pytest.mark.parametrize("x", range(40))
def test_here(x):
    assert slow.here(x) == (False, x)
"""

CONFIG = """
[lockstep]
{jobs}

[[ledger]]
name = "first"
target = "shop.slow:first"

[[ledger]]
name = "here"
target = "shop.slow:here"

[[ledger]]
name = "second"
target = "shop.slow:second"

[[ledger]]
name = "third"
target = "shop.slow:third"
"""


def _spans(root: Path) -> dict[str, tuple[float, float]]:
    """Each logged ledger's start and end in its verifying fork."""
    marks: dict[str, dict[str, float]] = {}
    for line in (root.parent / "forks.log").read_text().splitlines():
        name, what, when = line.split()
        marks.setdefault(name, {})[what] = float(when)
    return {name: (m["start"], m["end"]) for name, m in marks.items()}


def _overlapping(spans: dict[str, tuple[float, float]]) -> list[tuple[str, str]]:
    names = sorted(spans)
    return [
        (a, b)
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        if spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1]
    ]


def _record(tmp_path: Path, jobs: str) -> tuple[Path, str]:
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/slow.py": SLOW,
            "tests/test_slow.py": TESTS,
            "lockstep.toml": CONFIG.format(jobs=jobs),
        },
    )
    result = run_pytest(
        "-q", "tests", "--lockstep-record", cwd=root, plugins=("lockstep.pytest.plugin",)
    )
    return root, result.stdout + result.stderr


def test_ledgers_are_verified_side_by_side_and_summarised_in_their_order(tmp_path: Path) -> None:
    root, out = _record(tmp_path, "jobs = 4")
    spans = _spans(root)
    assert sorted(spans) == ["first", "second", "third"], out
    # first's fork was still replaying while the others ran (and ended before it)
    assert ("first", "second") in _overlapping(spans), spans
    assert spans["second"][1] < spans["first"][1], spans
    # the summary keeps the configuration's order
    sections = [out.index(f"{name} (create)") for name in ("first", "here", "second", "third")]
    assert sections == sorted(sections), out
    for name in ("first", "second", "third"):
        section = out[out.index(f"{name} (create)") :].split("(create)")[1]
        assert "all reproduce" in section and "refused 0" in section, out
    here = out[out.index("here (create)") :].split("(create)")[1]
    assert "verified 0 of 40 new case(s)" in here, out
    for name in ("first", "second", "third"):
        assert run_cli("replay", name, cwd=root).code == 0


def test_jobs_one_verifies_one_ledger_after_another(tmp_path: Path) -> None:
    root, out = _record(tmp_path, "jobs = 1")
    spans = _spans(root)
    assert sorted(spans) == ["first", "second", "third"], out
    assert _overlapping(spans) == [], spans
    assert spans["first"][1] < spans["second"][0] < spans["third"][0], spans


def test_work_in_turns_runs_one_at_a_time_and_keeps_its_order(tmp_path: Path) -> None:
    """Without a wait for a verdict no thread gives its turn up: the calls never overlap,
    and their results (and the first error, in the work's order) come back in order."""
    session = VerifySession(tmp_path)
    running: list[int] = []
    most = [0]
    guard = threading.Lock()

    def job(i: int) -> int:
        with guard:
            running.append(i)
            most[0] = max(most[0], len(running))
        time.sleep(0.01)
        with guard:
            running.remove(i)
        return i * i

    work = [lambda i=i: job(i) for i in range(8)]
    assert in_turns(session, 4, work) == [i * i for i in range(8)]
    assert most[0] == 1

    def failing(i: int) -> int:
        raise ValueError(f"job {i}")

    bad = [lambda: job(0), lambda: failing(1), lambda: failing(2)]
    with pytest.raises(ValueError, match="job 1"):
        in_turns(session, 3, bad)


def test_work_in_turns_hands_over_often_and_then_as_before(tmp_path: Path) -> None:
    """While ledgers are written in turns the interpreter switches threads every half
    millisecond (a verdict is picked up at once); afterwards, and after an error, the
    process's own switch interval is back."""
    session = VerifySession(tmp_path)
    before = sys.getswitchinterval()
    seen: list[float] = []

    def job() -> None:
        seen.append(sys.getswitchinterval())

    in_turns(session, 2, [job, job])
    assert seen == [HANDOFF_SECONDS, HANDOFF_SECONDS]
    assert sys.getswitchinterval() == before

    def failing() -> None:
        raise ValueError("no ledger")

    with pytest.raises(ValueError, match="no ledger"):
        in_turns(session, 2, [job, failing])
    assert sys.getswitchinterval() == before


def test_a_turn_given_up_lets_another_thread_run(tmp_path: Path) -> None:
    """What a replay does while it waits: the other thread runs meanwhile."""
    session = VerifySession(tmp_path)
    order: list[str] = []
    started = threading.Event()
    waited = threading.Event()

    def waits() -> str:
        order.append("a starts")
        started.set()
        with session.turns.given_up():
            assert waited.wait(10)
        order.append("a ends")
        return "a"

    def runs() -> str:
        with session.turns.given_up():  # whichever thread took the turn first, a starts first
            assert started.wait(10)
        order.append("b runs")
        waited.set()
        return "b"

    assert in_turns(session, 2, [waits, runs]) == ["a", "b"]
    assert order == ["a starts", "b runs", "a ends"]


KILLER = """
import os
import signal
import sys
import time


def killer(x):
    if "--serve" in sys.orig_argv:  # in a verifying fork: end the process it was forked from
        os.kill(os.getppid(), signal.SIGKILL)
    return x + 1


def calm(x):
    if "--serve" in sys.orig_argv:
        time.sleep(0.5)  # still replaying when its neighbour's fork kills the server
    return x * 2
"""


def test_a_server_killed_under_ledgers_verified_side_by_side_ends_the_run_with_errors(
    tmp_path: Path,
) -> None:
    """A target that kills the process its verifying fork came from (the package's
    sub-server, then the server itself, whose forks the ledger falls back to): every
    ledger still waiting gets an error, nothing unverified is written, the run ends."""
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/rude.py": KILLER,
            "tests/test_rude.py": "from shop import rude\n\n\n"
            "def test_killer():\n    assert rude.killer(1) == 2\n\n\n"
            "def test_calm():\n    assert rude.calm(2) == 4\n",
            "lockstep.toml": '[lockstep]\njobs = 2\n\n[[ledger]]\nname = "killer"\n'
            'target = "shop.rude:killer"\n\n[[ledger]]\nname = "calm"\n'
            'target = "shop.rude:calm"\n',
        },
    )
    result = recording_errors(root)[0]
    out = result.stdout
    assert result.code == 1, result.output
    both = "2 ledgers (killer, calm): the fresh interpreter could not replay the new cases"
    assert "killer: the fresh interpreter could not replay the new cases" in out or both in out
    assert not (root / "lockstep" / "killer.ledger.jsonl").exists()
    calm = root / "lockstep" / "calm.ledger.jsonl"
    # calm was either verified before the server died, or reported with an error
    assert calm.exists() or both in out or "calm: the fresh interpreter could not replay" in out
    if calm.exists():
        assert run_cli("replay", "calm", cwd=root).code == 0
