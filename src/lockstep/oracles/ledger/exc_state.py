"""What an exception of the target's own package carries besides its message.

A row that raised kept the exception's type and the start of its message.  A package's
own exceptions carry more, and that is what its callers read: rfc3986's
``UnpermittedComponentError`` names the component in ``component_name``, marshmallow's
``ValidationError`` holds its ``messages``.  A one-line change that filled
``component_name`` with the value instead left type and message alone: the suite failed,
the ledger replayed green.  So a row whose call raised an exception of a class defined in
the target's own top-level package keeps the exception's public attributes too (those of
its ``__dict__`` whose names do not start with ``_``), frozen as values are, in its
``exc_state``; replay compares them as it compares a result.

Left out, as before: exceptions of other packages and the standard library (whose
attributes may hold a response, a process, a file: their message stays the contract),
an exception with no public attribute, and one whose attributes cannot be frozen or
freeze to more than :data:`MOST_BYTES`.  A ledger recorded before has no ``exc_state``
and replays as it did.
"""

from __future__ import annotations

from typing import Final

from lockstep import canon
from lockstep.canon import JSON

MOST_BYTES: Final = 1 << 16
"""Largest frozen state kept (past it the row keeps type and message, as before)."""


def exception_state(exc: BaseException, fn: str) -> JSON | None:
    """``exc``'s public attributes, frozen, when its class belongs to the package of target
    ``fn`` (``pkg.mod:qual``); None when there is nothing to keep (see the module's text)."""
    module = getattr(type(exc), "__module__", None)
    top = fn.partition(":")[0].partition(".")[0]
    if not isinstance(module, str) or not top or module.partition(".")[0] != top:
        return None
    try:
        attributes = vars(exc)
    except TypeError:
        return None
    state = {
        name: value
        for name, value in attributes.items()
        if isinstance(name, str) and not name.startswith("_")
    }
    if not state:
        return None
    try:
        frozen = canon.encode(state, path="the exception's attributes")
        if len(canon.canonical_json(frozen)) > MOST_BYTES:
            return None
    except Exception:  # an attribute that cannot be frozen: the type and message remain
        return None
    return frozen
