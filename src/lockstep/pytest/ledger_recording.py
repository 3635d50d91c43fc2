"""``pytest --lockstep-record=TARGET``: the options and the hook; the recording itself is
the ledger's (:mod:`lockstep.oracles.ledger.pytest_recording`).

The option names are defined here only: the recording is handed them with the values
(:class:`~lockstep.oracles.ledger.pytest_recording.RecordOptions`), so renaming one is a
one-line change here.  The record modes are spelled as the CLI's (``--lockstep-new-only``,
``--lockstep-trim``), except the one that re-records the rows this run saw and keeps the
others: ``--lockstep-refresh`` (the CLI's ``--force`` re-records every case).  Nothing
heavy is imported until a run records: pytest loads this module in every run of a
project that installed lockstep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import pytest

if TYPE_CHECKING:
    from lockstep.model import RecordMode
    from lockstep.oracles.verify_session import VerifySession

RECORD: Final = "--lockstep-record"
ALL: Final = "*"
"""What a bare ``--lockstep-record`` (no ``=NAME``) stands for: every configured ledger.
No ledger name or target can be ``*``, so the sentinel never shadows one."""
MODE: Final = "--lockstep-record-mode"
"""Deprecated spelling of the modes (``force`` meant what ``--lockstep-refresh`` does)."""
ALLOW_FAILURES: Final = "--lockstep-record-allow-failures"
SKIP_MARKER: Final = "lockstep_skip"
"""``@pytest.mark.lockstep_skip``: keep this test's calls out of ``--lockstep-record``."""

PYTEST_MODES: Final = {
    "create": "create",
    "new-only": "new-only",
    "refresh": "force",  # the rows this run saw; the CLI's --force re-records all
    "trim": "trim",
}
"""The pytest spelling of each record mode -> :class:`~lockstep.model.RecordMode` value."""
_MODE_FLAGS: Final = (
    ("--lockstep-new-only", "new-only", "add rows for inputs the ledger does not know"),
    ("--lockstep-refresh", "refresh", "re-record the rows this run saw, keep the others"),
    ("--lockstep-trim", "trim", "drop the rows this run did not see"),
)


def addoption(parser: pytest.Parser) -> None:
    """Register ``--lockstep-record``, its modes and the failures switch."""
    group = parser.getgroup("lockstep")
    group.addoption(
        RECORD,
        action="append",
        nargs="?",
        const=ALL,
        default=[],
        metavar="TARGET",
        help="Record the calls of a [[ledger]] (its name or pkg.mod:qualname) while the tests "
        "run, and write its ledger at the end. Repeatable; without a value, every configured "
        "[[ledger]].",
    )
    for flag, mode, words in _MODE_FLAGS:
        group.addoption(
            flag,
            action="append_const",
            const=mode,
            dest="lockstep_record_modes",
            default=[],
            help=f"With --lockstep-record: {words} (as 'lockstep record --{mode}' does"
            + (", but only for the rows this run saw)." if mode == "refresh" else ")."),
        )
    group.addoption(
        MODE,
        choices=[*PYTEST_MODES, "force"],
        default=None,
        help="Deprecated: --lockstep-new-only, --lockstep-refresh (once 'force') or "
        "--lockstep-trim.",
    )
    group.addoption(
        ALLOW_FAILURES,
        action="store_true",
        default=False,
        help="Write the recording even though tests failed (by default a failing run writes "
        "nothing: its rows are suspect).",
    )


def record_mode(config: pytest.Config) -> RecordMode:
    """The one mode the options ask for (create when none); two are a usage error."""
    from lockstep.model import RecordMode

    asked: list[str] = list(config.getoption("lockstep_record_modes", default=None) or [])
    old = config.getoption(MODE, default=None)
    if old is not None:
        asked.append("refresh" if old == "force" else str(old))
    chosen = sorted(set(asked) - {"create"})
    if len(chosen) > 1:
        flags = " and ".join(f"--lockstep-{m}" for m in chosen)
        raise pytest.UsageError(
            f"lockstep: one record mode, not {flags}: each is a different update"
        )
    return RecordMode(PYTEST_MODES[chosen[0]]) if chosen else RecordMode.CREATE


def mode_error(message: str, name: str) -> str:
    """``check_mode``'s message with the pytest spellings of the modes it suggests."""
    for cli, flag in (
        ("--new-only (", "--lockstep-new-only ("),
        ("--force (re-record every row)", "--lockstep-refresh (re-record the rows this run saw)"),
        ("--trim (", "--lockstep-trim ("),
        (
            f"run 'lockstep record {name}' without a mode first",
            f"run 'pytest {RECORD}={name}' without a mode first",
        ),
    ):
        message = message.replace(cli, flag)
    return message


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
    mode = record_mode(config)  # two modes asked: a usage error before anything starts
    verifier = _verifying_early(config)
    try:
        from lockstep.pytest.hypothesis_deadline import lift_deadline

        lift_deadline(config)  # recording slows each example: Hypothesis's deadline is not ours
        from lockstep.oracles.ledger.pytest_recording import RecordOptions, start

        options = RecordOptions(
            wanted=[name for name in wanted if name != ALL],
            record_all=ALL in wanted,
            mode=mode,
            allow_failures=bool(config.getoption(ALLOW_FAILURES, default=False)),
            record_flag=RECORD,
            trim_flag="--lockstep-trim",
            mode_error=mode_error,
            allow_failures_flag=ALLOW_FAILURES,
        )
        start(config, options, verifier)
    except BaseException:
        if verifier is not None:
            verifier.close()
        raise


def _verifying_early(config: pytest.Config) -> VerifySession | None:
    """The controller's verifying interpreter, started first, before the recording imports
    its machinery (0.05 s), reads the package's surface and wraps it: the interpreter's own
    start (its imports, a tenth of a second) runs on another core meanwhile, and it is
    ready to import the package once the targets are known (webcolors' suite ended before
    it was).  So only the session is imported for it, in the configuration's folder found
    but not yet read.  None in an xdist worker, or where no configuration is found."""
    if getattr(config, "workerinput", None) is not None:
        return None
    from lockstep.oracles.verify_session import VerifySession, verifying_seed
    from lockstep.pytest.project import root_for

    root = root_for(config)
    if root is None:  # loading the project says why, in one line
        return None
    session = VerifySession(root)
    try:
        session.start(verifying_seed())
    except OSError:  # (the folder went away): the project's loading, next, says what is wrong
        session.close()
        return None
    return session


__all__ = ["SKIP_MARKER", "addoption", "configure", "record_mode"]
