"""The guard: an oracle and the code it judges never change in the same change.

If a patch edits production code *and* re-records the oracle (or loosens a
rule, or drops a fixture), replay going green proves nothing: the judge was
changed to fit the defendant.  Re-recording is legitimate only on its own, in
a change a reviewer can read as "the expected behaviour changed".

Three views of "one change": the staged files (a pre-commit hook), the working
tree against HEAD (a developer's check), and each commit of ``BASE..HEAD`` (CI, merges aside):
there, an oracle commit is fine as long as no production file rides along.
"""

from __future__ import annotations

from dataclasses import dataclass

from lockstep.config import Project
from lockstep.gates.base_config import judged_by_base
from lockstep.gates.git import Change, Git, Side
from lockstep.gates.scope import Scope, Sides
from lockstep.scratch import tracked


@dataclass(frozen=True)
class GuardFinding:
    """One change (a commit, the index or the working tree) and how its files split."""

    where: str
    sides: Sides


@dataclass(frozen=True)
class GuardReport:
    label: str
    findings: tuple[GuardFinding, ...]
    """Every change examined, clean ones included."""
    tracked_cache: tuple[str, ...] = ()
    """Files under ``.lockstep-cache/`` that git tracks: scratch arrives in no commit
    (a committed ``strength.json`` could claim any score)."""

    @property
    def violations(self) -> tuple[GuardFinding, ...]:
        return tuple(f for f in self.findings if f.sides.mixed)

    @property
    def ok(self) -> bool:
        return not self.violations and not self.tracked_cache

    @property
    def oracle_only(self) -> tuple[GuardFinding, ...]:
        return tuple(f for f in self.findings if f.sides.oracle and not f.sides.production)


def local_change(git: Git, *, staged: bool) -> Change:
    """The developer's pending change: the index, or the whole working tree, against HEAD."""
    head = git.resolve("HEAD")
    if staged:
        return Change(head, Side.INDEX, "staged changes")
    return Change(head, Side.WORKTREE, "working tree")


def guard_change(project: Project, git: Git, change: Change) -> GuardReport:
    """Judge one change as a whole (the index or the working tree against HEAD), by HEAD's
    settings (:mod:`.base_config`)."""
    scope = Scope(judged_by_base(project, git, change.base), git)
    files = git.changed_files(change.base, change.head)
    finding = GuardFinding(change.label, scope.split(files, change.base, change.head))
    return GuardReport(change.label, (finding,), tuple(tracked(project.root)))


def guard_commits(project: Project, git: Git, base: str, head: str, label: str) -> GuardReport:
    """Judge each commit of ``base..head`` on its own (CI), all by ``base``'s settings."""
    scope = Scope(judged_by_base(project, git, base), git)
    findings: list[GuardFinding] = []
    for sha in git.commits(base, head):
        parent = git.parent(sha) or base
        sides = scope.split(git.commit_files(sha), parent, sha)
        findings.append(GuardFinding(f"commit {git.short(sha)}", sides))
    return GuardReport(label, tuple(findings), tuple(tracked(project.root)))
