"""Where a repository keeps its test suite, read from its files alone (nothing imported).

``lockstep init`` asks it to know whether there is a suite to record a package's surface
from; the codec asks it for the modules the suite imports (a value of a class from one
of them may be thawed by importing it: :func:`lockstep.project_codec.apply`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path


def tests_folder(root: Path) -> str | None:
    """The suite's folder, relative to ``root``: ``tests/`` or ``test/`` at the root, under
    ``src/`` (astral's ``src/test/``) or inside a top-level package (``src/hyperlink/test/``:
    its calls count as a user's, see :mod:`lockstep.oracles.ledger.wrapping`); else the
    package that keeps its test modules among its own (edtf's ``edtf/tests.py``, collected
    through pytest's ``python_files``; iso8601's ``iso8601/test_iso8601.py``); else ``.``
    when test modules sit at the root beside a one-module library (schema's
    ``test_schema.py`` next to ``schema.py``)."""
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
            if folder.is_dir() and any(_test_modules(folder)):
                return folder.relative_to(root).as_posix()
    for package in packages:  # Django's ``pkg/tests.py``; iso8601's ``pkg/test_iso8601.py``
        if any(_in_package_test(path.name) for path in package.rglob("*.py")):
            return package.relative_to(root).as_posix()
    if any(root_test_modules(root)):
        return "."
    return None


def _in_package_test(name: str) -> bool:
    """A test module kept among a package's own modules: ``tests.py`` (collected through
    pytest's ``python_files``), ``test_*.py`` or ``*_test.py``."""
    return name == "tests.py" or name.startswith("test_") or name.endswith("_test.py")


def root_test_modules(root: Path) -> Iterator[Path]:
    """Test modules at the root itself (pytest collects them from there too)."""
    for path in sorted(root.glob("*.py")):
        if path.name.startswith("test_") or path.name.endswith("_test.py"):
            yield path  # pytest's default ``python_files``


def _test_modules(folder: Path) -> Iterator[Path]:
    """Modules pytest collects by its default ``python_files``: ``test_*.py`` and
    ``*_test.py`` (intervaltree's suite is ``test/*_test.py``)."""
    for path in folder.rglob("*.py"):
        if path.name.startswith("test") or path.name.endswith("_test.py"):
            yield path


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
