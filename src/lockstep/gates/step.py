"""The one-transformation loop: probe, replay, budget, verdict — and, when red, undo.

``lockstep step`` is what a developer (or an assistant) runs after each small
edit.  It first re-probes the pinned cases (is the program still
deterministic?), then replays every oracle, then weighs the working-tree
change against the budget.  With ``--revert`` a red verdict restores the
working tree to HEAD — after the whole change, untracked files included, has
been saved as a patch inside the git folder, so nothing is lost and
``git apply PATCH`` brings it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from lockstep.config import Project
from lockstep.errors import GitError, LockstepError
from lockstep.gates.budget import BudgetReport, check_budget
from lockstep.gates.git import Git
from lockstep.gates.guard import local_change
from lockstep.gates.replay_all import ReplaySummary, replay_all
from lockstep.model import ReplayOptions
from lockstep.store import atomic_write


@dataclass(frozen=True)
class ProbeLine:
    """One pinned case probed: how many distinct normalized outputs its runs gave."""

    oracle: str
    case_id: str
    variants: int

    @property
    def ok(self) -> bool:
        return self.variants == 1


@dataclass(frozen=True)
class ProbeSummary:
    lines: tuple[ProbeLine, ...]
    note: str
    """Why the probe did not run (no pins configured), or what it covered."""

    @property
    def ok(self) -> bool:
        return all(line.ok for line in self.lines)


@dataclass(frozen=True)
class StepResult:
    probe: ProbeSummary
    replay: ReplaySummary
    budget: BudgetReport

    @property
    def ok(self) -> bool:
        return self.probe.ok and self.replay.ok and self.budget.ok


def probe_pins(project: Project, runs: int) -> ProbeSummary:
    """Run every recorded oracle ``runs`` times; a case with more than one output is flaky.

    Pins run each case as a process; the in-process kinds replay the whole oracle in a
    fresh interpreter per run, each with another hash seed (what record verifies too).
    """
    from lockstep.oracles import kind_of
    from lockstep.probe.runs import probe_many
    from lockstep.rules import resolve_rules

    lines: list[ProbeLine] = []
    for spec in project.oracles():
        kind = kind_of(spec)
        if not kind.oracle_path(project, spec).exists():
            continue  # replay reports the unrecorded oracle
        targets = kind.probe_targets(project, spec)
        rules = resolve_rules(spec.rules, project, where=project.key(spec))
        reports = probe_many(targets, runs=runs, rules=rules)
        lines += [
            ProbeLine(spec.name, r.target.label.partition("::")[2] or "*", len(r.normalized))
            for r in reports
        ]
    if not lines:
        return ProbeSummary((), "no recorded oracle: probe skipped, replay only")
    return ProbeSummary(tuple(lines), f"{len(lines)} case(s) probed, {runs} runs each")


def step(
    project: Project,
    git: Git,
    *,
    runs: int = 2,
    options: ReplayOptions | None = None,
    jobs_given: bool = True,
) -> StepResult:
    """Judge the working tree against HEAD: probe, replay, budget."""
    probe = probe_pins(project, runs)
    replay = replay_all(project, options, jobs_given=jobs_given)
    budget = check_budget(project, git, local_change(git, staged=False))
    return StepResult(probe, replay, budget)


def save_and_restore(git: Git) -> Path | None:
    """Save the working tree's change as a patch in the git folder, then restore HEAD.

    Returns the patch path, or None when there was nothing to undo.  If the
    saved patch would not give the change back, nothing is restored.
    """
    untracked = git.untracked()
    patch = git.worktree_patch()
    if not patch.strip():
        return None
    folder = git.git_dir() / "lockstep"
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    path = folder / f"step-{stamp}.patch"
    n = 1
    while path.exists():
        n += 1
        path = folder / f"step-{stamp}-{n}.patch"
    atomic_write(path, patch)
    if not git.check_reverse(path):
        raise GitError(
            f"the saved patch {path} does not reverse cleanly, so the working tree was left as is"
        )
    try:
        git.restore_head(untracked)
    except LockstepError as e:
        raise GitError(f"restoring HEAD failed ({e}); your change is saved in {path}") from None
    return path
