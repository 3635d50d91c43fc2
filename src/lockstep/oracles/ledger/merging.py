"""Recording parts merged into one recording: what a ledger is written from.

Every process that recorded a target hands over a :class:`~.part.RecordingPart`;
:func:`merge_parts` combines them into a :class:`Recording`: one row per distinct input,
an input whose outcome differs between processes refused like one that differed within
a process, and the saturation figure (how many distinct rows the last fifth of the
calls still added).  Parts whose rows were spilled to disk are merged as streams.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from lockstep.oracles.ledger.file import outcome_of
from lockstep.oracles.ledger.format import (
    ROW_DECODER,
    ROW_ENCODER,
    LedgerRow,
)
from lockstep.oracles.ledger.part import PartEntry, RecordingPart, RefusedInput
from lockstep.oracles.ledger.printed import PRINTED
from lockstep.oracles.ledger.recorder import LATE_FRACTION, SKIP_SITES
from lockstep.oracles.ledger.row_keys import _refusal
from lockstep.oracles.ledger.spool import (
    RowFile,
    RunRecord,
    merged_runs,
)


@dataclass(frozen=True)
class Recording:
    """Every process's parts for one target, merged: what a ledger is written from."""

    fn: str
    calls: int
    rows: Mapping[str, LedgerRow]
    """Distinct, deterministic rows by id, in id order (a :class:`~.spool.RowFile` on
    disk when the recorder spilled)."""
    refused: list[RefusedInput]
    unfreezable: dict[str, int]
    faults: dict[str, int]
    late_rows: int
    """Rows first seen only in the last :data:`LATE_FRACTION` of some process's calls."""
    skip_sites: dict[str, list[str]] = field(default_factory=dict)
    """Why a value could not be frozen -> the call sites that passed such values."""
    contexts: dict[str, str] = field(default_factory=dict)
    """Row id -> the context it was first seen in, where it was unusual (see :mod:`.context`)."""

    def notes(self) -> list[str]:
        """Lines for the user: saturation, refused inputs, skipped values."""
        pct = round(LATE_FRACTION * 100)
        lines = [
            f"{self.fn}: saw {self.calls} call(s), kept {len(self.rows)} distinct row(s); "
            f"the last {pct}% of calls added {self.late_rows} row(s)"
        ]
        for refused in self.refused:
            lines.append(
                f"refused {refused.call} [{refused.id}]: nondeterministic or stateful, "
                f"{len(refused.outcomes)} different outcomes ({' | '.join(refused.outcomes)})"
            )
        skipped = sum(self.unfreezable.values())
        if skipped:  # a hole in the oracle: said on the line everyone reads
            share = 100 * skipped / max(1, self.calls)
            lines[0] += (
                f"; SKIPPED {skipped} of {self.calls} call(s) ({share:.0f}%) whose values "
                "cannot be frozen: no row guards what they do (see below)"
            )
        for reason, count in sorted(self.unfreezable.items()):
            sites = self.skip_sites.get(reason, [])
            where = f" (called from {', '.join(sites)})" if sites else ""
            lines.append(f"skipped {count} call(s): {reason}{where}")
        for reason, count in sorted(self.faults.items()):
            lines.append(f"recorder fault on {count} call(s) (the calls were unaffected): {reason}")
        if (
            isinstance(self.rows, dict)
            and self.rows
            and not any(map(_kept_printed, self.rows.values()))
        ):
            from lockstep.oracles.ledger.printing import prints

            how = prints(self.fn)
            if how:
                lines.append(
                    f"{self.fn} prints ({how} in its code), and no recorded call printed "
                    "through sys.stdout (a test patched print, or a stream was kept before "
                    "the call): what it prints is guarded by no row; a [[pins]] oracle "
                    "freezes a program's output"
                )
        return lines


class _MergedRows:
    """The rows of several parts, lean per row (a million rows pass through here).

    A row's outcome bytes are computed only for an id seen in more than one part, and
    only ids every part saw late are tracked for saturation.
    """

    def __init__(self) -> None:
        self.rows: dict[str, LedgerRow] = {}
        self.others: dict[str, list[bytes]] = {}
        """Id -> the outcomes seen after its first row's (only ids seen in several parts)."""
        self.late: set[str] = set()
        """Ids every part so far first saw in the last :data:`LATE_FRACTION` of its calls."""
        self.in_order = True
        self._last = ""

    def add(self, entries: Iterable[PartEntry], threshold: float) -> None:
        rows = self.rows
        for entry in entries:
            row = entry.row
            rid = row.id
            first = rows.get(rid)
            if first is None:
                rows[rid] = row
                if entry.first_call > threshold:
                    self.late.add(rid)
                if rid <= self._last:
                    self.in_order = False
                self._last = rid
                continue
            if entry.first_call <= threshold:
                self.late.discard(rid)
            outcome = outcome_of(row)
            if outcome != outcome_of(first):
                known = self.others.setdefault(rid, [])
                if outcome not in known:
                    known.append(outcome)


@dataclass
class _Tally:
    """What every part says besides its rows, summed."""

    calls: int = 0
    refused: dict[str, RefusedInput] = field(default_factory=dict)
    unfreezable: Counter[str] = field(default_factory=Counter)
    skip_sites: dict[str, list[str]] = field(default_factory=dict)
    faults: Counter[str] = field(default_factory=Counter)
    contexts: dict[str, str] = field(default_factory=dict)

    def add(self, part: RecordingPart) -> None:
        self.calls += part.calls
        for rid, hint in part.contexts.items():
            self.contexts.setdefault(rid, hint)
        self.unfreezable.update(part.unfreezable)
        for reason, sites in part.skip_sites.items():
            kept = self.skip_sites.setdefault(reason, [])
            kept.extend(site for site in sites if site not in kept and len(kept) < SKIP_SITES)
        self.faults.update(part.faults)
        for r in part.refused:
            self.refused.setdefault(r.id, r)

    def recording(self, fn: str, rows: Mapping[str, LedgerRow], late_rows: int) -> Recording:
        return Recording(
            fn=fn,
            calls=self.calls,
            rows=rows,
            refused=sorted(self.refused.values(), key=lambda r: r.id),
            unfreezable=dict(self.unfreezable),
            faults=dict(self.faults),
            late_rows=late_rows,
            skip_sites=self.skip_sites,
            contexts=self.contexts,
        )


def merge_parts(fn: str, parts: Iterable[RecordingPart], *, remove_runs: bool = True) -> Recording:
    """Combine parts from several processes.

    An input whose outcome differs between processes is refused like one that
    differed within a process.  Parts whose rows were spilled to disk are merged
    there (:func:`_merge_spilled`), and their run files are removed unless
    ``remove_runs`` is False (the caller reads them again, then removes them).
    """
    parts = list(parts)
    if any(part.runs for part in parts):
        return _merge_spilled(fn, parts, remove_runs)
    merged = _MergedRows()
    tally = _Tally()
    for part in parts:
        tally.add(part)
        merged.add(part.entries, part.calls * (1 - LATE_FRACTION))
    refused = tally.refused
    rows = merged.rows
    for rid, known in merged.others.items():
        if rid not in refused:
            refused[rid] = _refusal(rows[rid], known)
    for rid in refused:
        rows.pop(rid, None)
    return tally.recording(
        fn,
        rows if merged.in_order else dict(sorted(rows.items())),
        sum(1 for rid in merged.late if rid in rows),
    )


def _merge_spilled(fn: str, parts: list[RecordingPart], remove_runs: bool) -> Recording:
    """:func:`merge_parts` on disk: every part's runs (and rows) read at once in id order.

    A group of records with one id is one input: its first record (lowest part, then
    lowest call) is its row; a second outcome anywhere -- another spill window, another
    process -- refuses it.  The rows kept go to a :class:`~.spool.RowFile`.
    """
    tally = _Tally()
    for part in parts:
        tally.add(part)
    refused = tally.refused
    thresholds = [part.calls * (1 - LATE_FRACTION) for part in parts]
    runs = [(index, path) for index, part in enumerate(parts) for path in part.runs]
    extra = [_entry_records(index, part.entries) for index, part in enumerate(parts)]
    late_rows = 0

    def kept() -> Iterator[tuple[str, bytes]]:
        nonlocal late_rows
        records = merged_runs(runs, extra, remove=remove_runs)
        for rid, group in itertools.groupby(records, key=lambda r: r[0]):
            line = b""
            first_call = 0
            outcomes: list[bytes] = []
            calls: list[int] = []
            late = True
            last_part = -1
            for _, index, call, outcome, row_line in group:
                if not line and row_line:
                    line, first_call = row_line, call
                if outcome not in outcomes:
                    outcomes.append(outcome)
                    calls.append(call)
                if index != last_part:  # a part's first record of the id: its first sight
                    late = late and call > thresholds[index]
                    last_part = index
            if rid in refused or not line:
                continue
            if len(outcomes) > 1:
                row = ROW_DECODER.decode(line)
                others = [o for o in outcomes if o != outcome_of(row)]
                refused[rid] = _refusal(row, others, [first_call, *calls[1:]])
                continue
            late_rows += late
            yield rid, line

    rows = RowFile.from_lines(kept())
    return tally.recording(fn, rows, late_rows)


def _entry_records(index: int, entries: list[PartEntry]) -> Iterator[RunRecord]:
    """A part's in-memory rows as run records (its entries are sorted by id)."""
    encode = ROW_ENCODER.encode
    for entry in entries:
        row = entry.row
        yield row.id, index, entry.first_call, outcome_of(row), encode(row)


def _kept_printed(row: LedgerRow) -> bool:
    """Whether a row kept what its call printed (:mod:`.printed`)."""
    return isinstance(row.mutated, dict) and PRINTED in row.mutated
