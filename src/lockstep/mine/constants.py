"""The constants a target's source compares its inputs with, harvested with :mod:`ast`.

Branches in legacy code hang on literals: ``text.endswith("%")``, ``x in {"n/a", "-"}``,
``if code == 404``.  Random text reaches them by luck; the literals themselves, fed
back into the generator (as whole values, as prefixes and suffixes, and numbers with
their neighbours), reach them at once.  Only literals are read: the source is parsed,
never run.
"""

from __future__ import annotations

import ast
import inspect
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

MAX_TEXT: Final = 64
"""Longer string literals (messages, docstrings, templates) are not input candidates."""
MAX_EACH: Final = 200
"""Most constants kept per category, in source order."""


@dataclass(frozen=True)
class Constants:
    """The literals of one or more source files, by category, in source order, distinct."""

    strings: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    """Operands of ``startswith`` (and string slices compared at the start)."""
    suffixes: tuple[str, ...] = ()
    """Operands of ``endswith``."""
    ints: tuple[int, ...] = ()
    """Integer literals and their neighbours (``n - 1``, ``n + 1``): boundaries of comparisons."""
    floats: tuple[float, ...] = ()
    blobs: tuple[bytes, ...] = ()

    def merged(self, other: Constants) -> Constants:
        return Constants(
            *(
                tuple(dict.fromkeys(getattr(self, f) + getattr(other, f)))[:MAX_EACH]
                for f in ("strings", "prefixes", "suffixes", "ints", "floats", "blobs")
            )
        )

    @property
    def count(self) -> int:
        return sum(
            len(getattr(self, f))
            for f in ("strings", "prefixes", "suffixes", "ints", "floats", "blobs")
        )


@dataclass
class _Harvest:
    strings: dict[str, None] = field(default_factory=dict)
    prefixes: dict[str, None] = field(default_factory=dict)
    suffixes: dict[str, None] = field(default_factory=dict)
    ints: dict[int, None] = field(default_factory=dict)
    floats: dict[float, None] = field(default_factory=dict)
    blobs: dict[bytes, None] = field(default_factory=dict)

    def literal(self, value: Any) -> None:
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, str) and len(value) <= MAX_TEXT:
            self.strings[value] = None
        elif isinstance(value, bytes) and len(value) <= MAX_TEXT:
            self.blobs[value] = None
        elif isinstance(value, int) and abs(value) < 2**63:
            for n in (value, value - 1, value + 1):
                self.ints[n] = None
        elif isinstance(value, float):
            self.floats[value] = None

    def affix(self, node: ast.expr, into: dict[str, None]) -> None:
        """``s.endswith("%")`` and ``s.endswith(("a", "b"))``."""
        items = node.elts if isinstance(node, ast.Tuple) else [node]
        for item in items:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                into[item.value] = None

    def frozen(self) -> Constants:
        def cap(d: dict[Any, None]) -> tuple[Any, ...]:
            return tuple(d)[:MAX_EACH]

        return Constants(
            cap(self.strings),
            cap(self.prefixes),
            cap(self.suffixes),
            cap(self.ints),
            cap(self.floats),
            cap(self.blobs),
        )


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring nodes: prose, not values the code compares with."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def harvest_source(source: str) -> Constants:
    """The literals of one module's source; a file that does not parse gives none."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return Constants()
    skip = _docstrings(tree)
    out = _Harvest()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in skip:
            out.literal(node.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.args
            and node.func.attr in ("startswith", "endswith", "removeprefix", "removesuffix")
        ):
            into = (
                out.prefixes
                if "prefix" in node.func.attr or "starts" in node.func.attr
                else out.suffixes
            )
            out.affix(node.args[0], into)
        elif (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, int | float)
            and not isinstance(node.operand.value, bool)
        ):
            out.literal(-node.operand.value)
    return out.frozen()


def _names_used(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_used(const)
    return names


def harvest_near(target: Any) -> Constants:
    """The literals the target itself compares with: those in its own body, and those in the
    module-level assignments of the names it uses (``SENTINELS = {"n/a", "-"}``).

    Narrower than the whole module (a module of hundreds of rules has hundreds of
    literals no single function looks at): these are the values worth a row each.
    """
    func = inspect.unwrap(target)
    code = getattr(func, "__code__", None)
    path = source_file(target)
    if code is None or path is None:
        return Constants()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return Constants()
    used = _names_used(code)
    chunks: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
            node.lineno <= code.co_firstlineno <= (node.end_lineno or node.lineno)
        ):
            chunks.append(ast.unparse(node))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in used for t in targets):
                chunks.append(ast.unparse(node))
    found = Constants()
    for chunk in chunks:
        found = found.merged(harvest_source(chunk))
    return found


def source_file(target: Any) -> Path | None:
    """The file that defines ``target`` (through decorators), or None for built-ins."""
    try:
        name = inspect.getsourcefile(inspect.unwrap(target))
    except (TypeError, ValueError):
        return None
    return Path(name) if name else None


def harvest_files(paths: list[Path]) -> Constants:
    """The literals of every readable file in ``paths``, merged in order."""
    found = Constants()
    for path in paths:
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        found = found.merged(harvest_source(source))
    return found
