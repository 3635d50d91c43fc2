"""What to do next: the cases worth adding, and the recorded input nearest to each survivor.

A mutant that survives on a line no case reaches asks for a new case that
reaches it; the blocks of unreached lines are ranked by how many survivors sit
on them, so the first suggestion closes the most.  For every survivor the
recorded case whose coverage comes closest to its line *in the same function*
is named: that is the input to vary (for a ledger, the recorded call to copy and
change).  A survivor on a line that cases do reach says the comparison is too
weak there (a rule, a tolerance or loose mode hides the difference), not that a
case is missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from lockstep.strength.coverage import CaseCoverage, FileCoverage, function_at
from lockstep.strength.engine import MutantResult, MutationRun


@dataclass(frozen=True)
class Gap:
    """A run of statements in one function that no case reaches."""

    file: Path
    first: int
    last: int
    function: str
    """Qualified name, or ``""`` at module level."""
    lines: tuple[int, ...]
    survivors: int
    nearest_case: str
    """The recorded case that reaches the closest line of the same function (``""``: none)."""


@dataclass(frozen=True)
class Hint:
    """Where a survivor stands: reached or not, and the nearest recorded case."""

    result: MutantResult
    function: str
    nearest_case: str
    nearest_line: int


def nearest_case(fc: FileCoverage, line: int) -> tuple[str, int]:
    """The case reaching the closest line to ``line`` in the same function (ties: earlier line)."""
    _, first, last = function_at(fc.path, line)
    # the ``def`` line itself runs at import (for programs, in every case): not an input to vary
    lo, hi = (first + 1, last) if first else (1, len(fc.lines))
    best: tuple[int, int, str] | None = None
    for reached, cases in fc.reached_by.items():
        if lo <= reached <= hi and cases:
            candidate = (abs(reached - line), reached, cases[0])
            if best is None or candidate < best:
                best = candidate
    return ("", 0) if best is None else (best[2], best[1])


def gaps(coverage: CaseCoverage, run: MutationRun | None) -> list[Gap]:
    """Unreached blocks, most survivors first, then in file order."""
    survivors_at: dict[tuple[Path, int], int] = {}
    for r in run.survivors() if run else ():
        if not r.reached_by:
            for line in r.mutant.lines:
                key = (r.mutant.file, line)
                survivors_at[key] = survivors_at.get(key, 0) + 1
    found: list[Gap] = []
    for path, fc in coverage.files.items():
        for block in _blocks(fc):
            name = function_at(path, block[0])[0]
            count = sum(survivors_at.get((path, line), 0) for line in block)
            found.append(
                Gap(path, block[0], block[-1], name, block, count, nearest_case(fc, block[0])[0])
            )
    return sorted(found, key=lambda g: (-g.survivors, str(g.file), g.first))


def _blocks(fc: FileCoverage) -> Iterable[tuple[int, ...]]:
    """Consecutive unreached statements (no reached statement between them) of one function."""
    statements = sorted(fc.statements)
    unreached = set(fc.unreached())
    block: list[int] = []
    where = None
    for line in statements:
        function = function_at(fc.path, line)[0]
        if line in unreached and (not block or function == where):
            block.append(line)
            where = function
            continue
        if block:
            yield tuple(block)
        block = [line] if line in unreached else []
        where = function
    if block:
        yield tuple(block)


def hints(coverage: CaseCoverage, run: MutationRun) -> list[Hint]:
    """One hint per survivor, unreached ones first (they ask for a case), in file order."""
    out: list[Hint] = []
    files: Mapping[Path, FileCoverage] = coverage.files
    for r in run.survivors():
        fc = files[r.mutant.file]
        case, line = nearest_case(fc, r.mutant.line)
        out.append(Hint(r, function_at(fc.path, r.mutant.line)[0], case, line))
    return sorted(
        out,
        key=lambda h: (bool(h.result.reached_by), str(h.result.mutant.file), h.result.mutant.line),
    )
