"""Writes that replace a file whole or not at all, and appends of whole lines from many
processes at once (see :mod:`lockstep.store`).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Self

from lockstep.store.locks import lock_for
from lockstep.store.paths import _create_temp, _open_error, _refuse_link, safe_folder

# ---------------------------------------------------------------- writes


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_BATCH = threading.local()
"""This thread's :func:`folder_syncs_batched` block: its process id and the folders to sync."""


@contextlib.contextmanager
def folder_syncs_batched(
    meanwhile: Callable[[], contextlib.AbstractContextManager[None]] | None = None,
) -> Iterator[None]:
    """Within the block, this thread's whole-file writes sync their folder once, at its end.

    A pytest session writing eighteen ledgers into one folder syncs it once rather than
    eighteen times.  Each file is still written to a temp file, fsynced and renamed under
    its lock as always, so every file on disk is whole, the old one or the new one; only
    the renames wait for the end of the block to be made durable, and the caller ends it
    before it reports what it wrote.  A nested block leaves the syncs to the outer one; a
    process forked inside the block syncs its own writes at once.

    ``meanwhile``: a context manager each file's sync runs in (threads taking turns let
    another run while this one waits for the disk).
    """
    if getattr(_BATCH, "pid", None) == os.getpid():
        yield
        return
    folders: dict[str, None] = {}
    _BATCH.folders, _BATCH.pid, _BATCH.meanwhile = folders, os.getpid(), meanwhile
    try:
        yield
    finally:
        _BATCH.folders, _BATCH.pid, _BATCH.meanwhile = None, None, None
        for folder in folders:
            _fsync_dir(Path(folder))


def _fsync(fd: int) -> None:
    """``os.fsync(fd)``, within this thread's batch's ``meanwhile`` when it has one."""
    meanwhile = getattr(_BATCH, "meanwhile", None)
    if meanwhile is None or getattr(_BATCH, "pid", None) != os.getpid():
        os.fsync(fd)
        return
    with meanwhile():
        os.fsync(fd)


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable now, or at the end of this thread's batch."""
    if getattr(_BATCH, "pid", None) == os.getpid():
        _BATCH.folders[str(folder)] = None
    else:
        _fsync_dir(folder)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _keep_mode(fd: int, path: Path) -> None:
    """Give the temp file the mode of the file it replaces (a new one keeps 0o666 & ~umask)."""
    with contextlib.suppress(OSError):
        os.fchmod(fd, os.lstat(path).st_mode & 0o777)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically: readers see the old or the new file, never half.

    Refuses a link anywhere below the project (nothing written) and removes
    leftovers of killed writes of the same folder.
    """
    with lock_for(path):
        folder = safe_folder(path.parent)
        target = folder / path.name
        exists = _refuse_link(target)
        fd, tmp = _create_temp(folder, target.name)
        try:
            try:
                _write_all(fd, data)
                _fsync(fd)
                if exists:
                    _keep_mode(fd, target)
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _sync_folder(folder)


def remove_file(path: Path) -> bool:
    """Delete ``path`` under its lock (a pending-drift file fully reviewed); False when absent."""
    with lock_for(path):
        target = safe_folder(path.parent, create=False) / path.name
        if not os.path.lexists(target):
            return False
        target.unlink()
        _fsync_dir(target.parent)
        return True


class _LineFile:
    """A file written line by line, made whole by :meth:`commit` or dropped by
    :meth:`abort`; as a context manager, committed when the block ends cleanly."""

    _fh: IO[bytes]
    count: int

    def write(self, line: bytes) -> None:
        """Add one line (without its newline)."""
        self._fh.write(line)
        self._fh.write(b"\n")
        self.count += 1

    def commit(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


class AtomicLines(_LineFile):
    """Write a JSONL file line by line into a temp file, then swap it in whole.

    Used for re-recording a whole ledger or pins file: the old file stays
    readable (and intact, if the run is interrupted) until :meth:`commit`.  The
    file's lock is held from creation to :meth:`commit` or :meth:`abort`.
    """

    def __init__(self, path: Path) -> None:
        self._lock = lock_for(path)
        self._lock.acquire()
        try:
            folder = safe_folder(path.parent)
            self.path = folder / path.name
            self._exists = _refuse_link(self.path)
            fd, self._tmp = _create_temp(folder, self.path.name)
        except BaseException:
            self._lock.release()
            raise
        self._fh = os.fdopen(fd, "wb")
        self.count = 0

    def write_bytes(self, data: bytes) -> None:
        """Add ``data`` as it is: a document written in pieces (a corpus lock, streamed)."""
        self._fh.write(data)

    def commit(self) -> None:
        """Flush, fsync and rename over the target."""
        try:
            self._fh.flush()
            _fsync(self._fh.fileno())
            if self._exists:
                _keep_mode(self._fh.fileno(), self.path)
            self._fh.close()
            os.replace(self._tmp, self.path)
        except BaseException:
            self.abort()
            raise
        _sync_folder(self.path.parent)
        self._lock.release()

    def abort(self) -> None:
        """Drop the temp file; the target is untouched."""
        try:
            if not self._fh.closed:
                self._fh.close()
            self._tmp.unlink(missing_ok=True)
        finally:
            self._lock.release()


class ScratchLines(_LineFile):
    """Write a new file line by line into this process's own scratch folder.

    For a file read once by another process and then removed with its folder (a
    candidate oracle in a :func:`~lockstep.store.temp_folder`), what :class:`AtomicLines`
    adds buys nothing: no other writer knows the folder's random name (no lock, no sweep),
    nobody reads the file before :meth:`commit` (no temp file and rename), and it never
    has to outlive a crash (no fsync: a killed run's folder is swept as a leftover).  The
    folder is still checked for links, and the file is created new, never through a link.
    """

    def __init__(self, path: Path) -> None:
        self.path = safe_folder(path.parent) / path.name
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(self.path, flags, 0o666)
        except OSError as e:
            raise _open_error(self.path, e) from None
        self._fh = os.fdopen(fd, "wb")
        self.count = 0

    def commit(self) -> None:
        """Close the file: it is complete."""
        self._fh.close()

    def abort(self) -> None:
        """Close and remove the unfinished file."""
        try:
            self._fh.close()
        finally:
            self.path.unlink(missing_ok=True)


class JsonlAppender:
    """Append whole JSON lines to a file, safely from many processes at once.

    Each :meth:`append` is one ``os.write`` of a complete line on an ``O_APPEND``
    descriptor, taken under the file's exclusive :func:`lock_for` lock, so a line
    from one worker can never split a line from another.  Batches amortise the lock.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = lock_for(path)

    def append_many(self, lines: list[bytes]) -> None:
        """Append several lines (without newlines) in one locked write."""
        if not lines:
            return
        payload = b"".join(line + b"\n" for line in lines)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        with self._lock:
            target = safe_folder(self.path.parent) / self.path.name
            _refuse_link(target)
            try:
                fd = os.open(target, flags | getattr(os, "O_NOFOLLOW", 0), 0o666)
            except OSError as e:
                raise _open_error(target, e) from None
            try:
                _write_all(fd, payload)
                os.fsync(fd)
            finally:
                os.close(fd)

    def append(self, line: bytes) -> None:
        """Append one line (without its newline)."""
        self.append_many([line])
