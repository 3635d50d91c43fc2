"""The change budget: the more modules import a module, the smaller a change to it may be.

Fan-in is read from the real import graph (grimp for packages; the syntax tree
of top-level single-file modules, which grimp does not scan), never from text
search, so ``from pkg import core`` and ``import pkg.core as c`` both count
and a comment mentioning ``core`` does not.  Only production modules count as
importers: a test importing the module is not a caller in production, and
neither is the harness the configuration names to exercise a target (a
corpus's ``render``, a ledger's or a tape's ``driver``).

The graph is built from the tree of the revision under judgement — a
commit's files or the index as git holds them, the working tree as it is on
disk — never from whatever happens to be checked out, so one review range
gives one verdict from any checkout.  The configuration (``[gates]`` rows and
globs, the named harness) is the base revision's (:mod:`.base_config`): a change
that loosens its own budget is judged by the budget it had.  How changed lines are counted, moved blocks once,
is :mod:`lockstep.gates.line_count`'s.

The ``[gates] budget`` rows ``[max fan-in, max changed lines]`` map fan-in to
the lines a change may touch; beyond the last row the budget is 0: a module
that many others import should get an adapter seam before it is edited.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from lockstep.config import Project, load_project
from lockstep.errors import ConfigError, TargetError
from lockstep.gates.base_config import config_at
from lockstep.gates.git import Change, Git, Head, Side
from lockstep.gates.line_count import count_lines
from lockstep.gates.scope import Scope, harness_files, is_production_path


@dataclass(frozen=True)
class ModuleBudget:
    """One module under change: who imports it and what that allows."""

    module: str
    fan_in: int
    importers: tuple[str, ...]
    allowed: int


@dataclass(frozen=True)
class BudgetReport:
    change: str
    modules: tuple[ModuleBudget, ...]
    lines: dict[str, int]
    """Changed lines per production file (moved and edited)."""
    moved: dict[str, int] = field(default_factory=dict)
    """Of those, lines of blocks moved within the change, per file they moved to."""

    @property
    def changed(self) -> int:
        return sum(self.lines.values())

    @property
    def moved_lines(self) -> int:
        return sum(self.moved.values())

    def counted(self) -> str:
        """``17 changed lines (14 lines moved, 3 edited)``; the split only when a block moved."""
        text = f"{self.changed} changed lines"
        if self.moved_lines:
            text += f" ({self.moved_lines} lines moved, {self.changed - self.moved_lines} edited)"
        return text

    @property
    def limiting(self) -> ModuleBudget | None:
        """The module with the smallest allowance: it sets the budget of the whole change."""
        return min(self.modules, key=lambda m: (m.allowed, -m.fan_in), default=None)

    @property
    def allowed(self) -> int | None:
        limiting = self.limiting
        return None if limiting is None else limiting.allowed

    @property
    def ok(self) -> bool:
        return self.allowed is None or self.changed <= self.allowed

    def summary(self) -> str:
        limiting = self.limiting
        if limiting is None:
            return f"{self.changed} changed production lines; no production module under change"
        verdict = "within" if self.ok else "over"
        text = (
            f"{self.counted()}, {limiting.allowed} allowed: {verdict} budget "
            f"(fan-in of {limiting.module} is {limiting.fan_in})"
        )
        if limiting.allowed == 0:
            text += "; add an adapter seam first"
        return text


def allowance(rows: list[list[int]], fan_in: int, source: str) -> int:
    """Changed lines allowed for ``fan_in``; beyond the last row, 0."""
    last = -1
    for i, row in enumerate(rows):
        if len(row) != 2 or row[0] < 0 or row[1] < 0:
            raise ConfigError(
                f"{source}: gates.budget[{i}]: expected [max fan-in, max changed lines], got {row}"
            )
        if row[0] <= last:
            raise ConfigError(f"{source}: gates.budget[{i}]: fan-in limits must ascend")
        last = row[0]
    for max_fan_in, max_lines in rows:
        if fan_in <= max_fan_in:
            return max_lines
    return 0


def import_roots(root: Path) -> list[Path]:
    return [p for p in (root / "src", root) if p.is_dir()]


def module_name(project: Project, rel: str) -> str | None:
    """The dotted module a project-relative ``.py`` path defines (``src/`` layouts included)."""
    if not rel.endswith(".py"):
        return None
    path = rel[: -len(".py")]
    if path.startswith("src/") and (project.root / "src").is_dir():
        path = path[len("src/") :]
    parts = path.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def module_file(project: Project, module: str) -> str | None:
    """The project-relative file of ``module`` if it lives in the project."""
    for base in import_roots(project.root):
        stem = base.joinpath(*module.split("."))
        for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
            if candidate.is_file():
                return candidate.relative_to(project.root).as_posix()
    return None


class ImportGraph:
    """Who imports whom among the project's modules, in the tree at ``project.root``."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.harness = harness_files(project)
        self.edges: dict[str, set[str]] = {}
        packages: dict[str, Path] = {}
        singles: list[Path] = []
        for base in import_roots(project.root):
            for entry in sorted(base.iterdir()):
                if (
                    entry.is_dir()
                    and (entry / "__init__.py").is_file()
                    and entry.name.isidentifier()
                ):
                    packages.setdefault(entry.name, entry)
                elif entry.suffix == ".py" and entry.stem.isidentifier():
                    singles.append(entry)
        if packages:
            import grimp  # heavy; only the budget needs it

            with _packages_found_in(packages):
                try:
                    graph = grimp.build_graph(
                        *packages, include_external_packages=True, cache_dir=None
                    )
                except grimp.exceptions.SourceSyntaxError as e:
                    raise TargetError(f"cannot build the import graph: {e}") from None
                except grimp.exceptions.GrimpException as e:
                    raise TargetError(f"cannot build the import graph: {e}") from None
            for module in graph.modules:
                for importer in graph.find_modules_that_directly_import(module):
                    self.edges.setdefault(module, set()).add(importer)
        known = set(self.edges) | {m for s in self.edges.values() for m in s} | set(packages)
        for single in singles:
            importer = single.stem
            for imported in _imports_of(single, known):
                self.edges.setdefault(imported, set()).add(importer)

    def importers(self, module: str) -> tuple[str, ...]:
        """Production modules that import ``module`` directly.

        Not counted: modules outside the ``[gates]`` production globs (tests),
        and the harness the configuration names (drivers, corpus renderers):
        they exercise the module, they are not its callers in production.
        """
        scope_ok: list[str] = []
        for importer in sorted(self.edges.get(module, set()) - {module}):
            rel = module_file(self.project, importer)
            if (
                rel is not None
                and rel not in self.harness
                and is_production_path(self.project.config.gates, rel)
            ):
                scope_ok.append(importer)
        return tuple(scope_ok)


@contextlib.contextmanager
def _packages_found_in(packages: dict[str, Path]) -> Iterator[None]:
    """Make each package name resolve to its folder in the tree, for grimp, during a block.

    grimp locates a package with ``importlib.util.find_spec``, which answers from
    ``sys.modules`` for a name imported before: after a replay has imported the
    project from another checkout (the review's temporary worktree, since
    removed), grimp would scan that folder instead of this tree.  So those
    entries are set aside, the tree's import roots go first on ``sys.path``, and
    each package is checked to resolve where it should before grimp is asked.
    """
    saved = {name: sys.modules.pop(name) for name in packages if name in sys.modules}
    old_path = list(sys.path)
    roots = list(dict.fromkeys(str(folder.parent) for folder in packages.values()))
    sys.path[:0] = roots
    importlib.invalidate_caches()
    try:
        for name, folder in packages.items():
            spec = importlib.util.find_spec(name)
            found = list(spec.submodule_search_locations or []) if spec else []
            if not any(Path(p).resolve() == folder.resolve() for p in found):
                where = ", ".join(found) or "nowhere"
                raise TargetError(
                    f"cannot build the import graph: package {name!r} resolves to {where}, "
                    f"not to {folder}"
                )
        yield
    finally:
        sys.path[:] = old_path
        for name in packages:
            sys.modules.pop(name, None)
        sys.modules.update(saved)
        importlib.invalidate_caches()


def _imports_of(path: Path, known: set[str]) -> Iterable[str]:
    """Absolute imports of a single-file module, as the most specific known module names."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError) as e:
        raise TargetError(
            f"cannot build the import graph: {path.name} does not parse: {e}"
        ) from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                yield full if full in known else node.module


def resolve_target(project: Project, target: str) -> str:
    """``pkg.mod``, ``pkg/mod.py`` or ``pkg.mod:func`` → the dotted module name."""
    text = target.partition(":")[0]
    if text.endswith(".py") or "/" in text:
        path = (Path.cwd() / text).resolve()
        try:
            rel = path.relative_to(project.root.resolve()).as_posix()
        except ValueError:
            raise TargetError(f"{target}: not inside the project at {project.root}") from None
        name = module_name(project, rel)
        if name is None:
            raise TargetError(f"{target}: not a Python module path")
        return name
    if module_file(project, text) is None:
        raise TargetError(f"{target}: no module {text!r} in the project")
    return text


@contextlib.contextmanager
def tree_at(project: Project, git: Git, at: Head, prefix: str) -> Iterator[Project]:
    """The project as it is at ``at``: its Python files and configuration, nothing else.

    The working tree is the project on disk.  A commit or the index is
    exported from git's objects into a temporary folder (``prefix`` is where
    the project sits in the repository), whatever is checked out, and its
    configuration is read from there; a revision that predates the
    configuration file is judged with today's.
    """
    if at is Side.WORKTREE:
        yield project
        return
    config_rel = project.config_path.resolve().relative_to(project.root.resolve()).as_posix()
    with tempfile.TemporaryDirectory(prefix="lockstep-tree-") as tmp:
        root = Path(tmp) / "tree"
        root.mkdir()
        git.export(at, root, prefix, lambda rel: rel.endswith(".py") or rel == config_rel)
        config_path = root / config_rel
        if config_path.is_file():
            yield load_project(config_path=config_path)
        else:
            yield Project(root=root, config_path=config_path, config=project.config)


def check_budget(
    project: Project, git: Git, change: Change, target: str | None = None
) -> BudgetReport:
    """Count the change's lines and weigh them against the fan-in of the module(s) under change.

    Every changed production module counts and the smallest allowance wins;
    a ``target`` is weighed as well, never instead: naming a little-used
    module must not lift the budget of a much-imported one the change edits.
    Everything is judged in the tree of ``change.head`` (:func:`tree_at`), with the
    settings (``[gates]``, the named harness) of ``change.base``.
    """
    named = None if target is None else resolve_target(project, target)
    prefix = Scope(project, git).prefix
    settings = config_at(project, git, change.base)
    with tree_at(project, git, change.head, prefix) as at_head:
        # HEAD's code and import graph, BASE's settings: a change never loosens its budget
        tree = at_head if settings is None else msgspec.structs.replace(at_head, config=settings)
        scope = Scope(tree, git, prefix=prefix)
        files = [p for p in git.changed_files(change.base, change.head) if scope.is_production(p)]
        count = count_lines(git.hunks(change.base, change.head, files))
        modules: list[str] = []
        if named is not None:
            if module_file(tree, named) is None:
                raise TargetError(f"{target}: no module {named!r} in the project at {change.label}")
            modules.append(named)
        for path in files:
            rel = scope.in_project(path)
            name = module_name(tree, rel) if rel is not None else None
            if name is not None and name not in modules and module_file(tree, name) == rel:
                modules.append(name)
        graph = ImportGraph(tree) if modules else None
        budgets: list[ModuleBudget] = []
        for module in modules:
            importers = graph.importers(module) if graph else ()
            allowed = allowance(tree.config.gates.budget, len(importers), tree.config_name)
            budgets.append(ModuleBudget(module, len(importers), importers, allowed))
    moved = {p: n for p, n in count.moved.items() if n}
    return BudgetReport(change.label, tuple(budgets), count.per_file(), moved)
