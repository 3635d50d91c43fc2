"""Which side of the line a changed file is on: the oracle's evidence, or production code.

The guard and the review both ask it.  *Oracle side*: everything under the
oracle folder (locks, ledgers, tapes, pins, blobs), the fixture and cases
files the oracles name, and every one of lockstep's own settings: the oracle,
``[[rule]]`` and ``[[secret]]`` tables, ``[gates]`` and the ``[lockstep]`` settings —
changing a rule or a fixture re-records the oracle as surely as editing its lock, and
loosening the budget or the production globs changes the judge as surely as a rule.  *Production*: the ``[gates] production`` globs minus
``exclude``, relative to the project root.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath
from typing import Any, Final

from wcmatch import glob

from lockstep.config import GatesSpec, Project
from lockstep.gates.git import Git, Head
from lockstep.kinds import KINDS
from lockstep.oracles import kind_of

_ORACLE_TABLES: Final = (*KINDS, "rule", "secret", "gates")
_SETTINGS: Final = "lockstep"
"""The ``[lockstep]`` table: each of its settings is compared on its own, as
``lockstep.<key>`` (``lockstep.secrets``: turning the scan off is an oracle change)."""
BLOB: Final = "blob"
"""The reason of a path in the oracle folder's content-addressed blob store."""


_GLOB_FLAGS: Final = glob.GLOBSTAR | glob.DOTGLOB | glob.FORCEUNIX | glob.CASE
"""``**`` spans folders; ``*`` also matches dot files; ``/`` separates and case counts on every OS."""


@cache
def _matcher(patterns: tuple[str, ...]) -> glob.WcMatcher[str]:
    return glob.compile(patterns, flags=_GLOB_FLAGS)


def matches(path: str, patterns: Iterable[str]) -> bool:
    """Whether a project-relative POSIX path matches any of the globs.

    Globs are anchored at the project root: ``test_*.py`` matches only at the
    root, ``**/test_*.py`` at any depth including the root; ``*`` and ``?``
    stay inside one folder, ``**/`` spans zero or more folders and ``tests/**``
    everything under ``tests``.  These are wcmatch's ``globmatch`` semantics
    with ``GLOBSTAR``: a maintained matcher instead of a hand-written
    glob-to-regex translation.  gitignore-style matchers (pathspec) were not
    chosen because a pattern without a slash matches there at any depth,
    which would turn ``test_*.py`` into ``**/test_*.py``.
    """
    return _matcher(tuple(patterns)).match(path)


def is_production_path(gates: GatesSpec, rel: str) -> bool:
    """Whether a project-relative path is production code by the ``[gates]`` globs."""
    return matches(rel, gates.production) and not matches(rel, gates.exclude)


_HARNESS_FIELDS: Final = ("render", "driver")
"""The oracle fields that name code written to exercise a target: a corpus's ``render``, a
ledger's or a tape's ``driver``.  Read off the configuration's tables, whatever their kind."""


def harness_files(project: Project) -> dict[str, str]:
    """The project-relative files of the harness the oracles name, each with why.

    ``pkg.mod:func`` names the module's file (in the project, ``src/`` layouts
    included); a ``.py`` path names itself.  A harness imports the code under
    freeze to exercise it, so it is not one of its callers in production.
    """
    found: dict[str, str] = {}
    for spec in project.oracles():
        for name in _HARNESS_FIELDS:
            ref = getattr(spec, name, None)
            if not isinstance(ref, str) or not ref:
                continue
            reason = f"{name} of {spec.kind} {spec.name!r}"
            module, colon, _ = ref.partition(":")
            if colon and "/" not in module and not module.endswith(".py"):
                candidates = _module_files(module)
            else:
                candidates = (PurePosixPath(ref).as_posix().removeprefix("./"),)
            for rel in candidates:
                found.setdefault(rel, reason)
    return found


def _module_files(module: str) -> tuple[str, ...]:
    """Where ``pkg.mod`` may live, project-relative: at the root or under ``src/``."""
    stem = module.replace(".", "/")
    return tuple(
        f"{base}{stem}{suffix}" for base in ("", "src/") for suffix in (".py", "/__init__.py")
    )


def oracle_inputs(project: Project) -> tuple[tuple[str, str], ...]:
    """The input files the oracles name (fixtures, cases), each with why it is the oracle's."""
    return tuple(
        (named.pattern, named.reason)
        for spec in project.oracles()
        for named in kind_of(spec).inputs(project, spec)
    )


@dataclass(frozen=True)
class OracleTouch:
    """One oracle-side path a change touches, and why it counts as the oracle's."""

    path: str
    reason: str


@dataclass(frozen=True)
class Sides:
    """A change's files, split: the oracle's evidence and production code."""

    oracle: tuple[OracleTouch, ...]
    production: tuple[str, ...]

    @property
    def mixed(self) -> bool:
        return bool(self.oracle) and bool(self.production)

    def oracle_shown(self) -> tuple[str, ...]:
        """The oracle side for a reader: each file with its reason, blobs counted per folder.

        A re-record rewrites one blob per changed case, named by its hash;
        listing a hundred hashes hides the lock file that matters.
        """
        shown: list[str] = []
        blobs: dict[str, int] = {}
        for touch in self.oracle:
            if touch.reason == BLOB:
                folder = touch.path.rsplit("/", 2)[0] + "/"
                blobs[folder] = blobs.get(folder, 0) + 1
            else:
                shown.append(f"{touch.path} ({touch.reason})")
        shown += [f"{folder} ({n} blob file(s) of rendered output)" for folder, n in blobs.items()]
        return tuple(shown)


class Scope:
    """Classifies repository paths for one project inside one git repository.

    ``prefix`` is where the project sits in the repository (``""`` at its
    root, ``"svc/"`` in a subfolder); it is worked out from the project's root
    unless given, as it must be for a project exported out of the repository
    (:func:`lockstep.gates.budget.tree_at`).
    """

    def __init__(self, project: Project, git: Git, *, prefix: str | None = None) -> None:
        self.project = project
        self.git = git
        root = project.root.resolve()
        if prefix is None:
            try:
                rel = root.relative_to(git.root.resolve()).as_posix()
            except ValueError:
                rel = ""
            prefix = "" if rel in ("", ".") else rel + "/"
        self.prefix = prefix
        self.oracle_dir = self._project_rel(project.oracle_dir) + "/"
        self.config_path = self.prefix + project.config_path.resolve().relative_to(root).as_posix()
        self.named_inputs = oracle_inputs(project)

    def _project_rel(self, path: Any) -> str:
        return PurePosixPath(path.resolve().relative_to(self.project.root.resolve())).as_posix()

    def in_project(self, repo_path: str) -> str | None:
        """``repo_path`` relative to the project root, or None when outside the project."""
        if not repo_path.startswith(self.prefix):
            return None
        return repo_path[len(self.prefix) :]

    def oracle_reason(self, repo_path: str) -> str | None:
        """Why a path is oracle evidence, or None (config tables are judged separately)."""
        rel = self.in_project(repo_path)
        if rel is None:
            return None
        if rel.startswith(self.oracle_dir + "blobs/"):
            return BLOB
        if rel.startswith(self.oracle_dir):
            return "oracle file"
        for pattern, reason in self.named_inputs:
            if matches(rel, (pattern,)):
                return reason
        return None

    def is_production(self, repo_path: str) -> bool:
        rel = self.in_project(repo_path)
        if rel is None or self.oracle_reason(repo_path) is not None:
            return False
        return is_production_path(self.project.config.gates, rel)

    def config_tables_changed(self, base: str, head: Head) -> list[str]:
        """lockstep's tables and settings that differ between ``base`` and ``head``."""
        before = _oracle_tables(self.git.read(self.config_path, base), self.config_path)
        after = _oracle_tables(self.git.read(self.config_path, head), self.config_path)
        return [t for t in sorted(before.keys() | after.keys()) if before.get(t) != after.get(t)]

    def split(self, paths: Iterable[str], base: str, head: Head) -> Sides:
        """Split the changed ``paths`` of ``base``→``head`` into oracle and production sides."""
        oracle: list[OracleTouch] = []
        production: list[str] = []
        for path in sorted(paths):
            reason = self.oracle_reason(path)
            if reason is not None:
                oracle.append(OracleTouch(path, reason))
            elif path == self.config_path:
                tables = self.config_tables_changed(base, head)
                if tables:
                    names = ", ".join(_table_name(t) for t in tables)
                    oracle.append(OracleTouch(path, f"config tables {names}"))
            elif self.is_production(path):
                production.append(path)
        return Sides(tuple(oracle), tuple(production))


def _table_name(key: str) -> str:
    if "." in key or key.startswith("<"):
        return key
    return "[gates]" if key == "gates" else f"[[{key}]]"


def _oracle_tables(data: bytes | None, name: str) -> dict[str, Any]:
    """lockstep's tables and settings in a config file's text (empty when absent; one
    ``<unparsable>`` entry when it does not parse)."""
    if data is None:
        return {}
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):  # ValueError: bad UTF-8, huge int
        return {"<unparsable>": data}
    if name.endswith("pyproject.toml"):
        tool = parsed.get("tool", {})
        parsed = tool.get("lockstep", {}) if isinstance(tool, dict) else {}
        if not isinstance(parsed, dict):
            return {"<unparsable>": data}
        settings: Any = {k: v for k, v in parsed.items() if k not in _ORACLE_TABLES}
    else:
        settings = parsed.get(_SETTINGS, {})
    tables: dict[str, Any] = {k: parsed.get(k) for k in _ORACLE_TABLES if k in parsed}
    if isinstance(settings, dict):
        tables.update({f"{_SETTINGS}.{k}": v for k, v in settings.items()})
    elif _SETTINGS in parsed:
        tables[_SETTINGS] = settings
    return tables
