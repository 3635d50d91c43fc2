"""Whether a target can reach the code of its package that builds a set.

A row whose outcome holds texts in an order a set may have given them is replayed under
four more hash seeds (:mod:`.seed_suspects`) when the target's package builds a set at
all.  semver builds one set, in ``Version.replace`` (``", ".join(unknownkeys)``), and
that made the error texts of ``parse``, the ``repr`` of every ``Version`` and most of
its 47 ledgers suspects: 66 more forks at the session's end, half its cost.  Only the
calls that can run the code building the set can answer in its order, so a target is a
suspect's target only where its package's code, read by name, can take it there.

**How it is read.**  Each imported module of the package is parsed once (never
imported again).  Its *units* are its functions and methods, and each statement of a
module's or a class's body outside them.  A unit *builds sets* when it holds a set
display or comprehension, names ``set`` or ``frozenset``, or combines ``keys()`` or
``items()`` views with ``-``, ``&``, ``|`` or ``^``; it is *dynamic* when it calls by a
name it computes (``getattr`` with a computed name, ``eval``, ``exec``,
``operator.methodcaller`` and the like, ``globals()``, ``vars()``, ``__dict__``).  A unit
reaches every unit filed under a name it uses (a variable's name or an attribute's):

* a function or method under its own name; a nested one is read as part of the
  function around it;
* a class under its name, reaching its bases and each of its methods;
* a decorated function under the names in its decorators too (``@handler.register``
  files it where calls to ``handler`` find it);
* a statement of a module's or class's body under the names it binds (``ROUTES = {...}``,
  ``from .x import a as b``) or, binding none, under what its calls may have filed
  something in (``HANDLERS`` of ``HANDLERS.append(fn)``, ``register`` of
  ``register(fn)``); an ``if __name__ == "__main__":`` block is skipped.

A function is also filed under where it leaves what it made for others to read: the
attributes it sets, what it stores into or fills by a call, the module names it rebinds
(``self._names = set(...)`` in ``load`` is read by ``names`` as ``self._names``).

A unit is *tainted* when it builds sets, is dynamic, or reaches a tainted unit.  A
target reaches sets when any layer of it (its wrappers' functions, down to the function
it wraps) is tainted.  Dunder methods run without being named (``str(v)``, ``a < b``,
``cls(...)``), so when one is tainted every target of the package counts as reaching sets,
as the package-wide rule had it; so do a subclass of ``set`` (any of its methods may
iterate itself) and any target whose function is not found where
its code object says (a builtin, a ``partial``, a class, code generated at run time).

The same reading tells whether a target can reach code that *prints*: a unit that
names ``print``, ``pprint``, ``echo``/``secho`` (click's) or an attribute ``stdout`` or
``__stdout__``, or is dynamic, or reaches such a unit (:func:`target_reaches_printing`).
Only such targets have what their calls print captured while recording
(:mod:`.printed`): a call of any other target pays nothing for it.

Names are matched as names, never resolved, so ``text.replace(...)`` reaches every
method called ``replace``: the reading only ever errs toward verifying more.  What it
does not see, no rule of the package-wide kind saw either: a callback from a test, or a
set built in another package.
"""

from __future__ import annotations

import ast
import inspect
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from lockstep.surface import main_guard, parsed_module

_SET_NAMES: Final = frozenset({"set", "frozenset"})
_VIEWS: Final = frozenset({"keys", "items"})
_SET_OPERATORS: Final = (ast.Sub, ast.BitAnd, ast.BitOr, ast.BitXor)
_DYNAMIC_CALLS: Final = frozenset(
    {"eval", "exec", "globals", "vars", "locals", "methodcaller", "attrgetter", "__import__"}
)
"""Callables that call, or hand out, by a name computed at run time (``getattr`` with a
computed name is read apart: with a literal name it is an attribute like any other)."""
_PRINTING: Final = frozenset({"print", "pprint", "echo", "secho", "stdout", "__stdout__"})
"""Names (of a variable or an attribute) that write to stdout: ``print``, ``pprint``,
click's ``echo`` and ``secho``, ``sys.stdout`` and ``sys.__stdout__``."""


@dataclass
class _Unit:
    """A function, method, class or body statement of the package, as read."""

    names: set[str] = field(default_factory=set)
    """Every name it uses: variables, attributes, and the names its imports bring in."""
    builds: bool = False
    dynamic: bool = False
    dunder: bool = False
    reaches: list[_Unit] = field(default_factory=list)
    """Units it reaches whatever names they use: a class, its body's statements and methods."""
    tainted: bool = False
    prints: bool = False
    """It names what writes to stdout (:data:`_PRINTING`)."""
    printing: bool = False
    """It prints, is dynamic, or reaches a unit that prints."""


@dataclass
class _Package:
    """One package's units: by name (what uses that name reaches) and by qualified name."""

    by_name: dict[str, list[_Unit]] = field(default_factory=dict)
    by_qualname: dict[tuple[str, str], list[_Unit]] = field(default_factory=dict)
    """Several under one name where a module or class defines it again (a property's
    getter and setter, a function defined in both branches of an ``if``): any counts."""
    every_target: bool = False
    """A tainted dunder method: any call of the package may run it."""
    every_target_prints: bool = False
    """A dunder method that can reach printing: any call of the package may run it."""
    functions: dict[str, list[_Unit]] = field(default_factory=dict)
    """Module-level functions by name (decorators, as :func:`_file_decorated` reads them)."""
    decorated: list[tuple[str, _Unit]] = field(default_factory=list)
    """Functions under a decorator named bare (``@name``, ``@name(...)``), with that name."""

    def file(self, name: str, unit: _Unit) -> None:
        self.by_name.setdefault(name, []).append(unit)


_PACKAGES: dict[str, _Read] = {}
"""Each package read, with the modules it was read from: a package imported anew
(another project's, in the same process) is read anew."""


@dataclass
class _Read:
    """One reading of a package, and what it was read from."""

    modules: tuple[tuple[str, object], ...]
    """The package's modules (name, module) when it was read."""
    package: _Package | None
    size: int
    """How many modules ``sys.modules`` held when they were last looked over."""


def target_reaches_sets(target: str) -> bool:
    """Whether the target named ``module:qual.name`` (a ledger's ``fn``) can reach code of
    its package that builds a set, as the module's text above explains.  True whenever
    that cannot be told."""
    return _reaches(target, "tainted", "every_target")


def target_reaches_printing(target: str) -> bool:
    """Whether the target ``module:qual.name`` can reach code of its package that prints
    (or calls by a computed name), as the module's text above explains.  True whenever
    that cannot be told."""
    return _reaches(target, "printing", "every_target_prints")


def _reaches(target: str, flag: str, everywhere: str) -> bool:
    module, _, qualname = target.partition(":")
    top = module.partition(".")[0]
    if not top or not qualname:
        return True
    package = _package(top)
    if package is None or getattr(package, everywhere):
        return True
    layers = list(_layers(module, qualname))
    found = [package.by_qualname.get(layer) for layer in layers]
    if not found or all(units is None for units in found):
        return True
    return any(getattr(unit, flag) for units in found if units is not None for unit in units)


_ACCESSORS: Final = frozenset({"fget", "fset", "fdel"})
"""A property's functions, as a target names one (``Class.prop.fset``)."""


def _layers(module: str, qualname: str) -> Iterator[tuple[str, str]]:
    """Where the code of the target lives: each wrapper's function, then what it wraps,
    as (module, qualified name of the outermost function around it)."""
    obj: Any = sys.modules.get(module)
    for part in qualname.split("."):
        if isinstance(obj, property) and part in _ACCESSORS:  # ``Version.major.fset``
            obj = getattr(obj, part)
        else:
            obj = inspect.getattr_static(obj, part, None) if obj is not None else None
    if isinstance(obj, staticmethod | classmethod):
        obj = obj.__func__
    elif isinstance(obj, property):
        obj = obj.fget
    seen = 0
    while obj is not None and seen < 32:
        code = getattr(obj, "__code__", None)
        owner = getattr(obj, "__module__", None)
        name = getattr(obj, "__qualname__", None)
        if code is not None and isinstance(owner, str) and isinstance(name, str):
            yield owner, name.partition(".<locals>.")[0]
        obj = getattr(obj, "__wrapped__", None)
        seen += 1


def _package(top: str) -> _Package | None:
    """The reading of package ``top`` as imported now.  Asked once per target (twice:
    printing, then sets); ``sys.modules`` is looked over again only when it has grown or
    shrunk since, or one of the package's modules is no longer the one read (a thousand
    modules under pytest: looking over them for each of semver's 64 targets took more
    than reading the package)."""
    known = _PACKAGES.get(top)
    if (
        known is not None
        and known.size == len(sys.modules)
        and all(sys.modules.get(name) is module for name, module in known.modules)
    ):
        return known.package
    prefix = top + "."
    modules = tuple(
        sorted(
            (
                (name, module)
                for name, module in list(sys.modules.items())
                if name == top or name.startswith(prefix)
            ),
            key=lambda item: item[0],
        )
    )
    if known is None or [(n, id(m)) for n, m in known.modules] != [(n, id(m)) for n, m in modules]:
        known = _PACKAGES[top] = _Read(modules, _read_package(modules), 0)
    known.size = len(sys.modules)
    return known.package


def _read_package(modules: Iterable[tuple[str, object]]) -> _Package | None:
    """The units of every module of ``modules`` (a package's, imported) written in
    Python, tainted; None when one cannot be read (its code then counts as reaching
    sets)."""
    package = _Package()
    units: list[_Unit] = []
    for name, module in modules:
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not file.endswith(".py"):
            continue
        try:
            tree = parsed_module(Path(file))  # the tree the surface was read from
        except (OSError, SyntaxError, ValueError):
            return None
        units.extend(_Reader(package, name).body(tree.body, ""))
    _file_decorated(package)
    _taint(package, units)
    package.every_target = any(unit.dunder and unit.tainted for unit in units)
    package.every_target_prints = any(unit.dunder and unit.printing for unit in units)
    return package


class _Reader:
    """Files one module's units in the package (see the module's text)."""

    def __init__(self, package: _Package, module: str) -> None:
        self.package = package
        self.module = module

    def body(self, statements: Iterable[ast.stmt], prefix: str) -> Iterator[_Unit]:
        for statement in statements:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                yield self.function(statement, prefix)
            elif isinstance(statement, ast.ClassDef):
                yield from self.klass(statement, prefix)
            elif isinstance(statement, ast.Import | ast.ImportFrom):
                yield from map(self.imported, statement.names)
            else:
                yield self.statement(statement)

    def imported(self, alias: ast.alias) -> _Unit:
        """One name an import brings in, filed under the name it binds, reaching the name
        it imports (each name its own unit: ``compare`` is not ``cmd_bump``)."""
        unit = _Unit(names=set(alias.name.split(".")))
        self.package.file((alias.asname or alias.name).partition(".")[0], unit)
        return unit

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str) -> _Unit:
        unit = _Unit()
        _read_scope(unit, node, frozenset())
        unit.dunder = node.name.startswith("__") and node.name.endswith("__")
        self.package.file(node.name, unit)
        for name in _kept_in(node):  # what reads it later reaches what put it there
            self.package.file(name, unit)
        for decorator in node.decorator_list:
            base = decorator.func if isinstance(decorator, ast.Call) else decorator
            if isinstance(base, ast.Name):  # filed once every function is known
                self.package.decorated.append((base.id, unit))
            else:  # ``@handler.register``: calls of ``handler`` may dispatch to it
                for name in _names_in(base):
                    self.package.file(name, unit)
        self.package.by_qualname.setdefault((self.module, prefix + node.name), []).append(unit)
        if not prefix:
            self.package.functions.setdefault(node.name, []).append(unit)
        return unit

    def klass(self, node: ast.ClassDef, prefix: str) -> Iterator[_Unit]:
        heading = [*node.bases, *(k.value for k in node.keywords), *node.decorator_list]
        unit = _read_all(heading)
        # a subclass of set iterates itself in the seed's order in any method (``list(self)``)
        unit.dunder = unit.builds
        members = list(self.body(node.body, f"{prefix}{node.name}."))
        # naming the class runs its body's statements and, made or used, its dunder
        # methods; its other methods are reached by their own names (``Version.parse``)
        unit.reaches = [
            m for m, s in zip(members, _flat(node.body), strict=True) if not _plain_method(s)
        ]
        self.package.file(node.name, unit)
        yield unit
        yield from members

    def statement(self, node: ast.stmt) -> _Unit:
        if _main_block(node):
            return _Unit()  # runs as a script only, never where a call is recorded
        unit = _read(node)
        for name in _bound(node) or _receivers(node):
            self.package.file(name, unit)
        return unit


def _kept_in(node: ast.AST) -> set[str]:
    """Where a function leaves what it made for others to read: the attributes it sets
    (``self._names = set(...)``, read by another method as ``self._names``), what it stores
    into by subscript (``CACHE[key] = ...``) or fills by a call (``self._names.add(x)``,
    ``HANDLERS.append(fn)``: :data:`_FILLING`), and the module's names it rebinds
    (``global``)."""
    kept: set[str] = set()
    declared: set[str] = set()
    for each in ast.walk(node):
        if isinstance(each, ast.Attribute) and isinstance(each.ctx, ast.Store | ast.Del):
            kept.add(each.attr)
        elif isinstance(each, ast.Subscript) and isinstance(each.ctx, ast.Store | ast.Del):
            kept |= _names_in(each.value)
        elif isinstance(each, ast.Call):
            kept |= _filled(each)
        elif isinstance(each, ast.Global | ast.Nonlocal):
            declared.update(each.names)
    return kept | declared


def _main_block(node: ast.stmt) -> bool:
    """``if __name__ == "__main__": ...``"""
    return isinstance(node, ast.If) and main_guard(node.test)


def _receivers(node: ast.stmt) -> set[str]:
    """What a statement binding no name may have filed something in: each call's receiver
    (``HANDLERS`` of ``HANDLERS.append(f)``, ``registry`` of ``registry.add(...)``) or, called
    bare, the function (``register`` of ``register(f)``)."""
    found: set[str] = set()
    for each in ast.walk(node):
        if isinstance(each, ast.Call):
            found |= _names_in(each.func) if isinstance(each.func, ast.Name) else _filled(each)
    return found


_FILLING: Final = frozenset(
    {
        *("append", "appendleft", "extend", "extendleft", "insert", "add", "update"),
        *("setdefault", "register", "put", "push", "__setitem__"),
    }
)
"""Methods that put something into their receiver (``HANDLERS.append(fn)``)."""


def _filled(call: ast.Call) -> set[str]:
    """The receiver's names of a call that fills it (``self._names.add(x)``: ``_names``);
    a call of any other method is a read (``Version.parse(text)`` fills no ``Version``)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in _FILLING:
        return set()
    receiver = func.value
    while isinstance(receiver, ast.Attribute | ast.Subscript):
        if isinstance(receiver, ast.Attribute):
            return {receiver.attr}
        receiver = receiver.value
    return {receiver.id} if isinstance(receiver, ast.Name) else set()


def _flat(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    """A class body's statements, each as many times as :meth:`_Reader.body` yields units
    for it (an import: one per name; a class: itself, then its members)."""
    for statement in body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            yield from (statement for _ in statement.names)
        elif isinstance(statement, ast.ClassDef):
            yield statement
            yield from _flat(statement.body)
        else:
            yield statement


def _plain_method(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef) and not (
        statement.name.startswith("__") and statement.name.endswith("__")
    )


_SCOPES: Final = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def _read_scope(unit: _Unit, scope: ast.AST, outer: frozenset[str]) -> None:
    """Note what ``scope`` (a function, lambda or comprehension) uses in ``unit``, but the
    variables that are its own or an enclosing function's (``outer``): a parameter called
    ``replace`` is not the method ``replace``.  What the enclosing scope evaluates (a
    nested function's decorators and defaults) is noted there."""
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        _note_outside(unit, scope, outer)
        inner: list[ast.AST] = (
            list(scope.body)
            if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef)
            else [scope.body]
        )
        local = _parameters(scope.args)
    else:  # a comprehension: its first iterable is the enclosing scope's
        assert isinstance(scope, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp)
        _note(unit, scope)
        first, *rest = scope.generators
        _read_in(unit, first.iter, outer)
        inner = [first.target, *first.ifs, *rest]
        inner += [scope.key, scope.value] if isinstance(scope, ast.DictComp) else [scope.elt]
        local = set()
    local |= _stored(inner)
    _read_in(unit, inner, outer | local)


def _note_outside(
    unit: _Unit, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, outer: frozenset[str]
) -> None:
    """A function's decorators, defaults and annotations: read where it is defined."""
    args = node.args
    parts: list[ast.AST] = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    if not isinstance(node, ast.Lambda):
        parts += node.decorator_list
        parts += [a.annotation for a in _arguments(args) if a.annotation is not None]
        if node.returns is not None:
            parts.append(node.returns)
    _read_in(unit, parts, outer)


def _read_in(unit: _Unit, nodes: ast.AST | Iterable[ast.AST], visible: frozenset[str]) -> None:
    """Note ``nodes`` in ``unit``, skipping loads of the local names ``visible``, and
    reading each nested scope as a scope of its own."""
    stack = [nodes] if isinstance(nodes, ast.AST) else list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            _read_scope(unit, node, visible)
            continue
        if isinstance(node, ast.Name) and node.id in visible and node.id not in _SET_NAMES:
            continue
        _note(unit, node)
        stack.extend(ast.iter_child_nodes(node))


def _arguments(args: ast.arguments) -> list[ast.arg]:
    return [
        *args.posonlyargs,
        *args.args,
        *args.kwonlyargs,
        *([args.vararg] if args.vararg else []),
        *([args.kwarg] if args.kwarg else []),
    ]


def _parameters(args: ast.arguments) -> set[str]:
    return {a.arg for a in _arguments(args)}


def _stored(body: Iterable[ast.AST]) -> set[str]:
    """The names a scope's own code binds (not a nested scope's), less those it declares
    ``global``."""
    bound: set[str] = set()
    declared: set[str] = set()
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
            continue  # its body is a scope of its own
        elif isinstance(node, _SCOPES):
            continue  # a lambda's or a comprehension's names are its own
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).partition(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global):
            declared.update(node.names)
        stack.extend(ast.iter_child_nodes(node))
    return bound - declared


def _bound(node: ast.stmt) -> set[str]:
    """The names a body statement binds: its assignments' targets, its imports' names,
    the functions and classes it defines (under an ``if`` or a ``try`` too)."""
    bound: set[str] = set()
    for each in ast.walk(node):
        if isinstance(each, ast.Import | ast.ImportFrom):
            bound.update((alias.asname or alias.name).partition(".")[0] for alias in each.names)
        elif isinstance(each, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(each.name)
        elif isinstance(each, ast.Assign):
            bound.update(name for target in each.targets for name in _names_in(target))
        elif isinstance(each, ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor):
            bound.update(_names_in(each.target))
        elif isinstance(each, ast.NamedExpr):
            bound.add(each.target.id)
        elif isinstance(each, ast.withitem) and each.optional_vars is not None:
            bound.update(_names_in(each.optional_vars))
    return bound


def _read(node: ast.AST) -> _Unit:
    return _read_all([node])


def _read_all(nodes: Iterable[ast.AST]) -> _Unit:
    unit = _Unit()
    for top in nodes:
        for node in ast.walk(top):
            _note(unit, node)
    return unit


def _note(unit: _Unit, node: ast.AST) -> None:
    if isinstance(node, ast.Name):
        unit.names.add(node.id)
        if node.id in _SET_NAMES:
            unit.builds = True
        elif node.id in _DYNAMIC_CALLS:
            unit.dynamic = True
        elif node.id in _PRINTING:
            unit.prints = True
    elif isinstance(node, ast.Attribute):
        unit.names.add(node.attr)
        if node.attr in _DYNAMIC_CALLS or node.attr == "__dict__":
            unit.dynamic = True
        elif node.attr in _PRINTING:
            unit.prints = True
    elif isinstance(node, ast.Set | ast.SetComp):
        unit.builds = True
    elif isinstance(node, ast.alias):
        unit.names.update(node.name.split("."))
    elif isinstance(node, ast.BinOp) and isinstance(node.op, _SET_OPERATORS):
        unit.builds = unit.builds or _view(node.left) or _view(node.right)
    elif isinstance(node, ast.Call) and _computed_getattr(node):
        unit.dynamic = True


def _view(node: ast.expr) -> bool:
    """``d.keys()`` or ``d.items()``: a view a set operator turns into a set."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _VIEWS
    )


def _computed_getattr(node: ast.Call) -> bool:
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    if name not in ("getattr", "getattr_static"):
        return False
    return len(node.args) < 2 or not isinstance(node.args[1], ast.Constant)


def _names_in(node: ast.AST) -> set[str]:
    found: set[str] = set()
    for each in ast.walk(node):
        if isinstance(each, ast.Name):
            found.add(each.id)
        elif isinstance(each, ast.Attribute):
            found.add(each.attr)
    return found


_WRAPPING: Final = frozenset({"wraps", "update_wrapper"})


def _file_decorated(package: _Package) -> None:
    """File each function under a bare-named decorator where calls may find it.

    A decorator of the package that wraps (it uses ``functools.wraps``: semver's
    ``deprecated``, ``_comparator``) hands back a wrapper bound to the function's own name,
    so the function is reached by that name alone; filed under the decorator's name too,
    every function it decorates would reach every other.  One that does not wrap may keep
    the function somewhere (``@register`` appending to ``HANDLERS``): the function is filed
    under the decorator's name and every name the decorator uses, so code calling through
    that registry reaches it.  A decorator from elsewhere files it under its name."""
    for name, unit in package.decorated:
        decorators = package.functions.get(name, [])
        if decorators and all(d.names & _WRAPPING for d in decorators):
            continue
        package.file(name, unit)
        for decorator in decorators:
            for used in decorator.names:
                package.file(used, unit)


def _taint(package: _Package, units: list[_Unit]) -> None:
    """Mark every unit that builds sets, is dynamic, or reaches one that is tainted; and
    every unit that prints, is dynamic, or reaches one that prints."""
    users: dict[int, list[_Unit]] = {}
    """For each unit (by id), the units that reach it by a name."""
    for unit in units:
        for name in unit.names:
            for reached in package.by_name.get(name, ()):
                users.setdefault(id(reached), []).append(unit)
        for reached in unit.reaches:
            users.setdefault(id(reached), []).append(unit)
    for flag, seeds in (
        ("tainted", [unit for unit in units if unit.builds or unit.dynamic]),
        ("printing", [unit for unit in units if unit.prints or unit.dynamic]),
    ):
        for unit in seeds:
            setattr(unit, flag, True)
        while seeds:
            unit = seeds.pop()
            for user in users.get(id(unit), ()):
                if not getattr(user, flag):
                    setattr(user, flag, True)
                    seeds.append(user)


def forget() -> None:
    """Read every package again at the next question (a test's modules changed)."""
    _PACKAGES.clear()


__all__ = ["forget", "target_reaches_sets"]
