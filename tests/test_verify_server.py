"""The session's verifying interpreter carries only what replaying a candidate needs.

Every recording under a suite starts it (and a second one when a row is refused), and each
ledger's fork starts from it: what it imports or does before its first fork, every run pays.
The target module below logs, from the verifying interpreter, the modules loaded when it is
imported there -- everything the server imported at its start, and nothing of the target's.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run_pytest, write_files

LOGGED = """
import json
import os
import sys

if "--serve" in sys.argv:
    with open(os.path.join(os.path.dirname(__file__), "..", "modules.log"), "a") as log:
        log.write(json.dumps(sorted(sys.modules)) + "\\n")


def double(x):
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


def _project(root: Path) -> None:
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


def test_the_verifying_interpreter_imports_no_recording_or_mining_machinery(
    tmp_path: Path,
) -> None:
    root = tmp_path / "proj"
    _project(root)
    result = run_pytest(
        "-q", "tests", "--lockstep-record", cwd=root, plugins=("lockstep.pytest.plugin",)
    )
    assert result.code == 0, result.output
    assert "verified 1 new case(s) in a fresh interpreter" in result.stdout, result.stdout
    logged = [json.loads(line) for line in (root / "modules.log").read_text().splitlines()]
    assert len(logged) == 1  # imported once, in the verifying interpreter's sub-server
    modules = set(logged[0])
    assert "lockstep.oracles.ledger.replay" in modules  # what it is there for, imported
    assert "lockstep.oracles.ledger.kind" in modules
    loaded = sorted(
        m for m in modules if any(m == r or m.startswith(f"{r}.") for r in RECORDING_ONLY)
    )
    assert loaded == []
