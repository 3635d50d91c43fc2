"""A case whose record no longer matches the configuration is *stale*: reported, never run.

Oracle files are data, never instructions.  What runs (argv, env, stdin, the
render or driver) and how it is compared (rules, loose mode, stem length,
compare mode) come only from the configuration and the cases or fixture
files; an oracle file's copy of them is a record of how its cases were made.
Replay compares that record with what the configuration says now, and a
difference makes the case stale (exit 1, naming the field), so an edited
oracle file can neither run a command nor loosen a comparison, and an edited
cases file is never silently ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lockstep.model import Drift, Outcome, Status
from lockstep.rules import RuleRecord


@dataclass(frozen=True)
class Mismatch:
    """One field whose recorded value differs from what the configuration gives now."""

    field: str
    recorded: str
    configured: str


def mismatches(pairs: Iterable[tuple[str, object, object]]) -> list[Mismatch]:
    """``(field, recorded, configured)`` triples whose two values differ, shown as text."""
    return [
        Mismatch(field, _shown(recorded), _shown(configured))
        for field, recorded, configured in pairs
        if recorded != configured
    ]


def rules_mismatch(
    recorded: Sequence[RuleRecord], configured: Sequence[RuleRecord]
) -> list[Mismatch]:
    """The rules of a file against the configured ones: names, and edits under the same name."""
    if list(recorded) == list(configured):
        return []
    return [Mismatch("rules", _rules_text(recorded, configured), _rules_text(configured, recorded))]


def _rules_text(rules: Sequence[RuleRecord], other: Sequence[RuleRecord]) -> str:
    theirs = {r.name: r for r in other}
    shown = [
        f"{r.name} (edited)" if r.name in theirs and theirs[r.name] != r else r.name for r in rules
    ]
    return "[" + ", ".join(shown) + "]"


def _shown(value: object) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 200 else text[:197] + "..."


def stale_outcome(
    oracle: str,
    case_id: str,
    found: Sequence[Mismatch],
    *,
    config_name: str,
    rerecord: str = "",
) -> Outcome:
    """The verdict on a case whose record differs from the configuration in ``found``;
    ``rerecord``: the command that records the oracle again, when it is not ``lockstep
    record NAME --force`` (a ledger recorded from the tests has no driver to run)."""
    fields = ", ".join(m.field for m in found)
    drifts = tuple(
        Drift(
            m.field,
            m.recorded,
            m.configured,
            f"{m.field} changed since record: recorded {m.recorded}, {config_name} and the "
            f"cases now give {m.configured}\n",
        )
        for m in found
    )
    return Outcome(
        oracle,
        case_id,
        Status.STALE,
        drifts,
        note=(
            f"{fields} changed since record (not run; the oracle file is not obeyed): "
            f"re-record with '{rerecord or f'lockstep record {oracle} --force'}'"
        ),
    )
