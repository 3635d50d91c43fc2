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
there), or uses as a key (a dict display's, a subscript's, ``d.get(f)``'s: glom keys its
scope by its own ``glom`` function), by any name its module binds it to and where no
enclosing function binds that name itself, is therefore not wrapped; it records nothing and the summary says why.  The
source is read with :mod:`ast` once per file (the tree the package surface was read from),
walked once for the names compared, and a function's own names are looked at only where
one of the functions being wrapped is compared inside it.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Final

import msgspec

from lockstep.store.reading import read_file
from lockstep.surface import parsed_module

_SCOPES: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class _Comparisons(msgspec.Struct):
    """One file's comparisons: each name compared, with the line and the enclosing
    functions and classes of each comparison, in the order of the source."""

    sites: dict[str, list[tuple[int, tuple[ast.AST, ...]]]]
    bound: dict[int, set[str]] = msgspec.field(default_factory=dict)
    """Per enclosing function or class (by id), the names it binds itself, once asked."""

    def first_line(self, name: str) -> int | None:
        """The first line comparing the module-level ``name``: where no enclosing function
        (or class body) binds ``name`` itself."""
        for line, scopes in self.sites.get(name, ()):
            if not any(name in self._bound(scope) for scope in scopes):
                return line
        return None

    def _bound(self, scope: ast.AST) -> set[str]:
        known = self.bound.get(id(scope))
        if known is None:
            known = self.bound[id(scope)] = _bound_by(scope)
        return known


_BY_MODULE: Final[dict[str, tuple[object, bytes, _Comparisons | None]]] = {}
"""Module name -> (the module, its source, or empty when it imports ``*``, its comparisons
once walked): what the imported code compares (a file changed on disk since is not what
runs)."""


def compared_site(module_name: str, names: list[str]) -> str | None:
    """``file:line`` of the first comparison, anywhere in the package of ``module_name``
    (the modules of it imported so far), naming one of ``names`` (a module-level function
    by each name its module binds it to) as a value; None when none does.

    A module can name the function only where its source holds one of ``names`` (a
    ``from ... import name as other`` holds it too) or imports ``*``: only those are
    walked."""
    top = module_name.partition(".")[0]
    prefix = top + "."
    words = [n.encode() for n in names]
    files: list[tuple[str, _Comparisons]] = []
    for name in sorted(n for n in list(sys.modules) if n == top or n.startswith(prefix)):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            continue
        known = _BY_MODULE.get(name)
        if known is None or known[0] is not module:
            known = _BY_MODULE[name] = (module, _source(Path(path)), None)
        source = known[1]
        if source and not any(word in source for word in words):
            continue
        comparisons = known[2]
        if comparisons is None:
            comparisons = _comparisons_in(Path(path))
            _BY_MODULE[name] = (module, known[1], comparisons)
        files.append((Path(path).name, comparisons))
    for compared in sorted(names):
        for shown, comparisons in files:
            line = comparisons.first_line(compared)
            if line is not None:
                return f"{shown}:{line}"
    return None


_STAR: Final = re.compile(rb"import\s*\*|import\s*\(\s*\*")


def _source(path: Path) -> bytes:
    """The module's source to look for a name in; empty (look at every name) when it
    imports ``*`` or cannot be read."""
    try:
        source = read_file(path, through_links=True)
    except OSError:
        return b""
    return b"" if b"*" in source and _STAR.search(source) else source


def _comparisons_in(path: Path) -> _Comparisons:
    try:
        tree = parsed_module(path)
    except (OSError, SyntaxError, ValueError):
        return _Comparisons({})
    return _Comparisons(_compared_operands(tree))


_BINDS_NOTHING: Final = (
    ast.Constant,
    ast.expr_context,
    ast.operator,
    ast.cmpop,
    ast.unaryop,
    ast.boolop,
)
"""Nodes that bind no name and hold nothing that does: not walked into for a scope's
bindings."""

_LEAVES: Final = (*_BINDS_NOTHING, ast.Name, ast.alias, ast.arg)
"""Nodes that hold no comparison and no scope: not walked into (every name's ``Load``
context was half the nodes the walk visited, at a recording's configure)."""


def _compared_operands(tree: ast.Module) -> dict[str, list[tuple[int, tuple[ast.AST, ...]]]]:
    """Every name an operand of a comparison (``==``, ``is``, ``in``, ...) names, with the
    comparison's line and its enclosing functions and classes, in the order of the source.

    The children are read from each node's fields here rather than through
    ``ast.iter_child_nodes`` (two generators per node): the walk runs over every module of
    the package that names a target, at a recording's configure."""
    sites: dict[str, list[tuple[int, tuple[ast.AST, ...]]]] = {}
    stack: list[tuple[ast.AST, tuple[ast.AST, ...]]] = [(tree, ())]
    node_type, leaves = ast.AST, _LEAVES
    while stack:
        node, scopes = stack.pop()
        operands = _keys(node)
        if operands:
            line = getattr(node, "lineno", 0)
            for name in (n for operand in operands for n in _operand_names(operand)):
                sites.setdefault(name, []).append((line, scopes))
        elif isinstance(node, _SCOPES):
            scopes = (*scopes, node)
        children: list[tuple[ast.AST, tuple[ast.AST, ...]]] = []
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                children.extend(
                    (item, scopes)
                    for item in value
                    if isinstance(item, node_type) and not isinstance(item, leaves)
                )
            elif isinstance(value, node_type) and not isinstance(value, leaves):
                children.append((value, scopes))
        stack.extend(children)
    for found in sites.values():
        found.sort(key=lambda site: site[0])
    return sites


def _bound_by(scope: ast.AST) -> set[str]:
    """The names a function, lambda or class binds in its own scope."""
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        return _params(scope.args) | _bound_in(scope.body)
    if isinstance(scope, ast.Lambda):
        return _params(scope.args)
    if isinstance(scope, ast.ClassDef):
        return _bound_in(scope.body)
    return set()


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
        stack.extend(
            child for child in ast.iter_child_nodes(node) if not isinstance(child, _BINDS_NOTHING)
        )
    return bound - declared


_KEYED_CALLS: Final = frozenset({"get", "pop", "setdefault", "__getitem__", "__contains__"})
"""Methods whose first argument is looked up as a key (``scope.get(glom)``)."""


def _keys(node: ast.AST) -> list[ast.expr]:
    """What a comparison compares, and what a dict display, a subscript or a keyed method
    call looks up or files by its hash and equality, as a comparison would: ``{glom:
    _glom}``, ``scope[glom]``, ``scope.get(glom)``.  glom keys its scope by its own
    ``glom`` function, so with the wrapper in the module's place ``scope[glom]`` missed,
    and 141 of its 199 tests failed while recording."""
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.Dict):
        return [key for key in node.keys if key is not None]
    if isinstance(node, ast.Subscript):
        return [node.slice]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _KEYED_CALLS
        and node.args
    ):
        return [node.args[0]]
    return []


def _operand_names(operand: ast.expr) -> list[str]:
    """``name`` operands, also inside a tuple, list or set literal (an attribute, such as
    ``self.mean``, names no module-level function)."""
    if isinstance(operand, ast.Name):
        return [operand.id]
    if isinstance(operand, ast.Tuple | ast.List | ast.Set):
        return [n for element in operand.elts for n in _operand_names(element)]
    return []
