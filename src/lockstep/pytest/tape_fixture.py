"""The ``tape`` pytest fixture: each test's collaborator calls, checked against its golden tape.

A test that asks for ``tape`` wires spies (``tape.spy``, ``tape.watch``,
``tape.patch``), runs its target, and either calls ``tape.assert_matches()``
or lets the fixture check at teardown.  The golden file is keyed by the test's
node id: ``<dir>/tapes/<node id as a path>.tape.json``, so each test owns one
file and pytest-xdist workers never write the same file.

Recording is never implicit.  Only ``--lockstep-record-tapes`` writes tapes
(and only for tests that passed); a missing golden file fails the test with
the command that records it, so CI cannot quietly freeze whatever it sees.
Changing an existing tape also needs ``--lockstep-why "one sentence"``, which
goes into the file's history, as with ``lockstep accept``.

Per test, ``@pytest.mark.tape(mode="multiset", rules=["uuid"])`` sets the
compare mode and the normalization rules.

Everything lockstep has to say (no golden yet, drift, a corrupt or foreign
golden file, a bad marker) fails the test with that one message, never with a
traceback through lockstep's own frames; tapes accepted with a ``why`` are
listed with the reviewer's three signals at the end of the run.

:mod:`lockstep.pytest.plugin` calls :func:`addoption` and :func:`configure`;
``configure`` registers this module as a plugin for the fixture and its
report hook, so the tape machinery stays in one place.
"""

from __future__ import annotations

import sys
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any, Final

import pytest

if TYPE_CHECKING:  # the tape machinery loads when a test first asks for the fixture
    from lockstep.pytest.tape_golden import FixtureTape

RECORD_FLAG: Final = "--lockstep-record-tapes"
WHY_FLAG: Final = "--lockstep-why"

_ACCEPTED: Final = "lockstep_tape_accepted"
"""The ``user_properties`` key that carries an accepted change to the terminal summary
(user properties travel from pytest-xdist workers to the controller)."""

_CALL_FAILED = pytest.StashKey[bool]()


# --------------------------------------------------------------------------- pytest hooks


def addoption(parser: pytest.Parser) -> None:
    """Register ``--lockstep-record-tapes`` and ``--lockstep-why`` (called by the main plugin)."""
    group = parser.getgroup("lockstep", "lockstep: replay frozen behaviour")
    group.addoption(
        RECORD_FLAG,
        action="store_true",
        default=False,
        dest="lockstep_record_tapes",
        help="Write the golden tape of every passing test that uses the tape fixture.",
    )
    group.addoption(
        WHY_FLAG,
        default=None,
        dest="lockstep_why",
        metavar="SENTENCE",
        help="Why a re-recorded tape changed (kept in the tape's history); "
        f"needed when {RECORD_FLAG} changes an existing tape.",
    )


def configure(config: pytest.Config) -> None:
    """Register the ``tape`` marker, and this module (the fixture and its report hook) as a plugin.

    Registering here rather than through an entry point keeps one entry point
    (``lockstep``) and lets this module own everything about tapes.
    """
    why = config.getoption("lockstep_why")
    if why is not None:
        from lockstep.errors import UsageError
        from lockstep.oracles.lifecycle import check_why

        try:
            check_why(why, flag=WHY_FLAG)
        except UsageError as e:
            raise pytest.UsageError(str(e)) from None
    if not config.pluginmanager.is_registered(sys.modules[__name__]):
        config.pluginmanager.register(sys.modules[__name__], "lockstep-tape")
    config.addinivalue_line(
        "markers",
        "tape(mode='ordered', rules=()): how the lockstep tape fixture compares this test's "
        "calls (ordered, multiset, counts) and which named rules normalize them",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = report.failed
    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """List every tape accepted with ``--lockstep-why``, with the reviewer's three signals."""
    accepted = [
        text
        for reports in terminalreporter.stats.values()
        for report in reports
        if isinstance(report, pytest.TestReport) and report.when == "teardown"
        for key, text in report.user_properties
        if key == _ACCEPTED
    ]
    if accepted:
        terminalreporter.section("lockstep: tape changes accepted")
        for text in accepted:
            terminalreporter.write_line(str(text))


@pytest.fixture
def tape(request: pytest.FixtureRequest) -> Iterator[FixtureTape]:
    """A :class:`lockstep.Tape` checked against this test's golden tape at teardown."""
    from lockstep.pytest.tape_golden import Names, open_tape

    names = Names(RECORD_FLAG, WHY_FLAG, _ACCEPTED, _CALL_FAILED)
    yield from open_tape(request, names)


_MOVED: Final = ("FixtureTape", "TapeMismatch", "tape_path")


def __getattr__(name: str) -> Any:
    """The fixture's classes live in :mod:`.tape_golden`; they are still importable here."""
    if name in _MOVED:
        from lockstep.pytest import tape_golden

        return getattr(tape_golden, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["tape"]
