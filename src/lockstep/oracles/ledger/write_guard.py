"""A replayed call may not write into the project's folder.

Replay calls the target as the suite called it, in the project's folder.  A call that
writes a file there by a relative name did so to the suite's own scratch file; replayed,
it writes the user's: configobj's ``ConfigObj.write`` rows, whose object names
``filename = "test.ini"``, overwrote a ``test.ini`` in the project with a green replay,
and its result (None) compared nothing of what was written.  Replay guards what it
exists to guard: nothing already on disk is lost or changed by it.

While a row replays (:meth:`~lockstep.oracles.ledger.replay.Replayer.run`), Python's own
file functions refuse, with a ``PermissionError``, to open for writing, remove, rename,
truncate, make a folder or link at a path inside the project's folder (``__pycache__``
folders aside: the interpreter's own bytecode).  Such a call then raises where it wrote at
recording, so its row does not reproduce when a recording verifies it and is refused
there, with the path named; a ledger recorded before holds it, and replays it red with
that reason (re-record it).  What the call writes elsewhere (a temporary folder, a cache
in the home folder) it writes as before.

The functions guarded are the modules' own (``open``, ``io.open``, ``os.open``,
``os.remove``, ``os.unlink``, ``os.rename``, ``os.replace``, ``os.rmdir``, ``os.mkdir``,
``os.truncate``, ``os.link``, ``os.symlink``, ``shutil.rmtree``), wrapped once in a
process that replays rows: ``pathlib`` and ``shutil`` call them through their modules, so
they are guarded too.  A name bound before (``from os import remove``) or a C
extension's own calls are not seen.  An audit hook (:func:`sys.addaudithook`) would see
more, but it runs for every audited event, ``id()`` among them, and cost replay an
eighth of its speed.
"""

from __future__ import annotations

import builtins
import functools
import io
import os
import shutil
import threading
from collections.abc import Callable
from typing import Any, Final

_WRITE_FLAGS: Final = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_WRITE_MODES: Final = frozenset("wax+")


class _Guard:
    """The project folder guarded now (None: no row replays), and whether the file
    functions are wrapped in this process."""

    def __init__(self) -> None:
        self.root: str | None = None
        self.wrapped = False
        self.lock = threading.Lock()


_GUARD: Final = _Guard()


def guarded_folder(root: str) -> str:
    """``root`` as the guard compares paths with it (real), the file functions wrapped in
    this process if they were not yet: what a replayer keeps, and hands :func:`enter`
    for each row."""
    if not _GUARD.wrapped:
        with _GUARD.lock:
            if not _GUARD.wrapped:
                _wrap_file_functions()
                _GUARD.wrapped = True
    return os.path.realpath(root)


def enter(folder: str) -> str | None:
    """Refuse writes into ``folder`` (from :func:`guarded_folder`) until :func:`leave` is
    given what this returns (two attribute writes a row: replay runs a hundred thousand
    rows a second)."""
    before = _GUARD.root
    _GUARD.root = folder
    return before


def leave(before: str | None) -> None:
    _GUARD.root = before


def _opens_to_write(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    mode = args[1] if len(args) > 1 else kwargs.get("mode", "r")
    return isinstance(mode, str) and not _WRITE_MODES.isdisjoint(mode)


def _flags_write(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    flags = args[1] if len(args) > 1 else kwargs.get("flags", 0)
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def _always(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return True


_FUNCTIONS: Final[tuple[tuple[Any, str, tuple[str, ...], Callable[..., bool]], ...]] = (
    (builtins, "open", ("file",), _opens_to_write),
    (io, "open", ("file",), _opens_to_write),
    (os, "open", ("path",), _flags_write),
    (os, "remove", ("path",), _always),
    (os, "unlink", ("path",), _always),
    (os, "rename", ("src", "dst"), _always),
    (os, "replace", ("src", "dst"), _always),
    (os, "rmdir", ("path",), _always),
    (os, "mkdir", ("path",), _always),
    (os, "truncate", ("path",), _always),
    (os, "link", ("src", "dst"), _always),
    (os, "symlink", ("src", "dst"), _always),
    (shutil, "rmtree", ("path",), _always),
)
"""Each file function wrapped: its module, its name, the names of its path arguments in
their order, and whether a call of it with these arguments writes."""


def _wrap_file_functions() -> None:
    for module, name, paths, writes in _FUNCTIONS:
        original = getattr(module, name, None)
        if original is not None and not getattr(original, "__lockstep_guarded__", False):
            setattr(module, name, _guarded(original, name, paths, writes))


def _guarded(
    original: Callable[..., Any], name: str, paths: tuple[str, ...], writes: Callable[..., bool]
) -> Callable[..., Any]:
    @functools.wraps(original)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        root = _GUARD.root
        if root is not None and writes(args, kwargs):
            for index, key in enumerate(paths):
                path = args[index] if index < len(args) else kwargs.get(key)
                inside = _inside(root, path)
                if inside is not None:
                    raise PermissionError(
                        f"{inside!r} in the project's folder: a replayed call may not change "
                        f"it ({name}; lockstep replays no call that writes there)"
                    )
        return original(*args, **kwargs)

    guarded.__lockstep_guarded__ = True  # type: ignore[attr-defined]
    return guarded


def _inside(root: str, path: Any) -> str | None:
    """``path``, shown relative to ``root``, when it lies inside ``root`` (and outside a
    ``__pycache__`` folder); None otherwise, or when it is no path (a descriptor)."""
    if path is None or isinstance(path, int):
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
