"""Functions a package compares as values, which a recording must leave in place.

A package surface is recorded by putting a wrapper where each function was: in its
module, and wherever another module imported it by name.  A reference the package kept
in its data is not a binding by name, so it still holds the function itself.  Code that
compares the two then sees a difference that is not there: tabulate keeps
``_html_begin_table_without_header`` in its table formats and asks
``fmt.lineabove == _html_begin_table_without_header`` to decide whether its output is
HTML, so while recording its HTML tables came back as plain strings and four of its tests
failed.  A function the package's source names as an operand of a comparison (``==``,
``!=``, ``is``, ``is not``, ``in``, ``not in``, also inside a tuple, list or set literal
there), by any name its module binds it to and where no enclosing function binds that
name itself, is therefore not wrapped; it records nothing and the summary says why.  The
source is read with :mod:`ast`, once per file.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Final

from lockstep.store.reading import read_file

_BY_FILE: Final[dict[tuple[str, int, int], dict[str, int]]] = {}
"""(path, mtime_ns, size) -> name -> the first line comparing it."""


def compared_in_package(module_name: str) -> dict[str, str]:
    """Names compared as values anywhere in the package of ``module_name`` (the modules of
    it imported so far), each with ``file:line`` of its first comparison."""
    top = module_name.partition(".")[0]
    found: dict[str, str] = {}
    for name, module in sorted(sys.modules.items()):
        if name != top and not name.startswith(top + "."):
            continue
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            continue
        for compared, line in _compared_in_file(Path(path)).items():
            found.setdefault(compared, f"{Path(path).name}:{line}")
    return found


def _compared_in_file(path: Path) -> dict[str, int]:
    try:
        stat = path.stat()
        key = (str(path), stat.st_mtime_ns, stat.st_size)
        known = _BY_FILE.get(key)
        if known is not None:
            return known
        tree = ast.parse(read_file(path, through_links=True))
    except (OSError, SyntaxError, ValueError):
        return {}
    finder = _ComparedGlobals()
    finder.visit(tree)
    _BY_FILE[key] = finder.names
    return finder.names


class _ComparedGlobals(ast.NodeVisitor):
    """Module-level names used as operands of a comparison: a name some enclosing function
    (or class body) binds itself -- a parameter, an assignment, a loop or ``with`` target
    -- is that function's own (``match = regex.match(text); if match is None``), not the
    module's, unless the function declares it ``global``."""

    def __init__(self) -> None:
        self.names: dict[str, int] = {}
        self._scopes: list[set[str]] = []

    def visit_Compare(self, node: ast.Compare) -> None:
        for operand in (node.left, *node.comparators):
            for name in _operand_names(operand):
                if not any(name in scope for scope in self._scopes):
                    self.names.setdefault(name, node.lineno)
        self.generic_visit(node)

    def _scoped(self, node: ast.AST, bound: set[str]) -> None:
        self._scopes.append(bound)
        self.generic_visit(node)
        self._scopes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._scoped(node, _params(node.args) | _bound_in(node.body))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._scoped(node, _params(node.args))

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scoped(node, _bound_in(node.body))


def _params(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    every += [a for a in (args.vararg, args.kwarg) if a is not None]
    return {a.arg for a in every}


def _bound_in(body: list[ast.stmt]) -> set[str]:
    """Names a function or class body binds, not counting nested functions' bodies, less
    those it declares ``global``."""
    bound: set[str] = set()
    declared: set[str] = set()
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Global):
            declared.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
            continue  # its body is its own scope
        elif isinstance(node, ast.Lambda):
            continue
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).partition(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        stack.extend(ast.iter_child_nodes(node))
    return bound - declared


def _operand_names(operand: ast.expr) -> list[str]:
    """``name`` operands, also inside a tuple, list or set literal (an attribute, such as
    ``self.mean``, names no module-level function)."""
    if isinstance(operand, ast.Name):
        return [operand.id]
    if isinstance(operand, ast.Tuple | ast.List | ast.Set):
        return [n for element in operand.elts for n in _operand_names(element)]
    return []
