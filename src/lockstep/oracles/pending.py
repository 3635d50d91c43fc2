"""Pending drifts: what a red replay found, kept beside the oracle for review, never in it.

``lockstep replay --keep-pending`` (and ``pytest --lockstep --lockstep-keep-pending``)
writes every drifted case of an oracle to ``<dir>/.pending/<oracle>.jsonl``, one JSON
line per case, the way insta keeps ``.snap.new`` files beside its snapshots: the
reviewer reads and accepts them later (``lockstep accept``) without re-running
anything to see what moved.  The oracle file itself is never touched.

Each line holds the case id, the drift in the kind's own words (aspect, recorded
side, new side and the readable diff the replay printed), and two digests:

* ``replaces`` -- the digest of what the oracle entry says (the recorded side of
  every drift).  When the oracle entry changes after the pending one was written
  (someone re-recorded it), the pending entry is *stale*.
* ``now`` -- the digest of the new outcome.  When a later replay gives another
  outcome (the code changed again), the pending entry is stale too: accepting it
  would freeze something the reviewer never saw.

The folder carries a ``.gitignore`` of ``*``: pending drifts are a reviewer's
working notes, never committed.  Every write goes through :mod:`lockstep.store`
(atomic replace; the file is removed once empty).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final

import msgspec

from lockstep import canon
from lockstep.config import OracleSpec, Project
from lockstep.model import Outcome, ReplayOptions, Status
from lockstep.store import atomic_write, iter_jsonl, lock_for, remove_file, sha256_hex

PENDING_DIR: Final = ".pending"
_IGNORE_ALL: Final = b"# pending drifts are reviewed with 'lockstep accept', never committed\n*\n"


class PendingDrift(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One aspect of a pending case, as the replay described it."""

    aspect: str
    expected: str
    actual: str
    diff: str = ""


class PendingCase(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """One drifted case waiting for a reviewer's decision (one line of the pending file)."""

    case: str
    replaces: str
    """Digest of the oracle entry's recorded side: a different one later means stale."""
    now: str
    """Digest of the new outcome: a later replay giving another one means stale."""
    drifts: list[PendingDrift]
    note: str = ""


_ENCODER: Final = msgspec.json.Encoder(order="sorted")


def pending_path(project: Project, spec: OracleSpec) -> Path:
    """``<dir>/.pending/<oracle name>.jsonl``."""
    return project.oracle_dir / PENDING_DIR / f"{spec.name}.jsonl"


def recorded_digest(outcome: Outcome) -> str:
    """The digest of what the oracle says for a drifted case (every drift's recorded side)."""
    return sha256_hex(canon.canonical_json([[d.aspect, d.expected] for d in outcome.drifts]))


def outcome_digest(outcome: Outcome) -> str:
    """The digest of a drifted case's new outcome (every drift's new side and its diff)."""
    return sha256_hex(canon.canonical_json([[d.aspect, d.actual, d.diff] for d in outcome.drifts]))


def pending_case(outcome: Outcome) -> PendingCase:
    """The pending entry of a drifted outcome."""
    return PendingCase(
        case=outcome.case_id,
        replaces=recorded_digest(outcome),
        now=outcome_digest(outcome),
        drifts=[PendingDrift(d.aspect, d.expected, d.actual, d.diff) for d in outcome.drifts],
        note=outcome.note,
    )


def read_pending(project: Project, spec: OracleSpec) -> list[PendingCase]:
    """The oracle's pending cases, sorted by id (none when there is no pending file)."""
    path = pending_path(project, spec)
    if not path.exists():
        return []
    return sorted((entry for _, entry in iter_jsonl(path, PendingCase)), key=lambda e: e.case)


def write_pending(project: Project, spec: OracleSpec, entries: Iterable[PendingCase]) -> int:
    """Replace the oracle's pending file with ``entries`` (removing it when there are none)."""
    path = pending_path(project, spec)
    ordered = sorted(entries, key=lambda e: e.case)
    if not ordered:
        remove_file(path)
        return 0
    ignore = path.parent / ".gitignore"
    if not ignore.exists():
        atomic_write(ignore, _IGNORE_ALL)
    atomic_write(path, b"".join(_ENCODER.encode(e) + b"\n" for e in ordered))
    return len(ordered)


def drop_pending(project: Project, spec: OracleSpec, cases: Iterable[str]) -> int:
    """Remove the pending entries of ``cases`` (accepted or rejected); returns how many remain."""
    gone = set(cases)
    kept = [e for e in read_pending(project, spec) if e.case not in gone]
    return write_pending(project, spec, kept)


def update_pending(
    project: Project,
    spec: OracleSpec,
    covered: Callable[[str], bool],
    drifted: Iterable[PendingCase],
) -> int:
    """After a replay that ran the cases ``covered`` selects: their entries become ``drifted``.

    Entries of cases the replay did not run are kept.  Read, merged and written under
    the file's lock, so pytest-xdist workers replaying parts of one oracle each add theirs.
    """
    fresh = {e.case: e for e in drifted}
    with lock_for(pending_path(project, spec)):
        kept = [
            e for e in read_pending(project, spec) if not covered(e.case) and e.case not in fresh
        ]
        return write_pending(project, spec, [*kept, *fresh.values()])


class PendingSink:
    """Collects one oracle's replay outcomes and writes its pending file at the end.

    Cases the replay covered (``options.selects``) get their entry replaced: a drift
    writes the new one, any other verdict removes the old one (a case that passes
    again has nothing to review).  Entries of cases the replay did not cover (another
    ``--shard``) are kept.  Only drifts are pending: a new, missing, stale or erroring
    case is resolved by record modes or a fix, not by accepting an outcome.
    A sink that is not ``enabled`` keeps nothing and writes nothing.
    """

    def __init__(
        self, project: Project, spec: OracleSpec, options: ReplayOptions, *, enabled: bool = True
    ) -> None:
        self.project = project
        self.spec = spec
        self.options = options
        self.enabled = enabled
        self.drifted: dict[str, PendingCase] = {}

    def add(self, outcome: Outcome) -> None:
        if self.enabled and outcome.status is Status.DRIFT and outcome.drifts:
            self.drifted[outcome.case_id] = pending_case(outcome)

    def commit(self) -> int:
        """Write the pending file; returns how many cases of this oracle are now pending."""
        if not self.enabled:
            return 0
        return update_pending(self.project, self.spec, self.options.selects, self.drifted.values())
