"""A package's public surface: the targets a ``[[ledger]] package = "pkg"`` records.

Read from the source (``ast``), never by importing the package: the configuration is
loaded by every command, and importing code under freeze there would run it.

The surface is every public function, method, classmethod, staticmethod and property
getter defined in a public module of the package:

* a public module is one whose dotted path has no part starting with ``_`` (the
  package's ``__init__.py`` is public; ``_impl.py`` and ``__main__.py`` are not);
* a public name is in the module's ``__all__`` when it defines one as a literal list or
  tuple of strings, else a name not starting with ``_``;
* what the module defines (``def`` and ``class`` statements), and what it imports by
  name from a private module of the same package (a re-export: where users call it
  from); names from other packages or from its public modules are not its surface;
* a public alias of a method of a module-level instance (``isoparse =
  DEFAULT_ISOPARSER.isoparse``);
* in a public class: its public methods, classmethods, staticmethods and properties,
  and the value dunders in :data:`VALUE_DUNDERS` (arithmetic, comparison, ``__str__``,
  ``__iter__``, ``__next__``, ``__call__``, ``__setitem__``, ``__delitem__``,
  ``__setattr__``, ``__delattr__`` and the in-place operators, ``__getattr__`` and
  ``__missing__`` (attributes and items computed when asked for), ``__dir__``,
  ``__hash__``: a row whose hash depends on the interpreter's string hash seed does not
  reproduce in the verifying interpreter, so it is refused, never frozen); not
  ``__init__``, nor nested classes.
"""

from __future__ import annotations

import ast
import importlib.machinery
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final

import msgspec

from lockstep.errors import ConfigError, UnparsableSource
from lockstep.store.reading import read_file

VALUE_DUNDERS: Final = frozenset(
    f"__{name}__"
    for name in [
        "add",
        "radd",
        "sub",
        "rsub",
        "mul",
        "rmul",
        "truediv",
        "rtruediv",
        "floordiv",
        "rfloordiv",
        "mod",
        "rmod",
        "divmod",
        "pow",
        "rpow",
        "neg",
        "pos",
        "abs",
        "invert",
        "and",
        "rand",
        "or",
        "ror",
        "xor",
        "rxor",
        "lshift",
        "rshift",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "str",
        "repr",
        "format",
        "bool",
        "len",
        "contains",
        "getitem",
        "int",
        "float",
        "round",
        "trunc",
        "floor",
        "ceil",
        "hash",
        "call",
        "next",
        "iter",
        "getattr",  # attributes computed on demand (arrow's ``quarter`` and ``week``)
        "missing",  # a dict subclass's value for a key it lacks (munch's DefaultFactoryMunch)
        "dir",
        "reversed",
        # what changes the object in place: the row holds it before and after the call
        # (bidict's ``b[k] = v``, intervaltree's ``tree[1:2] = data`` ran unrecorded)
        "setitem",
        "delitem",
        # an attribute-style container's ``b.x = v`` and ``del b.x`` (munch's ``Munch``):
        # only a class that writes them itself, set from outside the package
        "setattr",
        "delattr",
        "iadd",
        "isub",
        "imul",
        "iand",
        "ior",
        "ixor",
    ]
)
"""Dunders of a class that compute a value from it, or change it in place (the ledger
holds the object before and after), so belong to its surface."""


class Member(msgspec.Struct, frozen=True):
    """One target of a surface: ``module:qualname``."""

    module: str
    qualname: str

    @property
    def target(self) -> str:
        return f"{self.module}:{self.qualname}"

    def short(self, package: str) -> str:
        """The target's dotted name inside the package: ``isodates.parse_date``."""
        rest = self.module.removeprefix(package).lstrip(".")
        return f"{rest}.{self.qualname}" if rest else self.qualname


SUITE_FOLDERS: Final = ("tests", "test", "testsuite")
"""Names of the folder a suite lives in (pint ships its own as ``pint/testsuite/``)."""


def names_tests(parts: Iterable[str]) -> bool:
    """Whether a module's dotted path below its top-level package (or a file's path below
    the package's folder) names test code: a suite shipped inside the package
    (``hyperlink/test/test_url.py``), which calls the package as a user does."""
    return any(
        p in (*SUITE_FOLDERS, "testing") or p.startswith("test_") or p.endswith("_test")
        for p in parts
    )


def package_dir(package: str, root: Path) -> Path | None:
    """The folder of the top-level ``package``: under ``root``, ``root/src``, else where
    the interpreter would import it from (found, not imported)."""
    found = package_path(package, root)
    return found if found is not None and found.is_dir() else None


def package_path(package: str, root: Path) -> Path | None:
    """The folder of the top-level ``package``, or the file of a top-level module that is
    a distribution of its own (``parse.py``, ``six.py``): under ``root``, ``root/src``,
    else where the interpreter would import it from (found, not imported)."""
    paths = [str(p) for p in (root / "src", root) if p.is_dir()]
    spec = importlib.machinery.PathFinder.find_spec(package, paths)
    if spec is None:
        spec = importlib.machinery.PathFinder.find_spec(package)
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    if spec.origin and spec.origin.endswith(".py"):
        return Path(spec.origin)
    return None


def top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements a module runs at its top level: those of its body and of the blocks
    that run as it is imported (``try``/``except``/``else``/``finally``, ``if``/``else``,
    ``with``), so a function defined where an import may fail (natsort's
    ``compat.locale.get_decimal_point``, defined under ``try: import icu`` and again
    under ``except ImportError``) is one of its members.  Not the block of ``if
    TYPE_CHECKING:`` (read by type checkers only) nor of ``if __name__ == "__main__":``
    (run as a program only), nor a loop's body."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            if _never_imported(node.test):
                yield from top_level(node.orelse)
                continue
            yield from top_level(node.body)
            yield from top_level(node.orelse)
        elif isinstance(node, ast.Try | ast.TryStar):
            yield from top_level(node.body)
            for handler in node.handlers:
                yield from top_level(handler.body)
            yield from top_level(node.orelse)
            yield from top_level(node.finalbody)
        elif isinstance(node, ast.With):
            yield from top_level(node.body)


def _never_imported(test: ast.expr) -> bool:
    """Whether an ``if`` at a module's top level guards what an import never runs:
    ``TYPE_CHECKING`` (``typing.TYPE_CHECKING``) or ``__name__ == "__main__"``."""
    if isinstance(test, ast.Name | ast.Attribute):
        return (test.id if isinstance(test, ast.Name) else test.attr) == "TYPE_CHECKING"
    return main_guard(test)


def main_guard(test: ast.expr) -> bool:
    """Whether an ``if``'s test is ``__name__ == "__main__"`` (run as a program only)."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _deleted_names(tree: ast.Module) -> set[str]:
    """Names a module's body deletes after binding them (toolz's ``from ._version import
    get_versions`` then ``del get_versions``): gone once it is imported, so no member."""
    deleted: set[str] = set()
    for node in top_level(tree.body):
        if isinstance(node, ast.Delete):
            deleted.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            deleted.discard(node.name)  # bound again after the del
        elif isinstance(node, ast.ImportFrom | ast.Import):
            deleted.difference_update((a.asname or a.name).split(".")[0] for a in node.names)
    return deleted


def _public_names(tree: ast.Module) -> set[str] | None:
    """The literal ``__all__`` of a module, or None when it has none (or not a literal)."""
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            and isinstance(node.value, ast.List | ast.Tuple)
        ):
            names = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
            if all(isinstance(n, str) for n in names):
                return {str(n) for n in names}
    return None


def _decorators(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    out: set[str] = set()
    for deco in node.decorator_list:
        if isinstance(deco, ast.Name):
            out.add(deco.id)
        elif isinstance(deco, ast.Attribute):
            out.add(f".{deco.attr}")  # functools.cached_property, x.setter
    return out


def _class_members(cls: ast.ClassDef, *, private: bool = False) -> list[str]:
    """The methods of ``cls`` its surface holds; with ``private``, also the private ones and
    its constructors (:data:`CONSTRUCTORS`; dunders outside :data:`VALUE_DUNDERS` stay out)."""
    if _is_protocol(cls):
        return []  # a typing.Protocol's methods are stubs: nothing runs there
    names: list[str] = []
    for node in cls.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        name = node.name
        if not _listed(name, private=private):
            continue
        decos = _decorators(node)
        if {".deleter", "overload", ".overload"} & decos:
            continue  # an overload is a stub
        if ".setter" in decos:  # ``obj.prop = value`` runs it: the property's fset
            if not private:
                continue  # beyond the surface, as a constructor: recorded once called
            name = f"{name}.fset"
        if name not in names:
            names.append(name)
    return names + _aliases_of_unlisted(cls, names, private=private)


def _listed(name: str, *, private: bool) -> bool:
    """Whether a method named ``name`` is on a class's surface by its name alone (with
    ``private``, also a private one and a constructor; a name-mangled ``__name`` never: the
    class holds it as ``_Class__name``)."""
    dunder = name.startswith("__") and name.endswith("__")
    if dunder:
        return name in VALUE_DUNDERS or (private and name in CONSTRUCTORS)
    return not name.startswith("__") and (private or not name.startswith("_"))


def _aliases_of_unlisted(cls: ast.ClassDef, listed: list[str], *, private: bool) -> list[str]:
    """The names a class body binds to a plain method it defines under a name its surface
    leaves out (``__truediv__ = __div__``): called through the alias, that method ran
    unrecorded.  python-dateutil's ``relativedelta`` divides in ``__div__``, a Python 2
    name, bound as ``__truediv__``; a one-line change there failed its suite and replayed
    green.  One alias per method: the calls through its others are recorded with it, as
    an alias of a listed method is recorded with that method."""
    plain = {
        node.name
        for node in cls.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.decorator_list
    }
    found: dict[str, str] = {}  # the method's name -> the alias listed for it
    for node in cls.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Name)
            and node.value.id in plain
            and node.value.id not in listed
            and node.targets[0].id not in listed
            and node.value.id not in found
            and _listed(node.targets[0].id, private=private)
        ):
            found[node.value.id] = node.targets[0].id
    return list(found.values())


def _is_protocol(cls: ast.ClassDef) -> bool:
    """Whether ``cls`` derives from ``Protocol`` (``typing``'s or ``typing_extensions``',
    also ``Protocol[T]``): a structural type whose methods only say what to provide."""
    for base in cls.bases:
        if isinstance(base, ast.Subscript):
            base = base.value
        if (isinstance(base, ast.Name) and base.id == "Protocol") or (
            isinstance(base, ast.Attribute) and base.attr == "Protocol"
        ):
            return True
    return False


def module_members(module: str, tree: ast.Module) -> list[Member]:
    """The surface one module's source defines."""
    public = _public_names(tree)

    def shown(name: str) -> bool:
        return name in public if public is not None else not name.startswith("_")

    members: list[Member] = []
    instances = _module_instances(tree)
    deleted = _deleted_names(tree)
    for node in top_level(tree.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and (
            node.name in deleted
        ):
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and shown(node.name):
            if {"overload", ".overload"} & _decorators(node):
                continue
            member = Member(module, node.name)
            if member not in members:
                members.append(member)
        elif isinstance(node, ast.ClassDef) and shown(node.name):
            members.extend(Member(module, f"{node.name}.{m}") for m in _class_members(node))
        elif (alias := _bound_method_alias(node, instances)) is not None and shown(alias):
            members.append(Member(module, alias))
    unique = list(dict.fromkeys(members))  # a class defined under try and again under except
    return _without_grammar_rules(unique, tree)


_RULE_NAME: Final = re.compile(r"^(?:p|t)_\w+$")
_PRODUCTION: Final = re.compile(r"^\s*[A-Za-z_]\w*\s*:")
"""A ply production's docstring: ``jsonpath : jsonpath '.' jsonpath``."""


def _without_grammar_rules(members: list[Member], tree: ast.Module) -> list[Member]:
    """``members`` less a ply grammar's rules (:func:`_grammar_rules`)."""
    rules = _grammar_rules(tree)
    return [m for m in members if m.qualname not in rules] if rules else members


def _grammar_rules(tree: ast.Module) -> set[str]:
    """The qualified names of the functions and methods ``ply.yacc`` and ``ply.lex`` read
    by their code (the arguments they take, the line they start on, the production or
    pattern in their docstring): in a module that imports ply, every ``p_*`` and ``t_*``;
    elsewhere, a ``p_*`` whose docstring is a production, and a ``t_*`` of a class that
    lists ``tokens`` (a lexer extending another module's).  A recording wrapper in their
    place broke every parser jsonpath-ng builds (``p_error() requires 1 argument``: 318 of
    its 324 tests failed while recording); the parser they make is recorded where the
    package's own functions call it."""
    ply = _imports_ply(tree)
    found: set[str] = set()

    def visit(body: list[ast.stmt], prefix: str, lexer: bool) -> None:
        rules = [n for n in body if isinstance(n, ast.FunctionDef) and _RULE_NAME.match(n.name)]
        grammar = ply or any(  # one production: its p_error is the grammar's too
            n.name.startswith("p_") and _PRODUCTION.match(ast.get_docstring(n, False) or "")
            for n in rules
        )
        for rule in rules:
            if (rule.name.startswith("p_") and grammar) or (rule.name.startswith("t_") and lexer):
                found.add(f"{prefix}{rule.name}")
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.", ply or _lists_tokens(node.body))

    visit(tree.body, "", ply or _lists_tokens(tree.body))
    return found


def _lists_tokens(body: list[ast.stmt]) -> bool:
    """Whether a class or module body binds ``tokens`` (what a ply lexer must list)."""
    return any(
        isinstance(node, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(target, ast.Name) and target.id == "tokens"
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
        for node in body
    )


_PLY_WORD: Final = re.compile(rb"\bply\b")
"""``ply`` as a word: how any import of it, or of a vendored ``<pkg>.ply``, spells it."""


def _imports_ply(tree: ast.Module) -> bool:
    """Whether the module imports ``ply`` (or a copy of it vendored as ``<pkg>.ply``).

    An ASCII source without the word ``ply`` imports no such module, and is not walked
    (every module of a package surface was, at each configuration's load: semver's seven,
    16 ms; "apply" or "simply" is no import of it); a non-ASCII one may spell the name in
    letters that read as ``ply``."""
    source = _source_of(tree)
    if source is not None and source.isascii() and _PLY_WORD.search(source) is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        if any("ply" in name.split(".") for name in names):
            return True
    return False


def _module_instances(tree: ast.Module) -> set[str]:
    """Module-level names bound to a call's result (``DEFAULT_ISOPARSER = isoparser()``)."""
    return {
        target.id
        for node in top_level(tree.body)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _bound_method_alias(node: ast.stmt, instances: set[str]) -> str | None:
    """``isoparse = DEFAULT_ISOPARSER.isoparse``: a public function that is a method of a
    module-level instance (dateutil's ``isoparse``, ``random.random``'s pattern)."""
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Attribute)
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id in instances
        and not node.value.attr.startswith("_")
    ):
        return node.targets[0].id
    return None


_Trees = dict[str, tuple[ast.Module, bool, bool]]
"""Each module of a package -> (its tree, whether it is a package's ``__init__``, public?)."""


def surface(package: str, root: Path, *, where: str) -> list[Member]:
    """Every target of ``package``'s public surface, by module then source order.

    A public module's surface is what it defines, plus what it re-exports from a
    private module of the package (``from ._parser import parse`` in
    ``dateutil/parser/__init__.py``): that is where users call it from.  A package that
    cannot be found, or a module that does not parse, is a :class:`ConfigError` naming
    ``where``.
    """
    return list(_public_surface(_trees(package, root, where=where))[0])


def tested_members(package: str, root: Path, *, where: str) -> list[Member]:
    """What a test suite may call directly beyond the public surface: every other
    function, method, classmethod, staticmethod and property the package defines at the
    top level of a module or class, in any of its modules — private names, members of
    private modules that are not re-exported, the private methods and ``__init__`` of
    every class (one a public module re-exports too: ``hyperlink._url.URL``, whose
    constructor its suite calls directly).

    A suite that calls ``obj._check_date()`` or constructs ``Hijri(1410, 8, 30)`` pins
    what those calls do; a ledger of them catches what that test catches. Recorded,
    like the surface, only when called from outside the package, so a member only the
    package calls itself gets no rows (and no file).
    """
    trees = _trees(package, root, where=where)
    public, taken = _public_surface(trees)
    known = {m.target for m in public}
    out: list[Member] = []
    for module, (tree, _, _) in trees.items():
        set_on = _classes_set_on(tree)
        start = len(out)
        out.extend(Member(module, name) for name in _made_functions(tree.body))
        for node in top_level(tree.body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if (module, node.name) in taken or {"overload", ".overload"} & _decorators(node):
                    continue
                out.append(Member(module, node.name))
            elif isinstance(node, ast.ClassDef):
                names = _class_members(node, private=True)
                if (module, node.name) in taken:  # re-exported: its surface is public already
                    shown = set(_class_members(node))
                    names = [name for name in names if name not in shown]
                names += _made_dunders(node, node.name in set_on)
                names += _made_functions(node.body)
                out.extend(Member(module, f"{node.name}.{name}") for name in names)
        out[start:] = _without_grammar_rules(out[start:], tree)
    unique: dict[str, Member] = {}
    for member in out:
        if member.target not in known:
            unique.setdefault(member.target, member)
    return list(unique.values())


def _made_functions(body: list[ast.stmt]) -> list[str]:
    """Public names and value dunders a module or class body binds to what a call makes
    (pyparsing's ``parseString = replaced_by_pep8("parseString", parse_string)``: its tests
    call the old names 286 times, the new 38, and each such call, made through the
    package's own alias function, was no call from outside; tomlkit's ``Integer`` makes
    its arithmetic so, ``__add__ = wrap_method(int.__add__)``).  A candidate only: recorded where the name
    holds a function once imported (a value or an object of another kind is left alone)
    and the tests call it."""
    names: list[str] = []
    for node in body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and (not node.targets[0].id.startswith("_") or node.targets[0].id in VALUE_DUNDERS)
        ):
            names.append(node.targets[0].id)
    return names


CONSTRUCTORS: Final = ("__init__", "__new__")
"""What makes a class's objects: beyond the surface, recorded where the tests call them.
A value class that is a named tuple or extends an immutable builtin normalizes what it
is given in ``__new__`` (isoweek's ``Week(2011, 53)`` is the first week of 2012)."""

MADE_BY_DECORATORS: Final = (
    "__init__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__repr__",
)
"""The dunders a class decorator writes for a class (``@dataclass(order=True)``, attrs'
``@define``, ``@functools.total_ordering``): its comparisons and ``__repr__``, and the
``__init__`` that runs a dataclass's ``__post_init__`` (where such a class validates and
normalizes what it is given)."""


def is_made_dunder(qualname: str) -> bool:
    """Whether a member's name is a dunder a class may be given once imported (see
    :func:`_made_dunders`): recorded only where the class holds it itself."""
    name = qualname.rpartition(".")[2]
    return name in VALUE_DUNDERS or name == "__init__"


def _made_dunders(cls: ast.ClassDef, set_on: bool) -> list[str]:
    """Value dunders ``cls`` may hold once imported though its body defines none of them:
    those a class decorator writes (:data:`MADE_BY_DECORATORS`) for a decorated class,
    and every value dunder for a class its module passes to ``setattr`` (uncertainties
    adds ``AffineScalarFunc.__add__``, ``__pow__`` ... in a loop at import).  The class's
    own arithmetic and comparisons, the very values a change to it moves, were no target.

    A candidate only: recorded when the imported class holds the name itself (not by
    inheritance) and the tests call it, like every member beyond the surface."""
    if not cls.decorator_list and not set_on:
        return []
    defined = {
        node.name for node in cls.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    defined |= {
        target.id
        for node in cls.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    wanted = sorted(VALUE_DUNDERS) if set_on else MADE_BY_DECORATORS
    return [name for name in wanted if name not in defined]


def _classes_set_on(tree: ast.Module) -> set[str]:
    """Names a module passes as ``setattr``'s first argument anywhere in its code, or as an
    argument of a call it makes at its top level (``add_operators(Money)``).  A module
    whose text holds no ``setattr`` is not walked for the first."""
    source = _source_of(tree)
    named = (
        {
            node.args[0].id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and node.args
            and isinstance(node.args[0], ast.Name)
        }
        if source is None or b"setattr" in source
        else set()
    )
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            named.update(a.id for a in node.value.args if isinstance(a, ast.Name))
    return named


def class_modules(package: str, root: Path, *, where: str, importers: Iterable[Path]) -> set[str]:
    """The modules of ``package`` (its suite aside) that define a class at their top level
    and that some code imports: another module of the package, or one of ``importers``
    (the suite's files).

    A class can be the package's own and have no member of its own on the surface
    (coloraide's ``everything.ColorAll``, a ``Color`` with every plugin registered, defines
    no method): its module is no ledger's target, yet the suite imports it and hands its
    objects to targets, and a fresh interpreter must import that module to thaw them.  A
    module nothing imports (one a pull request planted) is not one of them: data naming
    it must not be what runs it."""
    trees = _trees(package, root, where=where)
    imported = modules_imported(importers)
    for module, (tree, is_package, _) in trees.items():
        imported |= _imports_of(tree, module if is_package else module.rpartition(".")[0])
    return {
        module
        for module, (tree, _, _) in trees.items()
        if module in imported
        and any(isinstance(node, ast.ClassDef) for node in top_level(tree.body))
    }


def modules_imported(paths: Iterable[Path]) -> set[str]:
    """The absolute module names the files at ``paths`` import (``from pkg import sub``
    gives ``pkg`` and ``pkg.sub``: either may be a module); a file that cannot be read or
    parsed gives none."""
    names: set[str] = set()
    for path in paths:
        try:
            tree = parsed_module(path)
        except (SyntaxError, ValueError, OSError):
            continue
        names |= _imports_of(tree, "")
    return names


_IMPORTS: dict[tuple[ast.Module, str], frozenset[str]] = {}
""":func:`_imports_of` per tree (:data:`_PARSED` hands out the same tree for the same
bytes): the codec asks it in every process that verifies or replays a ledger."""


def _imports_of(tree: ast.Module, package: str) -> frozenset[str]:
    """What ``tree``'s import statements name; relative ones resolved from ``package`` (the
    package the module is in), ignored without one."""
    known = _IMPORTS.get((tree, package))
    if known is None:
        known = _IMPORTS[(tree, package)] = frozenset(_read_imports(tree, package))
    return known


def _read_imports(tree: ast.Module, package: str) -> set[str]:
    names: set[str] = set()
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                if not parts or node.level - 1 > len(parts):
                    continue
                anchor = ".".join(parts[: len(parts) - (node.level - 1)])
                base = f"{anchor}.{base}" if base else anchor
            if base:
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body`` and of the blocks inside it (an import inside a
    function, a ``try``, an ``if TYPE_CHECKING``), without walking expressions."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)
        for handler in getattr(node, "handlers", ()):
            yield from _statements(handler.body)
        for case in getattr(node, "cases", ()):
            yield from _statements(case.body)


def source_state(package: str, root: Path) -> object:
    """What the surface of ``package`` is read from, as a value to compare: the path it is
    found at and the bytes of every module there (what :func:`_trees` reads).  Two equal
    values give the same surface and members; a file that cannot be read gives a value
    equal to no other."""
    folder = package_path(package, root)
    if folder is None:
        return None
    files = [folder] if folder.is_file() else sorted(folder.rglob("*.py"))
    read: list[tuple[str, bytes | object]] = []
    for path in files:
        try:
            read.append((str(path), read_file(path, through_links=True)))
        except OSError:
            read.append((str(path), object()))  # equal to nothing: read it again
    return (str(folder), tuple(read))


def _trees(package: str, root: Path, *, where: str) -> _Trees:
    folder = package_path(package, root)
    if folder is None:
        raise ConfigError(
            f"{where}: no package {package!r} found under the project root, its src/ or "
            "the installed packages"
        )
    if package in sys.stdlib_module_names and not folder.resolve().is_relative_to(root.resolve()):
        raise ConfigError(
            f"{where}: {package!r} is a module of Python's standard library, not code of "
            "the project: name a package of the project, or one installed beside it"
        )
    if folder.is_file():  # a one-module distribution: that module is the package
        try:
            return {package: (parsed_module(folder), False, True)}
        except (SyntaxError, ValueError) as e:
            raise _unparsable(package, package, folder, root, where, e) from None
        except OSError as e:
            raise ConfigError(f"{where}: cannot read module {package!r}: {e}") from None
    trees: _Trees = {}
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(folder).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        if not all(p.isidentifier() for p in parts) or any(
            p in SUITE_FOLDERS or p.startswith("test_") or p.endswith("_test") for p in parts
        ):
            continue  # the suite shipped inside (``pkg/tests/``, Django's ``pkg/tests.py``)
        private = any(p.startswith("_") for p in parts) or any(
            p.startswith("_") for p in path.relative_to(folder).parts[:-1]
        )
        module = ".".join((package, *parts))
        try:
            tree = parsed_module(path)
        except (SyntaxError, ValueError, OSError) as e:
            if private:
                continue  # not the surface; a private module that does not parse is its own
            if not isinstance(e, OSError):
                raise _unparsable(module, package, path, root, where, e) from None
            raise ConfigError(
                f"{where}: cannot read module {module!r} of package {package!r}: {e}"
            ) from None
        trees[module] = (tree, is_package, not private)
    return trees


def _unparsable(
    module: str, package: str, path: Path, root: Path, where: str, error: Exception
) -> UnparsableSource:
    """The error of a public module of ``package`` that does not parse: where, as a
    compiler names it (the file relative to the root, its line), then what cannot be done."""
    try:
        shown = path.relative_to(root).as_posix()
    except ValueError:
        shown = str(path)
    if isinstance(error, SyntaxError):
        at = f"{shown}, line {error.lineno}" if error.lineno else shown
        what = error.msg
    else:
        at, what = shown, str(error)
    return UnparsableSource(
        f"{at}: {what}: module {module!r} of package {package!r} does not parse, so the "
        f"surface {where} records cannot be listed and none of it replays"
    )


_PARSED: dict[str, tuple[bytes, ast.Module]] = {}
"""Each module file parsed in this process, with the bytes it was parsed from.

A package surface is expanded each time its configuration is loaded: in a recording's
verifying interpreter, once in the server and once more in every ledger's fork (98 forks
for semantic_version's surface, 20 ms of parsing each).  The file is read every time; it
is parsed again only when its bytes differ, so what is found is always what the file
holds now."""
_SURFACES: dict[tuple[tuple[str, ast.Module], ...], tuple[list[Member], set[tuple[str, str]]]] = {}
""":func:`_public_surface` of trees already walked (keyed by the very tree objects, which
:data:`_PARSED` hands out again only for the same bytes)."""


def parsed_module(path: Path) -> ast.Module:
    """``path`` parsed, or its tree from :data:`_PARSED` when its bytes are the same (a
    tree shared by every reader: read it, never change it)."""
    data = read_file(path, through_links=True)
    key = str(path)
    known = _PARSED.get(key)
    if known is not None and known[0] == data:
        return known[1]
    tree = ast.parse(data, filename=key)
    if known is not None:
        _SOURCES.pop(id(known[1]), None)
    _PARSED[key] = (data, tree)
    _SOURCES[id(tree)] = (tree, data)
    return tree


_SOURCES: Final[dict[int, tuple[ast.Module, bytes]]] = {}
"""Each tree :func:`parsed_module` holds, by its identity, with the bytes it was parsed
from: a walk for a name may be skipped where the text never holds it."""


def _source_of(tree: ast.Module) -> bytes | None:
    """The bytes ``tree`` was parsed from, when :func:`parsed_module` made it."""
    kept = _SOURCES.get(id(tree))
    return kept[1] if kept is not None and kept[0] is tree else None


def _public_surface(trees: _Trees) -> tuple[list[Member], set[tuple[str, str]]]:
    """The public surface, and the private definitions it re-exports (module, name); the
    same lists for the same trees (callers copy what they change)."""
    key = tuple((module, tree) for module, (tree, _, _) in trees.items())
    known = _SURFACES.get(key)
    if known is None:
        known = _SURFACES[key] = _walk_surface(trees)
    return known


def _walk_surface(trees: _Trees) -> tuple[list[Member], set[tuple[str, str]]]:
    members: list[Member] = []
    taken: set[tuple[str, str]] = set()
    for module, (tree, _, public) in trees.items():
        if public:
            members.extend(module_members(module, tree))
    for module, (tree, is_package, public) in trees.items():
        if public:
            members.extend(_reexports(module, tree, is_package, trees, taken))
    return members, taken


def _reexports(
    module: str,
    tree: ast.Module,
    is_package: bool,
    trees: _Trees,
    taken: set[tuple[str, str]],
) -> list[Member]:
    """What a public module imports by name from a private module of its package and
    shows (``__all__``, else a name without ``_``), under the public module's name; each
    definition once (``taken``), so no function is wrapped twice."""
    public = _public_names(tree)
    deleted = _deleted_names(tree)
    out: list[Member] = []
    base = module if is_package else module.rpartition(".")[0]
    for node in top_level(tree.body):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            anchor = base
            for _ in range(node.level - 1):
                anchor = anchor.rpartition(".")[0]
            source = f"{anchor}.{node.module}" if node.module else anchor
        else:
            source = node.module or ""
        found = trees.get(source)
        if found is None or found[2]:
            continue  # outside the package, or a public module: its own surface
        definitions = {
            d.name: d
            for d in top_level(found[0].body)
            if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }
        for alias in node.names:
            shown_as = alias.asname or alias.name
            visible = shown_as in public if public is not None else not shown_as.startswith("_")
            visible = visible and shown_as not in deleted
            definition = definitions.get(alias.name)
            if not visible or definition is None or (source, alias.name) in taken:
                continue
            taken.add((source, alias.name))
            if isinstance(definition, ast.ClassDef):
                out.extend(Member(module, f"{shown_as}.{m}") for m in _class_members(definition))
            elif not {"overload", ".overload"} & _decorators(definition):
                out.append(Member(module, shown_as))
    return out


__all__ = [
    "VALUE_DUNDERS",
    "Member",
    "module_members",
    "names_tests",
    "package_dir",
    "package_path",
    "surface",
    "tested_members",
]
