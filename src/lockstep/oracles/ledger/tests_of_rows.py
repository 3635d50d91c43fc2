"""Which test first produced each recorded row: what the summary names a refused row by.

A pytest run recording ledgers notes, for each target, its recorder's call count as each
test starts; a row's first call then falls in one test (:func:`test_of`).  Each process
(the controller, every xdist worker) hands over the row ids and their tests with its part;
these functions join them, read the spilled runs again for the refused rows of a recording
too large to keep in memory, and add the tests to the refusals.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import msgspec

from lockstep.model import RecordReport

if TYPE_CHECKING:
    from lockstep.oracles.ledger.part import RecordingPart


class SpoolLike(Protocol):
    """What one process handed over of a target's recording (a spool line)."""

    @property
    def first_test(self) -> Mapping[str, str]: ...
    @property
    def starts(self) -> Sequence[int]: ...
    @property
    def tests(self) -> Sequence[str]: ...


def tests_by_row(lines: Iterable[SpoolLike]) -> dict[str, list[str]]:
    """Row id -> the tests that first produced it, one per process, in spool order."""
    out: dict[str, list[str]] = {}
    for line in lines:
        for rid, nodeid in line.first_test.items():
            nodes = out.setdefault(rid, [])
            if nodeid not in nodes:
                nodes.append(nodeid)
    return out


def test_of(starts: Sequence[int], tests: Sequence[str], call: int) -> str:
    """The test that made call number ``call``: the last one that started with fewer
    calls made ("" for a call before the first test, in a fixture at collection)."""
    i = bisect.bisect_left(starts, call) - 1
    return tests[i] if i >= 0 else ""


def refused_ids(report: RecordReport) -> set[str]:
    return {r.case_id for r in report.refused}


def add_spilled_tests(
    tests_of: dict[str, list[str]],
    lines: Sequence[SpoolLike],
    parts: Sequence[RecordingPart],
    ids: set[str],
) -> None:
    """Name the tests of rows ``ids`` that processes spilled to disk: read their runs
    once more (only when something was refused).  As the recording of each test does,
    the test is the one of the input's first call, or of the first call that gave
    another outcome where the process saw two."""
    from lockstep.oracles.ledger.spool import read_run

    if not ids:
        return
    for line, part in zip(lines, parts, strict=True):
        first: dict[str, tuple[int, bytes]] = {}
        other: dict[str, int] = {}
        for run in part.runs:  # runs in the order written: calls only grow from one to the next
            for rid, _, call, outcome, _ in read_run(run, 0, remove=False):
                if rid not in ids:
                    continue
                seen = first.get(rid)
                if seen is None:
                    first[rid] = (call, outcome)
                elif outcome != seen[1] and rid not in other:
                    other[rid] = call
        for rid, (first_call, _) in sorted(first.items()):
            test = test_of(line.starts, line.tests, other.get(rid, first_call))
            if test:
                nodes = tests_of.setdefault(rid, [])
                if test not in nodes:
                    nodes.append(test)


def name_refused(report: RecordReport, tests_of: dict[str, list[str]]) -> dict[str, list[str]]:
    """Add its test(s) to each refused row of ``report``; return the row ids by test."""
    by_test: dict[str, list[str]] = {}
    for i, refusal in enumerate(report.refused):
        nodes = tests_of.get(refusal.case_id)
        if nodes:
            report.refused[i] = msgspec.structs.replace(refusal, tests=tuple(nodes))
            for nodeid in nodes:
                by_test.setdefault(nodeid, []).append(refusal.case_id)
    return by_test
