"""The ``tape`` fixture through real pytest runs: never records implicitly, checks at teardown."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import Result, run_pytest, snapshot_tree, write_files

RATES = """
def rate(currency):
    return {"EUR": 1.0, "USD": 0.92}[currency]
"""

SUMMARY = """
from shop import rates


def total(lines):
    return round(sum(amount * rates.rate(cur) for amount, cur in lines), 2)
"""

MEMOIZED = """
from shop import rates


def total(lines):
    known = {cur: rates.rate(cur) for cur in sorted({cur for _, cur in lines})}
    return round(sum(amount * known[cur] for amount, cur in lines), 2)
"""

TESTS = """
import pytest

from shop import summary

LINES = [(10, "EUR"), (20, "USD"), (5, "EUR")]


def test_total(tape):
    with tape.patch("shop.rates.rate"):
        assert summary.total(LINES) == 33.4


def test_total_explicit(tape):
    with tape.patch("shop.rates.rate"):
        summary.total(LINES)
    tape.assert_matches()


@pytest.mark.parametrize("days", [0, 30])
def test_total_param(tape, days):
    with tape.patch("shop.rates.rate"):
        summary.total(LINES[: 1 + days // 30])


@pytest.mark.tape(mode="multiset")
def test_unordered(tape):
    with tape.patch("shop.rates.rate"):
        for cur in {"EUR", "USD"}:
            summary.rates.rate(cur)
"""


def pytest_in(root: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    """A real pytest run in the example project (without hypothesis' plugin: it only adds start-up)."""
    return run_pytest("-q", "-p", "no:hypothesispytest", *args, cwd=root, env=env)


def make_project(root: Path) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": '[lockstep]\ndir = "frozen"\n',
            "shop/__init__.py": "",
            "shop/rates.py": RATES,
            "shop/summary.py": SUMMARY,
            "tests/test_shop.py": TESTS,
        },
    )
    return root


def tapes(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / "frozen").rglob("*.tape.json"))


def test_a_missing_golden_fails_with_the_command_that_records_it(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    result = pytest_in(root, "tests/test_shop.py::test_total")
    assert result.code == 1
    assert (
        "no tape recorded for this test (frozen/tapes/tests/test_shop.py/test_total.tape.json)"
        in result.stdout
    )
    assert "pytest --lockstep-record-tapes tests/test_shop.py::test_total" in result.stdout
    assert not (root / "frozen").exists()


def test_record_then_check_then_drift_then_accept_with_why(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    recorded = pytest_in(root, "--lockstep-record-tapes")
    assert recorded.code == 0, recorded.output
    assert tapes(root) == [
        "frozen/tapes/tests/test_shop.py/test_total.tape.json",
        "frozen/tapes/tests/test_shop.py/test_total_explicit.tape.json",
        "frozen/tapes/tests/test_shop.py/test_total_param[0].tape.json",
        "frozen/tapes/tests/test_shop.py/test_total_param[30].tape.json",
        "frozen/tapes/tests/test_shop.py/test_unordered.tape.json",
    ]
    doc = json.loads((root / tapes(root)[0]).read_text(encoding="utf-8"))
    assert doc["name"] == "tests/test_shop.py::test_total"
    assert [e["args"] for e in doc["events"]] == [["EUR"], ["USD"], ["EUR"]]

    again = pytest_in(root, env={"PYTHONHASHSEED": "2"})
    assert again.code == 0, again.output

    write_files(root, {"shop/summary.py": MEMOIZED})
    drifted = pytest_in(
        root, "tests/test_shop.py::test_total", "tests/test_shop.py::test_total_explicit"
    )
    assert drifted.code == 1
    assert "call 2: expected rates.rate('USD'), got rates.rate('EUR')" not in drifted.stdout
    assert "rates.rate('EUR') called 1 time, expected 2" in drifted.stdout
    assert "--lockstep-why" in drifted.stdout
    # test_total fails at teardown (automatic check), test_total_explicit in its body
    assert "ERROR at teardown of test_total" in drifted.stdout
    assert "FAILED tests/test_shop.py::test_total_explicit" in drifted.stdout

    before = snapshot_tree(root)
    no_why = pytest_in(root, "--lockstep-record-tapes", "tests/test_shop.py::test_total")
    assert no_why.code == 1 and "to accept it, say why" in no_why.stdout
    assert snapshot_tree(root) == before

    why = "Look each currency up once."
    accepted = pytest_in(
        root,
        "--lockstep-record-tapes",
        "--lockstep-why",
        why,
        "tests/test_shop.py::test_total",
    )
    assert accepted.code == 0, accepted.output
    doc = json.loads((root / tapes(root)[0]).read_text(encoding="utf-8"))
    assert doc["history"][0]["why"] == why and doc["history"][0]["test"] == "tests/test_shop.py"
    assert pytest_in(root, "tests/test_shop.py::test_total").code == 0


def test_a_failing_test_records_nothing(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    write_files(root, {"tests/test_fail.py": "def test_bad(tape):\n    assert False\n"})
    result = pytest_in(root, "--lockstep-record-tapes", "tests/test_fail.py")
    assert result.code == 1
    assert "teardown" not in result.stdout
    assert not (root / "frozen").exists()


def test_a_tape_recorded_by_another_test_or_broken_is_refused(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    assert pytest_in(root, "--lockstep-record-tapes").code == 0
    folder = root / "frozen/tapes/tests/test_shop.py"
    (folder / "test_total.tape.json").write_bytes(
        (folder / "test_total_explicit.tape.json").read_bytes()
    )
    (folder / "test_total_explicit.tape.json").write_text("{not json", encoding="utf-8")
    before = snapshot_tree(root)
    for extra in ((), ("--lockstep-record-tapes",)):
        result = pytest_in(
            root,
            *extra,
            "tests/test_shop.py::test_total",
            "tests/test_shop.py::test_total_explicit",
        )
        assert result.code == 1
        assert (
            "was recorded by another test ('tests/test_shop.py::test_total_explicit')"
            in result.stdout
        )
        assert "test_total_explicit.tape.json: not valid JSON" in result.stdout
    assert snapshot_tree(root) == before


def test_under_xdist_each_worker_records_and_checks_its_own_tapes(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    recorded = pytest_in(root, "-n", "2", "--lockstep-record-tapes")
    assert recorded.code == 0, recorded.output
    assert len(tapes(root)) == 5
    checked = pytest_in(root, "-n", "2")
    assert checked.code == 0, checked.output
    assert "5 passed" in checked.stdout
