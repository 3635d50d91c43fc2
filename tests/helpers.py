"""Shared helpers for tests: run the real CLI, lay out projects, drive real git repositories."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_cli(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    input: bytes | None = None,
    timeout: float = 120,
) -> Result:
    """Run ``python -m lockstep ARGS`` as a user would, in ``cwd``."""
    full_env = dict(os.environ)
    full_env.pop("LOCKSTEP_CONFIG", None)
    full_env["COLUMNS"] = "200"
    full_env["NO_COLOR"] = "1"
    full_env["PYTHONDONTWRITEBYTECODE"] = "1"
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-m", "lockstep", *args],
        cwd=cwd,
        env=full_env,
        input=input if input is not None else b"",
        capture_output=True,
        timeout=timeout,
    )
    return Result(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def run_pytest(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> Result:
    """Run a real pytest subprocess in an example project."""
    full_env = dict(os.environ)
    full_env["PYTHONDONTWRITEBYTECODE"] = "1"
    full_env.pop("PYTEST_ADDOPTS", None)
    full_env.pop("PYTEST_XDIST_WORKER", None)
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
    )
    return Result(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    """Create files under ``root``; str contents are dedented."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")


def snapshot_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes: to assert that nothing on disk changed."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and ".git" not in p.parts
    }


class GitRepo:
    """A real git repository in a temp folder, with helpers to commit."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.email", "dev@example.invalid")
        self.git("config", "user.name", "Dev")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.root, capture_output=True, text=True, check=True
        )
        return proc.stdout.strip()

    def commit(self, message: str, files: dict[str, str | bytes] | None = None) -> str:
        if files:
            write_files(self.root, files)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")
