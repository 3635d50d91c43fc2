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

import dataclasses

from lockstep.config import Config, Project, config_from_bytes
from lockstep.gates.git import Git


def config_at(project: Project, git: Git, base: str) -> Config | None:
    """lockstep's configuration at commit ``base`` (None when the file is not there)."""
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
    return config_from_bytes(data, config_rel, f"{config_rel} at {git.short(base)}")


def judged_by_base(project: Project, git: Git, base: str) -> Project:
    """``project`` with the configuration of ``base`` (its root and files unchanged)."""
    config = config_at(project, git, base)
    return project if config is None else dataclasses.replace(project, config=config)
