"""Verdicts of earlier strength runs, so a second run only evaluates what changed.

A verdict is keyed by everything it depends on: the mutated function's source
(the whole module for module-level mutants), where in it the mutant sits and
what it writes, and the digests of the oracle files that judged it.  Editing
one function re-runs that function's mutants only; re-recording an oracle
re-runs the mutants it judges.

The cache lives in ``.lockstep-cache/`` at the project root, which holds its
own ``.gitignore`` (like pytest's cache): it is scratch, never an oracle file,
and never committed.  Its file is sealed with a key of this user on this machine
(:mod:`lockstep.scratch`): a committed ``strength.json`` claiming every mutant
killed is ignored with a note, so it cannot forge a score.
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
from lockstep.scratch import CACHE_FOLDER, read_sealed, tracked_note, write_sealed

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
        self.root = root
        self.enabled = enabled
        self.entries: dict[str, CachedVerdict] = {}
        self.dirty = False
        self.notes: list[str] = []
        if not enabled:
            return
        tracked = tracked_note(root)
        if tracked:
            self.notes.append(tracked)
        data, note = read_sealed(root, _FILE)
        if note:
            self.notes.append(note)
        if data is not None:
            try:
                self.entries = msgspec.json.decode(data, type=dict[str, CachedVerdict])
            except msgspec.MsgspecError:
                self.notes.append(f"{FOLDER}/{_FILE}: unreadable: ignored")

    def get(self, key: str) -> CachedVerdict | None:
        return self.entries.get(key) if self.enabled else None

    def put(self, key: str, verdict: CachedVerdict) -> None:
        if self.enabled:
            self.entries[key] = verdict
            self.dirty = True

    def save(self) -> None:
        """Write the cache; one that cannot be written (a link in the way, no key) is not
        kept, and a note says why."""
        if not (self.enabled and self.dirty):
            return
        try:
            kept = write_sealed(self.root, _FILE, msgspec.json.encode(self.entries))
        except (OSError, LockstepError) as e:
            self.notes.append(f"verdicts not cached: {e}")
            return
        if not kept:
            self.notes.append("verdicts not cached: no key can be kept in the user's cache folder")
