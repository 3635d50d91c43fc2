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
attributes may hold a response, a process, a file: their message stays the contract).
Left out of a state: an attribute holding more than :data:`MOST_ITEMS` items (a
validator's whole ``instance`` and ``schema``: looked at, never frozen at each raise), and
one that would take the state past :data:`MOST_BYTES`.  A ledger recorded before has no
``exc_state`` and replays as it did.
"""

from __future__ import annotations

from typing import Final

from lockstep import canon
from lockstep.addresses import HEX_ADDRESS_BYTES
from lockstep.canon import JSON
from lockstep.canon.exception_values import without_chains

MOST_BYTES: Final = 1 << 16
"""Largest frozen state kept (past it the row keeps type and message, as before)."""


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
        if not _small(value):  # a validator's whole document: not frozen at each raise
            continue
        try:
            with without_chains():
                frozen = canon.encode(value, path=f"the exception's {name}")
            written = canon.canonical_json(frozen)
        except Exception:  # this attribute cannot be frozen: the others still can
            continue
        if HEX_ADDRESS_BYTES.search(written) or size + len(written) > MOST_BYTES:
            continue
        size += len(written)
        state[name] = frozen
    return state or None


MOST_ITEMS: Final = 2048
"""Items (and characters, in blocks of 64) an attribute holds at most to be frozen: read
by :func:`_small` before it is, so that an exception holding a large document (a
validator's ``instance`` and ``schema``) costs each raise a bounded look, not a freeze
of the document to then drop it past :data:`MOST_BYTES`."""


def _small(value: object) -> bool:
    """Whether ``value`` holds at most :data:`MOST_ITEMS` items, counting the items of
    its lists, tuples, sets and dicts and the attributes of the objects in it, each text
    and bytes by its length in blocks of 64: a look bounded by that count, never a walk
    of a large value."""
    left = MOST_ITEMS
    pending = [value]
    seen: set[int] = set()
    while pending:
        item = pending.pop()
        left -= 1 + (len(item) >> 6 if isinstance(item, str | bytes | bytearray) else 0)
        if left < 0:
            return False
        if isinstance(item, str | bytes | bytearray | int | float | bool) or item is None:
            continue
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            pending.extend(item)
        else:
            inner = getattr(item, "__dict__", None)
            if isinstance(inner, dict):
                pending.extend(inner.values())
    return True


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")
