"""The JSON documents of ``status --json``, ``replay --json`` and ``pending --json``.

Each is a msgspec Struct whose first field is ``schema``: the version of its layout.
A field may be added within a schema version (readers ignore what they do not know);
renaming, removing or changing the meaning of a field raises the number.  Keys are
written in the order declared here; lists are in the order the command ran (oracles
as configured, cases as replayed), so two identical runs print identical documents.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Final

import msgspec

from lockstep.model import Drift, OracleStatus, Outcome, Status
from lockstep.oracles.pending import PendingCase
from lockstep.report.summary import Tally
from lockstep.store import display_path

SCHEMA: Final = 1
"""The layout version of every document below."""


class DriftDoc(msgspec.Struct, frozen=True):
    """One aspect of a case that differs."""

    aspect: str
    """Which part differs: ``output``, ``result``, ``exit_code``, ``stdout``, ``calls`` ..."""
    expected: str
    """What the oracle holds (a short rendering)."""
    actual: str
    """What happened now (the same rendering)."""
    diff: str
    """The readable diff the terminal shows ("" when there is none)."""

    @classmethod
    def of(cls, drift: Drift) -> DriftDoc:
        return cls(drift.aspect, drift.expected, drift.actual, drift.diff)


class CaseDoc(msgspec.Struct, frozen=True):
    """One case that did not pass (``replay``), or one pending drift (``pending``)."""

    oracle: str
    case: str
    """The case id, as ``lockstep diff ORACLE CASE`` and ``accept --case`` take it."""
    status: str
    """``drift``, ``new``, ``missing``, ``error`` or ``stale`` (``pass`` with ``-v``)."""
    note: str
    """Why, in words, when the status says too little (an error's message...), else ""."""
    drifts: list[DriftDoc]


class OracleCounts(msgspec.Struct, frozen=True):
    """One oracle's cases by status."""

    name: str
    counts: dict[str, int]
    """Every status (``pass``, ``drift``, ``new``, ``missing``, ``error``, ``stale``), zeros
    included."""
    rules_fired: dict[str, int]
    """Spans each of the oracle's rules replaced over the whole replay."""


class ReplayDoc(msgspec.Struct, frozen=True):
    """``lockstep replay --json``: the verdict, counts per oracle, every case that did not pass."""

    schema: int
    command: str
    """``replay``."""
    verdict: str
    """``green``, ``DRIFT`` (some case behaves differently) or ``NOT GREEN`` (new, missing,
    error: the run proves less than it should)."""
    green: bool
    """Whether the exit code is 0."""
    summary: str
    """The terminal's verdict line, e.g. ``DRIFT: 12 cases: 11 passed, 1 drifted``."""
    oracles: list[OracleCounts]
    cases: list[CaseDoc]
    """Every case that did not pass, in replay order (passing ones too with ``-v``)."""


def case_doc(outcome: Outcome) -> CaseDoc:
    return CaseDoc(
        outcome.oracle,
        outcome.case_id,
        outcome.status.value,
        outcome.note,
        [DriftDoc.of(d) for d in outcome.drifts],
    )


def replay_doc(tally: Tally, cases: Iterable[Outcome]) -> ReplayDoc:
    return ReplayDoc(
        schema=SCHEMA,
        command="replay",
        verdict=tally.verdict(),
        green=tally.green,
        summary=f"{tally.verdict()}: {tally.line()}",
        oracles=[
            OracleCounts(
                name,
                {status.value: counts[status] for status in Status},
                dict(tally.rules_fired.get(name, {})),
            )
            for name, counts in tally.counts.items()
        ],
        cases=[case_doc(o) for o in cases],
    )


class OracleStatusDoc(msgspec.Struct, frozen=True):
    """One oracle of ``lockstep status``."""

    name: str
    kind: str
    """``corpus``, ``ledger``, ``pins`` or ``tape``."""
    path: str
    """The oracle file, relative to the project root."""
    present: bool
    """Whether the file exists (recorded)."""
    readable: bool
    """Whether it reads without error (a corrupt file is present but not readable)."""
    cases: int
    message: str
    """What is wrong when it is not readable, else ""."""
    pending: int
    """Drifts kept by ``replay --keep-pending``, waiting for ``lockstep accept``."""


class StatusDoc(msgspec.Struct, frozen=True):
    """``lockstep status --json``: the configured oracles and their files."""

    schema: int
    command: str
    """``status``."""
    config: str
    """The configuration file read."""
    oracles: list[OracleStatusDoc]


def status_doc(config: Path, root: Path, rows: Iterable[tuple[OracleStatus, int]]) -> StatusDoc:
    return StatusDoc(
        schema=SCHEMA,
        command="status",
        config=display_path(config, root),
        oracles=[
            OracleStatusDoc(
                r.oracle,
                r.kind,
                display_path(r.path, root),
                r.present,
                r.readable,
                r.cases,
                r.message,
                pending,
            )
            for r, pending in rows
        ],
    )


class PendingOracleDoc(msgspec.Struct, frozen=True):
    """The pending drifts of one oracle."""

    name: str
    path: str
    """Where they are kept (``<dir>/.pending/<name>.jsonl``)."""
    cases: list[CaseDoc]


class PendingDoc(msgspec.Struct, frozen=True):
    """``lockstep pending --json``: the drifts ``replay --keep-pending`` kept, per oracle."""

    schema: int
    command: str
    """``pending``."""
    total: int
    oracles: list[PendingOracleDoc]
    """Only oracles with pending drifts, in configuration order."""


def pending_doc(kept: Iterable[tuple[str, str, list[PendingCase]]]) -> PendingDoc:
    """``kept``: (oracle name, shown path of its pending file, its pending cases)."""
    oracles = [
        PendingOracleDoc(
            name,
            path,
            [
                CaseDoc(
                    name,
                    entry.case,
                    Status.DRIFT.value,
                    entry.note,
                    [DriftDoc(d.aspect, d.expected, d.actual, d.diff) for d in entry.drifts],
                )
                for entry in entries
            ],
        )
        for name, path, entries in kept
        if entries
    ]
    return PendingDoc(SCHEMA, "pending", sum(len(o.cases) for o in oracles), oracles)


def to_json(doc: msgspec.Struct) -> str:
    """The document as indented JSON text (non-ASCII kept), ending in a newline."""
    raw = msgspec.json.format(msgspec.json.encode(doc), indent=2)
    return raw.decode("utf-8") + "\n"
