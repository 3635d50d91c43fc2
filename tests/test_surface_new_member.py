"""A package surface that gained a member since it was recorded: ``new-only`` adds it.

The surface is expanded from the source at every run, so a new public function is a new
ledger with no file yet.  ``--lockstep-record-mode=new-only`` (add what is missing, keep
what is recorded) creates its file instead of refusing the whole run; the members
recorded before keep their rows.
"""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, rows_of, run_cli, write_files

UNITS = """
def km(metres):
    return metres / 1000
"""

TESTS = """
from units import km


def test_km():
    assert km(1500) == 1.5
"""


def test_new_only_creates_the_ledger_of_a_member_the_surface_gained(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\npackage = "units"\n',
            "units/__init__.py": UNITS,
            "tests/test_units.py": TESTS,
        },
    )
    first = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert first.code == 0, first.output
    km_ledger = tmp_path / "lockstep/units.km.ledger.jsonl"
    recorded = km_ledger.read_bytes()

    (tmp_path / "units/__init__.py").write_text(
        UNITS + "\n\ndef miles(metres):\n    return metres / 1609\n"
    )
    (tmp_path / "tests/test_units.py").write_text(
        TESTS.replace("import km", "import km, miles")
        + "\n\ndef test_miles():\n    assert miles(1609) == 1\n"
    )
    again = pytest_in(
        tmp_path, "--lockstep-record", "--lockstep-record-mode=new-only", "-q", "tests"
    )
    assert again.code == 0, again.output
    assert len(rows_of(tmp_path / "lockstep/units.miles.ledger.jsonl")) == 1
    assert km_ledger.read_bytes() == recorded
    green = run_cli("replay", cwd=tmp_path)
    assert green.code == 0, green.output


def test_a_named_ledger_without_its_file_still_needs_a_first_recording(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\nname = "km"\ntarget = "units:km"\n',
            "units/__init__.py": UNITS,
            "tests/test_units.py": TESTS,
        },
    )
    refused = pytest_in(
        tmp_path, "--lockstep-record", "--lockstep-record-mode=new-only", "-q", "tests"
    )
    assert refused.code == 4, refused.output
    assert "does not exist yet" in refused.output
