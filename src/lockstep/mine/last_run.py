"""The last ``replay --against`` result, kept where ``lockstep review`` can read it.

Not an oracle file and not committed: a small JSON file in the project's cache
folder (``.lockstep_cache/``, which holds a ``.gitignore`` of ``*`` so git never
sees it), overwritten by each run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import msgspec

from lockstep.config import Project
from lockstep.store import atomic_write

CACHE_DIR: Final = ".lockstep_cache"
FILE_NAME: Final = "against.json"


class StoredRun(msgspec.Struct, frozen=True, kw_only=True):
    """What review needs from the last differential run."""

    rev: str
    base: str
    """The commit REV named (the old version)."""
    head: str
    """HEAD when the run was made (the new version was the working tree on it)."""
    oracles: list[str]
    inputs: int
    differences: int
    smallest: str = ""
    """The smallest differing input, written as a call."""


def cache_path(project: Project) -> Path:
    return project.root / CACHE_DIR / FILE_NAME


def cache_folder(project: Project) -> Path:
    """``.lockstep_cache/`` at the project root, made on first use with a ``.gitignore``."""
    folder = project.root / CACHE_DIR
    folder.mkdir(exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# written by lockstep: never committed\n*\n", encoding="utf-8")
    return folder


def save(project: Project, run: StoredRun) -> Path:
    path = cache_folder(project) / FILE_NAME
    atomic_write(path, msgspec.json.format(msgspec.json.encode(run)) + b"\n")
    return path


def load(project: Project) -> StoredRun | None:
    """The stored run, or None when there is none (or it cannot be read: a cache, not a record)."""
    try:
        return msgspec.json.decode(cache_path(project).read_bytes(), type=StoredRun)
    except (OSError, msgspec.MsgspecError):
        return None
