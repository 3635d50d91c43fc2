"""Content-addressed blobs: the rendered outputs a corpus lock names by sha256."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Final

from lockstep.store.atomic import _write_all
from lockstep.store.locks import _sweep, lock_for
from lockstep.store.paths import _create_temp, _refuse_link, safe_folder
from lockstep.store.reading import read_file


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data``: the identity of a rendered output."""
    return hashlib.sha256(data).hexdigest()


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
            data = read_file(self.path_for(digest))
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

    def discard_unreferenced(self, keep: Iterable[str]) -> int:
        """Remove blobs not in ``keep`` (after a trim or force re-record); returns the count.

        ``keep`` is walked once, under the store's lock (so a record of another corpus
        cannot write a lock naming a new blob in between), and may be a stream of any
        length: it is grouped by blob folder, on disk past a bound (:class:`_Referenced`),
        and each folder is compared with its own group only."""
        removed = 0
        with self._lock:
            if not os.path.lexists(self.root):
                return 0
            root = safe_folder(self.root, create=False)
            with _Referenced(keep) as referenced:
                for sub in os.scandir(root):
                    if not sub.is_dir(follow_symlinks=False):
                        continue
                    kept = referenced.names_in(sub.name)
                    for blob in os.scandir(sub.path):
                        name = blob.name
                        if (
                            name not in kept
                            and not name.startswith(".")
                            and blob.is_file(follow_symlinks=False)
                        ):
                            Path(blob.path).unlink(missing_ok=True)
                            removed += 1
        return removed


_FOLDER: Final = re.compile(r"[0-9a-f]{2}")
_IN_MEMORY: Final = 1 << 16
"""Digests :class:`_Referenced` holds in memory before it groups them in files."""
_RECORD: Final = 31
"""Bytes of a spilled digest: its 62 hex digits after the folder's two."""


class _Referenced:
    """The digests a store must keep, grouped by blob folder (the first two hex digits).

    Up to :data:`_IN_MEMORY` digests are held as they are; past that, a sha256 digest is
    appended in binary to its folder's file in a private temporary folder (outside the
    project), so what is held at once is one folder's group: a 256th of the digests.
    Anything that is not a lowercase sha256 hex digest (never a lock's entry) stays in
    memory, so the answer is exact either way."""

    def __init__(self, digests: Iterable[str]) -> None:
        self._memory: dict[str, set[str]] = {}
        self._spill: tempfile.TemporaryDirectory[str] | None = None
        self._files: dict[str, IO[bytes]] = {}
        try:
            held = 0
            for digest in digests:
                if self._spill is not None and self._write(digest):
                    continue
                self._memory.setdefault(digest[:2], set()).add(digest[2:])
                held += 1
                if held == _IN_MEMORY and self._spill is None:
                    self._spill_memory()
            for fh in self._files.values():
                fh.close()
        except BaseException:
            self.close()
            raise

    def _spill_memory(self) -> None:
        self._spill = tempfile.TemporaryDirectory(prefix="lockstep-blobs-")
        memory, self._memory = self._memory, {}
        for folder, rests in memory.items():
            for rest in rests:
                if not self._write(folder + rest):
                    self._memory.setdefault(folder, set()).add(rest)

    def _write(self, digest: str) -> bool:
        """Append ``digest`` to its folder's file; False (nothing written) when it is not a
        lowercase sha256 hex digest (its bytes would not spell it back)."""
        folder, rest = digest[:2], digest[2:]
        fh = self._files.get(folder)
        if fh is None:
            if not _FOLDER.fullmatch(folder):
                return False
            assert self._spill is not None
            fh = self._files[folder] = open(Path(self._spill.name) / folder, "ab")  # noqa: SIM115 (closed in close)
        try:
            raw = bytes.fromhex(rest)
        except ValueError:
            return False
        if len(raw) != _RECORD or raw.hex() != rest:
            return False
        fh.write(raw)
        return True

    def names_in(self, folder: str) -> set[str]:
        """The blob names of ``folder`` to keep."""
        names = set(self._memory.get(folder, ()))
        if self._spill is not None and _FOLDER.fullmatch(folder):
            try:
                fh = open(Path(self._spill.name) / folder, "rb")  # noqa: SIM115 (closed below)
            except FileNotFoundError:
                return names
            with fh:  # a block at a time: a digest named by many entries is held once
                while data := fh.read(_RECORD * 32768):
                    names.update(data[i : i + _RECORD].hex() for i in range(0, len(data), _RECORD))
        return names

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()
        if self._spill is not None:
            self._spill.cleanup()

    def __enter__(self) -> _Referenced:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close()


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
