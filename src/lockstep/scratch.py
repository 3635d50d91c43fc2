"""The project's scratch folder, ``.lockstep-cache/``: kept between runs, trusted by no one.

It holds what makes a second run quicker or lets ``review`` read the last ``replay
--against`` (strength verdicts, the differential result).  Such a file could arrive
in a commit (``git add -f``) holding whatever verdict its author liked, so:

* every file lockstep keeps here is **sealed**: an HMAC-SHA256 of its content with a
  key that lives outside every repository, in the user's cache folder
  (:func:`lockstep.safe_paths.user_cache_dir`, ``key``, mode 0600, made on first use).
  A file whose seal does not verify (planted, copied from another machine, or written
  by an older lockstep) is ignored with a one-line note, never trusted and never a
  traceback;
* the folder, its ``.gitignore`` and every file in it are written without following
  a link (:mod:`lockstep.safe_paths`): a link committed here is refused in one line
  (exit 2), never written through;
* files here that git tracks are named: by ``guard`` as a finding, and by the
  commands that read the folder as a note.

When the key cannot be kept (a read-only home), nothing read from here is trusted
and what is written is simply not reused: the cache is off, the results the same.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import os
import secrets
import stat
import subprocess
from pathlib import Path
from typing import Final

from lockstep.errors import DataError
from lockstep.safe_paths import refuse_links, safe_folder, user_cache_dir, write_file

CACHE_FOLDER: Final = ".lockstep-cache"
IGNORE_TEXT: Final = "# written by lockstep: scratch, never committed\n*\n"
_SEAL: Final = b"lockstep-sealed "
_KEY_BYTES: Final = 32


def folder_path(root: Path) -> Path:
    return root / CACHE_FOLDER


def scratch_folder(root: Path) -> Path:
    """``.lockstep-cache/`` under ``root``, made on first use with its ``.gitignore``; a link
    in place of either is refused (:class:`DataError`, nothing written)."""
    folder = safe_folder(root, folder_path(root))
    ignore = folder / ".gitignore"
    refuse_links(root, ignore)
    if not ignore.exists():
        write_file(root, ignore, IGNORE_TEXT.encode())
    return folder


def tracked(root: Path) -> list[str]:
    """Paths under ``.lockstep-cache/`` that git tracks (none outside a git repository)."""
    try:
        proc = subprocess.run(
            ["git", "ls-files", "-z", "--", CACHE_FOLDER],
            cwd=root,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if proc.returncode != 0:
        return []
    return [p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def tracked_note(root: Path) -> str | None:
    """One line naming tracked scratch files, or None when there are none."""
    found = tracked(root)
    if not found:
        return None
    shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    return (
        f"{CACHE_FOLDER}/ holds {len(found)} file(s) tracked by git ({shown}): ignored, "
        f"never trusted; remove them with git rm -r --cached {CACHE_FOLDER}"
    )


@functools.cache
def machine_key() -> bytes | None:
    """This user's key for sealing scratch files, made on first use; None if it cannot be kept."""
    folder = user_cache_dir()
    path = folder / "key"
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | nofollow, 0o600)
        except FileExistsError:
            pass
        else:
            try:
                os.write(fd, secrets.token_bytes(_KEY_BYTES))
                os.fsync(fd)
            finally:
                os.close(fd)
        fd = os.open(path, os.O_RDONLY | nofollow)
        try:
            info = os.fstat(fd)
            key = os.read(fd, 4096)
        finally:
            os.close(fd)
    except OSError:
        return None
    mine = info.st_uid == os.getuid() and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    return key if mine and len(key) >= _KEY_BYTES else None


def _mac(key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hashlib.sha256).hexdigest().encode()


def seal(data: bytes) -> bytes | None:
    """``data`` with its seal line in front; None when no key can be kept."""
    key = machine_key()
    if key is None:
        return None
    return _SEAL + _mac(key, data) + b"\n" + data


def unseal(blob: bytes) -> bytes | None:
    """The content of a sealed file, or None when its seal does not verify."""
    key = machine_key()
    head, _, data = blob.partition(b"\n")
    if key is None or not head.startswith(_SEAL):
        return None
    return data if hmac.compare_digest(head[len(_SEAL) :], _mac(key, data)) else None


def read_sealed(root: Path, name: str) -> tuple[bytes | None, str | None]:
    """The content of scratch file ``name`` and a note: ``(None, None)`` when there is no such
    file, ``(None, note)`` when there is one lockstep does not trust."""
    path = folder_path(root) / name
    shown = f"{CACHE_FOLDER}/{name}"
    try:
        refuse_links(root, path)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None, None
    except DataError as e:
        return None, f"{e}; ignored"
    except OSError as e:
        return None, f"{shown}: cannot read ({e.strerror}): ignored"
    with contextlib.closing(os.fdopen(fd, "rb")) as fh:
        try:
            blob = fh.read()
        except OSError as e:
            return None, f"{shown}: cannot read ({e.strerror}): ignored"
    data = unseal(blob)
    if data is None:
        return None, (
            f"{shown}: not written by lockstep for this user on this machine (planted, "
            "copied or older): ignored"
        )
    return data, None


def write_sealed(root: Path, name: str, data: bytes) -> bool:
    """Write scratch file ``name`` sealed; False when no key can be kept (nothing written).
    A link in the way raises :class:`DataError`."""
    sealed = seal(data)
    if sealed is None:
        return False
    folder = scratch_folder(root)
    write_file(root, folder / name, sealed)
    return True
