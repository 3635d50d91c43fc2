"""A replayed call may not write into the project's folder.

Replay calls the target as the suite called it, in the project's folder.  A call that
writes a file there by a relative name did so to the suite's own scratch file; replayed,
it writes the user's: configobj's ``ConfigObj.write`` rows, whose object names
``filename = "test.ini"``, overwrote a ``test.ini`` in the project with a green replay,
and its result (None) compared nothing of what was written.  Replay guards what it
exists to guard: nothing already on disk is lost or changed by it.

While a row replays (:meth:`~lockstep.oracles.ledger.replay.Replayer.run`), an audit hook
(:func:`sys.addaudithook`, the interpreter's own events) refuses, with a
``PermissionError``, every open for writing, removal, rename, truncation, new folder
or link of a path inside the project's folder (``__pycache__`` folders aside: the
interpreter's own bytecode).  Such a call then raises where it wrote at recording, so
its row does not reproduce when a recording verifies it and is refused there, with the
path named; a ledger recorded before holds it, and replays it red with that reason
(re-record it).  What the call writes elsewhere (a temporary folder, a cache in the home
folder) it writes as before.

An audit hook cannot be removed: it is added once per process, and does nothing while
no row replays.  What it sees is what Python's own file functions do; a C extension
writing through its own calls is not seen.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Final

_WRITE_FLAGS: Final = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC

_CHANGING: Final = {
    "os.remove": 1,
    "os.rmdir": 1,
    "os.truncate": 1,
    "os.mkdir": 1,
    "shutil.rmtree": 1,
    "os.rename": 2,
    "os.link": 2,
    "os.symlink": 2,
}
"""Audit events that change what is on disk -> how many of their first arguments are
paths they change (``os.rename``: its source and destination; ``os.replace`` raises it
too)."""


class _Guard:
    """The project folder guarded now (None: no row replays), and whether the hook is in."""

    def __init__(self) -> None:
        self.root: str | None = None
        self.hooked = False
        self.lock = threading.Lock()


_GUARD: Final = _Guard()


def guarded_folder(root: str) -> str:
    """``root`` as the guard compares paths with it (real), the hook added to this process
    if it was not yet: what a replayer keeps, and hands :func:`enter` for each row."""
    if not _GUARD.hooked:
        with _GUARD.lock:
            if not _GUARD.hooked:
                sys.addaudithook(_hook)
                _GUARD.hooked = True
    return os.path.realpath(root)


def enter(folder: str) -> str | None:
    """Refuse writes into ``folder`` (from :func:`guarded_folder`) until :func:`leave` is
    given what this returns (two attribute writes a row: replay runs a quarter of a
    million rows a second)."""
    before = _GUARD.root
    _GUARD.root = folder
    return before


def leave(before: str | None) -> None:
    _GUARD.root = before


def _hook(event: str, args: tuple[Any, ...]) -> None:
    root = _GUARD.root
    if root is None:
        return
    if event == "open":
        if len(args) < 3 or not isinstance(args[2], int) or not args[2] & _WRITE_FLAGS:
            return
        paths = args[:1]
    elif event in _CHANGING:
        paths = args[: _CHANGING[event]]
    else:
        return
    for path in paths:
        inside = _inside(root, path)
        if inside is not None:
            raise PermissionError(
                f"{inside!r} in the project's folder: a replayed call may not change it "
                f"({event}; lockstep replays no call that writes there)"
            )


def _inside(root: str, path: Any) -> str | None:
    """``path``, shown relative to ``root``, when it lies inside ``root`` (and outside a
    ``__pycache__`` folder); None otherwise, or when it is no path (a descriptor)."""
    if isinstance(path, int):
        return None
    try:
        text = os.fsdecode(os.fspath(path))
    except (TypeError, ValueError):
        return None
    full = os.path.abspath(text)
    folder = os.path.realpath(os.path.dirname(full))
    real = os.path.join(folder, os.path.basename(full))
    if real != root and not real.startswith(root + os.sep):
        return None
    relative = os.path.relpath(real, root)
    if "__pycache__" in relative.split(os.sep):
        return None
    return relative
