"""Default arguments that hold a recorded member: rebound to its wrapper while recording.

Recording replaces each member of the surface by a wrapper, wherever a module binds it by
name (:meth:`~lockstep.oracles.ledger.wrapping.Installation.wrap`).  A default argument
was evaluated when its function was defined and still held the original:
``def cached(cache, key=keys.hashkey)`` keeps the original ``hashkey``, and cachetools'
own test ``assertIs(wrapper.cache_key, cachetools.keys.hashkey)`` failed under recording
only (seven tests), so nothing was recorded.  The defaults of the package's functions
(and its classes' methods) that hold an original now hold its wrapper, as the module
does, until the recording ends.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

Pending = Mapping[int, tuple[Any, Any, Any]]
"""``id(original) -> (original, replacement, _)``, as the installation keeps them."""


def rebound_defaults(
    pending: Pending, extra: Iterable[Any] = ()
) -> list[tuple[types.FunctionType, str, Any]]:
    """Swap, in the functions of every imported module of the originals' packages (and in
    ``extra``, the originals themselves), each default that is a pending original for its
    replacement; return ``(function, attribute, old value)`` for each swap, to undo it."""
    tops = {
        str(getattr(original, "__module__", "") or "").partition(".")[0]
        for original, _, _ in pending.values()
    }
    tops.discard("")
    swapped: list[tuple[types.FunctionType, str, Any]] = []
    seen: set[int] = set()
    for fn in (*_functions_of(tops), *extra):
        if isinstance(fn, types.FunctionType) and id(fn) not in seen:
            seen.add(id(fn))
            swapped.extend(_swap(fn, pending))
    return swapped


def _functions_of(tops: set[str]) -> Iterator[Any]:
    """The functions, and the methods of the classes, each module of ``tops`` defines, and
    what each wraps (a member already replaced by its wrapper, which takes the member's
    ``__module__``, still calls the original, whose defaults count)."""
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] not in tops:
            continue
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for value in list(namespace.values()):
            if getattr(value, "__module__", None) != name:
                continue
            if isinstance(value, type):
                for member in list(vars(value).values()):
                    yield from _layers(getattr(member, "__func__", member))
            else:
                yield from _layers(value)


def _layers(value: Any) -> Iterator[Any]:
    """``value`` and each function it wraps (``__wrapped__``), a few deep at most."""
    for _ in range(8):
        if value is None:
            return
        yield value
        value = getattr(value, "__wrapped__", None)


def _swap(
    fn: types.FunctionType, pending: Pending
) -> Iterator[tuple[types.FunctionType, str, Any]]:
    known = pending.__contains__
    defaults = fn.__defaults__
    if defaults and any(map(known, map(id, defaults))):
        fn.__defaults__ = tuple(_replaced(value, pending) for value in defaults)
        yield fn, "__defaults__", defaults
    keywords = fn.__kwdefaults__
    if keywords and any(map(known, map(id, keywords.values()))):
        fn.__kwdefaults__ = {k: _replaced(v, pending) for k, v in keywords.items()}
        yield fn, "__kwdefaults__", keywords


def _replaced(value: Any, pending: Pending) -> Any:
    """``value``'s replacement, followed while the replacement is pending too."""
    entry = pending.get(id(value))
    while entry is not None and entry[0] is value:
        value = entry[1]
        entry = pending.get(id(value))
    return value


__all__ = ["rebound_defaults"]
