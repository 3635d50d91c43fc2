"""A small typed wrapper over the ``git`` command line, for the gates.

The gates judge a *change*: what differs between a base and a head.  A head
is a commit, the index (what ``git commit`` would record: the pre-commit
hook's view) or the working tree (what the developer is editing now).  This
module answers the few questions the gates ask of git — which files changed,
how many lines each change touches, what a file held at a revision — and
turns every way git can be unable to answer into one :class:`GitError` line:
not a repository, an unknown revision, a shallow clone that lacks the base,
a detached HEAD where a branch is needed.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from lockstep.errors import GitError
from lockstep.store.paths import pid_gone

_NO_HOOKS: Final = ("-c", f"core.hooksPath={os.devnull}")
"""Options that keep git from running any hook (a checked-out revision may bring one)."""
_OWN_TREE: Final = re.compile(r"^lockstep-[a-z]+-(?P<pid>[0-9]+)-")
"""The temporary folder of a worktree lockstep added: ``lockstep-<purpose>-<pid>-<random>``."""


_HUNK: Final = re.compile(r"^@@ -(?P<old>\d+)(?:,(?P<minus>\d+))? \+\d+(?:,(?P<plus>\d+))? @@")


class Side(StrEnum):
    """A head that is not a commit."""

    INDEX = "index"
    """What is staged: the pre-commit hook's view."""
    WORKTREE = "worktree"
    """The files on disk, including untracked ones (not ignored)."""


Head = str | Side
"""A commit sha, or one of the :class:`Side` values."""


@dataclass(frozen=True)
class Hunk:
    """One hunk of a diff: the lines it removes and the lines it adds (without ``-``/``+``)."""

    removed: tuple[str, ...]
    added: tuple[str, ...]
    old_start: int = 0
    """The first removed line's number at BASE; where the hunk removes nothing, the line
    the added ones follow there (0: the top of the file)."""


@dataclass(frozen=True)
class Change:
    """The change under judgement: ``base`` (a commit sha) against ``head``."""

    base: str
    head: Head
    label: str
    """How the user named it (``main..HEAD``, ``staged``, ``working tree``)."""


class Git:
    """One repository, found from a folder inside it."""

    def __init__(self, start: Path) -> None:
        self.root = start  # until git names the top level
        try:
            out = self._raw("rev-parse", "--show-toplevel")
        except FileNotFoundError:
            raise GitError("git is not installed or not on PATH") from None
        if out.returncode != 0:
            raise GitError(f"{start}: not a git repository (run the gates inside a git checkout)")
        self.root = Path(out.stdout.strip())

    # -- plumbing -----------------------------------------------------------------------------

    def _raw(
        self, *args: str, binary: bool = False, stdin: bytes | None = None
    ) -> subprocess.CompletedProcess[Any]:
        """Run ``git ARGS`` (in the repository root once found); never raises on exit status.

        Every git call of the gates goes through here, so all of them see the
        same environment: no credential prompt, untranslated messages, and
        paths printed as they are.
        """
        return subprocess.run(
            ["git", "-c", "core.quotepath=off", *args],
            cwd=self.root,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
            capture_output=True,
            input=stdin,
            text=not binary,
            errors=None if binary else "surrogateescape",
        )

    def _check(self, args: tuple[str, ...], proc: subprocess.CompletedProcess[Any]) -> None:
        if proc.returncode != 0:
            err = (
                proc.stderr
                if isinstance(proc.stderr, str)
                else proc.stderr.decode("utf-8", "replace")
            )
            reason = err.strip().splitlines()
            command = next((a for a in args if not a.startswith("-") and "=" not in a), args[0])
            raise GitError(f"git {command} failed: {reason[-1] if reason else 'no message'}")

    def run(self, *args: str) -> str:
        """Run git at the repository root; a failure is a one-line :class:`GitError`."""
        proc = self._raw(*args)
        self._check(args, proc)
        return str(proc.stdout)

    def run_bytes(self, *args: str) -> bytes:
        proc = self._raw(*args, binary=True)
        self._check(args, proc)
        return bytes(proc.stdout)

    # -- revisions ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def worktree(self, sha: str, prefix: str) -> Iterator[Path]:
        """A temporary detached worktree of ``sha`` (the user's working tree is not
        touched), removed afterwards.

        It is added with hooks off: a ``post-checkout`` hook the revision brings (through
        a committed ``core.hooksPath`` folder) is not lockstep's to run.  The temporary
        folder is named ``<prefix><pid>-…``, so leftovers of a run that was killed
        (SIGKILL leaves no chance to clean up) are recognised and removed by the next
        run (:meth:`prune_stale_worktrees`).
        """
        self.prune_stale_worktrees()
        with tempfile.TemporaryDirectory(prefix=f"{prefix}{os.getpid()}-") as tmp:
            tree = Path(tmp) / "tree"
            self.run(*_NO_HOOKS, "worktree", "add", "--detach", "--quiet", str(tree), sha)
            try:
                yield tree
            finally:
                with contextlib.suppress(GitError):
                    self.run("worktree", "remove", "--force", str(tree))

    def copy_generated(self, tree: Path) -> list[str]:
        """Copy into the worktree ``tree`` the Python files git ignores that the working
        tree has and ``tree`` lacks (setuptools-scm's and hatch-vcs's ``_version.py``,
        written by an install and never committed), where their folder exists at that
        revision: without them its package does not import.  Folders git ignores whole (a
        virtual environment, ``build/``) are not entered.  Returns their paths."""
        listing = self.run(
            "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z"
        )
        copied: list[str] = []
        for rel in sorted(listing.split("\0")):
            parts = Path(rel).parts
            if (
                not rel.endswith(".py")
                or rel.endswith("/")
                or any(p.startswith(".") or p in ("__pycache__", "build", "dist") for p in parts)
            ):
                continue
            source, target = self.root / rel, tree / rel
            if (
                source.is_file()
                and not source.is_symlink()
                and target.parent.is_dir()
                and not target.exists()
            ):
                shutil.copy2(source, target)
                copied.append(rel)
        return copied

    def prune_stale_worktrees(self) -> None:
        """Remove the worktrees lockstep added for a run that is gone, and their folders.

        Only worktrees of this repository count, and only those that are lockstep's own:
        a folder ``tree`` in a temporary folder named ``lockstep-<purpose>-<pid>-…`` in
        the system's temporary folder, whose process no longer runs.  ``git worktree
        prune`` then drops entries whose folder is gone.
        """
        try:
            listing = self.run("worktree", "list", "--porcelain")
        except GitError:
            return
        temp_root = os.path.realpath(tempfile.gettempdir())
        for line in listing.splitlines():
            if not line.startswith("worktree "):
                continue
            tree = Path(line.removeprefix("worktree "))
            match = _OWN_TREE.match(tree.parent.name)
            if (
                tree.name != "tree"
                or match is None
                or os.path.realpath(tree.parent.parent) != temp_root
                or not pid_gone(int(match["pid"]))
            ):
                continue
            with contextlib.suppress(GitError):
                self.run("worktree", "remove", "--force", str(tree))
            shutil.rmtree(tree.parent, ignore_errors=True)
        with contextlib.suppress(GitError):
            self.run("worktree", "prune")

    def is_shallow(self) -> bool:
        return self.run("rev-parse", "--is-shallow-repository").strip() == "true"

    def resolve(self, rev: str) -> str:
        """The commit sha ``rev`` names; unknown or cut off by a shallow clone is a GitError."""
        proc = self._raw("rev-parse", "--verify", "--quiet", "--end-of-options", rev)
        if proc.returncode == 0:
            # peel a tag to its commit; ":/message" syntax forbids appending ^{commit} to it
            sha = proc.stdout.strip()
            peeled = self._raw("rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}")
            if peeled.returncode == 0:
                return str(peeled.stdout).strip()
            kind = self._raw("cat-file", "-t", sha)
            if kind.returncode == 0:  # else: a full sha git does not hold (a shallow clone)
                raise GitError(f"revision {rev!r} names a {kind.stdout.strip()}, not a commit")
        if rev == "HEAD":
            raise GitError("the repository has no commits yet; commit the trusted state first")
        if self.is_shallow():
            raise GitError(
                f"revision {rev!r} is not in this shallow clone; fetch the history it needs "
                "(git fetch --unshallow, or fetch-depth: 0 in actions/checkout)"
            )
        raise GitError(f"unknown revision {rev!r}: no such commit, branch or tag in {self.root}")

    def branch(self) -> str | None:
        """The checked-out branch, or None when HEAD is detached."""
        proc = self._raw("symbolic-ref", "--quiet", "--short", "HEAD")
        return proc.stdout.strip() if proc.returncode == 0 else None

    def upstream_base(self) -> str:
        """The default base of a review: where the current branch forks from its upstream.

        This is where a detached HEAD matters: without a branch there is no
        upstream to compare against, so the user must name the range.
        """
        branch = self.branch()
        if branch is None:
            raise GitError(
                "HEAD is detached (no branch checked out), so there is no upstream to compare "
                "against; name the range: lockstep review BASE..HEAD"
            )
        proc = self._raw("rev-parse", "--verify", "--quiet", "@{upstream}")
        if proc.returncode != 0:
            raise GitError(
                f"branch {branch!r} has no upstream; name the range: lockstep review BASE..HEAD"
            )
        return self.run("merge-base", "HEAD", proc.stdout.strip()).strip()

    def commits(self, base: str, head: str) -> list[str]:
        """The commits in ``base..head``, oldest first, merge commits left out.

        A merge commit's change against its first parent is the whole merged
        branch (CI checks out a pull request as such a merge): the commits of
        that branch are judged one by one instead.
        """
        return self.run("rev-list", "--reverse", "--no-merges", f"{base}..{head}").split()

    def short(self, sha: str) -> str:
        return sha[:10]

    def parent(self, sha: str) -> str | None:
        out = self.run("rev-list", "--parents", "-n", "1", sha).split()
        return out[1] if len(out) > 1 else None

    # -- what changed -------------------------------------------------------------------------

    def _diff_args(self, base: str, head: Head) -> list[str]:
        if head is Side.INDEX:
            return ["--cached", base]
        if head is Side.WORKTREE:
            return [base]
        return [base, head]

    def changed_files(self, base: str, head: Head) -> list[str]:
        """Repository-relative paths (POSIX) that differ between ``base`` and ``head``.

        Renames count as a deletion and an addition, so both paths are judged.
        """
        out = self.run("diff", "--name-only", "--no-renames", "-z", *self._diff_args(base, head))
        paths = [p for p in out.split("\0") if p]
        if head is Side.WORKTREE:
            paths += self.untracked()
        return sorted(set(paths))

    def untracked(self) -> list[str]:
        out = self.run("ls-files", "--others", "--exclude-standard", "-z")
        return [p for p in out.split("\0") if p]

    def commit_files(self, sha: str) -> list[str]:
        """The paths one commit changes against its first parent (or all, for a root commit)."""
        parent = self.parent(sha)
        if parent is None:
            out = self.run("diff-tree", "--root", "-r", "--no-commit-id", "--name-only", "-z", sha)
        else:
            out = self.run("diff", "--name-only", "--no-renames", "-z", parent, sha)
        return sorted({p for p in out.split("\0") if p})

    def hunks(self, base: str, head: Head, paths: Sequence[str]) -> dict[str, list[Hunk]]:
        """The hunks of each path's change: the lines each one removes and adds, in order.

        Hunks come from ``git diff -U0`` (no context lines, renames as a
        deletion and an addition).  An untracked file is one hunk adding all
        its lines.  How many lines that makes is :mod:`lockstep.gates.line_count`'s
        business: it needs the text, to tell a moved block from an edit.
        """
        if not paths:
            return {}
        found: dict[str, list[Hunk]] = {p: [] for p in paths}
        out = self.run(
            "diff",
            "-U0",
            "--no-renames",
            "--no-color",
            "--no-ext-diff",
            *self._diff_args(base, head),
            "--",
            *paths,
        )
        for path, file_hunks in _parse_hunks(out).items():
            found.setdefault(path, []).extend(file_hunks)
        if head is Side.WORKTREE:
            for path in sorted(set(self.untracked()) & set(paths)):
                data = self.read(path, Side.WORKTREE) or b""
                text = data.decode("utf-8", "surrogateescape")
                found[path] = [Hunk((), tuple(text.splitlines()))]
        return found

    def export(self, at: Head, dest: Path, prefix: str, wanted: Callable[[str], bool]) -> None:
        """Write the files under ``prefix`` that ``wanted`` accepts, as they are at commit
        ``at`` (or in the index), into ``dest``, with ``prefix`` taken off their paths.

        What is checked out plays no part: the files come from git's objects
        (one ``ls-tree`` or ``ls-files``, one ``cat-file --batch``), so two
        checkouts of one repository export the same tree.  Symbolic links and
        submodules are left out; they hold no Python source.
        """
        assert at is not Side.WORKTREE, "the working tree is on disk already"
        spec = [prefix] if prefix else []
        if at is Side.INDEX:
            listing = self.run_bytes("ls-files", "--stage", "-z", "--", *spec)
        else:
            listing = self.run_bytes("ls-tree", "-r", "-z", "--full-tree", at, "--", *spec)
        objects: list[tuple[str, str]] = []
        for entry in listing.split(b"\0"):
            if not entry:
                continue
            meta, _, raw_path = entry.partition(b"\t")
            fields = meta.split()
            # ls-files: mode object stage; ls-tree: mode type object
            mode, obj = fields[0], fields[1] if at is Side.INDEX else fields[2]
            if at is Side.INDEX and fields[2] != b"0":
                continue  # an unmerged path: no one version to judge
            path = raw_path.decode("utf-8", "surrogateescape")
            if mode in (b"100644", b"100755") and path.startswith(prefix):
                rel = path[len(prefix) :]
                if wanted(rel):
                    objects.append((obj.decode("ascii"), rel))
        if not objects:
            return
        batch = self._raw(
            "cat-file",
            "--batch",
            binary=True,
            stdin=b"".join(obj.encode("ascii") + b"\n" for obj, _ in objects),
        )
        self._check(("cat-file",), batch)
        data: bytes = batch.stdout
        at_byte = 0
        for _, rel in objects:
            header_end = data.index(b"\n", at_byte)
            size = int(data[at_byte:header_end].split()[2])
            body = data[header_end + 1 : header_end + 1 + size]
            at_byte = header_end + 1 + size + 1
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)

    def read(self, path: str, at: Head) -> bytes | None:
        """A file's bytes at a commit, in the index or on disk; None where it does not exist."""
        if at is Side.WORKTREE:
            try:
                return (self.root / path).read_bytes()
            except (FileNotFoundError, IsADirectoryError):
                return None
        spec = f":{path}" if at is Side.INDEX else f"{at}:{path}"
        proc = self._raw("show", spec, binary=True)
        return bytes(proc.stdout) if proc.returncode == 0 else None

    # -- the working tree ---------------------------------------------------------------------

    def tracked_dirty(self) -> list[str]:
        """Tracked files whose content differs from HEAD (staged or not)."""
        out = self.run("diff", "--name-only", "-z", "HEAD")
        return [p for p in out.split("\0") if p]

    def worktree_patch(self) -> bytes:
        """A binary patch of every change against HEAD, untracked files included.

        ``git apply`` of this patch on a clean checkout of HEAD gives back the
        working tree exactly, which is what makes a revert safe.
        """
        patch = self.run_bytes("diff", "--binary", "--no-color", "--no-ext-diff", "HEAD")
        for path in self.untracked():
            proc = self._raw(
                "diff", "--binary", "--no-color", "--no-index", "--", "/dev/null", path, binary=True
            )
            if proc.returncode not in (0, 1):
                raise GitError(f"git diff failed for untracked file {path}")
            patch += proc.stdout
        return patch

    def check_reverse(self, patch_file: Path) -> bool:
        """Whether ``patch_file`` reverses cleanly against the working tree (so it is complete)."""
        return self._raw("apply", "--check", "--reverse", str(patch_file)).returncode == 0

    def restore_head(self, untracked: Sequence[str]) -> None:
        """Make the working tree and index equal HEAD again and remove ``untracked`` files."""
        self.run("restore", "--source=HEAD", "--staged", "--worktree", "--", ":/")
        for path in untracked:
            (self.root / path).unlink(missing_ok=True)
        # folders the change created, emptied now (a new package): git does not track them
        for path in untracked:
            folder = (self.root / path).parent
            while folder != self.root and folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
                folder = folder.parent

    def git_dir(self) -> Path:
        return Path(self.run("rev-parse", "--absolute-git-dir").strip())


def _parse_hunks(out: str) -> dict[str, list[Hunk]]:
    """The hunks of ``git diff -U0`` output, per new path (old path for a deletion)."""
    found: dict[str, list[Hunk]] = {}
    old_name: str | None = None
    current: str | None = None
    minus = plus = 0  # content lines still expected in the current hunk
    old_start = 0
    removed: list[str] = []
    added: list[str] = []

    def flush() -> None:
        if current is not None and (removed or added):
            found.setdefault(current, []).append(Hunk(tuple(removed), tuple(added), old_start))
        removed.clear()
        added.clear()

    for line in out.split("\n"):  # not splitlines(): a form feed in the code is not a line end
        if minus and line.startswith("-"):
            minus -= 1
            removed.append(line[1:])
        elif plus and line.startswith("+"):
            plus -= 1
            added.append(line[1:])
        elif line.startswith("diff --git"):
            flush()
            old_name = current = None
        elif line.startswith("--- "):
            old_name = line[6:] if line.startswith("--- a/") else None
        elif line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else old_name
        elif m := _HUNK.match(line):
            flush()
            old_start = int(m["old"])
            minus = 1 if m["minus"] is None else int(m["minus"])
            plus = 1 if m["plus"] is None else int(m["plus"])
    flush()
    return found
