"""Where and how oracle bytes live on disk.

Three promises, because an oracle file is evidence and must never be half true:

* :func:`atomic_write` replaces a file whole or not at all (temp file in the
  same folder, fsync, rename, fsync of the folder).  An interrupted write
  leaves the old file intact.
* :class:`JsonlAppender` appends whole lines from several processes at once
  (pytest-xdist workers recording one ledger): each line is one ``write`` on an
  ``O_APPEND`` descriptor under an exclusive file lock, so lines are never lost
  or interleaved.
* :func:`iter_jsonl` streams a JSONL file line by line (memory flat in the
  number of cases) and reports a bad line as ``FILE:LINE: reason``.

The :class:`BlobStore` keeps rendered outputs content-addressed by sha256 so a
drift can print both documents without the lock file holding them.

Nothing outside this module writes oracle files.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from filelock import FileLock

from lockstep.errors import DataError

T = TypeVar("T")


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


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically: readers see the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


class AtomicLines:
    """Write a JSONL file line by line into a temp file, then swap it in whole.

    Used for re-recording a whole ledger or pins file: the old file stays
    readable (and intact, if the run is interrupted) until :meth:`commit`.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        self._tmp = Path(tmp_name)
        self._fh = os.fdopen(fd, "wb")
        self.count = 0

    def write(self, line: bytes) -> None:
        """Add one line (without its newline)."""
        self._fh.write(line)
        self._fh.write(b"\n")
        self.count += 1

    def commit(self) -> None:
        """Flush, fsync and rename over the target."""
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self._tmp, 0o666 & ~umask)
        os.replace(self._tmp, self.path)
        _fsync_dir(self.path.parent)

    def abort(self) -> None:
        """Drop the temp file; the target is untouched."""
        if not self._fh.closed:
            self._fh.close()
        self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> AtomicLines:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def lock_for(path: Path) -> FileLock:
    """The inter-process lock guarding appends to ``path`` (a sibling ``.lock`` file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path.with_name(f".{path.name}.lock")))


class JsonlAppender:
    """Append whole JSON lines to a file, safely from many processes at once.

    Each :meth:`append` is one ``os.write`` of a complete line on an ``O_APPEND``
    descriptor, taken under an exclusive :class:`filelock.FileLock`, so a line from
    one worker can never split a line from another.  Batches amortise the lock.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = lock_for(path)

    def append_many(self, lines: list[bytes]) -> None:
        """Append several lines (without newlines) in one locked write."""
        if not lines:
            return
        payload = b"".join(line + b"\n" for line in lines)
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            try:
                view = memoryview(payload)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)

    def append(self, line: bytes) -> None:
        """Append one line (without its newline)."""
        self.append_many([line])


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
        try:
            yield lineno, decoder.decode(line)
        except msgspec.ValidationError as e:
            raise DataError(f"{shown}:{lineno}: {_describe_decode_error(e)}") from None
        except msgspec.DecodeError as e:
            raise DataError(f"{shown}:{lineno}: not valid JSON ({e})") from None


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


def pretty_json(obj: Any) -> bytes:
    """Deterministic, diff-friendly JSON for files a reviewer reads: sorted keys, 2-space indent."""
    encoded = msgspec.json.encode(obj, order="sorted")
    return msgspec.json.format(encoded, indent=2) + b"\n"


class BlobStore:
    """Content-addressed bytes under ``<dir>/blobs/ab/cdef...``.

    Writing the same bytes twice is free; a blob is never rewritten in place.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

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
        target = self.path_for(digest)
        if target.exists():
            return digest
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            tmp.write_bytes(data)
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

    def discard_unreferenced(self, keep: set[str]) -> int:
        """Remove blobs not in ``keep`` (after a trim or force re-record); returns the count."""
        removed = 0
        if not self.root.is_dir():
            return 0
        for sub in self.root.iterdir():
            if not sub.is_dir():
                continue
            for blob in sub.iterdir():
                if sub.name + blob.name not in keep and not blob.name.startswith("."):
                    blob.unlink(missing_ok=True)
                    removed += 1
        return removed


class BlobBatch:
    """The blobs one ``record`` writes: kept when it succeeds, removed when it fails.

    A refused record (a render returning an unfreezable value on the hundredth
    fixture) must leave the disk as it found it, blobs and folders included.
    """

    def __init__(self, blobs: BlobStore) -> None:
        self.blobs = blobs
        self._new_dirs = [d for d in (blobs.root.parent, blobs.root) if not d.exists()]
        self._new_files: list[Path] = []

    def put(self, data: bytes) -> str:
        digest = sha256_hex(data)
        target = self.blobs.path_for(digest)
        if not target.exists():
            if not target.parent.exists():
                self._new_dirs.append(target.parent)
            self.blobs.put(data, digest)
            self._new_files.append(target)
        return digest

    def rollback(self) -> None:
        for path in self._new_files:
            path.unlink(missing_ok=True)
        for folder in sorted(set(self._new_dirs), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if empty: never removes what it did not create

    def __enter__(self) -> BlobBatch:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None:
            self.rollback()
