"""``pytest --lockstep`` replays ledgers in a process no test has run in.

cssutils' ``test_settings`` adds a production to the module-global ``PRODUCTIONS`` and
never takes it back.  Its ledger items replayed their rows in forks of the pytest
process, which by then had run that test: seven rows of ``CSSParser.__init__`` were red on
unchanged code, and green under ``lockstep replay`` and in the other order."""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, recorded, run_cli

UNITS = """
UNITS = {"m": 1}


def known(prefix):
    return sorted(name for name in UNITS if name.startswith(prefix))


def register(name, factor):
    UNITS[name] = factor
"""

TESTS = """
import units


def test_known():
    assert units.known("") == ["m"]


def test_register():
    units.register("km", 1000)  # and never taken back
    assert units.known("k") == ["km"]
"""

FILES = {
    "lockstep.toml": '[[ledger]]\nname = "known"\ntarget = "units:known"\n',
    "units.py": UNITS,
    "tests/test_units.py": TESTS,
}


def test_a_test_that_leaves_a_global_changed_does_not_turn_the_ledger_red(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    recorded(root, FILES)
    assert run_cli("replay", cwd=root).code == 0
    # the project's tests first, then the ledger's items, in one session
    together = pytest_in(
        root, "--lockstep", "-q", "-p", "no:randomly", "tests/test_units.py", "lockstep"
    )
    assert together.code == 0, together.output
    assert "3 passed" in together.output, together.output  # two tests, the one kept row
    # and under xdist: each worker keeps its own process for the replays
    spread = pytest_in(
        root, "--lockstep", "-q", "-n", "2", "tests/test_units.py", "lockstep", xdist=True
    )
    assert spread.code == 0, spread.output
    # a real change is still red, with the project's tests run first
    units = root / "units.py"
    units.write_text(UNITS.replace("sorted(name for", "sorted(name.upper() for"))
    red = pytest_in(
        root, "--lockstep", "-q", "-p", "no:randomly", "tests/test_units.py", "lockstep"
    )
    assert red.code == 1, red.output
    assert "known.ledger.jsonl::" in red.output


def test_a_target_that_no_longer_imports_is_each_items_error(tmp_path: Path) -> None:
    root = tmp_path / "project"
    recorded(root, FILES)
    (root / "units.py").write_text("import units_gone\n" + UNITS)
    red = pytest_in(root, "--lockstep", "-q", "-p", "no:randomly", "lockstep")
    assert red.code == 1, red.output
    assert "cannot import module 'units'" in red.output, red.output
    assert "Traceback" not in red.output


def test_what_a_replayed_call_prints_is_the_items_own_output(tmp_path: Path) -> None:
    """Printed in the kept process, a replayed call's output reached pytest's terminal as
    the run started; it is the asking item's, shown with its failure."""
    root = tmp_path / "project"
    files = dict(FILES)
    files["units.py"] = UNITS.replace(
        "def known(prefix):\n", "def known(prefix):\n    print('NOISE-FROM-KNOWN')\n"
    )
    recorded(root, files)
    green = pytest_in(root, "--lockstep", "-q", "-p", "no:randomly", "lockstep")
    assert green.code == 0, green.output
    assert "NOISE-FROM-KNOWN" not in green.output, green.output
    units = root / "units.py"
    units.write_text(units.read_text().replace("sorted(name for", "sorted(name.upper() for"))
    red = pytest_in(root, "--lockstep", "-q", "-p", "no:randomly", "lockstep")
    assert red.code == 1, red.output
    captured = red.output.split("Captured stderr call", 1)
    assert len(captured) == 2 and "NOISE-FROM-KNOWN" in captured[1], red.output
