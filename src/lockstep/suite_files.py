"""Where a repository keeps its test suite, read from its files alone (nothing imported).

``lockstep init`` asks it to know whether there is a suite to record a package's surface
from; the codec asks it for the modules the suite imports (a value of a class from one
of them may be thawed by importing it: :func:`lockstep.project_codec.apply`).
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterable, Iterator
from fnmatch import fnmatchcase
from pathlib import Path

DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
"""pytest's default ``python_files``."""


def tests_folder(root: Path) -> str | None:
    """The suite's folder, relative to ``root``: ``tests/`` or ``test/`` at the root, under
    ``src/`` (astral's ``src/test/``) or inside a top-level package (``src/hyperlink/test/``:
    its calls count as a user's, see :mod:`lockstep.oracles.ledger.wrapping`); else the
    package that keeps its test modules among its own (edtf's ``edtf/tests.py``, collected
    through pytest's ``python_files``; iso8601's ``iso8601/test_iso8601.py``); else ``.``
    when test modules sit at the root beside a one-module library (schema's
    ``test_schema.py`` next to ``schema.py``)."""
    patterns = python_files(root)
    packages = [
        folder
        for base in (root, root / "src")
        if base.is_dir()
        for folder in sorted(base.iterdir())
        if folder.is_dir() and (folder / "__init__.py").is_file()
    ]
    for parent in (root, root / "src", *packages):
        for name in ("tests", "test", "testsuite"):  # surface.SUITE_FOLDERS
            folder = parent / name
            if folder.is_dir() and any(_test_modules(folder, patterns)):
                return folder.relative_to(root).as_posix()
    for package in packages:  # Django's ``pkg/tests.py``; iso8601's ``pkg/test_iso8601.py``
        if any(_in_package_test(path.name, patterns) for path in package.rglob("*.py")):
            return package.relative_to(root).as_posix()
    if any(root_test_modules(root)):
        return "."
    return None


def _in_package_test(name: str, patterns: tuple[str, ...]) -> bool:
    """A test module kept among a package's own modules: ``tests.py`` (collected through
    pytest's ``python_files``), ``test_*.py``, ``*_test.py``, or a name the project's
    ``python_files`` matches."""
    return name == "tests.py" or name.startswith("test_") or _collected(name, patterns)


def root_test_modules(root: Path) -> Iterator[Path]:
    """Test modules at the root itself (pytest collects them from there too): those its
    ``python_files`` matches (jsonpatch's ``tests.py``, with ``python_files = tests.py``)."""
    patterns = python_files(root)
    for path in sorted(root.glob("*.py")):
        if _collected(path.name, patterns):
            yield path


def _test_modules(folder: Path, patterns: tuple[str, ...]) -> Iterator[Path]:
    """Modules pytest collects: by its default ``python_files`` (``test_*.py``,
    ``*_test.py``: intervaltree's suite is ``test/*_test.py``) or the project's own
    (parsedatetime's ``tests/Test*.py``)."""
    for path in folder.rglob("*.py"):
        if path.name.startswith("test") or _collected(path.name, patterns):
            yield path


def _collected(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def python_files(root: Path) -> tuple[str, ...]:
    """pytest's ``python_files`` as the project configures it, read from the first of
    pytest's configuration files that has a pytest section (``pytest.ini``,
    ``.pytest.ini``, ``pyproject.toml``, ``tox.ini``, ``setup.cfg``); pytest's default
    when none sets it.  Only basename patterns count; a file that cannot be read is
    skipped, as the suite's own run would say what is wrong with it."""
    for name, section in (
        ("pytest.ini", "pytest"),
        (".pytest.ini", "pytest"),
        ("pyproject.toml", ""),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ):
        path = root / name
        if not path.is_file():
            continue
        found = _from_toml(path) if not section else _from_ini(path, section)
        if found is None:
            continue  # no pytest section here: pytest reads the next file
        patterns = tuple(p for p in found if "/" not in p)
        return patterns or DEFAULT_PYTHON_FILES
    return DEFAULT_PYTHON_FILES


def _from_ini(path: Path, section: str) -> list[str] | None:
    import configparser  # only for a suite configured in an INI file

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError, OSError):
        return None
    if not parser.has_section(section):
        return None
    return parser.get(section, "python_files", fallback="").split()


def _from_toml(path: Path) -> list[str] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
        return None
    options = data.get("tool", {}).get("pytest", {}).get("ini_options")
    if not isinstance(options, dict):
        return None
    value = options.get("python_files", [])
    if isinstance(value, str):
        return value.split()
    return [str(v) for v in value] if isinstance(value, list) else []


def suite_paths(root: Path) -> list[Path]:
    """The suite's Python files: every module under :func:`tests_folder` (only the test
    modules themselves when the suite sits at the root), in sorted order; none without a
    suite."""
    folder = tests_folder(root)
    if folder is None:
        return []
    if folder == ".":
        return list(root_test_modules(root))
    return sorted((root / folder).rglob("*.py"))


def proposed_test_modules(root: Path, packages: Iterable[str]) -> list[str]:
    """The suite's modules (project-relative paths) whose own classes or functions the
    package's code is handed: what ``lockstep init`` proposes for ``[lockstep]
    test_modules`` (:mod:`lockstep.suite_modules`).  A module is proposed when, at its top
    level, it defines a subclass of a class of one of ``packages``, or when it passes a
    function or class it defines at its top level to a call of the package (schema's tests
    hand ``Use(ve)`` their module's ``ve``: without the module listed, 1,068 of 1,155
    ``Schema.validate`` calls were skipped, and two one-line changes replayed green).

    Read from the source alone: a base or a callee reached through a name the module
    imports from the package (``import portion as P`` then ``P.Interval``; ``from schema
    import Use``).  A module that does not parse is passed over."""
    tops = {p.split(".")[0] for p in packages}
    found: list[str] = []
    for path in suite_paths(root):
        try:
            source = path.read_bytes()
            if not any(top.encode() in source for top in tops):
                continue
            tree = ast.parse(source, filename=str(path))
        except (OSError, SyntaxError, ValueError):
            continue
        imported = _names_from(tree, tops)
        if imported and (_subclasses(tree, imported) or _hands_its_own(tree, imported)):
            found.append(path.relative_to(root).as_posix())
    return found


def _subclasses(tree: ast.Module, imported: set[str]) -> bool:
    """Whether the module defines, at its top level, a subclass of an ``imported`` class."""
    return any(
        isinstance(node, ast.ClassDef) and any(_root_name(b) in imported for b in node.bases)
        for node in tree.body
    )


def _hands_its_own(tree: ast.Module, imported: set[str]) -> bool:
    """Whether a call of something ``imported`` is given, as an argument, a function or
    class the module defines at its top level (by its bare name)."""
    own = {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    if not own:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _root_name(node.func) in imported:
            given = [*node.args, *(k.value for k in node.keywords)]
            if any(isinstance(a, ast.Name) and a.id in own for a in given):
                return True
    return False


def _names_from(tree: ast.Module, tops: set[str]) -> set[str]:
    """The names the module's top-level imports bind to one of the packages ``tops`` or
    something of them."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in tops:
                    names.add(alias.asname or alias.name.split(".")[0])
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.split(".")[0] in tops
        ):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _root_name(node: ast.expr) -> str | None:
    """``P`` of a base written ``P.interval.Interval``, ``Interval`` of ``Interval``,
    ``bidict`` of a generic ``bidict[KT, VT]``."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
