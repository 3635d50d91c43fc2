"""Chapter: the tape -- same total, different calls: a memoizing cleanup the output gate misses."""

from __future__ import annotations

from lockstep.demo.steps import Chapter, Commit, Run, Say, copy_in

WHY = "Look each currency's rate up once per summary instead of once per line."

CHAPTER = Chapter(
    title="tape: an invoice summary and its collaborators",
    config="""
[[tape]]
name = "invoice_summary"
driver = "invoicing.tape_driver:drive"
""",
    steps=(
        Say(
            "invoicing/summary.py converts each invoice line to EUR with rates.rate() -- a metered "
            "API in production -- inside the loop, then adds fees.late_fee(). Output is not the "
            "whole behaviour: which collaborators it calls, how often and in what order is what "
            "the quota and the metrics see. We freeze that tape."
        ),
        Run(("python", "-m", "invoicing")),
        Run(("lockstep", "record", "invoice_summary")),
        Run(("lockstep", "replay", "invoice_summary")),
        Commit("Freeze the invoice summary's collaborator calls (lockstep record invoice_summary)"),
        Say(
            "A cleanup memoizes the rate per currency. The total is identical to the cent, so an "
            "output-only gate would sign it off."
        ),
        copy_in("invoicing_summary_memoized.py", "invoicing/summary.py"),
        Run(("python", "-m", "invoicing")),
        Run(("lockstep", "replay", "invoice_summary"), expect=1),
        Say(
            "The tape argues: rates.rate('EUR') and rates.rate('USD') are called once instead of "
            "twice. If fewer lookups is the point, make it a decision: write the test that pins "
            "the new behaviour and accept the drift with one sentence of why."
        ),
        copy_in("test_rates_looked_up_once.py", "test_rates_looked_up_once.py"),
        Run(
            (
                "lockstep",
                "accept",
                "invoice_summary",
                "--why",
                WHY,
                "--test",
                "test_rates_looked_up_once.py",
            )
        ),
        Run(("lockstep", "replay", "invoice_summary")),
        Commit("Look rates up once per currency (accepted tape change, see its history)"),
    ),
)
