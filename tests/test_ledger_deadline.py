"""A change that makes a replayed call loop forever is red within the ledger's ``timeout``.

``lockstep replay`` used to wait on such a call until someone killed it: a gate in CI ended
as a cancelled job, never as red.  A call past the deadline is now stopped, its row is an
ERROR that says so, and the ledger's later rows are not called (the stopped call may have
left the process half-changed); the other ledgers replay as usual.
"""

from __future__ import annotations

import pytest

from helpers import GitRepo, invoke_cli, pytest_in, run_cli, write_files

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow

STEPS = """
def steps(n):
    count, i = 0, n
    while i > 1:
        i = i // 2 if i % 2 == 0 else 3 * i + 1
        count += 1
    return count


def other(n):
    return n * 2
"""

TESTS = """
from collatz import other, steps


def test_steps():
    assert [steps(n) for n in (1, 6, 7, 27)] == [0, 8, 16, 111]


def test_other():
    assert other(21) == 42
"""


def _config(timeout: str) -> str:
    return (
        f'[[ledger]]\nname = "steps"\ntarget = "collatz:steps"\n{timeout}\n'
        '[[ledger]]\nname = "other"\ntarget = "collatz:other"\n'
    )


def _recorded(git_repo: GitRepo, timeout: str = "timeout = 2") -> None:
    write_files(
        git_repo.root,
        {
            "collatz.py": STEPS,
            "tests/test_collatz.py": TESTS,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
            "lockstep.toml": _config(timeout),
        },
    )
    recorded = pytest_in(git_repo.root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    git_repo.commit("recorded")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_call_that_never_returns_is_an_error_and_the_rest_of_its_ledger_is_not_called(
    git_repo: GitRepo, jobs: str
) -> None:
    _recorded(git_repo)
    assert run_cli("replay", cwd=git_repo.root).code == 0
    # 3 * i + 1 -> 3 * i - 1: 7 -> 20 -> 10 -> 5 -> 14 -> 7 ... never reaches 1
    looping = STEPS.replace("3 * i + 1", "3 * i - 1")
    write_files(git_repo.root, {"collatz.py": looping})
    replayed = run_cli("replay", "--jobs", jobs, "-v", cwd=git_repo.root)
    assert replayed.code == 1, replayed.output
    out = replayed.output
    assert out.count("did not return within 2 s (the ledger's timeout)") == 1, out
    # 27 loops; the rows after it are not called (the stopped call may have left the process
    # half-changed), the one before it passed, and the other ledger replays as usual
    assert out.count("not replayed: row") == 2, out
    table = [line.split() for line in out.splitlines()]
    assert ["steps", "1", "·", "·", "·", "3"] in table, out
    assert ["other", "1", "·", "·", "·", "·"] in table, out


def test_the_pytest_items_of_a_looping_change_fail_and_the_run_ends(git_repo: GitRepo) -> None:
    _recorded(git_repo)
    write_files(git_repo.root, {"collatz.py": STEPS.replace("3 * i + 1", "3 * i - 1")})
    run = pytest_in(git_repo.root, "--lockstep", "-q", "-p", "no:randomly", "lockstep")
    assert run.code == 1, run.output
    assert "3 failed, 2 passed" in run.output, run.output
    assert "did not return within 2 s" in run.output, run.output


def test_a_row_slower_than_the_timeout_is_refused_when_recording(git_repo: GitRepo) -> None:
    slow = STEPS.replace("def other(n):\n", "def other(n):\n    import time\n    time.sleep(3)\n")
    write_files(
        git_repo.root,
        {
            "collatz.py": slow,
            "tests/test_collatz.py": TESTS,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
            "lockstep.toml": _config("timeout = 1.5").replace(
                'target = "collatz:other"\n', 'target = "collatz:other"\ntimeout = 1\n'
            ),
        },
    )
    recorded = pytest_in(git_repo.root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    out = recorded.output
    assert "refused (does not reproduce in a fresh interpreter, not frozen) 1: other(21)" in out
    assert "did not return within 1 s (the ledger's timeout)" in out, out
    assert "steps (create)" in out and "added 4" in out, out  # its own timeout: 1.5 s


@pytest.mark.parametrize("value", ["0", "-1", "nan", "1e9", '"soon"'])
def test_a_timeout_out_of_range_is_a_one_line_error(git_repo: GitRepo, value: str) -> None:
    write_files(
        git_repo.root,
        {"collatz.py": STEPS, "lockstep.toml": _config(f"timeout = {value}")},
    )
    result = invoke_cli("replay", cwd=git_repo.root)
    assert result.code == 2, result.output
    assert "timeout" in result.stderr and len(result.stderr.strip().splitlines()) == 1


LOOPS_ON_ZERO = """
def steps(n):
    count = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        count += 1
    return count
"""


def test_mining_drops_a_generated_input_the_code_loops_on_and_ends(git_repo: GitRepo) -> None:
    """``steps(0)`` never returns on unchanged code: mining used to stay in that call for
    good (its time limit is looked at between inputs)."""
    write_files(
        git_repo.root,
        {
            "collatz.py": LOOPS_ON_ZERO,
            "tests/test_collatz.py": (
                "from collatz import steps\n\n\ndef test_steps():\n"
                "    assert [steps(n) for n in (1, 6, 7, 27)] == [0, 8, 16, 111]\n"
            ),
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
            "lockstep.toml": '[[ledger]]\nname = "steps"\ntarget = "collatz:steps"\ntimeout = 1\n',
        },
    )
    recorded = pytest_in(git_repo.root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    git_repo.commit("recorded")
    mined = run_cli(
        "mine", "steps", "--time-limit", "5s", "--no-mutants", cwd=git_repo.root, timeout=300
    )
    assert mined.code == 0, mined.output
    # 20 times the slowest recorded input, at least 1 s, at most the ledger's timeout
    assert "did not return within 1 s (e.g. (0))" in mined.stdout, mined.stdout
    assert run_cli("replay", cwd=git_repo.root).code == 0


def test_replay_against_a_revision_is_red_when_the_new_code_loops(git_repo: GitRepo) -> None:
    """Each version answers in an interpreter of its own; the new one never answered a
    case it looped on, and ``replay --against`` waited for it for good."""
    _recorded(git_repo)
    write_files(git_repo.root, {"collatz.py": STEPS.replace("3 * i + 1", "3 * i - 1")})
    git_repo.commit("a change that loops on 7")
    against = run_cli(
        "replay", "steps", "--against", "HEAD~1", "--generate", "10", cwd=git_repo.root, timeout=300
    )
    assert against.code == 1, against.output
    assert "the versions differ in 1 oracle(s)" in against.stdout, against.stdout


WAITING = """
import time

READY = set()


def step(n):
    while n == 3 and not READY:  # in a fresh interpreter, nothing made it ready
        time.sleep(0.01)
    return n + 1
"""


def test_rows_a_looping_row_kept_from_verification_are_verified_again(git_repo: GitRepo) -> None:
    """A marshmallow schema's thawed copy looped in verification: the rows after it in its
    ledger were not called there (the stopped call may have left that process changed),
    and each was refused with it; and the stopped row was replayed again, once more for
    each cause looked for, each time taking the whole timeout (596 s against a 3.7 s
    suite).  Now the rows not called are verified again without it, and it is not."""
    write_files(
        git_repo.root,
        {
            "waiting.py": WAITING,
            "tests/test_waiting.py": "import waiting\n\n\ndef test_steps():\n"
            "    waiting.READY.add(1)\n"
            "    assert [waiting.step(n) for n in range(8)] == list(range(1, 9))\n",
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
            "lockstep.toml": '[[ledger]]\nname = "step"\ntarget = "waiting:step"\ntimeout = 1\n',
        },
    )
    recorded = pytest_in(git_repo.root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    out = recorded.output
    assert "added 7" in out and "step(3)" in out, out  # only the looping row refused
    assert "not replayed: row" not in out, out
    assert run_cli("replay", cwd=git_repo.root).code == 0
