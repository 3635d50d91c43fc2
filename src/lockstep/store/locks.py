"""Locks on oracle files, and the sweep of a killed writer's leftovers that taking one allows
(see :mod:`lockstep.store`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import stat
import threading
from pathlib import Path
from typing import Final

from lockstep.store.paths import (
    TMP_SUFFIX,
    _open_error,
    _refuse_link,
    _stale_temp,
    safe_folder,
)

_LOCK_SHAPE: Final = re.compile(r"^\..+\.lock$")


def _sweep(folder: Path, held_target: str | None, *, every_temp: bool = False) -> None:
    """Remove leftovers of killed writers in ``folder`` (see :mod:`lockstep.store`).

    ``held_target`` is the file whose lock the caller holds: its temp files are all
    leftovers.  ``every_temp`` says the caller's lock guards every file in the folder.
    """
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if not name.startswith("."):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                if name.endswith(TMP_SUFFIX) and _stale_temp(name, None):
                    import shutil

                    shutil.rmtree(entry.path, ignore_errors=True)  # never follows a link
                continue
            if not entry.is_file(follow_symlinks=False):
                continue
        except OSError:
            continue
        if name.endswith(TMP_SUFFIX):
            if every_temp or _stale_temp(name, held_target):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        elif _LOCK_SHAPE.match(name):
            _remove_idle_lock(Path(entry.path))


# ---------------------------------------------------------------- locks


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _remove_idle_lock(path: Path) -> None:
    """Remove a lock file nobody holds (left by a killed holder); never one in use."""
    flags = os.O_RDWR | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    try:
        info = os.fstat(fd)
        if info.st_size or not stat.S_ISREG(info.st_mode) or not _try_lock(fd):
            return
        with contextlib.suppress(OSError):
            if os.path.samestat(os.lstat(path), info):
                os.unlink(path)
    finally:
        os.close(fd)


class OracleLock:
    """An exclusive lock on one oracle file, between processes and between threads.

    The lock is ``flock`` on a sibling ``.<file>.lock``.  It is re-entrant in one
    thread (the same object is returned by :func:`lock_for` for the same path, so a
    write inside a held lock does not wait on itself).  Taking it first checks the
    folder for links and sweeps leftovers of killed writers; releasing it removes
    the lock file (see :mod:`lockstep.store`).
    """

    def __init__(self, target: Path) -> None:
        self.target = Path(os.path.abspath(target))
        self.lock_file = str(self.target.with_name(f".{self.target.name}.lock"))
        self._local = threading.local()

    @property
    def depth(self) -> int:
        """How many times this thread holds the lock (0: not held)."""
        if getattr(self._local, "pid", None) != os.getpid():
            return 0
        return int(getattr(self._local, "depth", 0))

    def acquire(self) -> None:
        depth = self.depth
        if depth:
            self._local.depth = depth + 1
            return
        folder = safe_folder(self.target.parent)
        path = Path(self.lock_file)
        _refuse_link(path)
        fd = self._lock_fd(path)
        self._local.pid = os.getpid()
        self._local.fd = fd
        self._local.depth = 1
        try:
            _sweep(folder, self.target.name)
        except BaseException:
            self.release()
            raise

    def _lock_fd(self, path: Path) -> int:
        flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        while True:
            try:
                fd = os.open(path, flags, 0o666)
            except OSError as e:
                raise _open_error(path, e) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                info = os.fstat(fd)
                # A holder removes the file before releasing it: if that happened while
                # this process waited, the lock taken is on a dead inode; start over.
                with contextlib.suppress(FileNotFoundError):
                    if info.st_nlink and os.path.samestat(os.lstat(path), info):
                        return fd
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)

    def release(self) -> None:
        depth = self.depth
        if not depth:
            return
        if depth > 1:
            self._local.depth = depth - 1
            return
        self._local.depth = 0
        fd: int = self._local.fd
        try:
            with contextlib.suppress(OSError):
                if os.path.samestat(os.lstat(self.lock_file), os.fstat(fd)):
                    os.unlink(self.lock_file)
        finally:
            os.close(fd)

    def __enter__(self) -> OracleLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.release()


_LOCKS: dict[Path, OracleLock] = {}
_LOCKS_GUARD = threading.Lock()


def _after_fork_in_child() -> None:
    global _LOCKS_GUARD
    _LOCKS_GUARD = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def lock_for(path: Path) -> OracleLock:
    """The inter-process lock guarding writes to ``path`` (a sibling ``.lock`` file).

    The same object for the same path in this process, so it nests.
    """
    key = Path(os.path.abspath(path))
    with _LOCKS_GUARD:
        found = _LOCKS.get(key)
        if found is None:
            found = _LOCKS[key] = OracleLock(key)
        return found
