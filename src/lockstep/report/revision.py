"""Which code a report replayed: the commit checked out and how far the working tree is from it.

A page that says DRIFT without saying of what is hard to act on a day later; the sha
and subject name the commit, and the working tree's state says whether the replay saw
exactly that commit (clean) or uncommitted edits on top of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class WorkingTree:
    """The revision replayed, as the report's header names it."""

    sha: str
    """The full commit sha of HEAD ("" outside a git repository or before the first commit)."""
    subject: str
    """The commit's subject line."""
    changed: int
    """Files the working tree changes or adds against HEAD (``git status --porcelain``)."""

    @property
    def state(self) -> str:
        if not self.sha:
            return "not a git repository (or no commit yet)"
        if not self.changed:
            return "working tree clean"
        return f"working tree: {self.changed} file(s) changed"

    @property
    def short(self) -> str:
        return self.sha[:12]


def working_tree(root: Path) -> WorkingTree:
    """What ``root``'s repository has checked out, and its uncommitted changes."""
    from lockstep.errors import LockstepError
    from lockstep.gates.git import Git

    try:
        git = Git(root)
        sha = git.resolve("HEAD")
        subject = git.run("log", "-1", "--format=%s", sha).strip()
        status = git.run("status", "--porcelain", "--", str(root))
    except LockstepError:
        return WorkingTree("", "", 0)
    return WorkingTree(sha, subject, sum(1 for line in status.splitlines() if line.strip()))
