"""The values that flow between layers: cases, outcomes, drifts, record reports.

Data flows one way: config → oracle → (record | replay) → outcomes → report.
These types are that flow's vocabulary; every oracle kind produces them and
every reporter (terminal, pytest, JUnit) consumes them, so a new oracle kind
never needs a new reporter.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import NewType

CaseId = NewType("CaseId", str)
"""A case's stable, human-readable id inside one oracle."""


class Status(StrEnum):
    """What replaying one case found."""

    PASS = "pass"
    DRIFT = "drift"
    """The case ran and its behaviour differs from the oracle."""
    NEW = "new"
    """A case exists on disk (a fixture) that the oracle does not know."""
    MISSING = "missing"
    """The oracle knows a case whose input has disappeared."""
    ERROR = "error"
    """The case could not be run at all (for example its target no longer imports)."""
    STALE = "stale"
    """The oracle's record of how the case was made (argv, env, rules, render...) no longer
    matches the configuration: the case was not run, and only a re-record can vouch for it."""


@dataclass(frozen=True)
class Drift:
    """One aspect of a case that differs: what was frozen, what happened, and a readable diff."""

    aspect: str
    """Which part differs: ``output``, ``result``, ``exit_code``, ``stdout``, ``calls`` ..."""
    expected: str
    actual: str
    diff: str = ""
    """A document diff a reviewer can read (unified text diff, or a hex summary)."""
    texts: tuple[str, str] | None = field(default=None, compare=False, repr=False)
    """The two documents whole (expected, actual) as the diff read them, when they are text
    of a reasonable size: the HTML report shows them side by side with the equal stretches
    folded.  Not part of the verdict, so two drifts compare by what differs."""


@dataclass(frozen=True)
class Outcome:
    """The verdict on one case of one oracle."""

    oracle: str
    case_id: str
    status: Status
    drifts: tuple[Drift, ...] = ()
    note: str = ""
    rules_fired: tuple[tuple[str, int], ...] = ()
    """How many spans each normalization rule replaced in this case, every rule listed
    (zero counts too), so a reviewer can see a rule that hides real output."""

    @property
    def ok(self) -> bool:
        return self.status is Status.PASS


class RecordMode(StrEnum):
    """How ``record`` treats an oracle that already exists: each mode is explicit and reported."""

    CREATE = "create"
    """Only when no oracle file exists yet; otherwise refuse and name the modes below."""
    NEW_ONLY = "new-only"
    """Add cases the oracle does not know; existing entries are untouched."""
    FORCE = "force"
    """Re-record every case, reporting what was replaced."""
    TRIM = "trim"
    """Drop entries whose input is gone; nothing else changes."""


@dataclass
class RecordReport:
    """What one ``record`` did, category by category."""

    oracle: str
    path: Path
    mode: RecordMode
    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    """Ids whose frozen value changed under ``--force``."""
    unchanged: list[str] = field(default_factory=list)
    trimmed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """Inputs not frozen because their behaviour varied between runs: a finding, so the
    command exits 1 even though the rest of the oracle was written."""
    notes: list[str] = field(default_factory=list)
    """Free-form lines for the user (saturation, refused inputs, discovered env keys)."""
    causes: dict[str, str] = field(default_factory=dict)
    """Refused case id -> its likely cause, where one could be seen (a mock.patch active,
    a module global changed, a frozen clock, a locale switch, hash-seed dependence)."""


@dataclass(frozen=True)
class OracleStatus:
    """One line of ``lockstep status``."""

    oracle: str
    kind: str
    path: Path
    present: bool
    readable: bool
    cases: int
    message: str = ""


@dataclass(frozen=True)
class Shard:
    """One slice ``K/N`` of the cases, chosen deterministically by case id (for CI matrices)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """Parse ``K/N`` (1-based); raises ValueError with a message for the user."""
        k, sep, n = text.partition("/")
        if not sep or not k.isdigit() or not n.isdigit():
            raise ValueError(f"--shard expects K/N such as 1/4, got {text!r}")
        index, count = int(k), int(n)
        if count < 1 or not 1 <= index <= count:
            raise ValueError(f"--shard {text}: K must be between 1 and N")
        return cls(index, count)

    def holds(self, case_id: str) -> bool:
        """Whether ``case_id`` belongs to this shard (stable across machines and runs)."""
        if self.count == 1:
            return True
        digest = hashlib.sha256(case_id.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1


@dataclass(frozen=True)
class ReplayOptions:
    """How to replay: parallelism and slicing, the same for every oracle kind."""

    jobs: int = 1
    shard: Shard | None = None
    only: frozenset[str] | None = None
    """Replay only these case ids (``lockstep diff``, pytest items)."""
    candidate: bool = False
    """Replaying a candidate in record's fresh interpreter (:mod:`lockstep.oracles.verify`):
    a recorded value that does not thaw there (a NamedTuple of a test module, say) makes
    its case an ERROR that says so, where in a committed oracle it is a corrupt line."""

    def selects(self, case_id: str) -> bool:
        if self.only is not None and case_id not in self.only:
            return False
        return self.shard is None or self.shard.holds(case_id)
