"""Verdicts of earlier strength runs, so a second run only evaluates what changed.

A verdict is keyed by everything it depends on: the mutated function's source
(the whole module for module-level mutants), where in it the mutant sits and
what it writes, and the digests of the oracle files that judged it.  Editing
one function re-runs that function's mutants only; re-recording an oracle
re-runs the mutants it judges.

The cache lives in ``.lockstep-cache/`` at the project root, which holds its
own ``.gitignore`` (like pytest's cache): it is scratch, never an oracle file,
and never committed.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Final

import msgspec

from lockstep import __version__
from lockstep.errors import LockstepError
from lockstep.store import CACHE_FOLDER, atomic_write, cache_folder

FOLDER: Final = CACHE_FOLDER
_FILE: Final = "strength.json"


class CachedVerdict(msgspec.Struct, frozen=True, array_like=True):
    verdict: str
    killed_by: str = ""
    note: str = ""


def digest(parts: Iterable[str]) -> str:
    h = hashlib.sha256(__version__.encode())
    for part in parts:
        h.update(b"\0")
        h.update(part.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with contextlib.suppress(OSError), path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class VerdictCache:
    """A key → verdict map read once and written once (atomically) per run."""

    def __init__(self, root: Path, *, enabled: bool = True) -> None:
        self.folder = root / FOLDER
        self.enabled = enabled
        self.entries: dict[str, CachedVerdict] = {}
        self.dirty = False
        path = self.folder / _FILE
        if enabled and path.is_file():
            with contextlib.suppress(OSError, msgspec.MsgspecError):
                self.entries = msgspec.json.decode(path.read_bytes(), type=dict[str, CachedVerdict])

    def get(self, key: str) -> CachedVerdict | None:
        return self.entries.get(key) if self.enabled else None

    def put(self, key: str, verdict: CachedVerdict) -> None:
        if self.enabled:
            self.entries[key] = verdict
            self.dirty = True

    def save(self) -> None:
        """Write the cache (a cache that cannot be written is simply not kept)."""
        if not (self.enabled and self.dirty):
            return
        with contextlib.suppress(OSError, LockstepError):
            cache_folder(self.folder.parent)
            atomic_write(self.folder / _FILE, msgspec.json.encode(self.entries))
