"""Lambdas written in a module's body and kept in one of its tables, not under a name.

simpleeval keeps ``ast.In: lambda x, y: op.contains(y, x)`` among its
``DEFAULT_OPERATORS``, and every evaluator copies that table into its own state: no name
holds the lambda (:func:`~lockstep.canon.callables._kept_lambda` finds none), and it is
written in no function (:func:`~lockstep.canon.callables._local_lambda`), so every call
of ``SimpleEval.eval`` was skipped.  Such a lambda freezes by where its module keeps it,
``{"$held": ["simpleeval:DEFAULT_OPERATORS", {"$fn": "ast:In"}]}``: the module-level dict
(or list, or tuple) and the key (or index) it sits under, a key that is itself a name
(a text, a number, a class or function frozen by name).  It thaws to what that table
holds there today, read from the module's ``__dict__`` and the table's own items: a
lambda whose body changed is read as it is now (the rows show what it computes), and a
lambda added before it in the table or the module moves nothing.  A lambda no table of
its module holds stays refused.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Final

_TABLES: Final = (dict, list, tuple)
"""What a module-level name may hold a lambda in (exactly these types: a subclass's own
``__getitem__`` would run at thaw)."""

_PLACES: dict[int, tuple[types.FunctionType, tuple[str, Any] | None]] = {}
"""Per lambda met (kept alive here, so its id stays its own): where its module keeps it."""


def held_place(v: types.FunctionType) -> tuple[str, Any] | None:
    """``(name, key)``: the module-level table of ``v``'s own module holding ``v`` and
    the key (index) it holds it under, the first such name in sorted order; None for a
    lambda written elsewhere (in a class or function), or held by no table."""
    known = _PLACES.get(id(v))
    if known is not None and known[0] is v:
        return known[1]
    place = _find(v)
    _PLACES[id(v)] = (v, place)
    return place


def _find(v: types.FunctionType) -> tuple[str, Any] | None:
    module_name = v.__module__
    if v.__qualname__ != "<lambda>" or not isinstance(module_name, str):
        return None
    module = sys.modules.get(module_name)
    if module is None:
        return None
    namespace = object.__getattribute__(module, "__dict__")
    if v.__globals__ is not namespace:
        return None
    for name in sorted(k for k in namespace if isinstance(k, str)):
        table = namespace[name]
        if type(table) is dict:
            for key, item in table.items():
                if item is v:
                    return f"{module_name}:{name}", key
        elif type(table) in (list, tuple):
            for index, item in enumerate(table):
                if item is v:
                    return f"{module_name}:{name}", index
    return None


def held_in(table: Any, key: Any) -> Any:
    """The function ``table`` (a module's dict, list or tuple) holds under ``key`` today: the
    lambda recorded there, or a function a refactor put in its place; None when it holds
    no function there."""
    found: Any = None
    if type(table) is dict:
        try:
            found = table.get(key)
        except TypeError:  # a key that cannot be hashed: no entry
            return None
    elif type(table) in (list, tuple) and type(key) is int and 0 <= key < len(table):
        found = table[key]
    if type(found) in (types.FunctionType, types.BuiltinFunctionType):
        return found  # (a lambda, or what a refactor put in its place: a function)
    return None


__all__ = ["held_in", "held_place"]
