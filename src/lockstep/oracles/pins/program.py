"""Which of the project's Python files a pinned command runs, read from its argv and imports.

``lockstep strength`` measures and mutates these.  The command is never run to
find them: a ``script.py`` argument or ``-m module`` names the program, and its
``import`` statements name the project modules it uses (followed transitively,
only inside the project root; library code is not the user's to mutate).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path


def _module_file(root: Path, dotted: str) -> Path | None:
    parts = dotted.split(".")
    for base in (root, root / "src"):
        for candidate in (
            base.joinpath(*parts).with_suffix(".py"),
            base.joinpath(*parts, "__init__.py"),
        ):
            if candidate.is_file():
                return candidate.resolve()
    return None


def _entry_files(root: Path, command: Sequence[str]) -> list[Path]:
    found: list[Path] = []
    args = list(command)
    for i, arg in enumerate(args):
        if arg == "-m" and i + 1 < len(args):
            module = _module_file(root, args[i + 1])
            if module is not None:
                found.append(module)
        elif arg.endswith(".py") and (root / arg).is_file():
            found.append((root / arg).resolve())
    return found


def _imported(root: Path, path: Path) -> list[Path]:
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return [f for f in (_module_file(root, name) for name in names) if f is not None]


def program_files(root: Path, command: Sequence[str]) -> tuple[Path, ...]:
    """The program's own files, then the project modules it imports (in discovery order)."""
    root = root.resolve()
    todo = _entry_files(root, command)
    seen: list[Path] = []
    while todo:
        path = todo.pop(0)
        if path in seen or root not in path.parents:
            continue
        seen.append(path)
        todo.extend(_imported(root, path))
    return tuple(seen)
