"""The one place the pytest plugin finds the lockstep project.

``--lockstep-config PATH`` names the file; otherwise it is found from pytest's
rootdir upwards (``lockstep.toml``, or ``[tool.lockstep]`` in
``pyproject.toml``).  The project is loaded once per pytest run and shared by
the collected oracle cases, ``--lockstep-record`` and the ``tape`` fixture, so
all three always agree on which configuration they use.  A configuration error
stops the run as a usage error, with lockstep's one-line message.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from lockstep.errors import LockstepError

if TYPE_CHECKING:  # the configuration loads when a hook first needs the project
    from lockstep.config import Project
    from lockstep.tables import OracleSpec

CONFIG_OPTION = "--lockstep-config"

_PROJECT = pytest.StashKey["Project"]()


def add_config_option(group: pytest.OptionGroup) -> None:
    group.addoption(
        CONFIG_OPTION,
        default=None,
        metavar="PATH",
        help="lockstep config file (default: found from the rootdir upwards).",
    )


def load(config: pytest.Config, *, required: bool = True) -> Project:
    """The run's lockstep project, loaded on first use; raises :class:`LockstepError`.

    With ``required=False`` (the ``tape`` fixture, which works without any
    configuration) a project with no config file is the defaults rooted at
    pytest's rootdir.
    """
    from lockstep.config import CONFIG_FILE, Config, Project, find_config, load_project

    cached = config.stash.get(_PROJECT, None)
    if cached is not None and (not required or cached.config_path.is_file()):
        return cached
    explicit = config.getoption(CONFIG_OPTION, default=None)
    root = Path(str(config.rootpath))
    if explicit:
        project = load_project(config_path=Path(explicit))
    elif required or find_config(root) is not None:
        project = load_project(root)
    else:
        project = Project(root=root, config_path=root / CONFIG_FILE, config=Config())
    config.stash[_PROJECT] = project
    return project


def root_for(config: pytest.Config) -> Path | None:
    """The folder of the configuration :func:`load` reads (the project's root), found
    without reading it: what the recording's verifying interpreter is started in before
    the project is loaded.  None when none is found, or the one named is in no folder
    (``--lockstep-config`` or ``LOCKSTEP_CONFIG`` naming a path that is not there): the
    project's loading then says so, in one line."""
    from lockstep.config import config_location

    explicit = config.getoption(CONFIG_OPTION, default=None)
    found = config_location(
        Path(str(config.rootpath)), config_path=Path(explicit) if explicit else None
    )
    if found is None or not found.parent.is_dir():  # named in a folder that is not there
        return None
    return found.parent.resolve()


def project_for(config: pytest.Config) -> Project:
    """:func:`load` for hooks: a configuration error stops the run as a usage error."""
    try:
        return load(config)
    except LockstepError as e:
        raise pytest.UsageError(f"lockstep: {e}") from None


def oracles_for(config: pytest.Config, *, former: bool = False) -> list[OracleSpec]:
    """The run's oracles (:meth:`Project.oracles`, ``former`` as it takes it) for hooks: an
    oracle folder whose list of recorded members cannot be read stops the run as a usage
    error, in one line."""
    project = project_for(config)
    try:
        return list(project.oracles(former=former))
    except LockstepError as e:
        raise pytest.UsageError(f"lockstep: {e}") from None
