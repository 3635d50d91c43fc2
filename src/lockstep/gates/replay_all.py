"""Replay every configured oracle and sum up the verdicts, for the review and the step loop.

Whatever kinds are configured are replayed through the one
:class:`~lockstep.oracles.OracleKind` protocol, so this module grows with
lockstep without change.  No oracle configured is not green: nothing would
prove the behaviour unchanged, so the gates fail closed.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import msgspec

from lockstep.config import Project, load_project
from lockstep.errors import LockstepError
from lockstep.gates.git import Git
from lockstep.model import Outcome, ReplayOptions
from lockstep.oracles import default_jobs, kind_of
from lockstep.oracles import replay as replay_oracle

KEPT_OUTCOMES: Final = 3
"""Failing outcomes kept in full per oracle (with their diffs), for ``step`` to show; the
rest are kept as ids only, so memory stays flat however many cases drift."""


@dataclass(frozen=True)
class OracleReplay:
    """One oracle's replay: how many cases passed, which did not, or why it could not run."""

    oracle: str
    kind: str
    passed: int
    failed: tuple[str, ...]
    """``case-id (status)`` of every case that did not pass."""
    error: str = ""
    first: tuple[Outcome, ...] = ()
    """The first :data:`KEPT_OUTCOMES` failing outcomes, drifts and diffs included."""

    @property
    def ok(self) -> bool:
        return not self.failed and not self.error

    def __str__(self) -> str:
        if self.error:
            return f"{self.oracle} ({self.kind}): could not replay: {self.error}"
        total = self.passed + len(self.failed)
        if self.ok:
            return f"{self.oracle} ({self.kind}): {self.passed}/{total} cases replay green"
        shown = ", ".join(self.failed[:5]) + (" …" if len(self.failed) > 5 else "")
        return f"{self.oracle} ({self.kind}): {len(self.failed)} of {total} cases red: {shown}"


@dataclass(frozen=True)
class ReplaySummary:
    oracles: tuple[OracleReplay, ...]

    @property
    def configured(self) -> bool:
        return bool(self.oracles)

    @property
    def ok(self) -> bool:
        return self.configured and all(o.ok for o in self.oracles)

    def evidence(self) -> tuple[str, ...]:
        if not self.configured:
            return ("no oracles configured: nothing proves the behaviour is unchanged",)
        if self.ok:
            return tuple(str(o) for o in self.oracles)
        # the red ones first: a review shows a dozen lines, and the thirteenth oracle in
        # the configuration's order was the one a reader needed
        red = [str(o) for o in self.oracles if not o.ok]
        green = sum(1 for o in self.oracles if o.ok)
        return (*red, *([f"{green} other oracle(s) replay green"] if green else []))


def replay_all(
    project: Project, options: ReplayOptions | None = None, *, jobs_given: bool = True
) -> ReplaySummary:
    """Replay every configured oracle; an oracle that cannot run is red with its reason.

    ``jobs_given`` False: each oracle replays with the workers ``lockstep replay`` would
    give it without ``--jobs`` (``[lockstep] jobs``, else its kind's default).
    """
    options = options or ReplayOptions()
    results: list[OracleReplay] = []
    for spec in project.oracles(former=True):
        try:
            kind_of(spec)  # an unavailable kind is red here; oracles.replay runs it below
        except ImportError:
            results.append(
                OracleReplay(spec.name, spec.kind, 0, (), f"oracle kind {spec.kind!r} unavailable")
            )
            continue
        passed = 0
        failed: list[str] = []
        first: list[Outcome] = []
        # a target that prints must not garble a report written to stdout (--format md)
        try:
            with contextlib.redirect_stdout(sys.stderr):
                chosen = options
                if not jobs_given:
                    jobs = default_jobs(spec, project.config.lockstep.jobs)
                    chosen = msgspec.structs.replace(options, jobs=jobs)
                for outcome in replay_oracle(project, spec, chosen):
                    if outcome.ok:
                        passed += 1
                        continue
                    failed.append(f"{outcome.case_id} ({outcome.status.value})")
                    if len(first) < KEPT_OUTCOMES:
                        first.append(outcome)
        except LockstepError as e:
            results.append(
                OracleReplay(spec.name, spec.kind, passed, tuple(failed), str(e), tuple(first))
            )
            continue
        results.append(OracleReplay(spec.name, spec.kind, passed, tuple(failed), "", tuple(first)))
    return ReplaySummary(tuple(results))


@contextlib.contextmanager
def project_at(project: Project, git: Git, sha: str) -> Iterator[Project]:
    """The project as it is at commit ``sha``.

    When ``sha`` is the checked-out HEAD and no tracked file differs, that is
    the project on disk; otherwise a temporary ``git worktree`` of ``sha`` is
    made (and removed), so reviewing an older range never touches the user's
    working tree.
    """
    if sha == git.resolve("HEAD") and not git.tracked_dirty():
        yield project
        return
    rel = project.config_path.resolve().relative_to(git.root.resolve())
    with git.worktree(sha, "lockstep-review-") as tree:
        git.copy_generated(tree)  # a build's _version.py: the package imports it
        yield load_project(config_path=tree / rel)
