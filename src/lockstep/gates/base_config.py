"""The configuration a change is judged by: the base revision's, never the change's own.

A commit that loosens ``[gates]`` (a bigger budget, fewer production globs) or adds a
``[[rule]]`` that normalizes a difference away would otherwise pass under the very
settings it brings.  So every gate that judges ``BASE..HEAD`` (guard, budget, every
review row) reads lockstep's settings as they were at BASE, while the code, oracle files
and fixtures are HEAD's.  The settings change itself is named as an oracle-side change
(:mod:`lockstep.gates.scope`), so it must come in a commit of its own and be reviewed as
such.  A base that predates the configuration file is judged with today's.
"""

from __future__ import annotations

import msgspec

from lockstep.config import Config, Expanded, Project, config_from_bytes, expand_surfaces
from lockstep.gates.git import Git


def config_at(project: Project, git: Git, base: str) -> Config | None:
    """lockstep's configuration at commit ``base`` (None when the file is not there)."""
    found = _expanded_at(project, git, base)
    return None if found is None else found.config


def _expanded_at(project: Project, git: Git, base: str) -> Expanded | None:
    """:func:`config_at` with each ``package`` ledger expanded into its members (read from
    the code as it is: the code a change is judged on is HEAD's), and their origins."""
    root = project.root.resolve()
    try:
        rel = root.relative_to(git.root.resolve()).as_posix()
    except ValueError:
        rel = ""
    prefix = "" if rel in ("", ".") else rel + "/"
    config_rel = project.config_path.resolve().relative_to(root).as_posix()
    data = git.read(prefix + config_rel, base)
    if data is None:
        return None
    shown = f"{config_rel} at {git.short(base)}"
    return expand_surfaces(config_from_bytes(data, config_rel, shown), project.root, shown)


def judged_by_base(project: Project, git: Git, base: str) -> Project:
    """``project`` with the configuration of ``base`` (its root and files unchanged)."""
    found = _expanded_at(project, git, base)
    if found is None:
        return project
    return msgspec.structs.replace(
        project,
        config=found.config,
        surfaces=found.surfaces,
        surface_origin=found.origin,
        tested=found.tested,
    )
