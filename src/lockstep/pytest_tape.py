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

:mod:`lockstep.pytest_plugin` calls :func:`addoption` and :func:`configure`;
``configure`` registers this module as a plugin for the fixture and its
report hook, so the tape machinery stays in one place.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import sys
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, get_args

import pytest

from lockstep.config import Config, Project, find_config, load_project
from lockstep.errors import UsageError
from lockstep.rules import RuleSet, resolve_rules
from lockstep.store import display_path
from lockstep.tape import CompareMode, Event, Tape
from lockstep.tape_compare import compare, render_tape
from lockstep.tape_file import (
    SUFFIX,
    VERSION,
    Acceptance,
    Output,
    TapeDocument,
    read_document,
    write_document,
)

RECORD_FLAG: Final = "--lockstep-record-tapes"
WHY_FLAG: Final = "--lockstep-why"
TAPES_FOLDER: Final = "tapes"

_CALL_FAILED = pytest.StashKey[bool]()
_SETTINGS = pytest.StashKey["_Settings"]()
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]/]")


class TapeMismatch(AssertionError):
    """The test's calls differ from its golden tape (or it has none yet)."""


@dataclass(frozen=True)
class _Settings:
    """What every tape fixture of one session shares."""

    project: Project
    record: bool
    why: str | None

    @property
    def folder(self) -> Path:
        return self.project.oracle_dir / TAPES_FOLDER


def tape_path(folder: Path, node_id: str) -> Path:
    """The golden file of ``node_id``: the node id as a path, made safe for every file system.

    When a character had to be replaced, a short hash of the node id keeps two
    tests from ever sharing a file.
    """
    rel = node_id.replace("::", "/")
    safe = _UNSAFE.sub("_", rel)
    parts = [p if p not in ("", ".", "..") else "_" for p in safe.split("/")]
    safe = "/".join(parts)
    if safe != rel:
        safe += "-" + hashlib.sha256(node_id.encode("utf-8")).hexdigest()[:8]
    return folder / f"{safe}{SUFFIX}"


class FixtureTape(Tape):
    """A :class:`Tape` bound to one test and its golden file."""

    def __init__(
        self,
        *,
        node_id: str,
        path: Path,
        root: Path,
        mode: CompareMode,
        rules: RuleSet,
        record: bool,
        why: str | None,
        stem_length: int,
    ) -> None:
        super().__init__(rules=rules, stem_length=stem_length)
        self.node_id = node_id
        self.path = path
        self.mode: CompareMode = mode
        """How this test's tape is compared; set it before the test ends to change it."""
        self._root = root
        self._record = record
        self._why = why
        self._checked = False

    @property
    def shown_path(self) -> str:
        return display_path(self.path, self._root)

    def assert_matches(self, mode: CompareMode | None = None) -> None:
        """Compare the calls so far with the golden tape; raises :class:`TapeMismatch`.

        Under ``--lockstep-record-tapes`` nothing is compared: the tape is written at
        teardown if the test passes.
        """
        if mode is not None:
            _check_mode(mode)
            self.mode = mode
        self._checked = True
        events = self.events
        if self._record:
            return
        if not self.path.exists():
            raise TapeMismatch(
                f"no tape recorded for this test ({self.shown_path}); record it on the trusted "
                f"commit with: pytest {RECORD_FLAG} {shlex.quote(self.node_id)}"
            )
        doc = read_document(self.path, owner=self.node_id, owner_kind="test")
        lines: list[str] = []
        if doc.mode != self.mode:
            lines.append(
                f"the tape was recorded in {doc.mode} mode, this test asks for {self.mode}"
            )
        if doc.rules != self.rules.records():
            names = ", ".join(r.name for r in doc.rules) or "none"
            lines.append(f"the tape was recorded with rules [{names}], this test names others")
        lines += compare(doc.events, events, doc.mode)
        if lines:
            raise TapeMismatch(self._explain(lines, doc, events))

    def _explain(self, lines: list[str], doc: TapeDocument, events: list[Event]) -> str:
        body = "\n".join(f"  {line}" for line in lines)
        return (
            f"the calls drifted from {self.shown_path} ({doc.mode} mode):\n{body}\n"
            f"expected:\n{render_tape(doc.events)}got:\n{render_tape(events)}"
            f"if the change is intended, re-record with: pytest {RECORD_FLAG} "
            f"{WHY_FLAG} 'one sentence: what changed and why' {shlex.quote(self.node_id)}"
        )

    def finish(self, *, call_failed: bool) -> None:
        """Teardown: write the tape under ``--lockstep-record-tapes``, else check it if not yet."""
        if call_failed:
            return
        if self._record:
            self._write()
        elif not self._checked:
            self.assert_matches()

    def _write(self) -> None:
        events = self.events
        old: TapeDocument | None = None
        if self.path.exists():
            old = read_document(self.path, owner=self.node_id, owner_kind="test")
        records = self.rules.records()
        history = list(old.history) if old is not None else []
        if old is not None:
            if old.mode == self.mode and old.rules == records and old.events == events:
                return
            changes = compare(old.events, events, self.mode) or ["mode or rules changed"]
            if not self._why:
                raise TapeMismatch(
                    f"the tape of this test changed ({self.shown_path}):\n"
                    + "\n".join(f"  {line}" for line in changes)
                    + f"\nto accept it, say why: pytest {RECORD_FLAG} "
                    f"{WHY_FLAG} 'one sentence' {shlex.quote(self.node_id)}"
                )
            test_file = self.node_id.split("::", 1)[0]
            history.append(
                Acceptance(why=self._why, test=test_file, outputs_identical=True, changes=changes)
            )
        doc = TapeDocument(
            version=VERSION,
            name=self.node_id,
            mode=self.mode,
            rules=records,
            events=events,
            output=Output(),
            history=history,
        )
        write_document(self.path, doc)


def _check_mode(mode: object) -> CompareMode:
    modes = get_args(CompareMode)
    if mode not in modes:
        raise UsageError(f"tape mode must be one of {', '.join(modes)}, not {mode!r}")
    return mode  # type: ignore[return-value]


def _settings(config: pytest.Config) -> _Settings:
    cached = config.stash.get(_SETTINGS, None)
    if cached is not None:
        return cached
    root = Path(config.rootpath)
    found = find_config(root)
    if found is not None:
        project = load_project(config_path=found)
    else:
        project = Project(root=root, config_path=root / "lockstep.toml", config=Config())
    why = config.getoption("lockstep_why")
    settings = _Settings(project, bool(config.getoption("lockstep_record_tapes")), why)
    config.stash[_SETTINGS] = settings
    return settings


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


@pytest.fixture
def tape(request: pytest.FixtureRequest) -> Iterator[FixtureTape]:
    """A :class:`lockstep.Tape` checked against this test's golden tape at teardown."""
    settings = _settings(request.config)
    marker = request.node.get_closest_marker("tape")
    mode: CompareMode = "ordered"
    rule_names: list[str] = []
    if marker is not None:
        mode = _check_mode(marker.kwargs.get("mode", "ordered"))
        rule_names = list(marker.kwargs.get("rules", ()))
    rules = resolve_rules(rule_names, settings.project, where="pytest.mark.tape")
    fixture_tape = FixtureTape(
        node_id=request.node.nodeid,
        path=tape_path(settings.folder, request.node.nodeid),
        root=settings.project.root,
        mode=mode,
        rules=rules,
        record=settings.record,
        why=settings.why,
        stem_length=settings.project.config.lockstep.stem_length,
    )
    yield fixture_tape
    fixture_tape.finish(call_failed=request.node.stash.get(_CALL_FAILED, False))


__all__ = ["FixtureTape", "TapeMismatch", "tape", "tape_path"]
