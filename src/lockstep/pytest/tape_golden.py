"""The ``tape`` fixture's machinery: a test's golden tape, its settings, and its verdict.

:mod:`lockstep.pytest.tape_fixture` (options, hooks and the fixture itself) imports this
module when a test first asks for ``tape``, so that a pytest run that uses no tape never
imports the tape oracle, the rules or the secret scan.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from lockstep.config import Project
from lockstep.errors import LockstepError, UsageError
from lockstep.oracles.lifecycle import check_why
from lockstep.oracles.tape.compare import render_tape
from lockstep.oracles.tape.document import (
    SUFFIX,
    Acceptance,
    Output,
    TapeDocument,
    change_lines,
    read_document,
    secret_refusal,
    successor,
    write_document,
)
from lockstep.oracles.tape.recorder import COMPARE_MODES, CompareMode, Event, Tape
from lockstep.pytest.project import load
from lockstep.rules import BUILTIN_NAMES, RuleSet, resolve_rules
from lockstep.secrets import SecretPolicy, policy_for
from lockstep.store import display_path

TAPES_FOLDER: Final = "tapes"
_MARKER_KEYS: Final = frozenset({"mode", "rules"})
_SETTINGS = pytest.StashKey["_Settings"]()
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-\[\]/]")


class TapeMismatch(AssertionError):
    """The test's calls differ from its golden tape (or it has none yet)."""


@dataclass(frozen=True)
class Names:
    """What :mod:`.tape_fixture` names: its two options, and the keys its hooks share with
    the fixture (passed in, so this module never imports the plugin module back)."""

    record_flag: str
    why_flag: str
    accepted: str
    call_failed: pytest.StashKey[bool]


@dataclass(frozen=True)
class _Settings:
    """What every tape fixture of one session shares."""

    project: Project
    record: bool
    why: str | None
    names: Names

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
        secrets: SecretPolicy,
        names: Names,
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
        self.accepted: Acceptance | None = None
        """The history entry written by this test's re-record, if it changed the tape."""
        self.secrets = secrets
        self.names = names

    @property
    def shown_path(self) -> str:
        return display_path(self.path, self._root)

    def assert_matches(self, mode: CompareMode | None = None) -> None:
        """Compare the calls so far with the golden tape; raises :class:`TapeMismatch`.

        Under ``--lockstep-record-tapes`` nothing is compared: the tape is written at
        teardown if the test passes.  A corrupt or foreign golden file, or a value
        that could not be frozen, is reported the same way: one message, no
        traceback through lockstep.
        """
        __tracebackhide__ = True
        try:
            self._assert_matches(mode)
        except LockstepError as e:
            raise TapeMismatch(str(e)) from None

    def _assert_matches(self, mode: CompareMode | None) -> None:
        if mode is not None:
            self.mode = _check_mode(mode, where="tape.assert_matches")
        self._checked = True
        events = self.events
        if self._record:
            return
        if not self.path.exists():
            raise TapeMismatch(
                f"no tape recorded for this test ({self.shown_path}); record it on the trusted "
                f"commit with: pytest {self.names.record_flag} {shlex.quote(self.node_id)}"
            )
        doc = read_document(self.path, owner=self.node_id, owner_kind="test")
        lines = change_lines(
            doc,
            self.mode,
            self.rules.records(),
            events,
            asked_by="this test",
            compare_mode=doc.mode,
        )
        if lines:
            raise TapeMismatch(self._explain(lines, doc, events))

    def _explain(self, lines: list[str], doc: TapeDocument, events: list[Event]) -> str:
        body = "\n".join(f"  {line}" for line in lines)
        return (
            f"the calls drifted from {self.shown_path} ({doc.mode} mode):\n{body}\n"
            f"expected:\n{render_tape(doc.events)}got:\n{render_tape(events)}"
            f"if the change is intended, re-record with: pytest {self.names.record_flag} "
            f"{self.names.why_flag} 'one sentence: what changed and why' {shlex.quote(self.node_id)}"
        )

    def finish(self, *, call_failed: bool) -> None:
        """Teardown: write the tape under ``--lockstep-record-tapes``, else check it if not yet."""
        __tracebackhide__ = True
        if call_failed:
            return
        if self._record:
            try:
                self._write()
            except LockstepError as e:
                raise TapeMismatch(str(e)) from None
        elif not self._checked:
            self.assert_matches()

    def _write(self) -> None:
        events = self.events
        old: TapeDocument | None = None
        if self.path.exists():
            old = read_document(self.path, owner=self.node_id, owner_kind="test")
        records = self.rules.records()
        if old is not None:
            if old.mode == self.mode and old.rules == records and old.events == events:
                return
            changes = change_lines(old, self.mode, records, events, asked_by="this test")
            if not self._why:
                raise TapeMismatch(
                    f"the tape of this test changed ({self.shown_path}):\n"
                    + "\n".join(f"  {line}" for line in changes)
                    + f"\nto accept it, say why: pytest {self.names.record_flag} "
                    f"{self.names.why_flag} 'one sentence' {shlex.quote(self.node_id)}"
                )
            # The test that owns the tape passed: its own assertions on the output held,
            # and it is the test that pins the new behaviour.
            test_file = self.node_id.split("::", 1)[0]
            self.accepted = Acceptance(
                why=self._why, test=test_file, outputs_identical=True, changes=changes
            )
        doc = successor(
            old,
            name=self.node_id,
            mode=self.mode,
            rules=records,
            events=events,
            output=Output(),
            accepted=self.accepted,
        )
        refusal = secret_refusal(self.secrets, doc)
        if refusal is not None:
            raise TapeMismatch(f"{self.shown_path}: not written: {refusal.text()}")
        write_document(self.path, doc)


def _check_mode(mode: object, *, where: str) -> CompareMode:
    for known in COMPARE_MODES:
        if mode == known:
            return known
    raise UsageError(f"{where}: mode must be one of {', '.join(COMPARE_MODES)}, not {mode!r}")


def _marker_settings(node: pytest.Item, project: Project) -> tuple[CompareMode, RuleSet]:
    """The mode and rules of ``@pytest.mark.tape(...)``, checked: a typo must not pass silently."""
    marker = node.get_closest_marker("tape")
    if marker is None:
        return "ordered", RuleSet()
    where = f"{node.nodeid}: @pytest.mark.tape"
    unknown = sorted(set(marker.kwargs) - _MARKER_KEYS)
    if marker.args or unknown:
        given = ", ".join(unknown) if unknown else "a positional argument"
        raise UsageError(f"{where}: takes only mode= and rules=, not {given}")
    mode = _check_mode(marker.kwargs.get("mode", "ordered"), where=where)
    names = marker.kwargs.get("rules", ())
    if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
        raise UsageError(f"{where}: rules= must be a list of rule names, not {names!r}")
    known = [*BUILTIN_NAMES, *(r.name for r in project.config.rule)]
    for name in names:
        if name not in known:
            raise UsageError(
                f"{where}: unknown rule {name!r} (known: {', '.join(known)}; "
                f"add a [[rule]] to {project.config_name} for your own)"
            )
    return mode, resolve_rules(names, project, where="pytest.mark.tape")


def _settings(config: pytest.Config, names: Names) -> _Settings:
    cached = config.stash.get(_SETTINGS, None)
    if cached is not None:
        return cached
    project = load(config, required=False)
    why = config.getoption("lockstep_why")
    settings = _Settings(
        project,
        bool(config.getoption("lockstep_record_tapes")),
        check_why(why, flag=names.why_flag) if why is not None else None,
        names,
    )
    config.stash[_SETTINGS] = settings
    return settings


def _signals(fixture_tape: FixtureTape, accepted: Acceptance) -> str:
    return "\n".join(
        [
            f"{fixture_tape.node_id} ({fixture_tape.shown_path})",
            "  1. outputs identical: yes (the test's own assertions passed)",
            f"  2. why: {accepted.why}",
            f"  3. intentional test: {accepted.test}",
            "  calls that change:",
            *(f"     {line}" for line in accepted.changes),
        ]
    )


def open_tape(request: pytest.FixtureRequest, names: Names) -> Iterator[FixtureTape]:
    """The body of the ``tape`` fixture: set up, hand the test its tape, check at teardown."""
    try:
        settings = _settings(request.config, names)
        mode, rules = _marker_settings(request.node, settings.project)
    except LockstepError as e:
        problem = str(e)
    else:
        problem = ""
    if problem:  # failed outside the except block, so pytest shows no chained traceback
        pytest.fail(problem, pytrace=False)
    fixture_tape = FixtureTape(
        node_id=request.node.nodeid,
        path=tape_path(settings.folder, request.node.nodeid),
        root=settings.project.root,
        mode=mode,
        rules=rules,
        record=settings.record,
        why=settings.why,
        stem_length=settings.project.config.lockstep.stem_length,
        secrets=policy_for(settings.project),
        names=names,
    )
    yield fixture_tape
    problem = ""
    try:
        fixture_tape.finish(call_failed=request.node.stash.get(names.call_failed, False))
    except TapeMismatch as e:
        problem = str(e)
    if problem:
        pytest.fail(problem, pytrace=False)
    if fixture_tape.accepted is not None:
        request.node.user_properties.append(
            (names.accepted, _signals(fixture_tape, fixture_tape.accepted))
        )


__all__ = ["FixtureTape", "Names", "TapeMismatch", "open_tape", "tape_path"]
