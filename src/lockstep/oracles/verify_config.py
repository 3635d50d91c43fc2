"""The configuration a verifying fork replays under: the server's reading of the same bytes.

Each candidate's fork reads the project's configuration as a fresh interpreter would;
parsing and validating the TOML was a sizeable share of a fork's work, repeated for every
ledger of a run on a file that seldom changes while the tests run.  The session's server
(:mod:`lockstep.cli.verify_child`) reads each configuration once, from its bytes, with
:func:`remember`; a fork then still resolves the path, checks it is a file and reads its
bytes (a file changed since, or a link now pointing elsewhere, is seen), and takes the
server's reading only when those bytes and that path are the ones the server read --
parsing and validation are a function of them alone.  A configuration whose reading
depends on more than its bytes (a ``package`` ledger reads the package's source), one the
server could not read, or any difference, and the fork reads it itself with
:func:`~lockstep.config.load_project`, exactly as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from lockstep.config import Project, config_from_bytes, expand_surfaces, load_project
from lockstep.errors import LockstepError

_READ: Final[dict[Path, tuple[bytes, Project]]] = {}
"""Resolved configuration path -> the bytes the server read there and its reading of them."""


def remember(config_path: Path) -> None:
    """In the server: read the configuration at ``config_path`` once, from its bytes (nothing
    is kept when it cannot be read, or its reading reads other files)."""
    try:
        path = config_path.resolve()
        if not path.is_file():
            return
        data = path.read_bytes()
        config = config_from_bytes(data, path.name)
        found = expand_surfaces(config, path.parent, path.name)
    except (OSError, LockstepError):
        return
    if found.surfaces or found.tested:  # read from the package's source too: not kept
        return
    _READ[path] = (data, Project(root=path.parent, config_path=path, config=found.config))


def project_at(config_path: Path) -> Project:
    """The project configured at ``config_path``, as :func:`~lockstep.config.load_project`
    reads it: the server's reading when the file's path and bytes are the ones it read."""
    try:
        path = config_path.resolve()
        known = _READ.get(path)
        if known is not None and path.is_file() and path.read_bytes() == known[0]:
            return known[1]
    except OSError:
        pass  # load_project meets it again and says so
    return load_project(config_path=config_path)
