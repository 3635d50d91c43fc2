"""Accepting pending drifts case by case, with a reason kept in the oracle's history.

A red replay kept with ``--keep-pending`` leaves one pending entry per drifted
case (:mod:`lockstep.oracles.pending`).  A reviewer accepts or rejects each:

* **Accepting** re-records exactly the accepted cases through their kind's own
  record path (:meth:`~lockstep.oracles.OracleKind.accept`): verified in a fresh
  interpreter like any record, every other case untouched.  Before that the
  cases are replayed once more: a case whose oracle entry or new outcome is no
  longer the one the reviewer saw is *stale* and is not accepted.  After it, a
  case counts as accepted only once it replays green.
* The reason (``--why``) goes into ``<dir>/<oracle>.history.jsonl``, an
  append-only JSON-lines file beside the oracle: committed with it, so the review
  of the oracle file shows why each case moved.
* **Rejecting** removes the pending entry; the oracle keeps its case.

The guard's rule holds here too: an oracle and the code it judges never change
in one commit, so accepting is refused while the working tree has production
changes (:func:`production_changes`, the guard's own split of files).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import msgspec

from lockstep.config import OracleSpec, Project
from lockstep.errors import GitError, Rejected
from lockstep.gates.git import Git
from lockstep.gates.guard import guard_change, local_change
from lockstep.model import Outcome, RecordReport, Refusal, ReplayOptions, Status
from lockstep.oracles import kind_of, replay
from lockstep.oracles.lifecycle import check_why
from lockstep.oracles.pending import (
    PendingCase,
    drop_pending,
    outcome_digest,
    read_pending,
    recorded_digest,
)
from lockstep.store import JsonlAppender

HISTORY_SUFFIX: Final = ".history.jsonl"


class HistoryEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """One line of ``<oracle>.history.jsonl``: which case moved, when, and why."""

    at: str
    """UTC time of the acceptance, ISO 8601 to the second."""
    case: str
    why: str
    aspects: list[str]
    replaced: str
    """Digest of the recorded side the case had before (see :mod:`lockstep.oracles.pending`)."""
    now: str


@dataclass(frozen=True)
class Pending:
    """One pending case and the oracle it belongs to."""

    spec: OracleSpec
    entry: PendingCase


@dataclass
class AcceptResult:
    """What accepting some pending cases of one oracle did."""

    oracle: str
    accepted: list[str] = field(default_factory=list)
    stale: list[tuple[str, str]] = field(default_factory=list)
    """``(case id, why it is stale)``: not accepted; replay --keep-pending refreshes it."""
    green: list[str] = field(default_factory=list)
    """Cases that replay green now: nothing to accept, their pending entries are dropped."""
    refused: list[Refusal] = field(default_factory=list)
    """Record's refusals (the case does not reproduce in a fresh interpreter)."""
    report: RecordReport | None = None


def history_path(project: Project, spec: OracleSpec) -> Path:
    """``<dir>/<oracle name>.history.jsonl``."""
    return project.oracle_dir / f"{spec.name}{HISTORY_SUFFIX}"


def pending_cases(project: Project, specs: Iterable[OracleSpec]) -> list[Pending]:
    """Every pending case of ``specs``, oracle by oracle, sorted by case id."""
    return [Pending(spec, entry) for spec in specs for entry in read_pending(project, spec)]


def production_changes(project: Project) -> tuple[str, ...] | None:
    """Production files the working tree changes against HEAD (the guard's split).

    None when the project is not in a git repository with a commit: then there is
    no commit to keep the oracle change apart from, and nothing to refuse.
    """
    try:
        git = Git(project.root)
        change = local_change(git, staged=False)
    except GitError:
        return None
    report = guard_change(project, git, change)
    return tuple(p for finding in report.findings for p in finding.sides.production)


def refuse_mixed(project: Project) -> None:
    """Refuse (exit 1) while production code is changed in the working tree."""
    changed = production_changes(project)
    if changed:
        shown = ", ".join(changed[:5]) + (
            f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        )
        raise Rejected(
            f"the working tree changes production code ({shown}); commit the code "
            "change first, then accept the drift in a commit of its own (the guard's rule)"
        )


def stale_reason(entry: PendingCase, now: Outcome | None) -> str | None:
    """Why a pending case may no longer be accepted as it was reviewed, or None."""
    if now is None:
        return "the case is no longer in the oracle (re-recorded or trimmed since)"
    if now.status is not Status.DRIFT:
        return f"it replays as {now.status.value} now ({now.note or 'see lockstep replay'})"
    if recorded_digest(now) != entry.replaces:
        return "the oracle entry changed since the drift was kept (re-recorded?)"
    if outcome_digest(now) != entry.now:
        return "the code gives another outcome now than the one kept for review"
    return None


def _replayed(project: Project, spec: OracleSpec, cases: frozenset[str]) -> dict[str, Outcome]:
    return {o.case_id: o for o in replay(project, spec, ReplayOptions(only=cases))}


def accept_cases(
    project: Project, spec: OracleSpec, entries: Sequence[PendingCase], why: str
) -> AcceptResult:
    """Accept ``entries`` of one oracle: recheck, re-record through the kind, log the why."""
    reason = check_why(why)
    result = AcceptResult(spec.name)
    if not entries:
        return result
    # The recheck, the re-record and the pending/history bookkeeping are one step under the
    # oracle's lock: a record running at the same time goes wholly before or after it.
    with kind_of(spec).write_lock(project, spec):
        return _accept_locked(project, spec, entries, reason, result)


def _accept_locked(
    project: Project,
    spec: OracleSpec,
    entries: Sequence[PendingCase],
    reason: str,
    result: AcceptResult,
) -> AcceptResult:
    now = _replayed(project, spec, frozenset(e.case for e in entries))
    current: list[PendingCase] = []
    for entry in entries:
        replayed = now.get(entry.case)
        if replayed is not None and replayed.ok:
            result.green.append(entry.case)
            continue
        stale = stale_reason(entry, replayed)
        if stale is None:
            current.append(entry)
        else:
            result.stale.append((entry.case, stale))
    drop_pending(project, spec, result.green)
    if not current:
        return result
    ids = frozenset(e.case for e in current)
    result.report = kind_of(spec).accept(project, spec, ids)
    result.refused = list(result.report.refused)
    after = _replayed(project, spec, ids)
    result.accepted = sorted(cid for cid in ids if cid in after and after[cid].ok)
    stamp = datetime.now(UTC).replace(microsecond=0).isoformat()
    encoder = msgspec.json.Encoder(order="sorted")
    from lockstep.secrets import policy_for

    why = policy_for(project).mask(reason)  # a reason is typed text: it may quote a token
    JsonlAppender(history_path(project, spec)).append_many(
        [
            encoder.encode(
                HistoryEntry(
                    at=stamp,
                    case=e.case,
                    why=why,
                    aspects=[d.aspect for d in e.drifts],
                    replaced=e.replaces,
                    now=e.now,
                )
            )
            for e in current
            if e.case in result.accepted
        ]
    )
    drop_pending(project, spec, result.accepted)
    return result


def reject_cases(project: Project, spec: OracleSpec, cases: Iterable[str]) -> int:
    """Remove pending entries: the oracle keeps its cases. Returns how many remain pending."""
    return drop_pending(project, spec, cases)
