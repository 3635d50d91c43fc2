"""``@record_io`` rows are proven to reproduce, like every other recording, before they are written.

A decorated function records inside a real program, where a row can owe its outcome to
the program's state (a cache filled earlier, a global a previous call set, set order
under this process's hash seed).  Before a process merges its new rows into the ledger,
they are written into a private candidate next to it and replayed once in a fresh
interpreter with another hash seed (:func:`lockstep.oracles.verify.verify`); only the
rows that reproduce are written, the others are reported with what differed.

There is no configuration to name the target, so the child is sent the ledger's table
(``--table``, as JSON) and ``--stem``, imports the target from this process's ``sys.path``, and has
``@record_io`` switched off (:data:`RECORD_IO_OFF`): it replays, it does not record.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import msgspec

from lockstep.config import Config, Project, Settings
from lockstep.model import Refusal, RefusalReason
from lockstep.oracles.ledger.file import write_rows
from lockstep.oracles.ledger.format import SUFFIX, LedgerRow, Param, row_text
from lockstep.oracles.ledger.spec import LedgerSpec
from lockstep.oracles.verify import UNSETTLED_CAUSE, VERIFY_ROUNDS, verify
from lockstep.switches import RECORD_IO_OFF


def unreproducible(
    ledger: Path,
    fn: str,
    signature: list[Param],
    stem_length: int,
    rows: Mapping[str, LedgerRow],
) -> dict[str, Refusal]:
    """Row id -> why it does not reproduce, for each of ``rows`` that does not."""
    if not rows:
        return {}
    folder = ledger.parent.resolve()
    name = ledger.name.removesuffix(SUFFIX).replace(".", "-") or "record_io"
    spec = LedgerSpec(name=name, target=fn)
    settings = Settings(dir=".", stem_length=stem_length)
    project = Project(
        root=folder,
        config_path=folder / "@record_io",
        config=Config(lockstep=settings, ledger=[spec]),
    )

    paths = [str(Path(p).resolve()) for p in sys.path if p == "" or Path(p).is_dir()]
    env = {
        RECORD_IO_OFF: "1",
        "PYTHONPATH": os.pathsep.join(dict.fromkeys([str(Path.cwd()), *paths])),
    }
    source = ("--table", msgspec.json.encode(spec).decode(), "--stem", str(stem_length))
    out: dict[str, Refusal] = {}
    pending = dict(rows)
    # the rows left after a refusal are verified again, as the ledger will hold them (see
    # VERIFY_ROUNDS): one may have reproduced only after a call now refused
    for round_number in range(VERIFY_ROUNDS):
        candidate = _candidate(name, fn, signature, stem_length, dict(pending))
        failed = verify(project, spec, candidate, source=source, env=env).failed()
        for verdict in failed:
            row = pending.pop(verdict.case_id)
            cause = (
                verdict.cause
                if round_number == 0
                else "; ".join(c for c in (verdict.cause, UNSETTLED_CAUSE) if c)
            )
            out[row.id] = Refusal(
                spec.name,
                row.id,
                RefusalReason.NOT_REPRODUCED,
                label=f"{row_text(row)} [{row.id}]",
                detail=verdict.reason,
                cause=cause,
            )
        if not failed or not pending:
            return out
    for row in pending.values():  # the last round still refused some: none settled
        out[row.id] = Refusal(
            spec.name,
            row.id,
            RefusalReason.NOT_REPRODUCED,
            label=f"{row_text(row)} [{row.id}]",
            detail="its replay never settled",
            cause=UNSETTLED_CAUSE,
        )
    return out


def _candidate(
    name: str, fn: str, signature: list[Param], stem_length: int, rows: dict[str, LedgerRow]
) -> Callable[[Path], list[str]]:
    """What writes ``rows`` as the candidate ledger into verify's folder."""

    def candidate(into: Path) -> list[str]:
        write_rows(into / f"{name}{SUFFIX}", fn, signature, stem_length, rows.values())
        return list(rows)

    return candidate
