"""The change budget: the more modules import a module, the smaller a change to it may be.

Fan-in is read from the real import graph (grimp for packages; the syntax tree
of top-level single-file modules, which grimp does not scan), never from text
search, so ``from pkg import core`` and ``import pkg.core as c`` both count
and a comment mentioning ``core`` does not.  Only production modules count as
importers: a test importing the module is not a caller in production.

The ``[gates] budget`` rows ``[max fan-in, max changed lines]`` map fan-in to
the lines a change may touch; beyond the last row the budget is 0: a module
that many others import should get an adapter seam before it is edited.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from lockstep.config import Project
from lockstep.errors import ConfigError, TargetError
from lockstep.gates.git import Change, Git
from lockstep.gates.scope import Scope, is_production_path
from lockstep.targets import root_on_path


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
    """Changed lines per production file."""

    @property
    def changed(self) -> int:
        return sum(self.lines.values())

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
            f"{self.changed} changed lines, {limiting.allowed} allowed: {verdict} budget "
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
    """Who imports whom among the project's modules, on disk."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.edges: dict[str, set[str]] = {}
        packages: list[str] = []
        singles: list[Path] = []
        for base in import_roots(project.root):
            for entry in sorted(base.iterdir()):
                if (
                    entry.is_dir()
                    and (entry / "__init__.py").is_file()
                    and entry.name.isidentifier()
                ):
                    packages.append(entry.name)
                elif entry.suffix == ".py" and entry.stem.isidentifier():
                    singles.append(entry)
        if packages:
            import grimp  # heavy; only the budget needs it

            with root_on_path(project.root):
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
        """Production modules that import ``module`` directly."""
        scope_ok: list[str] = []
        for importer in sorted(self.edges.get(module, set()) - {module}):
            rel = module_file(self.project, importer)
            if rel is not None and is_production_path(self.project.config.gates, rel):
                scope_ok.append(importer)
        return tuple(scope_ok)


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


def check_budget(
    project: Project, git: Git, change: Change, target: str | None = None
) -> BudgetReport:
    """Count the change's lines and weigh them against the fan-in of the module(s) under change.

    Every changed production module counts and the smallest allowance wins;
    a ``target`` is weighed as well, never instead: naming a little-used
    module must not lift the budget of a much-imported one the change edits.
    """
    scope = Scope(project, git)
    files = [p for p in git.changed_files(change.base, change.head) if scope.is_production(p)]
    lines = git.changed_lines(change.base, change.head, files)
    lines = {p: n for p, n in lines.items() if n}
    modules: list[str] = [] if target is None else [resolve_target(project, target)]
    for path in files:
        rel = scope.in_project(path)
        name = module_name(project, rel) if rel is not None else None
        if name is not None and name not in modules and git.read(path, change.head) is not None:
            modules.append(name)
    graph = ImportGraph(project) if modules else None
    budgets: list[ModuleBudget] = []
    for module in modules:
        importers = graph.importers(module) if graph else ()
        allowed = allowance(project.config.gates.budget, len(importers), project.config_name)
        budgets.append(ModuleBudget(module, len(importers), importers, allowed))
    return BudgetReport(change.label, tuple(budgets), lines)
