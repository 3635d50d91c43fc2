"""Accepting a tape drift on purpose (``lockstep accept``), split in two.

:func:`plan_accept` runs the driver and compares, so the command layer can show
the reviewer's three signals (outputs identical, why, the intentional test)
*before* anything is written; :func:`apply_accept` re-records the tape through the
kind's accept (:meth:`~lockstep.oracles.tape.kind.TapeKind.accept_reviewed`: the
record path every accept takes), the signals kept in the tape's history.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lockstep.config import OracleSpec, Project
from lockstep.errors import Rejected, UsageError
from lockstep.oracles.lifecycle import check_why
from lockstep.oracles.tape.document import (
    Acceptance,
    TapeDocument,
    change_lines,
    secret_refusal,
    successor,
)
from lockstep.oracles.tape.kind import (
    KIND,
    config_rules,
    read_tape,
    render_output,
    run_driver,
    same_output,
    tape_spec,
)
from lockstep.secrets import policy_for
from lockstep.store import display_path


@dataclass(frozen=True)
class AcceptPlan:
    """What ``lockstep accept`` would write, and the three signals a reviewer needs first."""

    oracle: str
    path: Path
    outputs_identical: bool
    expected_output: str
    actual_output: str
    why: str
    test: str
    """The new intentional test, relative to the project root."""
    changes: tuple[str, ...]
    """The drift lines being accepted (empty: the tape already matches)."""
    entry: Acceptance
    """The signals the tape's history keeps."""
    document: TapeDocument
    """The tape as it would be written now (scanned for secrets before anything is shown)."""

    @property
    def needed(self) -> bool:
        """Whether there is anything to accept (or to refuse): changed calls or output."""
        return bool(self.changes) or not self.outputs_identical


def check_test(project: Project, test: Path) -> str:
    """The intentional test must exist inside the project; returns its root-relative path."""
    path = test if test.is_absolute() else Path.cwd() / test
    if not path.is_file():
        raise UsageError(
            f"--test: {test} does not exist; write the test that pins the new behaviour first"
        )
    root = project.root.resolve()
    resolved = path.resolve()
    if root not in resolved.parents:
        raise UsageError(f"--test: {test} is outside the project root {root}")
    return resolved.relative_to(root).as_posix()


def plan_accept(project: Project, spec: OracleSpec, *, why: str, test: Path) -> AcceptPlan:
    """Re-run the driver with the current config and describe what accepting would change."""
    tspec = tape_spec(spec)
    reason = check_why(why)
    test_rel = check_test(project, test)
    path = KIND.oracle_path(project, tspec)
    if not path.exists():
        raise UsageError(
            f"{display_path(path, project.root)}: no tape to accept a change into; "
            f"run `lockstep record {tspec.name}` first"
        )
    old = read_tape(project, tspec)
    rules = config_rules(project, tspec)
    run = run_driver(project, tspec, rules)
    changes = change_lines(old, tspec.mode, rules.records(), run.events, asked_by="the config")
    identical = same_output(old.output, run.output)
    entry = Acceptance(
        why=reason, test=test_rel, outputs_identical=identical, changes=list(changes)
    )
    document = successor(
        old,
        name=tspec.name,
        mode=tspec.mode,
        rules=rules.records(),
        events=run.events,
        output=run.output,
        accepted=entry,
    )
    refusal = secret_refusal(policy_for(project), document)
    if refusal is not None:
        raise Rejected(f"{tspec.name}: the tape cannot be accepted: {refusal.text()}")
    return AcceptPlan(
        oracle=tspec.name,
        path=path,
        outputs_identical=identical,
        expected_output=render_output(old.output),
        actual_output=render_output(run.output),
        why=reason,
        test=test_rel,
        changes=tuple(changes),
        entry=entry,
        document=document,
    )


def apply_accept(project: Project, spec: OracleSpec, plan: AcceptPlan) -> None:
    """Re-record the tape with its history entry, through the kind's accept; refuses a
    plan whose output changed, and a tape that record refuses (a secret, a run that does
    not reproduce in a fresh interpreter)."""
    if not plan.outputs_identical:
        raise UsageError(
            f"{plan.oracle}: the output changed; a tape change is accepted only "
            "when outputs are identical"
        )
    if not plan.needed:
        return
    report = KIND.accept_reviewed(project, tape_spec(spec), plan.entry)
    if report.refused:
        raise Rejected(f"{plan.oracle}: the tape cannot be accepted: {report.refused[0].text()}")
