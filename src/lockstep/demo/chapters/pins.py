"""Chapter, pins: a CLI export script whose header carries a run id and a timestamp.

The probe-then-freeze loop: measure the flake, take the verified rule
suggestions, record pins with them, then a safe refactor replays green and a
changed exit code on empty input replays red.
"""

from __future__ import annotations

from lockstep.demo.steps import Chapter, Commit, Run, Say, copy_in

EXPORT = "export/export_invoices.py"

CHAPTER = Chapter(
    title="pins: a nightly export script",
    config="""
[[pins]]
name = "export"
command = ["python", "export/export_invoices.py"]
cases = "export/cases.toml"
env_keys = ["CURRENCY", "TAX_RATE"]
rules = ["iso-timestamp", "run"]
timeout = 20

[[rule]]
name = "run"
pattern = 'run-[0-9a-f]{8}'
replace = 'run-<RUN>'
""",
    steps=(
        Say(
            "export/export_invoices.py is the nightly export: its contract is its exit code, "
            "every byte of stdout and the stderr lines ops grep. Its header carries a run id "
            "and a timestamp, so a golden master taken once would be a coin flip. Measure first."
        ),
        Run(
            (
                "lockstep",
                "probe",
                "--runs",
                "5",
                "--suggest",
                "--",
                "python",
                EXPORT,
                "export/invoices.csv",
            ),
            expect=1,
        ),
        Say(
            "Five runs, five outputs. The suggested rules (the iso-timestamp built-in and a "
            "'run' regex) were verified by re-probing; they are pasted into lockstep.toml. "
            "Probe every case of the pins oracle with them:"
        ),
        Run(("lockstep", "probe", "export", "--runs", "3", "--jobs", "2")),
        Say(
            "One signature per case. Record: each case runs twice more (a varying case is "
            "refused), in a minimal environment, and the rules are written into the file."
        ),
        Run(("lockstep", "record", "export")),
        Commit("Pin the nightly export (lockstep record export)"),
        Say("Refactor 1: pull out _money(), _header() and _open(); same bytes, same exit codes."),
        copy_in("export_invoices_tidy.py", EXPORT),
        Run(("lockstep", "replay", "export")),
        Commit("Extract helpers from the export script"),
        Say(
            "Refactor 2: 'an empty export is a failure, surely' — exit 1 on empty input. "
            "The cron job's alerting depends on that exit code."
        ),
        copy_in("export_invoices_empty_exit.py", EXPORT),
        Run(("lockstep", "replay", "export"), expect=1),
        Say("Replay names the case and the exit code. Back it out."),
        copy_in("export_invoices_tidy.py", EXPORT),
        Run(("lockstep", "replay", "export")),
    ),
)
