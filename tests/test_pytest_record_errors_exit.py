"""A recording run that could not write a ledger does not exit 0.

The tests passed, but a ledger was left as it was (here: its lock file is a symbolic link,
which lockstep never writes through): ``pytest --lockstep-record && git commit`` must stop.
The other ledgers are written, and the linked file is untouched.  A ledger that is itself
a link is not even read: the run stops before its tests, naming it.
"""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, rows_of, write_files

MONEY = """
def cents(amount):
    return round(amount * 100)


def label(amount):
    return f"{amount:.2f} EUR"
"""

TESTS = """
from money import cents, label


def test_money():
    assert cents(1.25) == 125
    assert label(2) == "2.00 EUR"
"""


def _two_ledgers(tmp_path: Path) -> Path:
    """A project recording ``cents`` and ``label``, each its own ledger: its folder."""
    root = tmp_path / "project"
    write_files(
        root,
        {
            "lockstep.toml": (
                '[[ledger]]\nname = "cents"\ntarget = "money:cents"\n'
                '[[ledger]]\nname = "label"\ntarget = "money:label"\n'
            ),
            "money.py": MONEY,
            "tests/test_money.py": TESTS,
        },
    )
    return root


def test_a_ledger_that_could_not_be_written_fails_the_run(tmp_path: Path) -> None:
    root = _two_ledgers(tmp_path)
    first = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert first.code == 0, first.output
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b"precious\n")
    (root / "lockstep/.cents.ledger.jsonl.lock").symlink_to(outside)
    ledger_before = (root / "lockstep/cents.ledger.jsonl").read_bytes()
    (root / "tests/test_money.py").write_text(
        TESTS
        + "\n\ndef test_more():\n    assert cents(0.5) == 50\n    assert label(3) == '3.00 EUR'\n"
    )
    before = outside.read_bytes()

    again = pytest_in(root, "--lockstep-record", "--lockstep-record-mode=new-only", "-q", "tests")
    assert again.code == 1, again.output
    assert "2 passed" in again.output
    assert "lockstep: error:" in again.output and "symbolic link" in again.output
    assert outside.read_bytes() == before
    assert (root / "lockstep/cents.ledger.jsonl").read_bytes() == ledger_before
    assert len(rows_of(root / "lockstep/label.ledger.jsonl")) == 2  # the other one is written


def test_a_ledger_that_is_a_link_stops_the_run_before_its_tests(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\nname = "cents"\ntarget = "money:cents"\n',
            "money.py": MONEY,
            "tests/test_money.py": TESTS,
        },
    )
    assert pytest_in(root, "--lockstep-record", "-q", "tests").code == 0
    ledger = root / "lockstep/cents.ledger.jsonl"
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(ledger.read_bytes())
    ledger.unlink()
    ledger.symlink_to(outside)
    before = outside.read_bytes()
    again = pytest_in(root, "--lockstep-record", "--lockstep-record-mode=new-only", "-q", "tests")
    assert again.code not in (0, 1), again.output
    assert "cents.ledger.jsonl: cannot read: a symbolic link" in again.output
    assert "passed" not in again.output
    assert outside.read_bytes() == before


def test_a_bad_configuration_under_pytest_lockstep_is_one_line(tmp_path: Path) -> None:
    """Met first while collecting, it was a collection error with the plugin's traceback."""
    root = tmp_path / "project"
    write_files(
        root,
        {
            "lockstep.toml": "[lockstep]\nbogus_key = 1\n",
            "money.py": MONEY,
            "tests/test_money.py": TESTS,
        },
    )
    result = pytest_in(root, "--lockstep", "-q", "tests")
    assert result.code == 4, result.output  # pytest's usage error
    assert "ERROR: lockstep: lockstep.toml: lockstep.bogus_key: unknown key" in result.output
    assert "Traceback" not in result.output and "pluggy" not in result.output


def test_a_configuration_with_no_oracle_under_pytest_lockstep_is_no_pass(tmp_path: Path) -> None:
    """An emptied ``lockstep.toml`` made ``pytest --lockstep`` pass the suite alone, with
    no word from lockstep, where ``lockstep replay`` refuses it: a gate whose oracles were
    all removed must not go green."""
    root = tmp_path / "project"
    write_files(root, {"lockstep.toml": "", "money.py": MONEY, "tests/test_money.py": TESTS})
    result = pytest_in(root, "--lockstep", "-q", "tests")
    assert result.code == 4, result.output  # pytest's usage error, as a bad configuration's
    assert "ERROR: lockstep: lockstep.toml: no oracles are configured" in result.output
    assert "passed" not in result.output


def test_paths_the_projects_addopts_names_leave_the_ledgers_in(tmp_path: Path) -> None:
    """pyparsing's ``addopts`` names its test files: pytest reads them as paths given, and
    ``pytest --lockstep`` collected no ledger and passed a drifted one."""
    root = tmp_path / "project"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\nname = "cents"\ntarget = "money:cents"\n',
            "money.py": MONEY,
            "tests/test_money.py": TESTS,
            "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "tests/test_money.py"\n',
        },
    )
    assert pytest_in(root, "--lockstep-record", "-q").code == 0
    green = pytest_in(root, "--lockstep", "-q", "-p", "no:randomly")
    assert green.code == 0 and "2 passed" in green.output, green.output
    money = root / "money.py"
    money.write_text(MONEY.replace("* 100", "* 10"))
    red = pytest_in(root, "--lockstep", "-q", "-p", "no:randomly")
    assert red.code == 1, red.output
    only_tests = pytest_in(root, "--lockstep", "-q", "-p", "no:randomly", "tests")
    assert "1 failed" in only_tests.output  # a path typed on the command line still selects


def test_a_folder_where_a_ledger_goes_is_named_when_refreshed(tmp_path: Path) -> None:
    """``--lockstep-refresh`` writes a ledger it cannot read whole: a folder in its place
    met the rename as an ``IsADirectoryError``, a traceback out of the session's end."""
    root = _two_ledgers(tmp_path)
    assert pytest_in(root, "--lockstep-record", "-q", "tests").code == 0
    ledger = root / "lockstep/cents.ledger.jsonl"
    ledger.unlink()
    ledger.mkdir()
    (ledger / "keep").write_bytes(b"kept\n")

    again = pytest_in(root, "--lockstep-record", "--lockstep-refresh", "-q", "tests")
    assert again.code == 1, again.output
    assert "Traceback" not in again.output, again.output
    errors = [line for line in again.output.splitlines() if "lockstep: error:" in line]
    assert len(errors) == 1, again.output
    assert "cents.ledger.jsonl: is not a regular file" in errors[0], again.output
    assert (ledger / "keep").read_bytes() == b"kept\n"
    assert not [p for p in (root / "lockstep").iterdir() if p.name.endswith(".tmp")]
    assert len(rows_of(root / "lockstep/label.ledger.jsonl")) == 1  # the other one is written
