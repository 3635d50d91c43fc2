"""The last chapter, review: the decision table on a safe refactor and on an unsafe one.

Replay alone cannot see an oracle re-recorded to fit the patch.  The review
can: it reads the change itself (which files, which signatures, which reads
of the world, how many lines against how much depends on the module).
"""

from __future__ import annotations

from lockstep.demo.steps import Chapter, Commit, Run, Say, copy_in

CHAPTER = Chapter(
    title="review: the decision table for a change",
    config="",
    needs_git=True,
    steps=(
        Say(
            "One more seam, done right: the three rounding lines become one _money() helper "
            "that keeps ROUND_HALF_UP. Replay, commit, and review the commit."
        ),
        copy_in("rows_money_helper.py", "transform/rows.py"),
        Run(("lockstep", "replay")),
        Commit("Extract _money() keeping ROUND_HALF_UP"),
        Run(("lockstep", "review", "HEAD~1..HEAD")),
        Say(
            "Now the unsafe version, as an assistant might send it: round() instead of "
            "ROUND_HALF_UP, and the oracle re-recorded in the same commit so replay is green."
        ),
        copy_in("rows_tidy_rounding.py", "transform/rows.py"),
        Run(("lockstep", "record", "transform", "--force")),
        Run(("lockstep", "replay")),
        Commit("Tidy the rounding (and refresh the oracle)"),
        Run(("lockstep", "guard", "--base", "HEAD~1"), expect=1),
        Say(
            "Replay is green, because the oracle was changed to fit. The review is not: "
            "the oracle moved with the code. Here it is as Markdown for the pull request:"
        ),
        Run(("lockstep", "review", "HEAD~1..HEAD", "--format", "md"), expect=1),
        Say(
            "The demo ends on that commit, so the red review is yours to read: run "
            "'lockstep review HEAD~1..HEAD' in the demo folder. Every refactor of the story is "
            "in .variants/: repeat any step with the cp line shown above it."
        ),
        Run(("lockstep", "review", "HEAD~1..HEAD"), expect=1),
    ),
)
