"""What an exception of the target's own package carries besides its message.

A row that raised kept the exception's type and the start of its message.  A package's
own exceptions carry more, and that is what its callers read: rfc3986's
``UnpermittedComponentError`` names the component in ``component_name``, schema's
``SchemaError`` holds ``autos`` and ``errors``, voluptuous's ``Invalid`` its ``_path``
(read through a property).  A one-line change that filled ``component_name`` with the
value instead left type and message alone: the suite failed, the ledger replayed green.
So a row whose call raised an exception of a class defined in the target's own top-level
package keeps the exception's attributes too (its ``__dict__`` but dunder names), each
frozen as values are, in its ``exc_state``; replay compares them as it compares a result.

Each attribute stands alone: one that cannot be frozen, or whose frozen form holds an
object's address (a ``repr`` kept in a message list: it differs in every process), is
left out, and the others are kept.  An exception held inside an attribute (voluptuous's
``MultipleInvalid.errors``) is compared by its class, arguments and attributes, not by
the chain it was raised in: its ``__context__`` is whatever the interpreter raised first
(``'>=' not supported between ...``), whose words a refactor (``not v >= lo`` to ``not lo
<= v``) or another Python version changes while the library's behaviour does not.

Left out, as before: exceptions of other packages and of the standard library (whose
attributes may hold a response, a process, a file: their message stays the contract),
and a state of more than :data:`MOST_BYTES`.  A ledger recorded before has no
``exc_state`` and replays as it did.
"""

from __future__ import annotations

import re
from typing import Final

from lockstep import canon
from lockstep.canon import JSON
from lockstep.canon.exception_values import without_chains

MOST_BYTES: Final = 1 << 16
"""Largest frozen state kept (past it the row keeps type and message, as before)."""

_ADDRESS: Final = re.compile(rb"0x[0-9a-fA-F]{6,16}")
"""An object's address in a frozen form (as recording's verification reads one)."""


def exception_state(exc: BaseException, fn: str) -> JSON | None:
    """``exc``'s attributes, each frozen, when its class belongs to the package of target
    ``fn`` (``pkg.mod:qual``); None when there is nothing to keep (see the module's text)."""
    module = getattr(type(exc), "__module__", None)
    top = fn.partition(":")[0].partition(".")[0]
    if not isinstance(module, str) or not top or module.partition(".")[0] != top:
        return None
    try:
        attributes = dict(vars(exc))
    except TypeError:
        return None
    state: dict[str, JSON] = {}
    size = 0
    for name, value in attributes.items():
        if not isinstance(name, str) or name[:1] == "$" or _dunder(name):
            continue
        try:
            with without_chains():
                frozen = canon.encode(value, path=f"the exception's {name}")
            written = canon.canonical_json(frozen)
        except Exception:  # this attribute cannot be frozen: the others still can
            continue
        if _ADDRESS.search(written):
            continue
        size += len(written)
        state[name] = frozen
    if not state or size > MOST_BYTES:
        return None
    return state


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")
