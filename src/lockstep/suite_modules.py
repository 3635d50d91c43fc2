"""Test modules whose classes and functions the rows may name: ``[lockstep] test_modules``.

A suite often reaches a library's feature only through a class it defines itself: portion's
discrete intervals through an ``IntInterval`` subclass in ``tests/test_discrete.py``,
price-parser's ``Price`` through a subclass in its test file, an abstract base through a
test's concrete one.  A value of such a class could not be frozen (a replay does not
import the suite), so every call handed one was skipped, and a one-line change in the code
only those calls run replayed green while the suite failed.

The test modules named in ``[lockstep] test_modules`` (paths or globs relative to the
project root) are part of the project's code for the codec: their classes freeze by
structure and their functions and classes by name, as the targets' package's do.  So that
a frozen name finds them again, each is imported under the name pytest gives it in its
default ``prepend`` import mode (its folder's dotted path from the first folder above
without an ``__init__.py``, which is put first on ``sys.path``), wherever rows are
replayed: the interpreter that verifies new rows and ``lockstep replay`` import every
listed module before any row, as the recording's pytest run had imported it.  Only the
configuration names them, never an oracle file: a ledger naming another test module still
thaws nothing from it.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Final

from lockstep.errors import ConfigError, UnimportableTestModule

if TYPE_CHECKING:
    from lockstep.config import Project

KEY: Final = "lockstep.test_modules"


def suite_modules(project: Project) -> list[tuple[str, Path, Path]]:
    """Each listed test module: its module name, its file and the folder its name starts
    from, in the order of the files found (an entry matching no ``.py`` file inside the
    root is a :class:`ConfigError` naming it)."""
    patterns = tuple(project.config.lockstep.test_modules)
    if not patterns:
        return []
    return list(_found(project.real_root, patterns, project.config_name))


@functools.lru_cache(maxsize=8)
def _found(
    root: Path, patterns: tuple[str, ...], config_name: str
) -> tuple[tuple[str, Path, Path], ...]:
    """:func:`suite_modules`, once per process for a root and its patterns (replay applies
    the codec once per ledger)."""
    found: dict[Path, tuple[str, Path, Path]] = {}
    for index, pattern in enumerate(patterns):
        where = f"{config_name}: {KEY}[{index}]"
        matches = _matches(root, pattern)
        files = [root / m for m in matches if m.endswith(".py") and (root / m).is_file()]
        if not files:
            raise ConfigError(f"{where}: {pattern!r} matches no .py file under the project root")
        for file in files:
            resolved = file.resolve()
            if not resolved.is_relative_to(root):
                raise ConfigError(f"{where}: {pattern!r} reaches outside the project root")
            if resolved not in found:
                name, base = _pytest_name(resolved)
                found[resolved] = (name, resolved, base)
    return tuple(found.values())


_LITERAL: Final = re.compile(r"[\w.\-/]+")
"""A pattern of plain path characters: no ``*``, ``?``, ``[``, brace, ``!`` or escape."""


def _matches(root: Path, pattern: str) -> list[str]:
    """The paths under ``root`` that ``pattern`` matches, sorted.  A pattern that is a
    plain path (``tests/helpers.py``, what ``lockstep init`` writes) names at most its
    own file: looked up as it is, without importing wcmatch (15 ms, in the recording's
    process and in each verifying interpreter it starts)."""
    if _LITERAL.fullmatch(pattern) and not pattern.startswith("/"):
        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        if parts and ".." not in parts and _spelled_as_on_disk(root, parts):
            return ["/".join(parts)] if root.joinpath(*parts).is_file() else []
    from wcmatch import glob as wcglob

    flags = wcglob.GLOBSTAR | wcglob.NODIR  # ``**`` crosses folders; a folder is no module
    return sorted(wcglob.glob(pattern, root_dir=root, flags=flags))


def _spelled_as_on_disk(root: Path, parts: list[str]) -> bool:
    """Whether each of ``parts`` names an entry of its folder as the folder spells it (a
    file system that ignores case finds ``Tests/Helpers.py`` too, and the module's name is
    read from the path: wcmatch, which answers with the names on disk, decides then)."""
    folder = root
    for part in parts:
        try:
            if part not in os.listdir(folder):
                return False
        except OSError:
            return False
        folder = folder / part
    return True


def _pytest_name(file: Path) -> tuple[str, Path]:
    """The name pytest's ``prepend`` mode imports ``file`` under, and the folder it puts on
    ``sys.path`` for it: the first folder above without an ``__init__.py``."""
    base = file.parent
    while (base / "__init__.py").is_file() and base.parent != base:
        base = base.parent
    parts = file.relative_to(base).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts), base


def allow(project: Project, *, importing: bool) -> list[str]:
    """Let the codec freeze and thaw what the listed test modules define; ``importing``
    (where rows are replayed): import each now, under pytest's name for it.  Under a
    recording pytest run nothing is imported here: pytest imports them as it collects.
    Returns the modules' names."""
    listed = suite_modules(project)
    if not listed:
        return []
    from lockstep import canon

    names = [name for name, _, _ in listed]
    canon.allow_callables_from(*names)
    canon.allow_imports_of(*names)
    if importing:
        _import(project, listed)
    return names


def _import(project: Project, listed: Sequence[tuple[str, Path, Path]]) -> None:
    """Import each listed module as pytest would, with the project's root on ``sys.path``
    as for the targets: a test module imports the package, and when the package's own
    import failed (a change broke it), importing it again must meet that failure, not
    ``No module named`` it (portion's replay ended naming a package that exists)."""
    from lockstep.targets import root_on_path

    root = project.real_root
    for name, file, base in listed:
        shown = file.relative_to(root).as_posix()
        if not isinstance(sys.modules.get(name), ModuleType):
            if str(base) not in sys.path:
                sys.path.insert(0, str(base))  # as pytest's prepend mode does
            try:
                with root_on_path(project.root):
                    importlib.import_module(name)
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # pytest.importorskip's Skipped, a sys.exit() too
                # the change under test broke it (or the package it imports): its cases
                # cannot run, red as a target that no longer imports, not a setup error
                raise UnimportableTestModule(
                    f"{project.config_name}: {KEY}: cannot import {shown} as {name!r}: "
                    f"{type(e).__name__}: {_clipped(str(e).strip())}"
                ) from None
        module = sys.modules.get(name)
        if not isinstance(module, ModuleType) or _file_of(module) != file:
            raise ConfigError(
                f"{project.config_name}: {KEY}: {shown} would be imported as {name!r}, "
                "which is another module here"
            )


def _clipped(text: str, most: int = 300) -> str:
    """The whole of an import's error, to ``most`` characters: a parser's error names the
    place after a newline (the message is one line: newlines are shown escaped)."""
    return text if len(text) <= most else text[: most - 1] + "…"


def _file_of(module: ModuleType) -> Path | None:
    file = getattr(module, "__file__", None)
    return Path(file).resolve() if isinstance(file, str) else None


__all__ = ["KEY", "allow", "suite_modules"]
