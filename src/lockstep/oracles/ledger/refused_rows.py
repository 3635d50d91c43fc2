"""Rows refused by what they hold, before they are verified.

Some rows no fresh interpreter can judge at record time: one that names a path in
pytest's temporary folder (gone at the next replay, :mod:`.transient_paths`), one a
test recorded under its own recursion limit (:func:`lockstep.oracles.ledger.kind.write_recording`).
Each such rule says, row by row, why a row is refused; :func:`refused_where` applies it
and reports every refusal the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping

from lockstep.model import RecordReport, Refusal, RefusalReason
from lockstep.oracles.ledger.format import LedgerRow, row_text
from lockstep.oracles.ledger.spool import RowFile


def refused_where(
    rows: Mapping[str, LedgerRow],
    report: RecordReport,
    why: Callable[[LedgerRow], tuple[str, str] | None],
) -> Mapping[str, LedgerRow]:
    """``rows`` without those ``why`` gives a (detail, cause) for, each refused in
    ``report`` before it is verified: what no replay can reproduce, told by the row."""
    if not any(why(row) is not None for row in rows.values()):
        return rows

    def kept() -> Iterator[LedgerRow]:
        for row in rows.values():
            found = why(row)
            if found is None:
                yield row
                continue
            report.refused.append(
                Refusal(
                    report.oracle,
                    row.id,
                    RefusalReason.NOT_REPRODUCED,
                    label=f"{row_text(row)} [{row.id}]",
                    detail=found[0],
                    cause=found[1],
                )
            )

    if isinstance(rows, RowFile):
        return RowFile.from_rows(kept())
    return {row.id: row for row in kept()}


def only_raising_left(
    rows: Mapping[str, LedgerRow], refused: Collection[str], left: Mapping[str, LedgerRow]
) -> list[str]:
    """A note when verification refused every row of ``rows`` that returned and ``left``
    keeps only rows that raised: the ledger guards the target's errors alone, and its
    counts did not show it.  aniso8601's parser tests patch the builder its parsers hand
    their result to, so every parse that returned was refused (its cause: the patch), and
    seven ledgers held error rows only; a change losing a duration's days replayed green."""
    returned = sum(1 for rid in refused if rid in rows and rows[rid].ok)
    if not returned or not left or any(row.ok for row in left.values()):
        return []
    return [
        f"every row that returned was refused ({returned}): the ledger keeps only calls "
        "that raised, so nothing guards what the target returns (the refusals say why)"
    ]
