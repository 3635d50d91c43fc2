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
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from lockstep.config import Config, Project, config_from_bytes, expanded_project, load_project
from lockstep.errors import LockstepError
from lockstep.kinds import KINDS
from lockstep.store.reading import read_file

_READ: Final[dict[Path, tuple[bytes, Config, list[object], Project]]] = {}
"""Resolved configuration path -> the bytes the server read there, their tables as
written, what expanding those read, and the reading of it all."""


def remember(config_path: Path) -> None:
    """In the server: read the configuration at ``config_path`` once (nothing is kept when
    it cannot be read)."""
    try:
        path = config_path.resolve()
        if not path.is_file():
            return
        data = read_file(path, through_links=True)
        config = config_from_bytes(data, path.name)
        sources = _sources(config, path.parent)  # before expanding: a change between is seen
        project = expanded_project(config, path)
    except (OSError, LockstepError):
        return
    _READ[path] = (data, config, sources, project)


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
        if known is not None and read_file(path, through_links=True) == known[0]:
            _, config, sources, project = known
            if _sources(config, path.parent) == sources:
                return project
    except OSError:
        pass  # load_project meets it again and says so
    return load_project(config_path=config_path)
