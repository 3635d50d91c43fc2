"""Whether a target prints: what a call writes to stdout is no part of its row.

A ledger freezes what a call returns, raises and changes in its arguments.  A function
whose behaviour is printing (natsort's ``__main__.sort_and_print_entries``, a billing
export that prints its CSV lines and returns a count) records a row that stays green
whatever it prints, so the recording says so for each such target, where a user reads
what the ledger guards.  Read from the target's code (its own and its nested functions'
names), never by running it: a call of ``print`` or a use of ``sys.stdout`` or
``sys.__stdout__``.  A function that prints through another of its module's functions is
not seen; the note is a warning, not a guarantee.
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Final

_PRINTING: Final = (
    ("print", "print()"),
    ("stdout", "sys.stdout"),
    ("__stdout__", "sys.__stdout__"),
)
"""Names in a code object that mean it writes to stdout, and how the note shows them."""


def prints(fn: str) -> str:
    """How the target ``module:qualname`` (its module already imported) writes to
    stdout (``print()``), or "" when its code shows no such write or it is not found."""
    module_name, _, qualname = fn.partition(":")
    found: object = sys.modules.get(module_name)
    for part in qualname.split(".") if found is not None and qualname else ():
        found = inspect.getattr_static(found, part, None)
        if found is None:
            return ""
    if isinstance(found, staticmethod | classmethod):
        found = found.__func__
    if isinstance(found, property):
        found = found.fget
    code = getattr(inspect.unwrap(found), "__code__", None) if callable(found) else None
    return _written(code) if isinstance(code, types.CodeType) else ""


def _written(code: types.CodeType) -> str:
    for name, shown in _PRINTING:
        if name in code.co_names:
            return shown
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            inner = _written(const)
            if inner:
                return inner
    return ""


__all__ = ["prints"]
