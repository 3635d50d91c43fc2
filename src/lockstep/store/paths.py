"""Where oracle bytes go: paths as the user reads them, folders checked for links, and
temp files named so that a killed writer's leftovers are recognised (see :mod:`lockstep.store`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Final

from lockstep.errors import DataError

PROJECT_MARKERS: Final = ("lockstep.toml", "pyproject.toml", ".git")
"""A folder holding one of these is a project: links below it are refused, above it allowed."""

TMP_SUFFIX: Final = ".tmp"
_TMP_SHAPE: Final = re.compile(
    r"^\.(?P<target>.+)\.(?P<tag>[0-9a-f]{6})-(?P<pid>[0-9]+)-[0-9a-f]{8}\.tmp$"
)
# Before this shape: tempfile.mkstemp's ``.<file>.<8 chars>.tmp`` and the blob store's
# ``.<file>.<pid>.tmp``; removed when their target's lock is held.
_LEGACY_TMP: Final = r"(?:[a-z0-9_]{8}|[0-9]+)"


def display_path(path: Path, root: Path | None = None) -> str:
    """A path as the user should read it: relative to ``root`` (or the cwd) when inside it.
    Its folders are resolved, not the file itself: a file that is a link is named where
    it is, not where it points."""
    return _displayed(str(path), None if root is None else str(root), os.getcwd())


@lru_cache(maxsize=1024)
def _displayed(path_text: str, root_text: str | None, cwd: str) -> str:
    """:func:`display_path`, remembered: every reader of a file names it so for its
    errors before it reads a line (a recording's end reads each ledger several times),
    and resolving three paths costs a dozen system calls.  Only what is shown depends
    on it; a link made later inside a folder already shown is not followed here."""
    path = Path(path_text)
    resolved = path.parent.resolve() / path.name if path.name not in ("", "..") else path.resolve()
    for base in (root_text, cwd):
        if base is None:
            continue
        try:
            return str(resolved.relative_to(_real(base)))
        except ValueError:
            continue
    return path_text


@lru_cache(maxsize=64)
def _real(folder_text: str) -> Path:
    """A root or working folder, resolved once: each new file named beside them (every
    verifying fork's candidate) resolved them again."""
    return Path(folder_text).resolve()


def _relative_to_cwd(path: Path) -> str:
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
        f"{_relative_to_cwd(link)}: is a symbolic link{target}; lockstep never writes oracle files "
        "through a link: replace it with a real folder or file (nothing was written to it)"
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

    Every component below the project (see :mod:`lockstep.store`) must be a real
    folder; a link or a file in the way raises :class:`DataError`.
    """
    absolute = os.path.abspath(folder)
    parts = absolute.split(os.sep)
    start = _checked_from(absolute)
    current = os.sep.join(parts[:start]) or os.sep
    for name in parts[start:]:
        current = os.path.join(current, name)
        if _is_real_folder(current):
            continue  # the usual case: nothing to make and nothing to say
        shown = str(_relative_to_cwd(Path(current)))
        if not real_folder(current, shown, create=create, link_error=_link_error):
            break
    return Path(absolute)


def _is_real_folder(path: str) -> bool:
    """Whether ``path`` is a folder, not a link to one (False when missing or unreadable:
    :func:`real_folder` then says what it is)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def real_folder(
    path: str, shown: str, *, create: bool, link_error: Callable[[Path], DataError]
) -> bool:
    """Check one component of a folder path: a real folder, made when missing and
    ``create``; False when it is missing and not made.  A link raises ``link_error(path)``,
    a file in the way or a folder that cannot be made a :class:`DataError` naming
    ``shown``."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not create:
            return False
        try:
            os.mkdir(path)
            return True
        except FileExistsError:
            info = os.lstat(path)
        except OSError as e:
            raise DataError(f"{shown}: cannot create folder: {e.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise link_error(Path(path))
    if not stat.S_ISDIR(info.st_mode):
        raise DataError(f"{shown}: is not a folder (nothing was written)")
    return True


def _refuse_link(path: Path) -> bool:
    """Raise if ``path`` is a link, or anything but a regular file (a folder in its place
    would meet the rename that replaces it half way, as an ``IsADirectoryError``); return
    whether it exists."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode):
        raise _link_error(path)
    if not stat.S_ISREG(info.st_mode):
        raise DataError(
            f"{_relative_to_cwd(path)}: is not a regular file (a folder, device, pipe or "
            "socket); lockstep writes oracle files: remove it, or move it elsewhere (nothing "
            "was written to it)"
        )
    return True


def _open_error(path: Path, err: OSError) -> DataError:
    if _refuse_link_quiet(path):
        return _link_error(path)
    return DataError(f"{_relative_to_cwd(path)}: cannot write: {err.strerror}")


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
            raise DataError(f"{_relative_to_cwd(folder)}: cannot write: {e.strerror}") from None


def pid_gone(pid: int) -> bool:
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


_ANY_TMP: Final = re.compile(
    rf"^\.(?P<target>.+)\.(?:{_LEGACY_TMP}|[0-9a-f]{{6}}-[0-9]+-[0-9a-f]{{8}})\.tmp$",
    re.DOTALL,
)
"""A temp file of any target, this shape or an older one.  The last part before
``.tmp`` holds no dot, so the target it names is the one a pattern for that target
would name (one pattern for every target: compiling one per ledger cost a recording's
end a third of a millisecond per ledger)."""


def _temp_of(name: str, target: str) -> bool:
    """Whether ``name`` is a temp file of ``target`` (this shape or an older one)."""
    match = _ANY_TMP.match(name)
    return match is not None and match["target"] == target


def _stale_temp(name: str, held: str | None) -> bool:
    """Whether the temp file ``name`` is a leftover: one of ``held``, the target whose
    lock the caller holds, or one whose writer's process is gone."""
    if held is not None and _temp_of(name, held):
        return True
    match = _TMP_SHAPE.match(name)
    return bool(match and match["tag"] == _machine_tag() and pid_gone(int(match["pid"])))


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
            raise DataError(f"{_relative_to_cwd(folder)}: cannot write: {e.strerror}") from None
    try:
        yield path
    finally:
        import shutil

        shutil.rmtree(path, ignore_errors=True)


def sweep_temp_folders(parent: Path, purpose: str) -> None:
    """Remove the :func:`temp_folder` folders for ``purpose`` in ``parent`` whose process is
    gone (a run killed while using one); never one in use, never anything else."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        match = _TMP_SHAPE.match(entry.name)
        if match is None or match["target"] != purpose or not _stale_temp(entry.name, None):
            continue
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                import shutil

                shutil.rmtree(entry.path, ignore_errors=True)  # never follows a link


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
