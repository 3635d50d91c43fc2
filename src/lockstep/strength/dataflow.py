"""Which cases can observe a change to module-level code: the functions that read what it defines.

Line coverage says which cases run a function's body, but a module-level
table (``RULES = [...]``) runs once, at import, for every case alike.  A case
can only see a mutated table through code that *reads* it, so the cases that
can judge such a mutant are those reaching a function that mentions one of the
names the mutated statement defines — or one of the names later module-level
statements compute from them (``PATTERN = re.compile("|".join(RULES))``).  A
function run only at import (``_register("person", "people")``) passes its
effect on through the globals it mentions.

Names are compared as identifiers, both ``NAME`` and ``obj.NAME`` (class
attributes read through ``self``), which over-approximates: a case too many is
replayed, never one too few, within the module.  An effect that leaves the
module through another module's state is not followed; when no function of the
module reads the names at all, every case judges the mutant.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lockstep.strength.coverage import FileCoverage


def _names(node: ast.AST) -> set[str]:
    found: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            found.add(child.id)
        elif isinstance(child, ast.Attribute):
            found.add(child.attr)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(child.name)
        elif isinstance(child, ast.alias):
            found.add((child.asname or child.name).split(".")[0])
    return found


def _global_names(node: ast.AST) -> set[str]:
    """Plain names a function body mentions (the globals it may read or write, and its locals)."""
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def _statement_names(stmt: ast.stmt) -> set[str]:
    """What running a module-level statement mentions: a ``def`` only its name, decorators and
    defaults (its body runs later, when called); a class its whole body but its methods'."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        parts: list[ast.AST] = [*stmt.decorator_list, *stmt.args.defaults]
        parts += [d for d in stmt.args.kw_defaults if d is not None]
        return {stmt.name}.union(*(_names(p) for p in parts))
    if isinstance(stmt, ast.ClassDef):
        heads: list[ast.AST] = [*stmt.bases, *stmt.keywords, *stmt.decorator_list]
        found = {stmt.name}.union(*(_names(h) for h in heads))
        return found.union(*(_statement_names(s) for s in stmt.body))
    return _names(stmt)


def _binds(stmt: ast.stmt) -> set[str]:
    """Names a module-level statement binds (not inside the functions and classes it defines)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    found: set[str] = set()
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return found


_STABLE: Final = frozenset(dir(builtins))


@dataclass(frozen=True)
class _Function:
    name: str
    first: int
    last: int
    names: frozenset[str]


class ModuleFlow:
    """The module-level statements of one file and the functions that read their names."""

    def __init__(self, path: Path, coverage: FileCoverage) -> None:
        tree = ast.parse(path.read_bytes(), filename=str(path))
        self.statements = [
            (s.lineno, s.end_lineno or s.lineno, _statement_names(s)) for s in tree.body
        ]
        self.is_def = [
            isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for s in tree.body
        ]
        self.binds = [_binds(s) for s in tree.body]
        self.globals: frozenset[str] = frozenset().union(*self.binds)
        imported = set().union(
            *(_names(s) for s in tree.body if isinstance(s, ast.Import | ast.ImportFrom))
        )
        self.stable = _STABLE | imported
        """Modules and builtins: mentioning ``re`` does not make a function read a table."""
        self.functions: list[_Function] = []
        self.bodies: list[frozenset[str]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                body = ast.Module(body=node.body, type_ignores=[])
                self.functions.append(
                    _Function(
                        node.name,
                        node.lineno,
                        node.end_lineno or node.lineno,
                        frozenset(_names(body)),
                    )
                )
                self.bodies.append(frozenset(_global_names(body)))
        self.coverage = coverage
        self._cases: dict[int, tuple[str, ...]] = {}
        self._effects: dict[int, frozenset[str]] = {}

    def _statement(self, line: int) -> int | None:
        for i, (first, last, _) in enumerate(self.statements):
            if first <= line <= last:
                return i
        return None

    def affected(self, line: int, also: Iterable[str] = ()) -> set[str]:
        """The names a change on ``line`` can alter, followed through later module-level code."""
        index = self._statement(line)
        names = set(also) - self.stable
        if index is not None:
            names |= self.statements[index][2]
        start = 0 if index is None else index + 1
        for _, _, mentioned in self.statements[start:]:
            if mentioned & names - self.stable:
                names |= mentioned - self.stable
        return self._through_calls(names)

    def _through_calls(self, names: set[str]) -> set[str]:
        """A module function in ``names`` may be called at import: what its body mentions
        is affected too (``_register("person", "people")`` fills the tables it names)."""
        grown = True
        while grown:
            grown = False
            for n, function in enumerate(self.functions):
                extra = self.bodies[n] - self.stable - names
                if function.name in names and extra:
                    names |= extra
                    grown = True
        return names

    def _effect(self, index: int) -> frozenset[str]:
        """Module globals running statement ``index`` may touch (through the functions it calls)."""
        found = self._effects.get(index)
        if found is None:
            names = set(self.statements[index][2])
            if self.is_def[index]:
                names -= self.binds[index]  # its decorators, defaults and class body only
            found = self._effects[index] = frozenset(
                self._through_calls(names - self.stable) & self.globals
            )
        return found

    def rerun(self, line: int, also: Iterable[str] = ()) -> tuple[int, ...]:
        """The module-level statements to run again so that a change on ``line`` takes effect
        as if the module were imported with it: from the first statement binding anything
        it touches, every later statement touching those names (to a fixed point).  Running
        from the binding keeps in-place updates (``TABLE.append``) from applying twice."""
        index = self._statement(line)
        if index is None:
            return tuple(range(len(self.statements)))
        names = set((self._effect(index) | set(also) | self.binds[index]) & self.globals)
        while True:
            binders = [i for i, bound in enumerate(self.binds) if bound & names]
            start = min([index, *binders])
            chosen: list[int] = []
            grown = set(names)
            for i in range(start, len(self.statements)):
                effect = self._effect(i)
                runs = not self.is_def[i]
                if i == index or effect & grown or (runs and self.binds[i] & grown):
                    chosen.append(i)
                    if runs:
                        grown |= effect | self.binds[i]
            if grown == names:
                return tuple(chosen)
            names = grown

    def function_names(self, line: int) -> set[str]:
        """The names the innermost function holding ``line`` mentions (its globals, and more)."""
        holding = [n for n, f in enumerate(self.functions) if f.first <= line <= f.last]
        if not holding:
            return set()
        n = min(holding, key=lambda n: self.functions[n].last - self.functions[n].first)
        return set(self.bodies[n])

    def readers(self, names: set[str]) -> tuple[str, ...] | None:
        """Cases reaching a function that mentions any of ``names``; None when no function does."""
        found: dict[str, None] = {}
        any_reader = False
        for n, function in enumerate(self.functions):
            if function.name in names or function.names & names:
                any_reader = True
                found.update(dict.fromkeys(self._function_cases(n)))
        return tuple(found) if any_reader else None

    def _function_cases(self, n: int) -> tuple[str, ...]:
        cached = self._cases.get(n)
        if cached is None:
            f = self.functions[n]
            cases = self.coverage.cases_reaching(range(f.first + 1, f.last + 1))
            cached = self._cases[n] = cases
        return cached


def flows(files: Mapping[Path, FileCoverage]) -> dict[Path, ModuleFlow]:
    return {path: ModuleFlow(path, fc) for path, fc in files.items()}
