"""A package's sources told apart by their files' metadata, without reading them.

A recording's verifying forks each check that the configuration, and the package sources
a ``package`` ledger expands from, are still what the session's server read
(:mod:`lockstep.oracles.verify_config`), before they take the server's reading of it.
Reading every module of the package again in each fork was a fifth of a fork's work on
isodate, and a recording forks once per ledger, and once more per further hash seed.

A :func:`source_stamp` is what :func:`lockstep.surface.source_state` would read, told by
the identity (device and inode), size and modification and change times of the package's
folder, of every folder below it that is walked and of every ``*.py`` file found.  A file
written, replaced, added, removed or renamed changes one of them; a folder's times change
when an entry in it comes or goes.

File times are kept at the granularity of the kernel's clock tick, so a file written twice
within one tick, to the same size, could keep its stamp.  A stamp is therefore only
trusted (:func:`settled`) when every time in it is older than :data:`SETTLED_NS` at the
moment it was taken: a later write then gives the file a newer time.  Otherwise the
caller compares the bytes, as before.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

SETTLED_NS: Final = 2_000_000_000
"""How old every time in a stamp must be, when it is taken, for the stamp to be trusted."""

Stamp = tuple[str, tuple[tuple[str, int, int, int, int, int], ...]]
"""The folder (or one-module file) and, per folder and file, its path, device, inode,
size, modification and change times in nanoseconds."""


def source_stamp(package: str, root: Path) -> Stamp | None:
    """The metadata of what :func:`~lockstep.surface.source_state` reads for ``package``
    under ``root``; None when it cannot be told that way (no such package, an entry that
    is neither a plain file nor a folder, a folder that cannot be listed): compare the
    bytes then."""
    from lockstep.surface import package_path

    folder = package_path(package, root)
    if folder is None:
        return None
    entries: list[tuple[str, int, int, int, int, int]] = []
    try:
        top = os.stat(folder)
        if stat.S_ISREG(top.st_mode):
            return str(folder), (_entry(str(folder), top),)
        if not stat.S_ISDIR(top.st_mode) or not _walk(str(folder), top, entries):
            return None
    except OSError:
        return None
    return str(folder), tuple(entries)


def _walk(
    folder: str, info: os.stat_result, entries: list[tuple[str, int, int, int, int, int]]
) -> bool:
    """Stamp ``folder`` and what ``Path.rglob("*.py")`` finds in it: every ``*.py``
    entry, and every folder below that is not a link (rglob does not follow those);
    False at anything else a ``*.py`` name stands for."""
    entries.append(_entry(folder, info))
    with os.scandir(folder) as listing:
        found = sorted(listing, key=lambda e: e.name)
    for entry in found:
        is_link = entry.is_symlink()
        if entry.name.endswith(".py"):
            target = entry.stat()  # a link to a module is read through
            if not stat.S_ISREG(target.st_mode):
                return False
            entries.append(_entry(entry.path, target))
            if is_link:
                entries.append(_entry(entry.path + "@", entry.stat(follow_symlinks=False)))
        elif (
            not is_link
            and entry.is_dir(follow_symlinks=False)
            and not _walk(entry.path, entry.stat(follow_symlinks=False), entries)
        ):
            return False
    return True


def _entry(path: str, info: os.stat_result) -> tuple[str, int, int, int, int, int]:
    return (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def settled(stamp: Stamp, taken_ns: int) -> bool:
    """Whether every time in ``stamp`` was older than :data:`SETTLED_NS` when it was taken
    (at ``taken_ns``, ``time.time_ns()``): then a write since shows in the stamp."""
    newest = max((max(e[4], e[5]) for e in stamp[1]), default=0)
    return newest < taken_ns - SETTLED_NS


__all__ = ["SETTLED_NS", "Stamp", "settled", "source_stamp"]
