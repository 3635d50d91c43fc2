"""The ``tape`` fixture through real pytest runs: never records implicitly, checks at teardown.

Each run loads only lockstep's plugin (and xdist where asked), as a project that
pins its plugins would: plugin autoloading costs seconds per run and proves nothing here.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import pytest_in, snapshot_tree, write_files

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
    result = pytest_in(root, "-q", "tests/test_shop.py::test_total")
    assert result.code == 1
    assert (
        "no tape recorded for this test (frozen/tapes/tests/test_shop.py/test_total.tape.json)"
        in result.stdout
    )
    assert "pytest --lockstep-record-tapes tests/test_shop.py::test_total" in result.stdout
    assert "lockstep/pytest/tape_" not in result.stdout  # a message, not a traceback
    assert not (root / "frozen").exists()


def test_record_then_check_then_drift_then_accept_with_why(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    recorded = pytest_in(root, "-q", "--lockstep-record-tapes")
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

    again = pytest_in(root, "-q", env={"PYTHONHASHSEED": "2"})
    assert again.code == 0, again.output

    write_files(root, {"shop/summary.py": MEMOIZED})
    drifted = pytest_in(
        root, "-q", "tests/test_shop.py::test_total", "tests/test_shop.py::test_total_explicit"
    )
    assert drifted.code == 1
    assert "call 2: expected rates.rate('USD'), got rates.rate('EUR')" not in drifted.stdout
    assert "rates.rate('EUR') called 1 time, expected 2" in drifted.stdout
    assert "--lockstep-why" in drifted.stdout
    # test_total fails at teardown (automatic check), test_total_explicit in its body
    assert "ERROR at teardown of test_total" in drifted.stdout
    assert "FAILED tests/test_shop.py::test_total_explicit" in drifted.stdout

    before = snapshot_tree(root)
    no_why = pytest_in(root, "-q", "--lockstep-record-tapes", "tests/test_shop.py::test_total")
    assert no_why.code == 1 and "to accept it, say why" in no_why.stdout
    assert snapshot_tree(root) == before

    why = "Look each currency up once."
    accepted = pytest_in(
        root,
        "-q",
        "--lockstep-record-tapes",
        "--lockstep-why",
        why,
        "tests/test_shop.py::test_total",
    )
    assert accepted.code == 0, accepted.output
    assert "lockstep: tape changes accepted" in accepted.stdout
    assert (
        "tests/test_shop.py::test_total (frozen/tapes/tests/test_shop.py/test_total.tape.json)"
        in accepted.stdout
    )
    assert "1. outputs identical: yes" in accepted.stdout
    assert f"2. why: {why}" in accepted.stdout
    assert "3. intentional test: tests/test_shop.py" in accepted.stdout
    assert "rates.rate('EUR') called 1 time, expected 2" in accepted.stdout
    doc = json.loads((root / tapes(root)[0]).read_text(encoding="utf-8"))
    assert doc["history"][0]["why"] == why and doc["history"][0]["test"] == "tests/test_shop.py"
    assert pytest_in(root, "-q", "tests/test_shop.py::test_total").code == 0


BAD_INPUT = """
import threading

import pytest

from shop import rates


def test_fails(tape):
    with tape.patch("shop.rates.rate"):
        rates.rate("EUR")
    assert False


def test_spy_on_a_number(tape):
    tape.spy("rates.rate", 3)


def test_unfreezable_argument(tape):
    note = tape.spy("audit.note", lambda message, **extra: None)
    try:
        note("sent", extra={"guard": [threading.Semaphore()]})
    except Exception:
        pass  # legacy code swallows everything; the tape still refuses


@pytest.mark.tape(mode="sorted")
def test_bad_mode(tape):
    pass


@pytest.mark.tape(rules="uuid")
def test_rules_not_a_list(tape):
    pass


@pytest.mark.tape(rules=["run-id"])
def test_unknown_rule(tape):
    pass


@pytest.mark.tape(order="multiset")
def test_unknown_marker_key(tape):
    pass
"""


def test_bad_input_fails_its_test_with_one_message_and_records_nothing(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    write_files(root, {"tests/test_bad.py": BAD_INPUT})
    result = pytest_in(root, "-q", "--lockstep-record-tapes", "tests/test_bad.py")
    assert result.code == 1
    out = result.stdout
    assert "7 failed" in out or ("2 failed" in out and "5 error" in out), out
    assert "teardown of test_fails" not in out  # a failing test is not recorded
    assert "tape.spy('rates.rate', ...): a int is not callable" in out
    assert "E       lockstep.errors.UsageError" in out
    assert (
        'audit.note kwargs["extra"]["guard"][0]: cannot freeze a threading.Semaphore' in out
    )  # swallowed by the test, reported at teardown
    node = "tests/test_bad.py::"
    assert f"{node}test_bad_mode: @pytest.mark.tape: mode must be one of ordered" in out
    assert f"{node}test_rules_not_a_list: @pytest.mark.tape: rules= must be a list" in out
    assert f"{node}test_unknown_rule: @pytest.mark.tape: unknown rule 'run-id'" in out
    assert f"{node}test_unknown_marker_key: @pytest.mark.tape: takes only mode= and rules=" in out
    # One clear message each: no traceback through lockstep's frames, no chained exception.
    assert "lockstep/tape.py" not in out and "lockstep/canon.py" not in out
    assert "lockstep/pytest_tape.py" not in out and "During handling" not in out
    assert not (root / "frozen").exists()

    why = pytest_in(
        root, "-q", "--lockstep-record-tapes", "--lockstep-why", " ", "tests/test_shop.py"
    )
    assert why.code == 4 and "--lockstep-why: say in one sentence" in why.stderr
    assert not (root / "frozen").exists()


def test_a_tape_recorded_by_another_test_or_broken_is_refused(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    assert pytest_in(root, "-q", "--lockstep-record-tapes").code == 0
    folder = root / "frozen/tapes/tests/test_shop.py"
    (folder / "test_total.tape.json").write_bytes(
        (folder / "test_total_explicit.tape.json").read_bytes()
    )
    (folder / "test_total_explicit.tape.json").write_text("{not json", encoding="utf-8")
    before = snapshot_tree(root)
    for extra in ((), ("--lockstep-record-tapes",)):
        result = pytest_in(
            root,
            "-q",
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
    recorded = pytest_in(root, "-q", "-p", "xdist", "-n", "2", "--lockstep-record-tapes")
    assert recorded.code == 0, recorded.output
    assert len(tapes(root)) == 5
    checked = pytest_in(root, "-q", "-p", "xdist", "-n", "2")
    assert checked.code == 0, checked.output
    assert "5 passed" in checked.stdout


def test_the_tape_fixture_uses_the_config_named_by_lockstep_config(tmp_path: Path) -> None:
    """``--lockstep-config`` is the one configuration of the run, for the tape fixture too."""
    root = make_project(tmp_path / "proj")
    (root / "lockstep.toml").unlink()
    write_files(root, {"ci/lockstep.toml": '[lockstep]\ndir = "golden"\n'})
    args = ("--lockstep-config", "ci/lockstep.toml", "tests/test_shop.py::test_total")
    recorded = pytest_in(root, "-q", "--lockstep-record-tapes", *args)
    assert recorded.code == 0, recorded.output
    written = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.tape.json"))
    assert written == ["ci/golden/tapes/tests/test_shop.py/test_total.tape.json"]
    checked = pytest_in(root, "-q", *args)
    assert checked.code == 0, checked.output

    broken = pytest_in(root, "-q", "--lockstep-config", "ci/missing.toml", "tests/test_shop.py")
    assert broken.code != 0
    assert "ci/missing.toml" in broken.output
