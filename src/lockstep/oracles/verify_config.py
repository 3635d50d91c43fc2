"""The configuration a verifying fork replays under: the server's reading of the same bytes.

Each candidate's fork reads the project's configuration as a fresh interpreter would;
parsing and validating the TOML, and expanding a ``package`` ledger into its members from
the package's source, was a sizeable share of a fork's work, repeated for every ledger of
a run on files that seldom change while the tests run.  The session's server
(:mod:`lockstep.cli.verify_child`) reads each configuration once with :func:`remember`:
its bytes, its reading, and what expanding its tables read (for a ``package`` ledger,
where the package is found and the bytes of each of its modules:
:meth:`~lockstep.tables.OracleSpec.expansion_sources`).  A fork then still resolves the
path, checks it is a file, reads its bytes and reads those sources again (a file changed
since, a module added, or a link now pointing elsewhere, is seen), and takes the server's
reading only when all of it is what the server read -- parsing, validation and expansion
are a function of them alone.  A configuration the server could not read, or any
difference, and the fork reads it itself with :func:`~lockstep.config.load_project`,
exactly as before.

Reading the package's modules again was still a fifth of a fork's work.  So the server
also takes their stamp first (:mod:`lockstep.source_stamps`: each file's identity, size
and times), and a fork whose stamp is the server's takes the reading without reading the
modules.  Only a stamp whose files were all last written well before it was taken is
trusted (a write within one tick of the clock may keep a file's times); otherwise, or
when the stamps differ, the fork compares the bytes as before.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Final, TypeGuard

import msgspec

from lockstep.config import Config, Project, config_from_bytes, expanded_project, load_project
from lockstep.errors import LockstepError
from lockstep.kinds import KINDS
from lockstep.source_stamps import Stamp, settled
from lockstep.store.reading import read_file
from lockstep.tables import UNSTAMPED


class _Reading(msgspec.Struct, frozen=True):
    data: bytes
    """The configuration's bytes."""
    config: Config
    """Its tables as written."""
    stamps: list[object] | None
    """The stamp of what expanding them reads (taken before reading it), or None when it
    is not to be trusted: compare :attr:`sources` then."""
    sources: list[object]
    """What expanding them read."""
    project: Project
    """The reading of it all."""


_READ: Final[dict[Path, _Reading]] = {}
"""Resolved configuration path -> what the server read there."""


def remember(config_path: Path) -> None:
    """In the server: read the configuration at ``config_path`` once (nothing is kept when
    it cannot be read)."""
    try:
        path = config_path.resolve()
        if not path.is_file():
            return
        data = read_file(path, through_links=True)
        config = config_from_bytes(data, path.name)
        taken = time.time_ns()
        stamps = _stamps(config, path.parent)  # before the sources: a write between is seen
        sources = _sources(config, path.parent)  # before expanding: a change between is seen
        project = expanded_project(config, path)
    except (OSError, LockstepError):
        return
    if stamps is not None and not all(settled(s, taken) for s in stamps if _stamp(s)):
        stamps = None
    with contextlib.suppress(LockstepError, OSError):  # met again, and said, where used
        project.oracle_dir  # noqa: B018 - resolved here once, not in every fork
    _READ[path] = _Reading(data, config, stamps, sources, project)


def _stamps(config: Config, root: Path) -> list[object] | None:
    """Each table's :meth:`~lockstep.tables.OracleSpec.expansion_stamp`, in the tables'
    order; None when one cannot be stamped."""
    stamps = [spec.expansion_stamp(root) for kind in KINDS for spec in config.tables(kind)]
    return None if any(s == UNSTAMPED for s in stamps) else stamps


def _stamp(value: object) -> TypeGuard[Stamp]:
    return isinstance(value, tuple)


def _sources(config: Config, root: Path) -> list[object]:
    """What expanding each table of ``config`` reads under ``root`` (see
    :meth:`~lockstep.tables.OracleSpec.expansion_sources`), in the tables' order."""
    return [spec.expansion_sources(root) for kind in KINDS for spec in config.tables(kind)]


def project_at(config_path: Path) -> Project:
    """The project configured at ``config_path``, as :func:`~lockstep.config.load_project`
    reads it: the server's reading when the file's path and bytes, and what expanding it
    reads, are the ones it read."""
    try:
        path = config_path.resolve()
        known = _READ.get(path)
        if known is not None and read_file(path, through_links=True) == known.data:
            if known.stamps is not None and _stamps(known.config, path.parent) == known.stamps:
                return known.project  # the sources' files are as they were when read
            if _sources(known.config, path.parent) == known.sources:
                return known.project
    except OSError:
        pass  # load_project meets it again and says so
    return load_project(config_path=config_path)
