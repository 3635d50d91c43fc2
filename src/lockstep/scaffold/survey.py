"""What in a repository is worth freezing, read from its syntax trees and import graph.

Nothing is imported or run here: the source is parsed with :mod:`ast` and fan-in
comes from the same import graph the change budget uses (grimp for packages, the
syntax tree for single-file modules), so surveying a repository is safe.

* **Package surfaces**: each top-level package (a folder with ``__init__.py``, at the root
  or under ``src/``) with a public surface (:mod:`lockstep.surface`): with a test suite
  to record it from, the one ledger that freezes what the library offers.
* **Ledger candidates**: module-level functions whose ``return`` statements give
  several kinds of value (None, str, tuple, list...): the mixed-returns functions
  a refactor most easily breaks.  Ranked by how many kinds, then by fan-in.  A
  script that imports the function and has a ``__main__`` entry point is its driver.
* **Pins candidates**: scripts with ``if __name__ == "__main__":`` and packages with
  a ``__main__.py`` that no ledger uses as its driver; a ``cases.toml`` (or
  ``<script>.cases.toml``) beside one with ``[[case]]`` tables is its cases file.
* **Corpus candidates**: folders under ``fixtures/``, ``testdata/``, ``samples/``...
  holding at least :data:`MIN_FIXTURES` files of one extension; a one-argument
  function called ``render`` (or in a ``harness`` module) is the renderer, the one
  whose module shares the folder's name first.
"""

from __future__ import annotations

import ast
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lockstep.config import Config, Project
from lockstep.errors import ConfigError, TargetError, UnparsableSource
from lockstep.gates.budget import ImportGraph, module_name
from lockstep.suite_files import suite_paths, tests_folder
from lockstep.surface import modules_imported

SKIPPED_FOLDERS: Final = frozenset(
    {
        "__pycache__",
        "node_modules",
        "site-packages",
        "build",
        "dist",
        "venv",
        "env",
        "tests",
        "test",
        "lockstep",
    }
)
"""Folders never surveyed (besides hidden ones): environments, build output, tests and the
oracle folder."""
FIXTURE_FOLDERS: Final = frozenset(
    {"fixtures", "fixture", "testdata", "test_data", "samples", "golden", "examples"}
)
MIN_FIXTURES: Final = 3
_CONTAINERS: Final = {
    ast.Tuple: "tuple",
    ast.List: "list",
    ast.ListComp: "list",
    ast.Dict: "dict",
    ast.DictComp: "dict",
    ast.Set: "set",
    ast.SetComp: "set",
    ast.JoinedStr: "str",
    ast.GeneratorExp: "generator",
}
_BUILTIN_CALLS: Final = frozenset({"str", "int", "float", "bool", "list", "tuple", "dict", "set"})


@dataclass(frozen=True)
class LedgerCandidate:
    target: str
    """``pkg.mod:func``."""
    kinds: tuple[str, ...]
    """The kinds of value its returns give, sorted."""
    fan_in: int
    """Production modules importing its module; -1 when the import graph could not be built."""
    driver: str | None
    """A script (project-relative path) that imports the function and runs as ``__main__``."""


@dataclass(frozen=True)
class ScriptCandidate:
    name: str
    command: tuple[str, ...]
    cases: str | None
    """An existing cases file beside the script (project-relative), else None."""
    path: str


@dataclass(frozen=True)
class CorpusCandidate:
    name: str
    fixtures: str
    """The glob, project-relative."""
    count: int
    render: str | None


@dataclass(frozen=True)
class PackageCandidate:
    name: str
    """The top-level package (``isodate``)."""
    members: int
    """Public functions, methods and properties of its surface."""
    path: str
    """Its folder, project-relative (``src/isodate``), or its file for a one-module
    distribution (``parse.py``)."""


@dataclass(frozen=True)
class Survey:
    ledgers: tuple[LedgerCandidate, ...]
    scripts: tuple[ScriptCandidate, ...]
    corpora: tuple[CorpusCandidate, ...]
    packages: tuple[PackageCandidate, ...] = ()
    tests: str | None = None
    """The project's test folder (``tests``), if it has one: where a ledger records from."""


@dataclass(frozen=True)
class _Source:
    rel: str
    module: str | None
    tree: ast.Module


def _walk(root: Path) -> Iterator[Path]:
    """Every file under ``root``, hidden and skipped folders left out, in a stable order."""
    for entry in sorted(root.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir() and not entry.is_symlink():
            if entry.name not in SKIPPED_FOLDERS and not (entry / "pyvenv.cfg").exists():
                yield from _walk(entry)
        elif entry.is_file():
            yield entry


def _sources(project: Project, files: list[Path]) -> list[_Source]:
    found = []
    for path in files:
        if path.suffix != ".py":
            continue
        rel = path.relative_to(project.root).as_posix()
        try:
            tree = ast.parse(path.read_bytes(), filename=rel)
        except (SyntaxError, ValueError):
            continue  # a file that does not parse is nothing to freeze
        found.append(_Source(rel, module_name(project, rel), tree))
    return found


def _return_kind(node: ast.expr | None) -> str | None:
    if node is None:
        return "None"
    if isinstance(node, ast.Constant):
        return "None" if node.value is None else type(node.value).__name__
    for cls, kind in _CONTAINERS.items():
        if isinstance(node, cls):
            return kind
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _BUILTIN_CALLS
    ):
        return node.func.id
    return None  # a name or an expression: its kind is not known from the syntax alone


def return_kinds(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    """The kinds of value ``func``'s own ``return`` statements give (nested functions aside)."""
    kinds: set[str] = set()
    todo: list[ast.AST] = list(func.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(node, ast.Return):
            kind = _return_kind(node.value)
            if kind is not None:
                kinds.add(kind)
        todo.extend(ast.iter_child_nodes(node))
    return tuple(sorted(kinds))


def _is_main_script(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            names = [n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)]
            texts = [
                n.value
                for n in ast.walk(node.test)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
            if "__name__" in names and "__main__" in texts:
                return True
    return False


def _imports(tree: ast.Module) -> set[str]:
    """``mod`` and ``mod.name`` for every absolute import of a module."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _fan_in(project: Project) -> ImportGraph | None:
    try:
        return ImportGraph(project)
    except TargetError:
        return None  # a graph that cannot be built only loses the ranking


def _ledgers(
    project: Project, sources: list[_Source], scripts: list[_Source]
) -> list[LedgerCandidate]:
    graph = _fan_in(project)
    found: list[LedgerCandidate] = []
    for source in sources:
        if source.module is None or source.rel in {s.rel for s in scripts}:
            continue
        for node in source.tree.body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if node.name.startswith("_"):
                continue
            kinds = return_kinds(node)
            if len(kinds) < 2:
                continue
            fan_in = len(graph.importers(source.module)) if graph else -1
            qualified = f"{source.module}.{node.name}"
            driver = next(
                (
                    s.rel
                    for s in scripts
                    if qualified in _imports(s.tree) or source.module in _imports(s.tree)
                ),
                None,
            )
            found.append(LedgerCandidate(f"{source.module}:{node.name}", kinds, fan_in, driver))
    return sorted(found, key=lambda c: (-len(c.kinds), -c.fan_in, c.target))


def _cases_beside(project: Project, script: Path) -> str | None:
    for candidate in (
        script.with_name(f"{script.stem}.cases.toml"),
        script.with_name("cases.toml"),
    ):
        if not candidate.is_file():
            continue
        try:
            data = tomllib.loads(candidate.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            continue
        if isinstance(data.get("case"), list) and data["case"]:
            return candidate.relative_to(project.root).as_posix()
    return None


def _scripts(project: Project, sources: list[_Source], drivers: set[str]) -> list[ScriptCandidate]:
    found: list[ScriptCandidate] = []
    for source in sources:
        if source.rel in drivers:
            continue
        path = project.root / source.rel
        if path.name == "__main__.py" and source.module:
            package = source.module.removesuffix(".__main__")
            found.append(
                ScriptCandidate(
                    package.replace(".", "_"),
                    ("python", "-m", package),
                    _cases_beside(project, path),
                    source.rel,
                )
            )
        elif _is_main_script(source.tree):
            found.append(
                ScriptCandidate(
                    path.stem, ("python", source.rel), _cases_beside(project, path), source.rel
                )
            )
    return found


def _renderers(sources: list[_Source]) -> list[tuple[str, str]]:
    """``(module, pkg.mod:func)`` of one-argument functions that look like a corpus render."""
    found = []
    for source in sources:
        if source.module is None:
            continue
        harness = source.module.rsplit(".", 1)[-1] == "harness"
        for node in source.tree.body:
            if (
                isinstance(node, ast.FunctionDef)
                and len(node.args.args) == 1
                and ("render" in node.name or harness)
                and not node.name.startswith("_")
            ):
                found.append((source.module, f"{source.module}:{node.name}"))
    return found


def _corpora(project: Project, files: list[Path], sources: list[_Source]) -> list[CorpusCandidate]:
    by_folder: Counter[tuple[Path, str]] = Counter()
    for path in files:
        rel_parts = path.relative_to(project.root).parts[:-1]
        if path.suffix and path.suffix != ".py" and FIXTURE_FOLDERS & set(rel_parts):
            by_folder[(path.parent, path.suffix)] += 1
    renderers = _renderers(sources)
    found = []
    for (folder, suffix), count in sorted(by_folder.items()):
        if count < MIN_FIXTURES:
            continue
        rel = folder.relative_to(project.root).as_posix()
        render = next((r for m, r in renderers if folder.name in m.split(".")), None)
        if render is None and len(renderers) == 1:
            render = renderers[0][1]
        found.append(CorpusCandidate(folder.name, f"{rel}/*{suffix}", count, render))
    return found


def _packages(root: Path) -> list[PackageCandidate]:
    """Top-level packages at the root or under ``src/`` with a public surface."""
    from lockstep.surface import surface

    found: list[PackageCandidate] = []
    for base in (root / "src", root):
        if not base.is_dir():
            continue
        for folder in sorted(base.iterdir()):
            name = folder.name
            if (
                not (folder / "__init__.py").is_file()
                or not name.isidentifier()
                or name.startswith("_")
                or name in SKIPPED_FOLDERS
                or any(p.name == name for p in found)
            ):
                continue
            try:
                members = surface(name, root, where=name)
            except (ConfigError, UnparsableSource):
                continue  # a module that does not parse: nothing to propose
            if members:
                rel = folder.relative_to(root).as_posix()
                found.append(PackageCandidate(name, len(members), rel))
    found += _module_packages(root, {p.name for p in found})
    library = [p for p in found if p.name not in NOT_LIBRARY_PACKAGES]
    return library or found


NOT_LIBRARY_PACKAGES: Final = frozenset(
    {"examples", "example", "docs", "doc", "benchmarks", "bench", "scripts", "tools"}
)
"""Packages a source tree keeps beside its library (pyparsing's ``examples``): proposed only
when nothing else is."""

NOT_LIBRARY_MODULES: Final = frozenset(
    {"setup", "conftest", "noxfile", "tasks", "fabfile", "manage", "docs", "lockstep"}
)
"""Top-level files that are a project's tooling, never its library."""


def _module_packages(root: Path, taken: set[str]) -> list[PackageCandidate]:
    """Top-level modules that are a distribution of their own (``parse.py``): a ``.py``
    file at the root or under ``src/`` that the test suite imports by name."""
    from lockstep.surface import surface

    imported = _imported_by_tests(root)
    found: list[PackageCandidate] = []
    for base in (root / "src", root):
        if not base.is_dir():
            continue
        for path in sorted(base.glob("*.py")):
            name = path.stem
            if (
                name not in imported
                or name in taken
                or name.startswith(("_", "test"))
                or name in NOT_LIBRARY_MODULES
                or not name.isidentifier()
            ):
                continue
            try:
                members = surface(name, root, where=name)
            except (ConfigError, UnparsableSource):
                continue
            if members:
                taken.add(name)
                found.append(
                    PackageCandidate(name, len(members), path.relative_to(root).as_posix())
                )
    return found


def _imported_by_tests(root: Path) -> set[str]:
    """The top-level names the test suite's modules import (a suite at the root is its
    test modules alone: the root's other files are the library)."""
    return {name.split(".")[0] for name in modules_imported(suite_paths(root))}


def fan_in(root: Path, module: str) -> int | None:
    """How many production modules import ``module``; None when the import graph cannot
    be built (the survey reads it the same way)."""
    project = Project(root=root, config_path=root / "lockstep.toml", config=Config())
    graph = _fan_in(project)
    return len(graph.importers(module)) if graph else None


def survey(root: Path) -> Survey:
    """Look at the repository at ``root`` (nothing is imported or run)."""
    project = Project(root=root, config_path=root / "lockstep.toml", config=Config())
    files = list(_walk(root))
    sources = _sources(project, files)
    mains = [s for s in sources if _is_main_script(s.tree) and not s.rel.endswith("__main__.py")]
    ledgers = _ledgers(project, sources, mains)
    drivers = {c.driver for c in ledgers if c.driver is not None}
    return Survey(
        tuple(ledgers),
        tuple(_scripts(project, sources, drivers)),
        tuple(_corpora(project, files, sources)),
        tuple(_packages(root)),
        tests_folder(root),
    )
