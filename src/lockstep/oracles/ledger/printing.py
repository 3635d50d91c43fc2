"""Whether a target's own code prints: named when no recorded call of it kept any text.

What a recorded call prints is kept in its row (:mod:`.printed`), but a call made while a
test patched ``print`` (natsort's ``__main__.sort_and_print_entries``), or printing
through a stream kept before the call, keeps none, and its rows then say nothing of
printing.  The recording names such a target, where a user reads what the ledger
guards.  Read from the target's code alone (its own and its nested functions' names: a
call of ``print``, a use of ``sys.stdout`` or ``sys.__stdout__``), never by running it:
a note worth reading names a function that prints itself.  Whether to capture at all is
decided more widely, by what the target can reach (:func:`.set_reach.target_reaches_printing`),
which errs toward capturing.
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
