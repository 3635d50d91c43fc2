"""Reading a file that arrived in a commit: only a regular file, and an oracle file never
through a link.

A pull request can commit a link anywhere, and lockstep reads what it finds: a ledger
linked to ``/dev/zero`` was read as one endless line until memory ran out, one linked to
a pipe (``/dev/stdin`` on a CI runner) waited forever, and one linked to a file outside
the repository (``~/.aws/credentials``, ``/proc/self/environ``) was read as if it were
the oracle, its contents a diff away from the log.  Every file lockstep reads from a
project opens here:

* it must be a regular file once opened (``fstat``): a folder, device, pipe or socket is
  refused, and it is opened ``O_NONBLOCK`` so that a pipe is refused rather than waited
  on;
* an oracle file (a ledger, a lock, a tape, a pins file, a blob) is opened
  ``O_NOFOLLOW``: lockstep never writes one through a link (:mod:`lockstep.safe_paths`,
  :mod:`lockstep.store.atomic`), so a link there is not lockstep's and is not read.  A
  configuration file or a module of the package may be a link (``through_links``).

Refusals are :class:`OSError` with a ``strerror`` that says why, so every caller's
existing one-line error (``FILE: cannot read: …``, exit 2) names the file and the reason.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Final

NOT_A_FILE: Final = "not a regular file (a folder, device, pipe or socket); lockstep reads files"
A_LINK: Final = (
    "a symbolic link; lockstep reads no oracle file through a link (it writes none "
    "through one): replace it with the file"
)
_FLAGS: Final = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)


def open_file(path: Path, *, through_links: bool = False, buffering: int = -1) -> BinaryIO:
    """``path`` opened for reading in binary, when it is a regular file (and not a link,
    unless ``through_links``); else :class:`OSError` (``FileNotFoundError`` when missing)."""
    if not through_links and not _NOFOLLOW and path.is_symlink():  # no O_NOFOLLOW here
        raise OSError(errno.ELOOP, A_LINK, str(path))
    try:
        fd = os.open(path, _FLAGS | (0 if through_links else _NOFOLLOW))
    except OSError as e:
        if not through_links and e.errno in (errno.ELOOP, errno.EMLINK) and path.is_symlink():
            raise OSError(errno.ELOOP, A_LINK, str(path)) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, NOT_A_FILE, str(path))
        return os.fdopen(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


def read_file(path: Path, *, through_links: bool = False) -> bytes:
    """The bytes of ``path``, read by :func:`open_file`'s rules."""
    with open_file(path, through_links=through_links) as fh:
        return fh.read()


__all__ = ["A_LINK", "NOT_A_FILE", "open_file", "read_file"]
