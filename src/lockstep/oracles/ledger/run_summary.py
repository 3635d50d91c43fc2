"""The first lines of a recording run's summary, and which ledgers need their own lines.

A package surface is dozens of ledgers: printed one by one, the one ledger that skipped
calls or refused rows drowns in hundreds of routine lines. So the summary opens with the
run's totals — calls seen, rows written, and the share of calls skipped because a value
could not be frozen, with the commonest reasons and where those calls came from — and,
past :data:`COMPACT_OVER` ledgers (unless pytest runs with ``-v``), prints in full only
the ledgers with something to say; the rest are counted on one line, and the members the
suite never called are named, since a ledger of them guards nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from lockstep.model import RecordReport, RefusalReason

if TYPE_CHECKING:
    from lockstep.config import Project

COMPACT_OVER: Final = 12
"""More ledgers than this in one run: routine ones are counted, not printed."""

TOP_REASONS: Final = 3
NAMED: Final = 8


@dataclass(frozen=True)
class CallCounts:
    """What the recorder saw of one target in the whole run (every process)."""

    calls: int = 0
    unfreezable: dict[str, int] = field(default_factory=dict)
    """Why a value could not be frozen -> how many calls were skipped for it."""
    sites: dict[str, list[str]] = field(default_factory=dict)
    """The same reason -> the call sites that passed such values."""
    faults: int = 0
    routine_notes: frozenset[str] = frozenset()
    """The notes every clean recording has (saturation, verification): no reason to print."""

    @property
    def skipped(self) -> int:
        return sum(self.unfreezable.values())


def total_lines(
    counts: Sequence[tuple[RecordReport, CallCounts]], unwritten: Sequence[CallCounts] = ()
) -> list[str]:
    """The run in one line, and the commonest reasons calls were skipped.  ``unwritten``:
    members the tests called whose every call was skipped (no ledger; their calls count)."""
    every = [c for _, c in counts] + list(unwritten)
    calls = sum(c.calls for c in every)
    skipped = sum(c.skipped for c in every)
    added = sum(len(r.added) for r, _ in counts)
    replaced = sum(len(r.replaced) for r, _ in counts)
    refused = sum(len(r.refused) for r, _ in counts)
    line = (
        f"{len(counts)} ledger(s)"
        + (f" and {len(unwritten)} member(s) without one" if unwritten else "")
        + f": saw {calls} call(s); added {added} row(s), "
        f"replaced {replaced}, refused {refused}"
    )
    if not skipped:
        return [line + "; no call skipped"]
    share = 100 * skipped / max(1, calls)
    lines = [line + f"; SKIPPED {skipped} call(s) ({share:.1f}%) whose values cannot be frozen"]
    reasons: dict[str, int] = {}
    sites: dict[str, list[str]] = {}
    for c in every:
        for reason, n in c.unfreezable.items():
            reasons[reason] = reasons.get(reason, 0) + n
            known = sites.setdefault(reason, [])
            known.extend(s for s in c.sites.get(reason, []) if s not in known)
    for reason, n in _ranked(reasons)[:TOP_REASONS]:
        where = f" (called from {', '.join(sites[reason][:3])})" if sites.get(reason) else ""
        lines.append(f"  most skipped: {n} call(s): {reason}{where}")
    return lines


def is_routine(report: RecordReport, counts: CallCounts, *, excluded_calls: int) -> bool:
    """Nothing to say beyond the counts: no refusal, no skipped or excluded call, no fault,
    and no note but the ones every clean recording has."""
    return (
        not report.refused
        and not counts.unfreezable
        and not counts.faults
        and not excluded_calls
        and all(note in counts.routine_notes for note in report.notes)
    )


def compact_lines(routine: Iterable[tuple[RecordReport, CallCounts, int]]) -> list[str]:
    """The routine ledgers of a large run, counted on one line; the uncalled ones named
    (each with its report, its calls and its rows kept that the run did not see)."""
    reports = list(routine)
    if not reports:
        return []
    added = sum(len(r.added) for r, _, _ in reports)
    unchanged = sum(len(r.unchanged) for r, _, _ in reports)
    lines = [
        f"{len(reports)} other ledger(s) recorded with nothing to note: added {added} "
        f"row(s), unchanged {unchanged} (pytest -v prints each ledger)"
    ]
    # a ledger the run did not call but that keeps its rows (a run of one file with
    # --lockstep-new-only) guards what it guarded: only one holding no row guards nothing
    uncalled = [
        r.oracle
        for r, c, kept in reports
        if not c.calls and not (r.added or r.unchanged or r.unchanged_unlisted or kept)
    ]
    if uncalled:
        lines.append(
            f"  note: {len(uncalled)} of them saw no call from the suite and hold no row, so "
            f"they guard nothing: {_listed(uncalled)}"
        )
    return lines


REFUSED_TESTS_SHOWN: Final = 8
"""Lines naming the tests of refused rows, per ledger, unless pytest runs with ``-v``."""


def _listed(items: Sequence[str]) -> str:
    more = f", … (+{len(items) - NAMED})" if len(items) > NAMED else ""
    return ", ".join(items[:NAMED]) + more


def ledger_lines(
    report: RecordReport,
    *,
    unseen_kept: int,
    skipped: dict[str, int],
    refused_by_test: dict[str, list[str]],
    every_test: bool,
    skip_marker: str,
) -> list[str]:
    """One ledger's lines below its report: its counts, the tests whose rows were refused
    (by cause), and the calls left out by excluded tests (``skip_marker`` names the mark)."""
    kept = f"kept {len(report.unchanged)}"
    if unseen_kept:
        kept += f" ({unseen_kept} not seen by this run)"
    counts = (
        f"  counts: added {len(report.added)}, replaced {len(report.replaced)}, {kept}, "
        f"trimmed {len(report.trimmed)}, refused {len(report.refused)}"
    )
    if skipped:
        counts += f", left out {sum(skipped.values())} call(s) of {len(skipped)} excluded test(s)"
    lines = [counts]
    causes = {r.case_id: r.cause for r in report.refused}
    by_test: list[tuple[int, str]] = []  # (rows, line)
    said: dict[str, str] = {}  # a cause is spelled out once: its later tests name the first
    for nodeid, rids in refused_by_test.items():
        by_cause: dict[str, list[str]] = {}
        for rid in rids:
            by_cause.setdefault(causes.get(rid, ""), []).append(rid)
        for cause, ids in by_cause.items():
            because = ""
            if cause in said:
                because = f" (cause: as for {said[cause]})"
            elif cause:
                because = f" (cause: {cause})"
                said[cause] = nodeid
            by_test.append(
                (len(ids), f"  refused {len(ids)} row(s) from {nodeid}{because}: {_listed(ids)}")
            )
    shown = by_test if every_test else by_test[:REFUSED_TESTS_SHOWN]
    lines.extend(line for _, line in shown)
    if len(shown) < len(by_test):
        rest = by_test[len(shown) :]
        lines.append(
            f"  … and {sum(n for n, _ in rest)} more refused row(s) from {len(rest)} other "
            "test(s) (pytest -v names each)"
        )
    if skipped:
        per_test = [f"{nodeid} ({calls})" for nodeid, calls in skipped.items()]
        lines.append(
            f"  skipped calls ({skip_marker} or record_exclude), by test: {_listed(per_test)}"
        )
    return lines


class LedgerOutcome(Protocol):
    """What a recording run wrote for one target, with what the summary adds to it."""

    report: RecordReport
    unseen_kept: int
    skipped: dict[str, int]
    refused_by_test: dict[str, list[str]]
    counts: CallCounts


def write_outcomes(
    terminalreporter: Any,
    project: Project,
    outcomes: Sequence[LedgerOutcome],
    unwritten: Sequence[tuple[str, CallCounts]],
    skip_marker: str,
) -> None:
    """The run's totals, then each ledger; past a few, only those with something to say."""
    from lockstep.report.record_lines import record_plain
    from lockstep.secrets.policy import display_mask

    mask = display_mask(project)
    if len(outcomes) + len(unwritten) > 1:
        counted = [counts for _, counts in unwritten]
        for line in total_lines([(o.report, o.counts) for o in outcomes], counted):
            terminalreporter.write_line(mask(line))
    compact_tests = terminalreporter.config.getoption("verbose") < 1
    compact = len(outcomes) > COMPACT_OVER and compact_tests
    routine = []
    for outcome in outcomes:
        excluded = sum(outcome.skipped.values())
        if compact and is_routine(outcome.report, outcome.counts, excluded_calls=excluded):
            routine.append((outcome.report, outcome.counts, outcome.unseen_kept))
            continue
        for line in record_plain(outcome.report, project.root, mask).splitlines():
            terminalreporter.write_line(line)  # a ledger with news only
        for line in ledger_lines(
            outcome.report,
            unseen_kept=outcome.unseen_kept,
            skipped=outcome.skipped,
            refused_by_test=outcome.refused_by_test,
            every_test=not compact_tests,
            skip_marker=skip_marker,
        ):
            terminalreporter.write_line(line)
    for line in compact_lines(routine):
        terminalreporter.write_line(line)
    for name, counts in unwritten:
        terminalreporter.write_line(
            f"{name}: no ledger: the tests called it {counts.calls} time(s), every call "
            f"skipped (its values cannot be frozen): {_first_reason(counts)}"
        )


def _ranked(reasons: Mapping[str, int]) -> list[tuple[str, int]]:
    """Skip reasons, the most calls first (then by their text: the same order every run)."""
    return sorted(reasons.items(), key=lambda item: (-item[1], item[0]))


def _first_reason(counts: CallCounts) -> str:
    """Why most of one target's calls were skipped, and how many more reasons there are:
    each call of a metaclass's ``__new__`` can have its own (parsimonious: seven calls,
    seven reasons, none among the run's most common)."""
    ranked = _ranked(counts.unfreezable)
    if not ranked:
        return "no reason was kept"
    reason, n = ranked[0]
    more = f"; {len(ranked) - 1} other reason(s)" if len(ranked) > 1 else ""
    return f"{n} call(s): {reason}{more}"


def secret_refusals(reports: Iterable[RecordReport]) -> int:
    """Rows the run refused because they hold a secret: each fails the run, as it makes
    ``lockstep record`` exit 1 (a credential reached a value the suite's calls handle)."""
    return sum(r.reason is RefusalReason.SECRET for report in reports for r in report.refused)


def secrets_failed(count: int) -> str:
    """The summary's line for a run failed by ``count`` rows refused for a secret."""
    return (
        f"lockstep: {count} row(s) refused for a secret (nothing of them written): the run "
        "fails, as 'lockstep record' does; scrub each value with [[secret]] env or pattern, "
        "or if it is no secret, allow it with the [[secret]] allow line its refusal names"
    )


def grouped_errors(errors: Sequence[str], names: Iterable[str]) -> list[str]:
    """The run's errors, those of several ledgers that say the same after the ledger's name
    given once with the names: a listed test module the verifying interpreter could not
    import failed all 25 ledgers of ordered-set's surface with the same line."""
    known = set(names)
    groups: dict[str, list[str]] = {}
    for error in errors:
        name, sep, rest = error.partition(": ")
        key = rest if sep and name in known else error
        groups.setdefault(key, []).append(name if sep and name in known else "")
    out: list[str] = []
    for key, owners in groups.items():
        named = [n for n in owners if n]
        if len(named) < 2:
            out.extend(f"{n}: {key}" if n else key for n in owners)
        else:
            out.append(f"{len(named)} ledgers ({_listed(named)}): {key}")
    return out
