"""The last ``replay --against`` result, kept where ``lockstep review`` can read it.

Not an oracle file and not committed: a small JSON file in the project's cache
folder (``.lockstep-cache/``, which holds a ``.gitignore`` of ``*`` so git never
sees it), overwritten by each run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import msgspec

from lockstep.config import Project
from lockstep.store import CACHE_FOLDER, atomic_write
from lockstep.store import cache_folder as store_cache_folder

CACHE_DIR: Final = CACHE_FOLDER
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
    """The project's cache folder (:func:`lockstep.store.cache_folder`)."""
    return store_cache_folder(project.root)


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
