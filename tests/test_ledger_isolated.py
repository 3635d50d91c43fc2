"""Each ledger replays alone, as recording verified it: what one ledger's calls change in
shared state never reaches another ledger's verdict.

``warm()`` caches a label on the module-level units that ``get()`` returns.  Recording
verifies each ledger in a fork of a pristine interpreter, so both ledgers' rows are
written; replaying both in one process made ``get``'s row red on unchanged code (and
green alone, or in the other order).
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import GitRepo, pytest_in, run_cli, write_files

LEAK = """
import os


class Unit:
    def __init__(self, code):
        self.code = code


REGISTRY = {"a": Unit("a"), "b": Unit("b")}


def warm():
    for unit in REGISTRY.values():
        unit.label = unit.code.upper()
    return len(REGISTRY)


def get(code):
    return REGISTRY[code]


def leave(code):
    if os.environ.get("LEAVE"):
        os._exit(3)
    return code
"""

TESTS = """
from leakpkg import get, leave, warm


def test_1_get():
    assert get("a").code == "a"


def test_2_warm():
    assert warm() == 2


def test_3_leave():
    assert leave("x") == "x"
"""


def test_ledgers_replay_alone_whatever_their_order(git_repo: GitRepo) -> None:
    root = git_repo.root
    write_files(
        root,
        {
            "leakpkg/__init__.py": LEAK,
            "tests/test_leak.py": TESTS,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
            # warm first, in the configuration and in the file names pytest collects in
            # order: its calls change what get's return holds
            "lockstep.toml": "".join(
                f'[[ledger]]\nname = "{n}"\ntarget = "leakpkg:{n[2:]}"\n\n'
                for n in ("a_warm", "b_get", "c_leave")
            ),
        },
    )
    recorded = pytest_in(root, "--lockstep-record", "-q", "-p", "no:randomly", "tests")
    assert recorded.code == 0, recorded.output
    git_repo.commit("recorded")
    for args in (("replay",), ("replay", "a_warm", "b_get"), ("replay", "b_get", "a_warm")):
        replayed = run_cli(*args, cwd=root)
        assert replayed.code == 0, (args, replayed.output)
    as_items = pytest_in(root, "--lockstep", "-q", "lockstep")
    assert as_items.code == 0 and "3 passed" in as_items.output, as_items.output

    # a row whose call ends the process ends only its ledger's replay: red, saying how
    ended = run_cli("replay", "-v", cwd=root, env={"LEAVE": "1"})
    assert ended.code == 1, ended.output
    assert "the process replaying its rows ended before its last row (exit code 3)" in (
        ended.stdout
    ), ended.output
    assert "2 passed" in ended.stdout, ended.output  # warm's and get's rows still replayed


def test_a_passing_case_sent_by_id_is_the_outcome_replay_made() -> None:
    """The fork sends a passing case as (oracle, id); what this process builds from it has
    every field of ``Outcome(oracle, id, PASS)``."""
    import msgspec

    from lockstep.model import Outcome, Status
    from lockstep.oracles.ledger.isolated import _passed

    built = _passed("amount", "0f1d7d3bfedaebca")
    assert built == Outcome("amount", "0f1d7d3bfedaebca", Status.PASS)
    made = Outcome("amount", "0f1d7d3bfedaebca", Status.PASS)
    assert msgspec.structs.asdict(built) == msgspec.structs.asdict(made)


LOGGED = """
import json
import os
import sys

LOG = os.path.join(os.path.dirname(__file__), "..", "..", "modules.log")  # beside the project


def _log(when):
    if "replay" in sys.orig_argv:
        with open(LOG, "a") as log:
            log.write(json.dumps([when, os.getpid(), sorted(sys.modules)]) + "\\n")


_log("import")


def double(x):
    _log("call")
    return x * 2


def triple(x):
    _log("call")
    return x * 3
"""


def test_a_ledgers_fork_imports_nothing_the_replaying_process_could_have(tmp_path: Path) -> None:
    """The replaying machinery is imported once, in ``lockstep replay``'s process, before
    the first ledger's fork: a fork per ledger importing it again cost each ledger as much
    as replaying a few hundred rows."""
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "calc/__init__.py": LOGGED,
            "tests/test_calc.py": "from calc import double, triple\n\n\n"
            "def test_both():\n    assert (double(2), triple(2)) == (4, 6)\n",
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
            "lockstep.toml": '[[ledger]]\nname = "double"\ntarget = "calc:double"\n\n'
            '[[ledger]]\nname = "triple"\ntarget = "calc:triple"\n',
        },
    )
    recorded = pytest_in(root, "--lockstep-record", "-q", "-p", "no:randomly", "tests")
    assert recorded.code == 0, recorded.output
    replayed = run_cli("replay", cwd=root)
    assert replayed.code == 0, replayed.output
    logged = [json.loads(line) for line in (tmp_path / "modules.log").read_text().splitlines()]
    assert [when for when, _, _ in logged] == ["import", "call", "call"], logged
    (_, parent, imported), *calls = logged
    assert len({pid for _, pid, _ in calls} - {parent}) == 2  # each ledger in a fork of its own
    machinery = {"lockstep.oracles.ledger.replay", "lockstep.oracles.stale", "lockstep.rules"}
    assert machinery <= set(imported)  # by the replaying process, once
    for _, _, modules in calls:
        assert sorted(m for m in set(modules) - set(imported) if m.startswith("lockstep")) == []
