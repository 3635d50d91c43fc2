"""What a replayed target prints goes to stderr, never into lockstep's report.

sqlparse's ``cli.main`` prints the SQL it formats: replayed, its lines came ahead of the
report on stdout, and ``lockstep replay --json`` wrote no JSON.  The same for a ledger
replayed alone (in this process), several (each in a fork) and ``--jobs`` workers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers import pytest_in, run_cli, write_files

LOUD = """
import os
import sys


def shout(text):
    print("SHOUTING", text)
    sys.stdout.write("AGAIN\\n")
    sys.stdout.flush()
    os.write(1, b"RAW\\n")
    return text.upper()


def whisper(text):
    print("WHISPERING", text)
    return text.lower()
"""

TESTS = """
from loud import shout, whisper


def test_loud():
    assert shout("a") == "A"
    assert whisper("B") == "b"
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("loud")
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "loud"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/loud/__init__.py": LOUD,
            "tests/test_loud.py": TESTS,
        },
    )
    result = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert result.code == 0, result.output
    return root


@pytest.mark.parametrize(
    "args",
    [(), ("loud.shout",), ("--jobs", "2")],
    ids=["each-in-a-fork", "alone", "workers"],
)
def test_replay_json_is_one_document_while_the_target_prints(
    recorded: Path, args: tuple[str, ...]
) -> None:
    result = run_cli("replay", "--json", *args, cwd=recorded)
    assert result.code == 0, result.output
    document = json.loads(result.stdout)
    assert document["verdict"] == "green"
    assert "SHOUTING a" in result.stderr and "AGAIN" in result.stderr, result.stderr
    if os.name == "posix":  # what it writes to descriptor 1 itself
        assert "RAW" in result.stderr, result.stderr


def test_the_text_report_holds_only_lockstep_lines(recorded: Path) -> None:
    result = run_cli("replay", cwd=recorded)
    assert result.code == 0, result.output
    assert "SHOUTING" not in result.stdout and "WHISPERING" not in result.stdout
    assert result.stdout.splitlines()[-1] == "green: 2 cases: 2 passed", result.stdout
