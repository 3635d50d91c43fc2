"""The collected oracle cases: one pytest item per recorded case of an oracle file."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pytest

from lockstep.config import OracleSpec, Project
from lockstep.errors import LockstepError, Rejected, TargetError
from lockstep.model import Outcome, Status
from lockstep.oracles import NOT_RECORDED, CaseRunner, kind_of, not_recorded
from lockstep.oracles.pending import PendingCase, pending_case, update_pending
from lockstep.pytest.replay_warnings import as_replayed

BAD_INPUT: Final = "lockstep-bad-input"
"""The user property of an item that met an oracle file that cannot be read."""


def bad_input_exit(session: pytest.Session) -> None:
    """Exit 2 where an item (in an xdist worker) met an oracle file that cannot be read,
    as ``lockstep replay`` exits: a forged file is not a drift of the code."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    reports = getattr(reporter, "stats", {}).get("failed", []) if reporter else []
    if any(name == BAD_INPUT for r in reports for name, _ in getattr(r, "user_properties", ())):
        session.exitstatus = pytest.ExitCode.INTERRUPTED


class LockstepDrift(Exception):
    """Raised by an item whose case drifted; carries the outcome for the report."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.case_id)
        self.outcome = outcome


class OracleFile(pytest.File):
    """One oracle file; its children are the recorded cases."""

    project: Project
    spec: OracleSpec

    def collect(self) -> Iterator[pytest.Item]:
        if not os.path.lexists(self.path) and self.spec.name not in self.project.former:
            yield OracleItem.from_parent(self, name=NOT_RECORDED)  # fails, naming the command
            return
        try:
            ids = list(kind_of(self.spec).case_ids(self.project, self.spec))
        except LockstepError as e:
            raise self.CollectError(str(e)) from None
        for case_id in ids:
            yield OracleItem.from_parent(self, name=case_id)


class OracleItem(pytest.Item):
    """One recorded case: replays it and fails with the same text the CLI prints."""

    parent: OracleFile

    def runtest(self) -> None:
        if self.name == NOT_RECORDED and not os.path.lexists(self.path):
            raise LockstepDrift(not_recorded(self.parent.project, self.parent.spec, self.path))
        runner = _runner(self)
        try:
            outcome = _shown(self)(as_replayed(lambda: runner(self.name)))
        except (Rejected, TargetError):
            raise  # the change's failure, as replay's red
        except LockstepError as e:
            # a file whose values say what they must not (a forged class name, a row too
            # deep to read) is bad input, found only as its rows thaw: the item fails with
            # the line and the session stops after it, exit 2 (bad_input_exit), as
            # ``lockstep replay`` stops and as a corrupt file stops collection.  (Ended by
            # pytest.exit, the run's last line counted only the items passed before it.)
            message = f"lockstep: {e}"
            self.user_properties.append((BAD_INPUT, message))
            if getattr(self.config, "workerinput", None) is None:
                self.session.shouldstop = message  # an xdist worker's stop: its own
            raise
        keep_pending(self, outcome)
        if not outcome.ok:
            raise LockstepDrift(outcome)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, LockstepDrift):
            from lockstep.report.terminal import outcome_text

            return outcome_text(excinfo.value.outcome).plain
        if isinstance(excinfo.value, LockstepError):
            return f"lockstep: {excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.parent.spec.kind} {self.parent.spec.name}::{self.name}"


_RUNNERS = pytest.StashKey[dict[str, CaseRunner]]()
_SHOWN = pytest.StashKey[Callable[[Outcome], Outcome]]()


def _shown(item: OracleItem) -> Callable[[Outcome], Outcome]:
    """How an outcome is shown and kept pending: masked as the CLI's replay masks it
    (secrets in the drift as placeholders or ``<secret: DETECTOR>``)."""
    if _SHOWN not in item.session.stash:
        from lockstep.secrets import policy_for

        item.session.stash[_SHOWN] = policy_for(item.parent.project).masked
    return item.session.stash[_SHOWN]


def _runner(item: OracleItem) -> CaseRunner:
    """The prepared runner for the item's oracle, built once per session (per xdist worker)."""
    runners = item.session.stash.setdefault(_RUNNERS, {})
    spec = item.parent.spec
    if spec.name not in runners:
        kind = kind_of(spec)
        # a ledger's rows replay together in a fork of their own, as the CLI replays them
        make = getattr(kind, "isolated_case_runner", kind.case_runner)
        runners[spec.name] = make(item.parent.project, spec)
    return runners[spec.name]


@dataclass
class _Kept:
    """One oracle's cases this session (this xdist worker) ran, and the drifted ones."""

    project: Project
    spec: OracleSpec
    ran: set[str] = field(default_factory=set)
    drifted: list[PendingCase] = field(default_factory=list)


_KEPT = pytest.StashKey[dict[str, _Kept]]()


def keep_pending(item: OracleItem, outcome: Outcome) -> None:
    """With ``--lockstep-keep-pending``: note the case for the oracle's pending file."""
    if not item.config.getoption("lockstep_keep_pending", default=False):
        return
    spec = item.parent.spec
    kept = item.session.stash.setdefault(_KEPT, {})
    entry = kept.setdefault(spec.name, _Kept(item.parent.project, spec))
    entry.ran.add(outcome.case_id)
    if outcome.status is Status.DRIFT and outcome.drifts:
        entry.drifted.append(pending_case(outcome))


def write_kept(session: pytest.Session) -> None:
    """At the end of the session: each oracle's pending file gets this session's drifts."""
    for kept in session.stash.get(_KEPT, {}).values():
        update_pending(kept.project, kept.spec, kept.ran.__contains__, kept.drifted)
