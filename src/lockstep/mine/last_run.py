"""The last ``replay --against`` result, kept where ``lockstep review`` can read it.

Not an oracle file and not committed: a small JSON file in the project's cache
folder (``.lockstep-cache/``, which holds a ``.gitignore`` of ``*`` so git never
sees it), overwritten by each run.  It is sealed (:mod:`lockstep.scratch`): one
that arrived in a commit claiming a clean run is not believed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import msgspec

from lockstep.config import Project
from lockstep.scratch import CACHE_FOLDER, read_sealed, scratch_folder, write_sealed

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
    """The project's cache folder (:func:`lockstep.scratch.scratch_folder`); a link in its
    place is a one-line DataError (exit 2), before anything runs."""
    return scratch_folder(project.root)


def save(project: Project, run: StoredRun) -> Path:
    """Keep the run for review (not kept when no key can be; review then says none)."""
    write_sealed(project.root, FILE_NAME, msgspec.json.format(msgspec.json.encode(run)) + b"\n")
    return cache_path(project)


def load(project: Project) -> StoredRun | None:
    """The stored run, or None when there is none, or none lockstep trusts (a cache, not a
    record: planted, copied or unreadable is the same as none)."""
    data, _ = read_sealed(project.root, FILE_NAME)
    if data is None:
        return None
    try:
        return msgspec.json.decode(data, type=StoredRun)
    except msgspec.MsgspecError:
        return None
