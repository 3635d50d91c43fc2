"""Writing under a project that arrived in a commit: never through a symbolic link.

A pull request can commit links anywhere (``.lockstep-cache -> /home/you``,
``fixtures -> /etc``, ``loop -> .``).  Every write lockstep makes below a project
root that is not an oracle file (oracle files go through :mod:`lockstep.store`) goes
through here: each folder between the root and the file is checked with ``lstat``
and created with ``mkdir`` (which never follows a link), and a file is written
through a fresh temp file opened with ``O_EXCL | O_NOFOLLOW`` and renamed into place.
A link in the way is refused with a one-line :class:`~lockstep.errors.DataError`
(exit 2) that names it, and nothing is written.

Copies of a project (for mutants) go through :func:`copy_inside`: links that leave
the project are left out, links inside it stay links (relative), so a copy never
leaves the project and never loops.

Files that belong to the user and not to any project (the key that signs caches)
live in :func:`user_cache_dir`, outside every repository.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
from collections.abc import Collection
from pathlib import Path

from lockstep.errors import DataError
from lockstep.store.paths import real_folder


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def link_error(path: Path, root: Path) -> DataError:
    """The one-line refusal of a link at ``path``."""
    try:
        target = f" (to {os.readlink(path)})"
    except OSError:
        target = ""
    return DataError(
        f"{_shown(path, root)}: is a symbolic link{target}; lockstep never writes through "
        "a link: replace it with a real folder or file (nothing was written)"
    )


def _below(root: Path, path: Path) -> list[Path]:
    """Every path from the first component below ``root`` down to ``path`` itself."""
    rel = Path(os.path.abspath(path)).relative_to(Path(os.path.abspath(root)))
    out = []
    current = Path(os.path.abspath(root))
    for part in rel.parts:
        current = current / part
        out.append(current)
    return out


def refuse_links(root: Path, path: Path) -> None:
    """Raise :class:`DataError` if ``path`` or a folder between ``root`` and it is a link."""
    for current in _below(root, path):
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(info.st_mode):
            raise link_error(current, root)


def safe_folder(root: Path, folder: Path) -> Path:
    """``folder`` (below ``root``), created if missing, no component of it a link."""
    for current in _below(root, folder):
        real_folder(
            str(current),
            str(_shown(current, root)),
            create=True,
            link_error=lambda link: link_error(link, root),
        )
    return Path(os.path.abspath(folder))


def write_file(root: Path, path: Path, data: bytes) -> None:
    """Replace ``path`` (below ``root``) with ``data``, whole or not at all, never through
    a link: a link at ``path`` or above it (below ``root``) is refused."""
    folder = safe_folder(root, path.parent)
    target = folder / path.name
    refuse_links(root, target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    tmp = folder / f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(tmp, flags, 0o644)
    except OSError as e:
        raise DataError(f"{_shown(folder, root)}: cannot write: {e.strerror}") from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)  # a rename never follows a link at the target
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/lockstep`` (or ``~/.cache/lockstep``): the user's, in no project."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    folder = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return folder / "lockstep"


def copy_inside(source: Path, dest: Path, ignore: Collection[str] = ()) -> list[str]:
    """Copy the tree at ``source`` to ``dest`` (which must not exist) without leaving it.

    Files and folders are copied; a link to something inside ``source`` is made again
    as a relative link inside ``dest`` (so ``loop -> .`` stays a link and is never
    walked); a link that leaves ``source`` (or dangles) is left out.  Names in
    ``ignore`` are not copied.  Returns the left-out links, relative to ``source``.
    """
    real_root = Path(os.path.realpath(source))
    skipped: list[str] = []

    def walk(src: Path, dst: Path) -> None:
        os.mkdir(dst)
        with os.scandir(src) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name in ignore:
                    continue
                here, there = Path(entry.path), dst / entry.name
                if entry.is_symlink():
                    target = Path(os.path.realpath(here))
                    if not target.exists() or not target.is_relative_to(real_root):
                        skipped.append(str(here.relative_to(source)))
                        continue
                    mirrored = dest / target.relative_to(real_root)
                    os.symlink(os.path.relpath(mirrored, there.parent), there)
                elif entry.is_dir(follow_symlinks=False):
                    walk(here, there)
                elif entry.is_file(follow_symlinks=False):
                    shutil.copy2(here, there, follow_symlinks=False)
                # sockets, fifos, devices: not part of a program's sources

    walk(source, dest)
    return skipped
