"""The tests of a ledger's refused rows: a cause shared by several is spelled out once.

tomlkit's ``TOMLFile`` ledgers printed the same three-line cause (a path in pytest's
temporary folder) on every test's line, twelve times in one summary."""

from __future__ import annotations

from pathlib import Path

from lockstep.model import RecordMode, RecordReport, Refusal, RefusalReason
from lockstep.oracles.ledger.run_summary import ledger_lines

TEMP = "it names a path in pytest's temporary folder, which pytest removes"
ENV = "environment variable(s) changed: UNIT"


def _lines(every_test: bool = True) -> list[str]:
    causes = {"a1": TEMP, "b1": TEMP, "b2": ENV, "c1": TEMP, "d1": ""}
    report = RecordReport(
        "read",
        Path("lockstep/read.ledger.jsonl"),
        RecordMode.CREATE,
        refused=[
            Refusal("read", rid, RefusalReason.NOT_REPRODUCED, cause=cause)
            for rid, cause in causes.items()
        ],
    )
    return ledger_lines(
        report,
        unseen_kept=0,
        skipped={},
        refused_by_test={
            "tests/test_a.py::test_a": ["a1"],
            "tests/test_b.py::test_b": ["b1", "b2"],
            "tests/test_c.py::test_c": ["c1", "d1"],
        },
        every_test=every_test,
        skip_marker="lockstep_skip",
    )


def test_a_cause_shared_by_several_tests_is_spelled_out_once() -> None:
    lines = _lines()[1:]
    assert lines == [
        f"  refused 1 row(s) from tests/test_a.py::test_a (cause: {TEMP}): a1",
        "  refused 1 row(s) from tests/test_b.py::test_b (cause: as for tests/test_a.py::test_a): b1",
        f"  refused 1 row(s) from tests/test_b.py::test_b (cause: {ENV}): b2",
        "  refused 1 row(s) from tests/test_c.py::test_c (cause: as for tests/test_a.py::test_a): c1",
        "  refused 1 row(s) from tests/test_c.py::test_c: d1",
    ]
    assert sum(TEMP in line for line in _lines()) == 1
