"""Where and how oracle bytes live on disk.

Promises, because an oracle file is evidence and must never be half true:

* :func:`atomic_write` replaces a file whole or not at all (temp file in the
  same folder, fsync, rename, fsync of the folder -- once per folder at the end of
  a :func:`folder_syncs_batched` block).  An interrupted write — even ``kill -9`` —
  leaves the old file intact.
* :class:`JsonlAppender` appends whole lines from several processes at once
  (pytest-xdist workers recording one ledger): each line is one ``write`` on an
  ``O_APPEND`` descriptor under an exclusive file lock, so lines are never lost
  or interleaved.
* :class:`ScratchLines` writes a file into a folder of this process's own
  (:func:`temp_folder`: a candidate oracle, read once and removed): no lock, no
  fsync, but the same link checks and a file created new.
* :func:`iter_jsonl` streams a JSONL file line by line (memory flat in the
  number of cases) and reports a bad line as ``FILE:LINE: reason``.

The :class:`BlobStore` keeps rendered outputs content-addressed by sha256 so a
drift can print both documents without the lock file holding them.

Nothing outside this package writes oracle files.  Its modules: :mod:`~lockstep.store.paths`
(display paths, link checks, temp names), :mod:`~lockstep.store.locks` (file locks and the
sweep of leftovers), :mod:`~lockstep.store.atomic` (whole-file writes, appends),
:mod:`~lockstep.store.formats` (JSON/JSONL reads) and :mod:`~lockstep.store.blobs`; every
public name is importable from here.

**Links.**  Oracle folders arrive in pull requests, so a link inside one
(``lockstep/blobs -> /elsewhere``) must not make lockstep write elsewhere.  No
write here goes through a symbolic link: every folder between the project and
the file is checked with ``lstat`` (and created with ``mkdir``, which never
follows one), and files are opened with ``O_NOFOLLOW``/``O_EXCL``.  "The
project" is the shallowest folder on the path that holds ``lockstep.toml``,
``pyproject.toml`` or ``.git`` (the whole path when there is none); links above
it are the user's own business.  A link is refused with a one-line
:class:`~lockstep.errors.DataError` (exit 2) naming it, and nothing is written.
(An oracle folder that is itself a link out of the project is refused earlier,
by :meth:`lockstep.config.Project.resolve`.)

**Leftovers of a killed run.**  Every writer holds the target file's lock
(:func:`lock_for`) for as long as its temp file exists, and temp files have a
fixed shape: ``.<file>.<tag>-<pid>-<random>.tmp``, where ``tag`` names the
machine, boot and pid namespace of the writer.  So:

* when a write takes the lock of a file, every temp file of *that* file in the
  folder is a leftover of a writer that died (or of an older lockstep) and is
  removed;
* temp files of *other* files in the folder are removed when their writer is
  certainly gone: written under this machine's tag, by a pid that is no longer
  running (or is a zombie);
* the blob store has one lock for the whole store; taking it for a record
  (:meth:`BlobStore.batch`) removes every temp file in the store's folders;
* a private folder a step of a run needs inside the oracle folder
  (:func:`temp_folder`) has the same shape and is removed, whole, on the same
  terms as another file's temp file.

Locks are ``flock`` on an empty sibling ``.<file>.lock`` (so lockstep needs a
POSIX system, as its process control already does).  This is not the
``filelock`` package: it deliberately never deletes a lock file (deleting one
safely needs the holder to remove it while still holding it and every waiter
to re-check the inode it locked), so a killed run's lock files would pile up in
a committed folder.  Lock files do not
accumulate: a holder removes its lock file
before releasing it (a process waiting on the same file notices the removed
inode and retries on a fresh one), and a lock file left by a holder that was
killed is removed by the next write in that folder that can take it without
waiting (nobody holds it, so nobody needs it).  A replay writes nothing and so
cleans nothing.
"""

from __future__ import annotations

from lockstep.store.atomic import (
    AtomicLines,
    JsonlAppender,
    ScratchLines,
    atomic_write,
    folder_syncs_batched,
    remove_file,
)
from lockstep.store.blobs import BlobBatch, BlobStore, sha256_hex
from lockstep.store.formats import decode_line, iter_jsonl, iter_lines, pretty_json, read_json
from lockstep.store.locks import OracleLock, lock_for
from lockstep.store.paths import (
    CACHE_FOLDER,
    PROJECT_MARKERS,
    TMP_SUFFIX,
    cache_folder,
    display_path,
    safe_folder,
    sweep_temp_folders,
    temp_folder,
    temp_name,
)

__all__ = [
    "CACHE_FOLDER",
    "PROJECT_MARKERS",
    "TMP_SUFFIX",
    "AtomicLines",
    "BlobBatch",
    "BlobStore",
    "JsonlAppender",
    "OracleLock",
    "ScratchLines",
    "atomic_write",
    "cache_folder",
    "decode_line",
    "display_path",
    "folder_syncs_batched",
    "iter_jsonl",
    "iter_lines",
    "lock_for",
    "pretty_json",
    "read_json",
    "remove_file",
    "safe_folder",
    "sha256_hex",
    "sweep_temp_folders",
    "temp_folder",
    "temp_name",
]
