"""The session's verifying interpreter carries only what replaying a candidate needs.

Every recording under a suite starts it (and a second one when a row is refused), and each
ledger's fork starts from it: what it imports or does before its first fork, every run pays;
what a fork imports, every ledger pays.  The target module below logs, from the verifying
interpreter, the modules loaded when it is imported there (everything the server imported
at its start, and nothing of the target's) and when a fork calls it.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import Result, run_pytest, write_files

LOGGED = """
import json
import os
import sys


def _log(when):
    if "--serve" in sys.orig_argv:  # the verifying interpreter (its sub-server, its forks)
        # beside the project: a replayed call may not write into it
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "modules.log"), "a") as log:
            log.write(json.dumps([when, sorted(sys.modules)]) + "\\n")


_log("import")


def double(x):
    _log("call")
    return x * 2
"""

RECORDING_ONLY = (
    "lockstep.oracles.ledger.driver",
    "lockstep.oracles.ledger.merging",
    "lockstep.oracles.ledger.mining",
    "lockstep.oracles.ledger.wrapping",
    "lockstep.oracles.ledger.recorder",
    "lockstep.oracles.ledger.decorator",
    "lockstep.oracles.ledger.pytest_recording",
    "lockstep.oracles.mining",
    "lockstep.mine",
    "lockstep.probe",
    "click",
    "rich",
)
"""Recording, mining and the command line: a replay of a candidate uses none of them."""


def _recorded(root: Path) -> dict[str, list[str]]:
    """Record the project's one ledger under its suite: the modules logged (see LOGGED)."""
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/calc.py": LOGGED,
            "tests/test_calc.py": "from shop import calc\n\n\ndef test_double():\n"
            "    assert calc.double(2) == 4\n",
            "lockstep.toml": '[[ledger]]\nname = "double"\ntarget = "shop.calc:double"\n',
        },
    )
    result = run_pytest(
        "-q", "tests", "--lockstep-record", cwd=root, plugins=("lockstep.pytest.plugin",)
    )
    assert result.code == 0, result.output
    assert "verified 1 new case(s) in a fresh interpreter" in result.stdout, result.stdout
    logged = [json.loads(line) for line in (root.parent / "modules.log").read_text().splitlines()]
    # imported once, in the verifying interpreter's sub-server; called once, in its fork
    assert [when for when, _ in logged] == ["import", "call"]
    return dict(logged)


def test_the_verifying_interpreter_imports_no_recording_or_mining_machinery(
    tmp_path: Path,
) -> None:
    modules = set(_recorded(tmp_path / "proj")["import"])
    assert "lockstep.oracles.ledger.replay" in modules  # what it is there for, imported
    assert "lockstep.oracles.ledger.kind" in modules
    loaded = sorted(
        m for m in modules if any(m == r or m.startswith(f"{r}.") for r in RECORDING_ONLY)
    )
    assert loaded == []


def test_a_fork_imports_nothing_before_it_replays_its_rows(tmp_path: Path) -> None:
    """What every fork would import (and compile, without bytecode) is imported once, in
    the server: a fork starts replaying with the modules it needs already there."""
    logged = _recorded(tmp_path / "proj")
    assert sorted(set(logged["call"]) - set(logged["import"])) == []


def test_the_package_is_imported_for_verification_while_the_tests_run(tmp_path: Path) -> None:
    """The verifying interpreter starts at configure and imports each package of the
    targets (in its sub-server) as soon as it is up, so the first candidate at the
    session's end need not wait for either: the suite's last test sees the import done."""
    root = tmp_path / "proj"
    waits = (
        "import pathlib\nimport time\n\n\n"
        "def test_zz_the_verifying_interpreter_imported_the_package():\n"
        "    log = pathlib.Path(__file__).parent.parent.parent / 'modules.log'\n"
        "    deadline = time.monotonic() + 120\n"
        "    def logged():  # the file is made before its line is written\n"
        "        return log.read_text() if log.exists() else ''\n"
        "    while 'import' not in logged() and time.monotonic() < deadline:\n"
        "        time.sleep(0.02)\n"
        "    assert 'import' in logged()\n"
    )
    write_files(root, {"tests/test_zz_wait.py": waits})
    logged = _recorded(root)
    assert set(logged) == {"import", "call"}


def test_re_recording_new_only_verifies_only_the_new_rows(tmp_path: Path) -> None:
    """``--lockstep-new-only`` keeps every row the ledger already holds, so only rows of
    new inputs are verified: a re-run that saw nothing new forks nothing and leaves the
    ledger's file as it was; one new input is the one call replayed."""
    root = tmp_path / "proj"
    _recorded(root)
    ledger = root / "lockstep" / "double.ledger.jsonl"
    before = ledger.stat()
    log = root.parent / "modules.log"
    log.unlink()

    def rerecord() -> Result:
        flags = ("-q", "tests", "--lockstep-record", "--lockstep-new-only")
        return run_pytest(*flags, cwd=root, plugins=("lockstep.pytest.plugin",))

    again = rerecord()
    assert again.code == 0, again.output
    assert "counts: added 0, replaced 0, kept 1" in again.stdout, again.stdout
    logged = log.read_text().splitlines() if log.exists() else []
    assert [json.loads(line)[0] for line in logged] in ([], ["import"])  # no fork called it
    after = ledger.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)

    write_files(
        root,
        {
            "tests/test_calc.py": "from shop import calc\n\n\ndef test_double():\n"
            "    assert calc.double(2) == 4\n    assert calc.double(5) == 10\n"
        },
    )
    grown = rerecord()
    assert grown.code == 0, grown.output
    assert "counts: added 1, replaced 0, kept 1" in grown.stdout, grown.stdout
    assert "verified 1 new case(s) in a fresh interpreter" in grown.stdout, grown.stdout
    calls = [json.loads(line)[0] for line in log.read_text().splitlines()]
    assert calls.count("call") == 1  # the one new row, replayed once
    assert len(ledger.read_text().splitlines()) == 3  # the header and two rows
