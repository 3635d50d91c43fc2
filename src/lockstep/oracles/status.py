"""One line of ``lockstep status``, the same shape for every oracle kind.

Whether the file is there and readable is decided here once; each kind only
says how to read its file and what is worth a remark (missing blobs, rules
that differ from the config, accepted tape changes).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from lockstep.config import OracleSpec
from lockstep.errors import LockstepError
from lockstep.model import OracleStatus


def file_status(
    spec: OracleSpec,
    path: Path,
    read: Callable[[], tuple[int, str]],
    deleted: bool = False,
) -> OracleStatus:
    """``read`` returns ``(cases, remark)`` or raises the error that makes the file unreadable
    (``deleted``: a missing file is one a recording wrote, by the oracle folder's list)."""
    if not os.path.lexists(path):  # a link to nothing is a link: reading it says so
        missing = "missing: listed as recorded (deleted?)" if deleted else "not recorded yet"
        return OracleStatus(spec.name, spec.kind, path, False, False, 0, missing)
    try:
        cases, remark = read()
    except LockstepError as e:
        return OracleStatus(spec.name, spec.kind, path, True, False, 0, str(e))
    return OracleStatus(spec.name, spec.kind, path, True, True, cases, remark)
