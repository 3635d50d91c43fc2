"""Where and how oracle bytes live on disk.

Promises, because an oracle file is evidence and must never be half true:

* :func:`atomic_write` replaces a file whole or not at all (temp file in the
  same folder, fsync, rename, fsync of the folder).  An interrupted write —
  even ``kill -9`` — leaves the old file intact.
* :class:`JsonlAppender` appends whole lines from several processes at once
  (pytest-xdist workers recording one ledger): each line is one ``write`` on an
  ``O_APPEND`` descriptor under an exclusive file lock, so lines are never lost
  or interleaved.
* :func:`iter_jsonl` streams a JSONL file line by line (memory flat in the
  number of cases) and reports a bad line as ``FILE:LINE: reason``.

The :class:`BlobStore` keeps rendered outputs content-addressed by sha256 so a
drift can print both documents without the lock file holding them.

Nothing outside this module writes oracle files.

**Links.**  Oracle folders arrive in pull requests, so a link inside one
(``lockstep/blobs -> /elsewhere``) must not make lockstep write elsewhere.  No
write here goes through a symbolic link: every folder between the project and
the file is checked with ``lstat`` (and created with ``mkdir``, which never
follows one), and files are opened with ``O_NOFOLLOW``/``O_EXCL``.  "The
project" is the shallowest folder on the path that holds ``lockstep.toml``,
``pyproject.toml`` or ``.git`` (the whole path when there is none); links above
it are the user's own business.  A link is refused with a one-line
:class:`~lockstep.errors.DataError` (exit 2) naming it, and nothing is written.
(An oracle folder that is itself a link out of the project is refused earlier,
by :meth:`lockstep.config.Project.resolve`.)

**Leftovers of a killed run.**  Every writer holds the target file's lock
(:func:`lock_for`) for as long as its temp file exists, and temp files have a
fixed shape: ``.<file>.<tag>-<pid>-<random>.tmp``, where ``tag`` names the
machine, boot and pid namespace of the writer.  So:

* when a write takes the lock of a file, every temp file of *that* file in the
  folder is a leftover of a writer that died (or of an older lockstep) and is
  removed;
* temp files of *other* files in the folder are removed when their writer is
  certainly gone: written under this machine's tag, by a pid that is no longer
  running (or is a zombie);
* the blob store has one lock for the whole store; taking it for a record
  (:meth:`BlobStore.batch`) removes every temp file in the store's folders;
* a private folder a step of a run needs inside the oracle folder
  (:func:`temp_folder`) has the same shape and is removed, whole, on the same
  terms as another file's temp file.

Locks are ``flock`` on an empty sibling ``.<file>.lock`` (so lockstep needs a
POSIX system, as its process control already does).  This is not the
``filelock`` package: it deliberately never deletes a lock file (deleting one
safely needs the holder to remove it while still holding it and every waiter
to re-check the inode it locked), so a killed run's lock files would pile up in
a committed folder.  Lock files do not
accumulate: a holder removes its lock file
before releasing it (a process waiting on the same file notices the removed
inode and retries on a fresh one), and a lock file left by a holder that was
killed is removed by the next write in that folder that can take it without
waiting (nobody holds it, so nobody needs it).  A replay writes nothing and so
cleans nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import stat
import threading
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec

from lockstep.errors import DataError

T = TypeVar("T")

PROJECT_MARKERS: Final = ("lockstep.toml", "pyproject.toml", ".git")
"""A folder holding one of these is a project: links below it are refused, above it allowed."""

TMP_SUFFIX: Final = ".tmp"
_TMP_SHAPE: Final = re.compile(
    r"^\.(?P<target>.+)\.(?P<tag>[0-9a-f]{6})-(?P<pid>[0-9]+)-[0-9a-f]{8}\.tmp$"
)
# Before this shape: tempfile.mkstemp's ``.<file>.<8 chars>.tmp`` and the blob store's
# ``.<file>.<pid>.tmp``; removed when their target's lock is held.
_LEGACY_TMP: Final = r"(?:[a-z0-9_]{8}|[0-9]+)"
_LOCK_SHAPE: Final = re.compile(r"^\..+\.lock$")


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data``: the identity of a rendered output."""
    return hashlib.sha256(data).hexdigest()


def display_path(path: Path, root: Path | None = None) -> str:
    """A path as the user should read it: relative to ``root`` (or the cwd) when inside it."""
    for base in (root, Path.cwd()):
        if base is None:
            continue
        try:
            return str(path.resolve().relative_to(base.resolve()))
        except ValueError:
            continue
    return str(path)


def _shown(path: Path) -> str:
    """``path`` relative to the cwd when inside it, without following any link."""
    absolute = Path(os.path.abspath(path))
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


# ---------------------------------------------------------------- links


@lru_cache(maxsize=4096)
def _is_project(folder: str) -> bool:
    return any(os.path.lexists(os.path.join(folder, name)) for name in PROJECT_MARKERS)


def _link_error(link: Path) -> DataError:
    try:
        target = f" (to {os.readlink(link)})"
    except OSError:
        target = ""
    return DataError(
        f"{_shown(link)}: is a symbolic link{target}; lockstep never writes oracle files "
        "through a link: replace it with a real folder or file (nothing was written)"
    )


@lru_cache(maxsize=4096)
def _checked_from(folder: str) -> int:
    """How many leading components of ``folder`` are above the project (not checked)."""
    parts = folder.split(os.sep)
    for i in range(1, len(parts) + 1):
        if _is_project(os.sep.join(parts[:i]) or os.sep):
            return i
    return 1


def safe_folder(folder: Path, *, create: bool = True) -> Path:
    """``folder`` as an absolute path, created if missing, after checking it holds no link.

    Every component below the project (see the module docstring) must be a real
    folder; a link or a file in the way raises :class:`DataError`.
    """
    absolute = os.path.abspath(folder)
    parts = absolute.split(os.sep)
    start = _checked_from(absolute)
    current = os.sep.join(parts[:start]) or os.sep
    for name in parts[start:]:
        current = os.path.join(current, name)
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            if not create:
                break
            try:
                os.mkdir(current)
                continue
            except FileExistsError:
                info = os.lstat(current)
            except OSError as e:
                raise DataError(
                    f"{_shown(Path(current))}: cannot create folder: {e.strerror}"
                ) from None
        if stat.S_ISLNK(info.st_mode):
            raise _link_error(Path(current))
        if not stat.S_ISDIR(info.st_mode):
            raise DataError(f"{_shown(Path(current))}: is not a folder (nothing was written)")
    return Path(absolute)


def _refuse_link(path: Path) -> bool:
    """Raise if ``path`` is a link; return whether it exists (as a file or folder)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode):
        raise _link_error(path)
    return True


def _open_error(path: Path, err: OSError) -> DataError:
    if _refuse_link_quiet(path):
        return _link_error(path)
    return DataError(f"{_shown(path)}: cannot write: {err.strerror}")


def _refuse_link_quiet(path: Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


# ---------------------------------------------------------------- temp files


@lru_cache(maxsize=1)
def _machine_tag() -> str:
    """Six hex digits naming this machine, boot and pid namespace (pids mean something only here)."""
    import socket  # here, not at the top: reading oracles (replay) never names a temp file

    parts = [socket.gethostname()]
    with contextlib.suppress(OSError):
        parts.append(Path("/proc/sys/kernel/random/boot_id").read_text().strip())
    with contextlib.suppress(OSError):
        parts.append(str(os.stat("/proc/self/ns/pid").st_ino))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:6]


def temp_name(target: str) -> str:
    """The name of a temp file for ``target``: ``.<target>.<tag>-<pid>-<random>.tmp``."""
    import secrets

    return f".{target}.{_machine_tag()}-{os.getpid()}-{secrets.token_hex(4)}{TMP_SUFFIX}"


def _create_temp(folder: Path, target: str) -> tuple[int, Path]:
    """Create a fresh temp file for ``target`` in ``folder`` (never through a link)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    while True:
        tmp = folder / temp_name(target)
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
        except OSError as e:
            raise DataError(f"{_shown(folder)}: cannot write: {e.strerror}") from None


def _pid_gone(pid: int) -> bool:
    """Whether no process ``pid`` runs here any more (a zombie counts as gone)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        text = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return text[text.rfind(b")") + 2 : text.rfind(b")") + 3] in (b"Z", b"X")


def _held_target_shape(target: str) -> re.Pattern[str]:
    return re.compile(
        rf"^\.{re.escape(target)}\.(?:{_LEGACY_TMP}|[0-9a-f]{{6}}-[0-9]+-[0-9a-f]{{8}})\.tmp$"
    )


def _stale_temp(name: str, held: re.Pattern[str] | None) -> bool:
    if held is not None and held.match(name):
        return True
    match = _TMP_SHAPE.match(name)
    return bool(match and match["tag"] == _machine_tag() and _pid_gone(int(match["pid"])))


def _sweep(folder: Path, held_target: str | None, *, every_temp: bool = False) -> None:
    """Remove leftovers of killed writers in ``folder`` (see the module docstring).

    ``held_target`` is the file whose lock the caller holds: its temp files are all
    leftovers.  ``every_temp`` says the caller's lock guards every file in the folder.
    """
    held = _held_target_shape(held_target) if held_target is not None else None
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
            if every_temp or _stale_temp(name, held):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        elif _LOCK_SHAPE.match(name):
            _remove_idle_lock(Path(entry.path))


@contextlib.contextmanager
def temp_folder(parent: Path, purpose: str) -> Iterator[Path]:
    """A private folder inside ``parent`` (an oracle folder) for one step of a run; always removed.

    Named like a temp file (``.<purpose>.<tag>-<pid>-<random>.tmp``), so a run killed
    while using it leaves nothing that the next write in ``parent`` does not remove.
    """
    folder = safe_folder(parent)
    while True:
        path = folder / temp_name(purpose)
        try:
            path.mkdir()
            break
        except FileExistsError:
            continue
        except OSError as e:
            raise DataError(f"{_shown(folder)}: cannot write: {e.strerror}") from None
    try:
        yield path
    finally:
        import shutil

        shutil.rmtree(path, ignore_errors=True)


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
    the lock file (see the module docstring).
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
                os.fsync(fd)
                if exists:
                    _keep_mode(fd, target)
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_dir(folder)


def remove_file(path: Path) -> bool:
    """Delete ``path`` under its lock (a pending-drift file fully reviewed); False when absent."""
    with lock_for(path):
        target = safe_folder(path.parent, create=False) / path.name
        if not os.path.lexists(target):
            return False
        target.unlink()
        _fsync_dir(target.parent)
        return True


class AtomicLines:
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

    def write(self, line: bytes) -> None:
        """Add one line (without its newline)."""
        self._fh.write(line)
        self._fh.write(b"\n")
        self.count += 1

    def commit(self) -> None:
        """Flush, fsync and rename over the target."""
        try:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            if self._exists:
                _keep_mode(self._fh.fileno(), self.path)
            self._fh.close()
            os.replace(self._tmp, self.path)
        except BaseException:
            self.abort()
            raise
        _fsync_dir(self.path.parent)
        self._lock.release()

    def abort(self) -> None:
        """Drop the temp file; the target is untouched."""
        try:
            if not self._fh.closed:
                self._fh.close()
            self._tmp.unlink(missing_ok=True)
        finally:
            self._lock.release()

    def __enter__(self) -> AtomicLines:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


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


# ---------------------------------------------------------------- reads


def iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line number, line bytes)`` for each non-blank line, streaming."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        raise DataError(f"{display_path(path)}: file not found") from None
    except OSError as e:
        raise DataError(f"{display_path(path)}: cannot read: {e.strerror}") from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            line = raw.rstrip(b"\r\n")
            if line.strip():
                yield lineno, line


_TOO_DEEP = "arrays and objects nested too deeply to read (not a file lockstep wrote)"


def _describe_decode_error(err: Exception) -> str:
    text = str(err)
    # msgspec says "Object missing required field `id`" / "Object contains unknown field `x`"
    return text.replace("Object contains", "has").replace("Object missing", "misses")


def iter_jsonl(path: Path, type_: type[T]) -> Iterator[tuple[int, T]]:
    """Stream ``path`` as JSONL, decoding each line to ``type_`` (a msgspec Struct or JSON type).

    A line that is not JSON, misses a field or has an unknown one raises
    :class:`DataError` as ``FILE:LINE: reason``.
    """
    decoder: msgspec.json.Decoder[T] = msgspec.json.Decoder(type_)
    shown = display_path(path)
    for lineno, line in iter_lines(path):
        yield lineno, decode_line(decoder, line, f"{shown}:{lineno}")


def decode_line(decoder: msgspec.json.Decoder[T], line: bytes, where: str, what: str = "") -> T:
    """One JSON line, or one ``DataError`` naming ``where`` (``FILE:LINE``) and the reason.

    ``what`` names what the line should have been (``"not a ledger header: "``) when a
    field is missing or unknown.
    """
    try:
        return decoder.decode(line)
    except msgspec.ValidationError as e:
        raise DataError(f"{where}: {what}{_describe_decode_error(e)}") from None
    except msgspec.DecodeError as e:
        raise DataError(f"{where}: not valid JSON ({e})") from None
    except RecursionError:
        raise DataError(f"{where}: {_TOO_DEEP}") from None


def read_json(path: Path, type_: type[T]) -> T:
    """Read a whole JSON document (a lock or tape file) into ``type_``; errors name the file."""
    shown = display_path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{shown}: file not found") from None
    except OSError as e:
        raise DataError(f"{shown}: cannot read: {e.strerror}") from None
    try:
        return msgspec.json.decode(data, type=type_)
    except msgspec.ValidationError as e:
        raise DataError(f"{shown}: {_describe_decode_error(e)}") from None
    except msgspec.DecodeError as e:
        raise DataError(f"{shown}: not valid JSON ({e})") from None
    except RecursionError:
        raise DataError(f"{shown}: {_TOO_DEEP}") from None


def pretty_json(obj: Any) -> bytes:
    """Deterministic, diff-friendly JSON for files a reviewer reads: sorted keys, 2-space indent."""
    encoded = msgspec.json.encode(obj, order="sorted")
    return msgspec.json.format(encoded, indent=2) + b"\n"


# ---------------------------------------------------------------- blobs


class BlobStore:
    """Content-addressed bytes under ``<dir>/blobs/ab/cdef...``.

    Writing the same bytes twice is free; a blob is never rewritten in place.  One
    lock (``.blobs.lock`` beside the store) guards every write to the store.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = lock_for(root)

    def path_for(self, digest: str) -> Path:
        return self.root / digest[:2] / digest[2:]

    def put(self, data: bytes, digest: str | None = None) -> str:
        """Store ``data`` and return its sha256.

        Blobs are renamed into place but not fsynced one by one: a corpus of ten
        thousand fixtures would otherwise pay ten thousand disk flushes.  That is
        safe because a blob is verified against its name on every read, so a blob
        torn by a crash reads as missing, never as wrong evidence; the lock file
        that names the blobs is written with a full fsync.
        """
        digest = digest or sha256_hex(data)
        with self._lock:
            folder = safe_folder(self.path_for(digest).parent)
            if self._lock.depth == 1:
                _sweep(folder, None, every_temp=True)
            target = folder / digest[2:]
            if _refuse_link(target):
                return digest
            fd, tmp = _create_temp(folder, target.name)
            try:
                try:
                    _write_all(fd, data)
                finally:
                    os.close(fd)
                os.replace(tmp, target)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
        return digest

    def get(self, digest: str) -> bytes | None:
        """The bytes stored under ``digest``, or None if they are not kept (or fail their hash)."""
        try:
            data = self.path_for(digest).read_bytes()
        except OSError:
            return None
        return data if sha256_hex(data) == digest else None

    def has(self, digest: str) -> bool:
        return self.path_for(digest).exists()

    def batch(self) -> BlobBatch:
        """Blobs written for one record run, removed again if that run fails."""
        return BlobBatch(self)

    def sweep(self) -> None:
        """Remove every temp file in the store's folders (the caller holds the store's lock)."""
        try:
            root = safe_folder(self.root, create=False)
            subs = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
        except OSError:
            return
        _sweep(root, None, every_temp=True)
        for sub in subs:
            _sweep(Path(sub.path), None, every_temp=True)

    def discard_unreferenced(self, keep: set[str]) -> int:
        """Remove blobs not in ``keep`` (after a trim or force re-record); returns the count."""
        removed = 0
        with self._lock:
            if not os.path.lexists(self.root):
                return 0
            root = safe_folder(self.root, create=False)
            for sub in os.scandir(root):
                if not sub.is_dir(follow_symlinks=False):
                    continue
                for blob in os.scandir(sub.path):
                    name = blob.name
                    if (
                        sub.name + name not in keep
                        and not name.startswith(".")
                        and blob.is_file(follow_symlinks=False)
                    ):
                        Path(blob.path).unlink(missing_ok=True)
                        removed += 1
        return removed


class BlobBatch:
    """The blobs one ``record`` writes: kept when it succeeds, removed when it fails.

    A refused record (a render returning an unfreezable value on the hundredth
    fixture) must leave the disk as it found it, blobs and folders included.
    Used as a context manager, the batch holds the store's lock throughout and
    starts by sweeping leftovers of killed records.
    """

    def __init__(self, blobs: BlobStore) -> None:
        self.blobs = blobs
        self._new_dirs = [d for d in (blobs.root.parent, blobs.root) if not os.path.lexists(d)]
        self._new_files: list[Path] = []
        self._holding = False

    def put(self, data: bytes) -> str:
        digest = sha256_hex(data)
        target = self.blobs.path_for(digest)
        if not os.path.lexists(target):
            if not os.path.lexists(target.parent):
                self._new_dirs.append(target.parent)
            self.blobs.put(data, digest)
            self._new_files.append(target)
        return digest

    def rollback(self) -> None:
        for path in self._new_files:
            path.unlink(missing_ok=True)
        self._remove_new_dirs()

    def _remove_new_dirs(self) -> None:
        for folder in sorted(set(self._new_dirs), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if empty: never removes what it did not create

    def __enter__(self) -> BlobBatch:
        self.blobs._lock.acquire()
        self._holding = True
        try:
            self.blobs.sweep()
        except BaseException:
            self._release()
            raise
        return self

    def _release(self) -> None:
        if self._holding:
            self._holding = False
            self.blobs._lock.release()

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is not None:
                self.rollback()
        finally:
            self._release()
        if exc_type is not None:
            self._remove_new_dirs()  # the oracle folder held the store's lock file until now


CACHE_FOLDER = ".lockstep-cache"
"""Scratch kept between runs (strength verdicts, the last ``replay --against``): never an oracle
file, never committed: it holds a ``.gitignore`` of ``*``, as pytest's cache does."""


def cache_folder(root: Path) -> Path:
    """``.lockstep-cache/`` under ``root``, made on first use with its ``.gitignore``."""
    folder = root / CACHE_FOLDER
    folder.mkdir(exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# written by lockstep: scratch, never committed\n*\n", encoding="utf-8")
    return folder
