"""What ``lockstep probe`` shows: each probed case's signatures, the suggested rules, the verdict.

Functions take the probe's results and return rich :class:`~rich.text.Text`;
the command prints them and chooses the exit code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from lockstep.process import ENV_BASE, format_size
from lockstep.rules import rule_counts_text

if TYPE_CHECKING:  # the results' types only: showing them runs no probe
    from lockstep.probe.runs import ProbeReport, Variant
    from lockstep.probe.suggest import Verified

SHOWN_VARIANTS = 5
"""Signatures listed per stage before "… N more signatures"."""


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _variant_rows(variants: tuple[Variant, ...], text: Text) -> None:
    text.append("      count  exit  stdout        stderr\n")
    for v in variants[:SHOWN_VARIANTS]:
        s = v.signature
        text.append(
            f"    {v.count:7d}  {s.exit_code:4d}  {s.stdout_sha[:12]}  {s.stderr_sha[:12]}\n"
        )
    if len(variants) > SHOWN_VARIANTS:
        text.append(f"    … {plural(len(variants) - SHOWN_VARIANTS, 'more signature')}\n")


def _differences(report: ProbeReport, text: Text) -> None:
    """Where the two most common variants differ: after the rules when they did not suffice."""
    differences = report.differences() if not (report.deterministic and report.rules) else ()
    if not differences:
        return
    stage = "after the rules" if not report.deterministic else "raw"
    text.append(f"  where the two most common variants differ ({stage}):\n")
    for d in differences:
        if d.stream == "exit_code":
            text.append(f"    exit code: {d.left} vs {d.right}\n")
        else:
            text.append(f"    {d.stream} line {d.line}:\n")
            text.append(f"      - {d.left}\n", style="red")
            text.append(f"      + {d.right}\n", style="green")


def report_text(report: ProbeReport, jobs: int) -> Text:
    """One probed case as the user reads it."""
    text = Text()
    verdict_style = "green" if report.deterministic else "bold red"
    text.append(f"{report.target.label}", style="bold")
    text.append(f" — {report.runs} runs, {plural(jobs, 'job')}\n")
    text.append(f"  raw: {plural(len(report.raw), 'signature')}\n")
    _variant_rows(report.raw, text)
    rules = ", ".join(report.rules) or "none"
    text.append(f"  after rules [{rules}]: ")
    text.append(f"{plural(len(report.normalized), 'signature')}\n", style=verdict_style)
    if report.rules:
        _variant_rows(report.normalized, text)
        text.append(f"  {rule_counts_text(report.fired, report.rules)}\n")
    if report.timed_out:
        text.append(
            f"  {report.timed_out} of {report.runs} runs hit the timeout "
            f"({report.target.timeout:g} s) and were killed\n",
            style="bold red",
        )
    if report.truncated:
        text.append(
            f"  {report.truncated} of {report.runs} runs printed more than the output cap "
            f"({format_size(report.target.max_output)} per stream) and were killed\n",
            style="bold red",
        )
    _differences(report, text)
    return text


def suggestion_text(verified: Verified, existing: list[str]) -> Text:
    """The rules proposed for what varies, whether re-probing with them was enough, and the TOML."""
    text = Text()
    for s in verified.secrets:
        text.append(
            f"not suggested: what varies at {s.name!r} is a secret ({s.secret}); ", style="bold red"
        )
        text.append(
            "a rule would file it as volatile: scrub it with [[secret]] (env or pattern) "
            "so that it is never recorded\n"
        )
    if not verified.suggestions and verified.secrets:
        return text
    if not verified.suggestions:
        text.append(
            "no rule suggested: the variants differ in a way no rule can name "
            "(exit code, binary output or a different number of lines)\n",
            style="bold red",
        )
        return text
    if verified.working:
        text.append("suggested rules — verified: ", style="bold green")
        text.append("re-probing with them gives one signature\n")
    else:
        left = max(len(r.normalized) for r in verified.reports)
        text.append("suggested rules — NOT enough: ", style="bold red")
        text.append(f"re-probing with them still gives {left} signatures\n")
    for s in verified.suggestions:
        what = "built-in" if s.builtin else f"recognised {s.kind}" if s.kind != "value" else "regex"
        text.append(f"  {s.name} ({what}), e.g. {s.example!r}\n")
    text.append("\n# paste into the [[pins]] table and lockstep.toml (or pass to --rules):\n")
    text.append(verified.toml(existing))
    return text


def summary_text(reports: Sequence[ProbeReport]) -> Text:
    """How many probed cases are deterministic after the rules, and the fixed environment base."""
    flaky = sum(1 for r in reports if not r.deterministic)
    base = ", ".join(f"{k}={v}" for k, v in ENV_BASE.items())
    summary = (
        f"{len(reports) - flaky} of {plural(len(reports), 'case')} deterministic "
        f"after the rules (env base: PATH inherited, {base})"
    )
    return Text(summary, style="bold green" if not flaky else "bold red")
