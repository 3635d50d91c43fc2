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
from collections.abc import Mapping
from pathlib import Path

import msgspec

from lockstep.config import Config, Project, Settings
from lockstep.model import Refusal, RefusalReason
from lockstep.oracles.ledger.file import write_rows
from lockstep.oracles.ledger.format import SUFFIX, LedgerRow, Param, row_text
from lockstep.oracles.ledger.spec import LedgerSpec
from lockstep.oracles.verify import verify
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

    def candidate(into: Path) -> list[str]:
        write_rows(into / f"{name}{SUFFIX}", fn, signature, stem_length, rows.values())
        return list(rows)

    paths = [str(Path(p).resolve()) for p in sys.path if p == "" or Path(p).is_dir()]
    env = {
        RECORD_IO_OFF: "1",
        "PYTHONPATH": os.pathsep.join(dict.fromkeys([str(Path.cwd()), *paths])),
    }
    checked = verify(
        project,
        spec,
        candidate,
        source=("--table", msgspec.json.encode(spec).decode(), "--stem", str(stem_length)),
        env=env,
    )
    out: dict[str, Refusal] = {}
    for verdict in checked.failed():
        row = rows[verdict.case_id]
        out[row.id] = Refusal(
            spec.name,
            row.id,
            RefusalReason.NOT_REPRODUCED,
            label=f"{row_text(row)} [{row.id}]",
            detail=verdict.reason,
            cause=verdict.cause,
        )
    return out
