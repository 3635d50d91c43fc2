"""Switching a mutant on and off inside a warm interpreter, without re-importing anything.

A mutant inside a function is compiled alone (the edited function, wrapped in
its classes so private names and ``super()`` compile as they did) and its code
object is swapped into the live function: ``fn.__code__ = mutated``.  Every
reference to that function — the ledger's target, a helper called through the
module's globals, a bound method — runs the mutant, and putting the old code
object back ends it.

Module-level code (tables, constants, class bodies, default values) and
functions that only run while the module is imported cannot be reached by a
code swap: for those the edited module body is executed again *into the live
module's namespace*, and the namespace is restored from a snapshot afterwards.
Functions defined in the module keep their identity (they read the patched
globals); only the mutated names change.
"""

from __future__ import annotations

import ast
import contextlib
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lockstep.strength.coverage import module_of
from lockstep.strength.mutants import Edit, MutableFile, Mutant, first_line


class MutantBroke(Exception):
    """The mutated module body raised: the change is visible at import (a kill)."""


class CannotSwitch(Exception):
    """The mutant cannot be compiled or installed (an error, not a verdict)."""


_UNWRAP = ("__wrapped__", "__func__", "fget", "fset", "fdel", "func")


def _candidates(value: object) -> Iterator[types.FunctionType]:
    """Functions reachable from a module or class attribute through decorators and descriptors."""
    seen: set[int] = set()
    todo = [value]
    while todo:
        item = todo.pop()
        if id(item) in seen or item is None:
            continue
        seen.add(id(item))
        if isinstance(item, types.FunctionType):
            yield item
            todo.extend(c.cell_contents for c in item.__closure__ or () if _filled(c))
        todo.extend(getattr(item, name, None) for name in _UNWRAP)


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _find_code(code: types.CodeType, name: str, first_line: int) -> types.CodeType | None:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name and const.co_firstlineno == first_line:
                return const
            found = _find_code(const, name, first_line)
            if found is not None:
                return found
    return None


class Switchboard:
    """The files under test in one worker, and the one mutant active at a time."""

    def __init__(self, files: Mapping[Path, bool]) -> None:
        """``files``: each source file, and whether its ``__main__`` block has mutants."""
        self.files = {path: MutableFile(path, main_guard=guard) for path, guard in files.items()}
        self.modules = {path: module_of(path) for path in files}

    def _outer(self, edit: Edit) -> ast.FunctionDef | ast.AsyncFunctionDef:
        return next(s for s in edit.scope if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef))

    def _function_code(self, mf: MutableFile, edit: Edit) -> types.CodeType:
        outer = self._outer(edit)
        node: ast.stmt = outer
        for cls in reversed(edit.scope[: edit.scope.index(outer)]):
            assert isinstance(cls, ast.ClassDef)
            wrapper = ast.ClassDef(
                name=cls.name, bases=[], keywords=[], body=[node], decorator_list=[]
            )
            if hasattr(cls, "type_params"):  # Python 3.12+
                setattr(wrapper, "type_params", [])  # noqa: B010
            node = ast.copy_location(wrapper, cls)
        futures = [
            s for s in mf.tree.body if isinstance(s, ast.ImportFrom) and s.module == "__future__"
        ]
        module = ast.Module(body=[*futures, node], type_ignores=[])
        code = compile(module, str(mf.path), "exec", dont_inherit=True)
        found = _find_code(code, outer.name, first_line(outer))
        if found is None:
            raise CannotSwitch(f"no code object for {outer.name}")
        return found

    def _live(self, mutant: Mutant, edit: Edit) -> types.FunctionType | None:
        module = self.modules.get(mutant.file)
        if module is None:
            return None
        outer = self._outer(edit)
        namespace: dict[str, Any] = vars(module)
        for cls in edit.scope[: edit.scope.index(outer)]:
            holder = namespace.get(cls.name)  # type: ignore[attr-defined]
            if not isinstance(holder, type):
                return None
            namespace = dict(vars(holder))
        first = first_line(outer)
        for fn in _candidates(namespace.get(outer.name)):
            if fn.__code__.co_name == outer.name and fn.__code__.co_firstlineno == first:
                return fn
        return None

    def _module_code(self, mf: MutableFile, rerun: tuple[int, ...] | None) -> types.CodeType:
        body = mf.tree.body
        if rerun is None:
            return compile(mf.tree, str(mf.path), "exec", dont_inherit=True)
        futures = [
            i
            for i, s in enumerate(body)
            if isinstance(s, ast.ImportFrom) and s.module == "__future__" and i not in rerun
        ]
        part = ast.Module(body=[body[i] for i in (*futures, *rerun)], type_ignores=[])
        return compile(part, str(mf.path), "exec", dont_inherit=True)

    @contextlib.contextmanager
    def active(self, mutant: Mutant, *, rerun: tuple[int, ...] | None) -> Iterator[None]:
        """Run the block with ``mutant`` switched on; always switched off after.

        ``rerun``: the module-level statements (indexes) to run again with the mutant in
        (:meth:`~lockstep.strength.dataflow.ModuleFlow.rerun`); None runs none for a
        mutant inside a function, and the whole body for one at module level.
        Raises :class:`MutantBroke` when the mutated module code raises, and
        :class:`CannotSwitch` when the mutant cannot be installed at all.
        """
        mf = self.files[mutant.file]
        edit = mf.edits[mutant.index]
        module = self.modules.get(mutant.file)
        live = None if mutant.module_level else self._live(mutant, edit)
        whole = mutant.module_level or rerun is not None or live is None
        edit.apply()
        try:
            fn_code = self._function_code(mf, edit) if live is not None else None
            module_code = self._module_code(mf, rerun) if whole else None
        except (SyntaxError, ValueError, TypeError) as e:
            raise CannotSwitch(f"does not compile: {e}") from None
        finally:
            edit.revert()
        if whole and module is None:
            raise CannotSwitch(f"{mf.path.name} is not imported in this process")
        original = live.__code__ if live is not None else None
        snapshot = dict(vars(module)) if whole and module is not None else None
        defaults: list[tuple[types.FunctionType, tuple[Any, Any]]] = []
        try:
            if live is not None and fn_code is not None:
                try:
                    live.__code__ = fn_code
                except ValueError as e:  # closure shape differs
                    raise CannotSwitch(str(e)) from None
            if module_code is not None and module is not None:
                try:
                    exec(module_code, vars(module))
                except Exception as e:
                    raise MutantBroke(f"the module body raised {type(e).__name__}: {e}") from None
                assert snapshot is not None
                defaults = _carry_defaults(snapshot, vars(module))
            yield
        finally:
            if live is not None and original is not None:
                live.__code__ = original
            for fn, saved in defaults:
                fn.__defaults__, fn.__kwdefaults__ = saved
            if snapshot is not None and module is not None:
                namespace = vars(module)
                namespace.clear()
                namespace.update(snapshot)


def _carry_defaults(
    old: dict[str, Any], new: dict[str, Any]
) -> list[tuple[types.FunctionType, tuple[Any, Any]]]:
    """Give the functions callers already hold the default values the mutated body defined.

    A mutated default (``def f(x, strict=True)``) lives in the new function object,
    but a ledger's target is the old one: copy the defaults over, to be put back after.
    """
    saved: list[tuple[types.FunctionType, tuple[Any, Any]]] = []
    for name, before in old.items():
        after = new.get(name)
        if (
            isinstance(before, types.FunctionType)
            and isinstance(after, types.FunctionType)
            and before is not after
            and (before.__defaults__, before.__kwdefaults__)
            != (after.__defaults__, after.__kwdefaults__)
        ):
            saved.append((before, (before.__defaults__, before.__kwdefaults__)))
            before.__defaults__ = after.__defaults__
            before.__kwdefaults__ = after.__kwdefaults__
    return saved
