"""The values that flow between layers: cases, outcomes, drifts, record reports.

Data flows one way: config → oracle → (record | replay) → outcomes → report.
These types are that flow's vocabulary; every oracle kind produces them and
every reporter (terminal, pytest, JUnit) consumes them, so a new oracle kind
never needs a new reporter.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Final, NewType

import msgspec

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


class Outcome(msgspec.Struct, frozen=True):
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


class RefusalReason(StrEnum):
    """Why a case was not frozen."""

    SECRET = "secret"
    """A value about to be written holds a secret (nothing of the case is written)."""
    VARIES = "varies"
    """Its outcome changed between calls with the same input during the recording."""
    NOT_REPRODUCED = "not-reproduced"
    """It replayed otherwise in a fresh interpreter with another hash seed."""


class DictKey(msgspec.Struct, frozen=True, order=True):
    """A field path segment that is a key of a recorded dict.

    The key is recorded data (it may be the very secret found): :func:`field_text` shows
    it only when it reads as a plain name of letters (``tag``, ``KEY``) and was not
    itself flagged, else as a short digest.
    """

    key: str


PathSegment = str | int | DictKey
"""One step of a field path: a field name, a list index or a dict key."""

_NAME_LIKE: Final = re.compile(r"[A-Za-z_]{1,20}")


def field_text(path: tuple[PathSegment, ...], hidden: Collection[str] = ()) -> str:
    """``args[0].name`` or ``result.<key 5e884898>``: a field path as a person reads it.

    A dict key is shown as itself only when it is a short name of letters not in
    ``hidden`` (the keys found to be secrets); any other key by the first 8 hex digits
    of its sha256, so a refusal never prints a recorded value.
    """
    out: list[str] = []
    for segment in path:
        if isinstance(segment, int):
            out.append(f"[{segment}]")
            continue
        if isinstance(segment, DictKey):
            key = segment.key
            if key in hidden or not _NAME_LIKE.fullmatch(key):
                digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
                key = f"<key {digest[:8]}>"
            segment = key
        out.append(f".{segment}" if any(out) else segment)
    return "".join(out)


class SecretFinding(msgspec.Struct, frozen=True, order=True):
    """One secret found in one field of one case; carries no part of the value."""

    path: tuple[PathSegment, ...]
    line: int
    detector: str
    digest: str = ""
    """sha256 of the flagged value ("" for a scrubbed value that leaked encoded)."""
    on_key: bool = False
    """The flagged string is the dict key that ends :attr:`path`, not a value under it."""

    def text(self, hidden: Collection[str] = ()) -> str:
        where = field_text(self.path, hidden)
        return (
            f"{where}:{self.line}: {self.detector}"
            if self.line > 1
            else f"{where}: {self.detector}"
        )

    def advice(self) -> str:
        if not self.digest:
            return (
                "a [[secret]] value shows where it is not scrubbed (encoded, or in an "
                "exception or id); make the code not emit it there"
            )
        return (
            "scrub it with [[secret]] env or pattern, or if it is no secret: "
            f'[[secret]] allow = "{self.digest}"'
        )


SECRETS_SHOWN = 5
"""Findings named in one secret refusal before ``(and N more)``."""


class Refusal(msgspec.Struct, frozen=True):
    """One case that record did not freeze, and why: data, rendered only by :meth:`text`."""

    oracle: str
    case_id: str
    reason: RefusalReason
    label: str = ""
    """How the case reads for a person (``f(1) [3fa2...]``); the case id when empty."""
    detail: str = ""
    """What differed (``NOT_REPRODUCED``)."""
    cause: str = ""
    """Its likely cause, where one could be seen (a mock.patch active, a module global
    changed, a frozen clock, a locale switch, hash-seed dependence)."""
    findings: tuple[SecretFinding, ...] = ()
    """``SECRET``: where the secrets are (field path, line, detector), never the value."""
    tests: tuple[str, ...] = ()
    """The tests that first produced the case (``pytest --lockstep-record``)."""
    case_hidden: bool = False
    """The case id or label is itself (or holds) a secret -- a fixture file or case named
    after a token, an id equal to a scrubbed value: :meth:`text` names the case by the
    digest of its id instead."""

    @property
    def field(self) -> tuple[PathSegment, ...]:
        """The path of the (first) field that holds a secret; empty for other reasons."""
        return self.findings[0].path if self.findings else ()

    @property
    def detector(self) -> str:
        """The detector that flagged the (first) secret; empty for other reasons."""
        return self.findings[0].detector if self.findings else ""

    def text(self) -> str:
        """The refusal as one line: the one place a refusal becomes text."""
        case = self.label or self.case_id
        if self.case_hidden:
            digest = hashlib.sha256(self.case_id.encode("utf-8", "surrogatepass")).hexdigest()
            case = f"<case {digest[:8]}>"
        if self.reason is RefusalReason.SECRET:
            hidden = {
                f.path[-1].key
                for f in self.findings
                if f.on_key and isinstance(f.path[-1], DictKey)
            }
            shown = "; ".join(f.text(hidden) for f in self.findings[:SECRETS_SHOWN])
            extra = len(self.findings) - SECRETS_SHOWN
            more = f" (and {extra} more)" if extra > 0 else ""
            advice = self.findings[0].advice() if self.findings else ""
            line = f"{case}: secret refused, nothing of it written: {shown}{more}; {advice}"
        elif self.reason is RefusalReason.NOT_REPRODUCED:
            line = f"{case}: does not reproduce in a fresh interpreter ({self.detail})"
        else:
            line = case
        if self.cause:
            line += f" (cause: {self.cause})"
        if self.tests:
            line += f" (test: {', '.join(self.tests)})"
        return line


class RecordReport(msgspec.Struct):
    """What one ``record`` did, category by category."""

    oracle: str
    path: Path
    mode: RecordMode
    added: list[str] = msgspec.field(default_factory=list)
    replaced: list[str] = msgspec.field(default_factory=list)
    """Ids whose frozen value changed under ``--force``."""
    unchanged: list[str] = msgspec.field(default_factory=list)
    unchanged_unlisted: int = 0
    """Unchanged cases counted without being listed (a corpus lock is walked as a stream:
    listing ten million ids would hold them all only to count them); the report's unchanged
    count is ``len(unchanged) + unchanged_unlisted``."""
    trimmed: list[str] = msgspec.field(default_factory=list)
    refused: list[Refusal] = msgspec.field(default_factory=list)
    """Cases not frozen (a secret, behaviour that varies or does not reproduce): a finding,
    so the command exits 1 even though the rest of the oracle was written."""
    notes: list[str] = msgspec.field(default_factory=list)
    """Free-form lines for the user (saturation, refused inputs, discovered env keys)."""


class OracleStatus(msgspec.Struct, frozen=True):
    """One line of ``lockstep status``."""

    oracle: str
    kind: str
    path: Path
    present: bool
    readable: bool
    cases: int
    message: str = ""
    state: str = ""
    """What the table says of it where "ok" would be wrong (a former member's ledger)."""


class Shard(msgspec.Struct, frozen=True):
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


class ReplayOptions(msgspec.Struct, frozen=True):
    """How to replay: parallelism and slicing, the same for every oracle kind."""

    jobs: int = 1
    shard: Shard | None = None
    only: frozenset[str] | None = None
    """Replay only these case ids (``lockstep diff``, pytest items)."""
    candidate: bool = False
    """Replaying a candidate in record's fresh interpreter (:mod:`lockstep.oracles.verify`):
    a recorded value that does not thaw there (a NamedTuple of a test module, say) makes
    its case an ERROR that says so, where in a committed oracle it is a corrupt line."""
    alone: bool = False
    """This process replays no other oracle (``lockstep replay NAME`` of one): a ledger's
    rows replay here, not in a fork of their own (:mod:`lockstep.oracles.ledger.isolated`),
    as nothing another oracle's replay changed can reach them."""

    def selects(self, case_id: str) -> bool:
        if self.only is not None and case_id not in self.only:
            return False
        return self.shard is None or self.shard.holds(case_id)
