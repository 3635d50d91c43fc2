"""Execute the demo's steps in a fresh folder and report what happened, step by step."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from lockstep.demo.chapters import chapters
from lockstep.demo.steps import VARIANTS_DIR, Chapter, Commit, CopyIn, Run, Say, Step

CONFIG_HEADER = '[lockstep]\ndir = "lockstep"\n'


@dataclass(frozen=True)
class Event:
    """A step and, for commands, their exit code and combined output."""

    chapter: str
    step: Step
    exit_code: int | None = None
    output: str = ""

    @property
    def unexpected(self) -> bool:
        return isinstance(self.step, Run) and self.exit_code != self.step.expect


def _bundled(folder: str) -> Path:
    return Path(str(resources.files("lockstep.demo") / folder))


def prepare(dest: Path, story: list[Chapter] | None = None) -> list[Chapter]:
    """Copy the bundled project into ``dest`` (which must be empty or absent), write its config,
    and make it a git repository with one commit: the trusted state.

    The story's refactors are copied too, into ``.variants/`` (ignored by git, so no gate
    counts them), so every step the demo prints can be repeated by hand."""
    story = chapters() if story is None else story
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty")
    shutil.copytree(
        _bundled("project"), dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(
        _bundled("variants"), dest / VARIANTS_DIR, ignore=shutil.ignore_patterns("__pycache__")
    )
    config = CONFIG_HEADER + "".join("\n" + c.config.strip() + "\n" for c in story)
    (dest / "lockstep.toml").write_text(config, encoding="utf-8")
    (dest / ".gitignore").write_text(f"__pycache__/\n{VARIANTS_DIR}/\n", encoding="utf-8")
    if have_git():
        _git(dest, "init", "-q", "-b", "main")
        _git(dest, "add", "-A")
        _git(dest, "commit", "-q", "-m", "The legacy code, as inherited")
    return story


def have_git() -> bool:
    """Whether git is installed: the demo's commits and its review chapter need it."""
    return shutil.which("git") is not None


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.setdefault("GIT_AUTHOR_NAME", "lockstep demo")
    env.setdefault("GIT_AUTHOR_EMAIL", "demo@lockstep.invalid")
    env.setdefault("GIT_COMMITTER_NAME", "lockstep demo")
    env.setdefault("GIT_COMMITTER_EMAIL", "demo@lockstep.invalid")
    return subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )


def _run(argv: tuple[str, ...], cwd: Path) -> tuple[int, str]:
    if argv[0] == "lockstep":
        cmd = [sys.executable, "-m", "lockstep", *argv[1:]]
    elif argv[0] == "python":
        cmd = [sys.executable, *argv[1:]]
    else:
        cmd = list(argv)
    env = dict(os.environ)
    env.pop("LOCKSTEP_CONFIG", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run(
        cmd,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    return proc.returncode, proc.stdout


def run_story(dest: Path, story: list[Chapter]) -> Iterator[Event]:
    """Execute each chapter's steps in ``dest``; stops after the first unexpected exit code."""
    git = have_git()
    for chapter in story:
        if chapter.needs_git and not git:
            yield Event(
                chapter.title, Say("(skipped: this chapter needs git, which is not installed)")
            )
            continue
        for step in chapter.steps:
            if isinstance(step, Say):
                yield Event(chapter.title, step)
            elif isinstance(step, CopyIn):
                shutil.copyfile(_bundled("variants") / step.variant, dest / step.dest)
                yield Event(chapter.title, step)
            elif isinstance(step, Commit):
                if not git:
                    continue
                _git(dest, "add", "-A")
                _git(dest, "commit", "-q", "--allow-empty", "-m", step.message)
                yield Event(chapter.title, step)
            else:
                code, output = _run(step.argv, dest)
                event = Event(chapter.title, step, code, output)
                yield event
                if event.unexpected:
                    return
