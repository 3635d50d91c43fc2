"""``pytest --lockstep-record=TARGET``: the options and the hook; the recording itself is
the ledger's (:mod:`lockstep.oracles.ledger.pytest_recording`).

The option names are defined here only: the recording is handed them with the values
(:class:`~lockstep.oracles.ledger.pytest_recording.RecordOptions`), so renaming one is a
one-line change here.
"""

from __future__ import annotations

from typing import Final

import pytest

from lockstep.model import RecordMode
from lockstep.oracles.ledger.pytest_recording import SKIP_MARKER, RecordOptions, start

RECORD: Final = "--lockstep-record"
MODE: Final = "--lockstep-record-mode"
ALLOW_FAILURES: Final = "--lockstep-record-allow-failures"


def addoption(parser: pytest.Parser) -> None:
    """Register ``--lockstep-record``, ``--lockstep-record-mode`` and the failures switch."""
    group = parser.getgroup("lockstep")
    group.addoption(
        RECORD,
        action="append",
        default=[],
        metavar="TARGET",
        help="Record the calls of a [[ledger]] (its name or pkg.mod:qualname) while the tests "
        "run, and write its ledger at the end. Repeatable.",
    )
    group.addoption(
        MODE,
        choices=[m.value for m in RecordMode],
        default=RecordMode.CREATE.value,
        help="create (default: refuse over an existing ledger), new-only, force (re-record the "
        "rows this run saw, keep the others) or trim (drop the rows this run did not see).",
    )
    group.addoption(
        ALLOW_FAILURES,
        action="store_true",
        default=False,
        help="Write the recording even though tests failed (by default a failing run writes "
        "nothing: its rows are suspect).",
    )


def configure(config: pytest.Config) -> None:
    """Register the skip marker; wrap the requested targets when the run records."""
    config.addinivalue_line(
        "markers",
        f"{SKIP_MARKER}: keep this test's calls out of pytest {RECORD} (its setup, call "
        "and teardown run unrecorded; the summary counts them)",
    )
    wanted: list[str] = config.getoption(RECORD, default=[]) or []
    if not wanted:
        return
    options = RecordOptions(
        wanted=wanted,
        mode=RecordMode(config.getoption(MODE)),
        allow_failures=bool(config.getoption(ALLOW_FAILURES, default=False)),
        record_flag=RECORD,
        mode_flag=MODE,
        allow_failures_flag=ALLOW_FAILURES,
    )
    start(config, options)


__all__ = ["addoption", "configure"]
