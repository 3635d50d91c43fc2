"""Chapter: the ledger -- freeze a mixed-returns function's real calls, rewrite its body."""

from __future__ import annotations

from lockstep.demo.steps import Chapter, Commit, Run, Say, copy_in

CHAPTER = Chapter(
    title="ledger: a function with mixed returns",
    config="""
[[ledger]]
name = "parse_amount"
target = "refs.messy:parse_amount"
driver = "refs/exercise.py"
""",
    steps=(
        Say(
            "refs/messy.py's parse_amount returns None, '', a string, a (Decimal, currency) tuple "
            "or a list of them, and raises ValueError or KeyError, depending on the input. "
            "refs/exercise.py calls it the way its callers do; we record every distinct call."
        ),
        Run(("lockstep", "record", "parse_amount")),
        Commit("Freeze parse_amount's calls (lockstep record parse_amount)"),
        Say("Rewrite 1: the same function as small helpers; every recorded call must reproduce."),
        copy_in("messy_faithful.py", "refs/messy.py"),
        Run(("lockstep", "replay", "parse_amount")),
        Commit("Split parse_amount into helpers"),
        Say(
            "Rewrite 2: return a list instead of the (amount, currency) tuple. Equal-looking, "
            "but callers that unpack or hash it see a different type."
        ),
        copy_in("messy_list.py", "refs/messy.py"),
        Run(("lockstep", "replay", "parse_amount"), expect=1),
        Say("Replay names each row, the call as Python, and tuple versus list. Back it out."),
        copy_in("messy_faithful.py", "refs/messy.py"),
        Run(("lockstep", "replay", "parse_amount")),
    ),
)
