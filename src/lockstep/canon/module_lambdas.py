"""Lambdas written at a module's top level and kept in its data, not under a name.

simpleeval keeps ``ast.In: lambda x, y: op.contains(y, x)`` among its
``DEFAULT_OPERATORS``, and every evaluator copies that table into its own state: no name
holds the lambda (:func:`~lockstep.canon.callables._kept_lambda` finds none), and it is
written in no function (:func:`~lockstep.canon.callables._local_lambda`), so every call
of ``SimpleEval.eval`` was skipped.  Such a lambda is the ``n``-th lambda of the module's
own code, ``{"$lambda": ["pkg.mod:", n]}``: the module's source, read and compiled (never
run), holds its code among the constants of the module's code object, so it thaws to a
function of that code in the module's globals, the function the module made of it but for
identity.  A closure cannot be written there; a lambda with defaults (a value of the
import) stays refused, as one written in a function does.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

_CODES: dict[str, tuple[str, bytes, list[types.CodeType]]] = {}
"""Per module: its file, that file's bytes when compiled, and its top-level lambdas' code."""


def top_level_lambdas(module_name: str) -> list[types.CodeType] | None:
    """The code of each lambda written directly in the body of the imported module
    ``module_name``, in the order of its code's constants; None when its source cannot be
    read (a module without a ``.py`` file, a file that changed and no longer compiles)."""
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None) if module is not None else None
    if not isinstance(file, str) or not file.endswith(".py"):
        return None
    try:
        source = Path(file).read_bytes()
    except OSError:
        return None
    known = _CODES.get(module_name)
    if known is not None and known[0] == file and known[1] == source:
        return known[2]
    try:
        code = compile(source, file, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    lambdas = [c for c in code.co_consts if type(c) is types.CodeType and c.co_name == "<lambda>"]
    _CODES[module_name] = (file, source, lambdas)
    return lambdas


def module_lambda_index(v: types.FunctionType) -> int | None:
    """Which lambda of its module's top-level code ``v`` was made of; None when it was
    written elsewhere, holds defaults, or its module's globals are not its own."""
    module_name = v.__module__
    if (
        v.__qualname__ != "<lambda>"
        or not isinstance(module_name, str)
        or v.__closure__ is not None
        or v.__defaults__ is not None
        or v.__kwdefaults__ is not None
    ):
        return None
    module = sys.modules.get(module_name)
    if module is None or v.__globals__ is not object.__getattribute__(module, "__dict__"):
        return None
    lambdas = top_level_lambdas(module_name)
    if lambdas is None or v.__code__ not in lambdas:
        return None
    return lambdas.index(v.__code__)


def module_lambda(module_name: str, index: Any) -> types.FunctionType | None:
    """The function of the ``index``-th top-level lambda of the imported module
    ``module_name``, in its globals; None when there is no such lambda."""
    lambdas = top_level_lambdas(module_name)
    module = sys.modules.get(module_name)
    if lambdas is None or module is None or type(index) is not int:
        return None
    if not 0 <= index < len(lambdas) or lambdas[index].co_freevars:
        return None
    made = types.FunctionType(lambdas[index], object.__getattribute__(module, "__dict__"))
    made.__qualname__ = "<lambda>"
    made.__module__ = module_name
    return made


__all__ = ["module_lambda", "module_lambda_index", "top_level_lambdas"]
