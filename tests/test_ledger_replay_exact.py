"""Replay decides scalar rows without freezing them; the verdict must be the canonical one.

``1 == 1.0 == True`` and ``0.0 == -0.0`` in Python, so every pair of look-alike values is
replayed here and the verdict compared with the canonical bytes of the two values.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

from lockstep import canon
from lockstep.config import load_project
from lockstep.model import ReplayOptions, Status
from lockstep.oracles.ledger import kind as ledger
from lockstep.oracles.ledger.file import write_rows
from lockstep.oracles.ledger.format import LedgerRow, Param, input_key, row_id

LOOKALIKES: list[Any] = [1, True, 1.0, 0, False, 0.0, -0.0, "1", None, (1,), [1], b"1"]

MODULE = """
VALUES = {values!r}

def pick(i, j, k=None):
    return VALUES[j]
"""


def test_scalar_rows_pass_exactly_when_canonical_bytes_match(tmp_path: Path) -> None:
    (tmp_path / "lookalike_mod.py").write_text(MODULE.format(values=LOOKALIKES))
    (tmp_path / "lockstep.toml").write_text(
        '[[ledger]]\nname = "pick"\ntarget = "lookalike_mod:pick"\n'
    )
    signature = [
        Param(name="i", kind="positional_or_keyword"),
        Param(name="j", kind="positional_or_keyword"),
        Param(name="k", kind="positional_or_keyword", default=None),
    ]
    pairs = list(itertools.product(range(len(LOOKALIKES)), repeat=2))
    rows: list[LedgerRow] = []
    expected: dict[str, bool] = {}
    for n, (recorded, returned) in enumerate(pairs):
        kwargs = {"k": "x"} if n % 2 else {}
        rid = row_id(input_key([recorded, returned], kwargs))
        rows.append(
            LedgerRow(
                id=rid,
                fn="lookalike_mod:pick",
                args=[recorded, returned],
                kwargs=kwargs,
                ok=True,
                result=canon.encode(LOOKALIKES[recorded]),
            )
        )
        expected[rid] = canon.dumps(LOOKALIKES[recorded]) == canon.dumps(LOOKALIKES[returned])
    (tmp_path / "lockstep").mkdir()
    write_rows(tmp_path / "lockstep/pick.ledger.jsonl", "lookalike_mod:pick", signature, 48, rows)
    project = load_project(tmp_path)
    try:
        outcomes = list(ledger.KIND.replay(project, project.oracle("pick"), ReplayOptions()))
    finally:
        sys.modules.pop("lookalike_mod", None)
    verdicts = {o.case_id: o.status is Status.PASS for o in outcomes}
    assert verdicts == expected
    assert sum(expected.values()) == len(LOOKALIKES)  # only the diagonal matches
