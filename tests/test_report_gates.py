"""The gates' reports are built from result values alone: no git, no project, no printing."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from lockstep.gates.budget import BudgetReport
from lockstep.gates.guard import GuardFinding, GuardReport
from lockstep.gates.replay_all import ReplaySummary
from lockstep.gates.review import Review, Row, Verdict
from lockstep.gates.scope import OracleTouch, Sides
from lockstep.gates.step import ProbeLine, ProbeSummary, StepResult
from lockstep.report.gates import (
    budget_lines,
    guard_lines,
    revert_lines,
    review_lines,
    review_verdict,
    step_lines,
)
from lockstep.report.markdown import review_markdown

REVIEW = Review(
    range_label="main..HEAD",
    base="a" * 40,
    head="b" * 40,
    commits=2,
    rows=(
        Row("every oracle replays green at HEAD", Verdict.PASS, ("prices (corpus): 2/2",)),
        Row("one seam", Verdict.FAIL, ("2 new definitions, limit 1:", "a.py: f | g")),
    ),
)


def test_review_markdown_escapes_cells_and_names_the_range() -> None:
    md = review_markdown(REVIEW)
    assert md.startswith(
        "### lockstep review `main..HEAD`: FAILS\n\n2 commit(s), `aaaaaaaaaa..bbbbbbbbbb`"
    )
    assert "| one seam | ❌ **fail** | 2 new definitions, limit 1:<br>a.py: f \\| g |" in md
    assert md.endswith("|\n")


def test_review_lines_are_the_table_then_the_verdict() -> None:
    table, verdict = review_lines(REVIEW)
    assert isinstance(table, Table) and table.row_count == 2
    assert verdict == review_verdict(REVIEW) == "review: rejected — 1 row(s) failed: one seam"


def test_guard_lines_name_both_sides_of_a_mixed_change() -> None:
    mixed = Sides((OracleTouch("lockstep/p.lock.json", "oracle file"),), ("shop/prices.py",))
    report = GuardReport("HEAD~1..HEAD", (GuardFinding("commit abc", mixed),))
    lines = guard_lines(report)
    assert lines[:5] == [
        "guard: commit abc: oracle files and production code change together",
        "  oracle side:",
        "    lockstep/p.lock.json (oracle file)",
        "  production side:",
        "    shop/prices.py",
    ]
    assert lines[5].startswith("Re-recording an oracle is a change of expected behaviour")
    assert guard_lines(GuardReport("x..HEAD", ())) == ["guard: ok — x..HEAD: no commits to check"]


def test_budget_and_step_lines() -> None:
    budget = BudgetReport("working tree", (), {})
    assert budget_lines(budget) == [
        "budget: ok — 0 changed production lines; no production module under change"
    ]
    result = StepResult(
        ProbeSummary((ProbeLine("export", "c1", 2),), "1 pinned case(s) probed, 2 runs each"),
        ReplaySummary(()),
        budget,
    )
    assert step_lines(result) == [
        "probe:  NONDETERMINISTIC — 1 pinned case(s) probed, 2 runs each",
        "  export/c1: 2 distinct outputs",
        "replay: RED",
        "  no oracles configured: nothing proves the behaviour is unchanged",
        "budget: ok — 0 changed production lines; no production module under change",
        "verdict: red",
    ]
    assert revert_lines(None) == ["nothing to revert: the working tree equals HEAD"]
    assert revert_lines(Path("/r/p.patch"))[1] == "bring it back with: git apply /r/p.patch"
