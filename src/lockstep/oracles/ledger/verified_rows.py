"""Which recorded rows a ledger keeps: those that replay as recorded in a fresh interpreter.

A recording's rows are first narrowed to those worth verifying (:func:`rows_to_verify`:
no transient path, no lowered recursion limit, no secret, under ``--new-only`` only the
new), then verified in rounds until a round refuses nothing (:func:`reproducible`), each
round's candidate written by :func:`write_candidate`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from lockstep.config import Project
from lockstep.errors import LockstepError
from lockstep.model import RecordMode, RecordReport, Refusal, RefusalReason
from lockstep.oracles.ledger.context import (
    explaining,
    recursion_changed,
    refusal_hint,
    zone_changed,
)
from lockstep.oracles.ledger.file import iter_rows, read_header, write_rows
from lockstep.oracles.ledger.format import ENCODER, SUFFIX, LedgerRow, Param, row_text
from lockstep.oracles.ledger.linked_args import linked_arguments
from lockstep.oracles.ledger.printed import PRINTED, PRINTED_ASPECT
from lockstep.oracles.ledger.refused_rows import only_raising_left, refused_where
from lockstep.oracles.ledger.secret_rows import without_secrets
from lockstep.oracles.ledger.seed_suspects import (
    holds_hashing_class,
    ordered_texts,
    outcome_parts,
    package_builds_sets,
)
from lockstep.oracles.ledger.set_reach import target_reaches_sets
from lockstep.oracles.ledger.spec import LedgerSpec
from lockstep.oracles.ledger.spool import RowFile
from lockstep.oracles.ledger.transient_paths import without_transient_paths
from lockstep.oracles.lifecycle import new_ids
from lockstep.oracles.verify import (
    ADDRESS_CAUSE,
    UNSETTLED_CAUSE,
    VERIFY_ROUNDS,
    Prestarted,
    Verdict,
    Verification,
    verify,
)
from lockstep.secrets import policy_for

if TYPE_CHECKING:
    from lockstep.oracles.ledger.merging import Recording


def rows_to_verify(
    project: Project,
    path: Path,
    mode: RecordMode,
    recording: Recording,
    signature: list[Param],
    report: RecordReport,
    transient: Sequence[str] = (),
) -> tuple[Mapping[str, LedgerRow], Mapping[str, LedgerRow]]:
    """The rows of ``recording`` the ledger at ``path`` may keep (none naming a transient
    path, none under a lowered recursion limit, none holding a secret: each refused in
    ``report``), and of those the ones to verify (under ``--new-only``, the new)."""
    lasting = without_transient_paths(recording.rows, report, transient)
    lasting = refused_where(lasting, report, _under_another_recursion_limit(recording))
    secret_free = without_secrets(policy_for(project), lasting, report, signature)
    return _not_kept_as_recorded(path, mode, secret_free), secret_free


def write_candidate(
    project: Project,
    spec: LedgerSpec,
    fn: str,
    signature: list[Param],
    rows: Mapping[str, LedgerRow],
    folder: Path,
) -> None:
    """The ledger of ``rows`` alone, as a verifying interpreter reads it, in ``folder``."""
    write_rows(
        folder / f"{spec.name}{SUFFIX}",
        fn,
        signature,
        project.config.lockstep.stem_length,
        rows if isinstance(rows, RowFile) else rows.values(),
        scratch=True,  # in verify's own temp folder: read once, then removed
    )


def _not_kept_as_recorded(
    path: Path, mode: RecordMode, rows: Mapping[str, LedgerRow]
) -> Mapping[str, LedgerRow]:
    """The rows to verify: under ``--new-only``, those whose ids the ledger does not hold.

    The ledger keeps its own row for every other id whatever the call gives now (a row
    that now differs gets only its note), so verifying those would keep or refuse
    nothing: re-recording a suite over its ledgers forks only for what is new.  Every row
    in every other mode; a ledger that cannot be read is left for the merge to report.
    The ledger's ids are walked beside the rows' (both sorted), never held.
    """
    if mode is not RecordMode.NEW_ONLY or not rows:
        return rows
    try:
        recorded = (row.id for _, row in iter_rows(path, read_header(path)))
        new = new_ids(iter(rows) if isinstance(rows, RowFile) else sorted(rows), recorded)
    except (OSError, LockstepError):
        return rows
    if len(new) == len(rows):
        return rows
    if isinstance(rows, RowFile):
        wanted = set(new)
        return RowFile.from_lines((rid, line) for rid, line in rows.lines() if rid in wanted)
    return {rid: rows[rid] for rid in new}


def _under_another_recursion_limit(
    recording: Recording,
) -> Callable[[LedgerRow], tuple[str, str] | None]:
    """Rows a test recorded under a recursion limit it lowered: refused (no replay runs
    there); under a raised one (Hypothesis's), verification decides as for any row."""
    contexts = recording.contexts

    def why(row: LedgerRow) -> tuple[str, str] | None:
        hint = contexts.get(row.id, "")
        if not recursion_changed(hint):
            return None
        return (
            "recorded under a recursion limit the test set",
            f"{hint}: replay runs under the interpreter's own limit, where the call may "
            "recurse far longer or end otherwise",
        )

    return why


def reproducible(
    project: Project,
    spec: LedgerSpec,
    recording: Recording,
    rows: Mapping[str, LedgerRow],
    signature: list[Param],
    report: RecordReport,
    started: Prestarted | None = None,
    within: Mapping[str, LedgerRow] | None = None,
) -> Mapping[str, LedgerRow]:
    """The recorded rows that replay green in a fresh interpreter with another hash seed
    (``within``: the rows ``rows`` were taken from; all of them but those refused).

    Rows that owe their outcome to the recording's context (a patched collaborator, a
    registry a test filled, a frozen clock, set order under one hash seed) are refused
    here, with what differed, instead of making the next replay red.

    **What is written is what was verified.**  A refused row is not replayed before the
    rows after it any more, and a row may have reproduced only because of it: jmespath's
    parser caches each expression, so a call that found its expression cached answered
    otherwise once the call that cached it was refused (63 rows of 487 drifted on the
    very next replay).  So the rows left are verified once more, as the ledger will hold
    them, until a round refuses nothing (at most :data:`VERIFY_ROUNDS`; the rows left
    then are refused too, as their replay never settled).
    """
    kept = rows if within is None else within
    pending = rows
    dropped: set[str] = set()
    stripped: dict[str, LedgerRow] = {}  # rows whose printed text alone did not reproduce
    again = 0  # rows refused after the first round
    runs = 0
    for round_number in range(VERIFY_ROUNDS):
        if not pending:  # nothing to verify: no candidate folder, no fork
            break
        runs += 1
        checked = _verified(project, spec, recording, pending, signature, started)
        started = None  # a prestarted interpreter replays the first candidate only
        failed = checked.refused()
        if round_number == 0:
            report.notes.append(checked.note(len(pending)))
        reprinted = _printed_only(failed, pending)
        if reprinted:  # kept without their printed text, verified again as such
            failed = [v for v in failed if v.case_id not in reprinted]
            stripped.update(reprinted)
            pending = {**pending, **reprinted}  # (a dict: _printed_only reads no row file)
            if not failed:
                continue
        if round_number > 0:
            again += len(failed)
        for verdict in failed:
            _refuse(spec, recording, pending[verdict.case_id], verdict, round_number, report)
        if not failed:
            break
        dropped |= {v.case_id for v in failed}
        pending = _without(pending, {v.case_id for v in failed})
    else:
        for row_id in list(_ids(pending)):  # the last round still refused some: none settled
            _refuse(spec, recording, pending[row_id], None, VERIFY_ROUNDS, report)
            dropped.add(row_id)
            again += 1
    if runs > 1:
        report.notes.append(
            f"verified the rows left {runs - 1} more time(s), each time without the rows "
            f"refused before: {again} more did not reproduce and were not written"
        )
    left = _without(kept, dropped) if dropped else kept
    if stripped:
        left = {rid: stripped.get(rid, row) for rid, row in left.items()}
        shown = ", ".join(sorted(stripped)[:8]) + (", …" if len(stripped) > 8 else "")
        report.notes.append(
            f"kept {len(stripped)} row(s) without what their call printed, which a fresh "
            f"interpreter printed otherwise (what the call read, such as a test's stdin, is no "
            f"part of its input): {shown}"
        )
    report.notes.extend(only_raising_left(rows, dropped, left))
    return left


def _printed_only(failed: list[Verdict], pending: Mapping[str, LedgerRow]) -> dict[str, LedgerRow]:
    """The rows of ``failed`` whose only difference was what their call printed (the
    printed text is compared last, so it is their first drift only when it is the only
    one), each without that text: the rest of its outcome reproduced, and it guards it."""
    if isinstance(pending, RowFile):
        return {}
    out: dict[str, LedgerRow] = {}
    for verdict in failed:
        row = pending.get(verdict.case_id)
        if row is None or not verdict.reason.startswith(f"{PRINTED_ASPECT}: "):
            continue
        mutated = row.mutated if isinstance(row.mutated, dict) else {}
        if PRINTED not in mutated:
            continue
        rest = {k: v for k, v in mutated.items() if k != PRINTED}
        out[row.id] = msgspec.structs.replace(row, mutated=rest or msgspec.UNSET)
    return out


def _verified(
    project: Project,
    spec: LedgerSpec,
    recording: Recording,
    rows: Mapping[str, LedgerRow],
    signature: list[Param],
    started: Prestarted | None,
) -> Verification:
    """One verification of ``rows`` as a ledger holding just them."""

    def candidate(folder: Path) -> Collection[str]:
        write_candidate(project, spec, recording.fn, signature, rows, folder)
        return rows  # its ids: ``in`` bisects a row file, nothing is listed

    # Rows a test recorded under a zone of its own are verified in a second zone as well.
    zoned = [rid for rid, hint in recording.contexts.items() if zone_changed(hint) and rid in rows]
    return verify(
        project,
        spec,
        candidate,
        started=started,
        explained=explaining(recording.contexts),
        zone_suspects=zoned,
        seed_suspects=functools.partial(_seed_suspects, rows, recording.fn),
    )


def _refuse(
    spec: LedgerSpec,
    recording: Recording,
    row: LedgerRow,
    verdict: Verdict | None,
    round_number: int,
    report: RecordReport,
) -> None:
    """Name a row that did not reproduce in ``report`` (``verdict``: None when it was
    left unsettled by the last round), with its causes."""
    cause = verdict.cause if verdict is not None else ""
    reason = verdict.reason if verdict is not None else ""
    hint = refusal_hint(recording.contexts.get(row.id, ""), reason, cause)
    causes = [c for c in (linked_arguments(row), hint, cause) if c]
    if round_number > 0:
        causes.append(UNSETTLED_CAUSE)
    if cause == ADDRESS_CAUSE:  # certain: what else changed is beside the point
        causes = [ADDRESS_CAUSE]
    report.refused.append(
        Refusal(
            spec.name,
            row.id,
            RefusalReason.NOT_REPRODUCED,
            label=f"{row_text(row)} [{row.id}]",
            detail=verdict.reason if verdict is not None else "its replay never settled",
            cause="; ".join(causes),
        )
    )


def _without(rows: Mapping[str, LedgerRow], ids: set[str]) -> Mapping[str, LedgerRow]:
    if isinstance(rows, RowFile):
        return rows.without(ids)
    return {rid: row for rid, row in rows.items() if rid not in ids}


def _ids(rows: Mapping[str, LedgerRow]) -> Iterator[str]:
    if isinstance(rows, RowFile):
        return (rid for rid, _ in rows.lines())
    return iter(rows)


_SET_TAGS: Final = (b'"$set"', b'"$frozenset"')


def _seed_suspects(rows: Mapping[str, LedgerRow], fn: str = "") -> list[str]:
    """The ids of rows whose frozen form holds a set (see ``seed_suspects`` in
    :func:`~lockstep.oracles.verify.verify`): iterating it, a target may answer in the
    order of the hash seed, which one verifying seed shares by chance.  Also those
    holding, in their input or outcome, an object of a class that files its items by
    ``hash()``, and, when the target's package builds sets (``fn``: its target), those
    whose outcome holds texts in an order a set may have given them
    (:mod:`.seed_suspects`) and the target can reach the code that builds them
    (:mod:`.set_reach`)."""
    if isinstance(rows, RowFile):
        lines: Iterator[tuple[str, bytes]] = rows.lines()
    else:
        lines = ((rid, ENCODER.encode(row)) for rid, row in rows.items())
    by_sets = package_builds_sets(fn.partition(":")[0]) and target_reaches_sets(fn)
    return [
        rid
        for rid, line in lines
        if any(tag in line for tag in _SET_TAGS)
        or holds_hashing_class(line)
        or (by_sets and any(ordered_texts(part) for part in outcome_parts(line)))
    ]
