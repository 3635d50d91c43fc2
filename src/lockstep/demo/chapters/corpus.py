"""Chapter 1, the corpus: freeze a messy row transformer's output, refactor safely, then not."""

from __future__ import annotations

from lockstep.demo.steps import Chapter, Commit, Run, Say, copy_in

CHAPTER = Chapter(
    title="corpus: a row transformer",
    config="""
[[corpus]]
name = "transform"
fixtures = "fixtures/transform/*.json"
render = "transform.harness:render"
""",
    steps=(
        Say(
            "transform/rows.py turns order rows into invoice lines: Decimal rounding, stacked "
            "coupons, blank-versus-missing names, a Unicode customer. We freeze what it emits "
            "today for six fixtures before touching it."
        ),
        Run(("lockstep", "record", "transform")),
        Run(("lockstep", "status")),
        Commit("Freeze the transformer's output (lockstep record transform)"),
        Say("Refactor 1: extract the coupon arithmetic into one helper, _discount()."),
        copy_in("rows_extract_helper.py", "transform/rows.py"),
        Run(("lockstep", "replay", "transform")),
        Commit("Extract _discount() from transform_row"),
        Say(
            "Refactor 2: a tidy-looking _money() helper that uses round(). It reads the same, "
            "but Python's round() is banker's rounding, not ROUND_HALF_UP."
        ),
        copy_in("rows_tidy_rounding.py", "transform/rows.py"),
        Run(("lockstep", "replay", "transform"), expect=1),
        Run(("lockstep", "diff", "transform", "half_cent.json"), expect=1),
        Say("Replay caught it: half a cent moved. Back to the safe version."),
        copy_in("rows_extract_helper.py", "transform/rows.py"),
        Run(("lockstep", "replay", "transform")),
    ),
)
