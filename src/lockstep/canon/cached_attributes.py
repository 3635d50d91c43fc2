"""Attributes a class caches on its objects: values derived from the object, not its state.

``functools.cached_property`` (and the caching descriptors libraries had before it:
Django's and boltons' ``cachedproperty``, Pyramid's ``reify``, the many ``lazy_property``)
computes a value the first time it is read and keeps it in the object's ``__dict__`` under
the attribute's name.  Whether it is there says which code read the attribute first, not
what the object is: a ``Currency`` that py-moneyed keeps in a module-level registry holds
its ``name`` once any earlier test asked for it, so a call returning it froze one way
under the whole suite and another in the verifying interpreter, and every such row was
refused.  An object is therefore frozen without those values: thawed, it computes each
again when it is read, from the state that was frozen.  A function that assigns such an
attribute itself (``obj.name = "override"``) loses that assignment in its rows.
"""

from __future__ import annotations

import functools
import typing
from typing import Any, Final

from lockstep.canon.registry import _CACHED_NAMES

CACHING_KINDS: Final = frozenset(
    {"cachedproperty", "cachedattribute", "lazyproperty", "lazyattribute", "reify"}
)
"""Names of descriptor classes (lower case, without underscores) that cache their value in
the object's ``__dict__`` under the attribute's name."""


def cached_names(cls: type[Any]) -> frozenset[str]:
    """The attributes ``cls`` (through its bases) defines with a caching descriptor."""
    known = _CACHED_NAMES.get(cls)
    if known is None:
        known = _CACHED_NAMES[cls] = _find(cls)
    return known


def _find(cls: type[Any]) -> frozenset[str]:
    seen: set[str] = set()
    found: set[str] = set()
    if isinstance(cls, type) and issubclass(cls, typing.Generic):
        # ``Box[int]()`` keeps ``__orig_class__``, the alias it was made through: typing's
        # record, not the object's state (markdown-it's ``Ruler[T]()`` in every parser
        # held one, and no call of a parser could be frozen)
        found.add("__orig_class__")
    for owner in getattr(cls, "__mro__", ()):
        for name, attr in vars(owner).items():
            if name in seen:
                continue  # a subclass's own definition of the name decides
            seen.add(name)
            if _caches(attr):
                found.add(name)
    return frozenset(found)


def _caches(attr: Any) -> bool:
    if isinstance(attr, functools.cached_property):
        return True
    kind = type(attr)
    return (
        kind.__name__.lower().replace("_", "") in CACHING_KINDS
        and getattr(kind, "__get__", None) is not None
    )


def without_cached(state: Any, cls: type[Any]) -> Any:
    """``object.__getstate__``'s ``state`` of an object of ``cls`` without the values its
    caching attributes keep (the state itself when it holds none)."""
    names = cached_names(cls)
    if not names:
        return state
    if type(state) is dict:
        return _dropped(state, names)
    if type(state) is tuple and len(state) == 2 and type(state[0]) is dict:  # __dict__, slots
        return (_dropped(state[0], names), state[1])
    return state


def _dropped(attrs: dict[str, Any], names: frozenset[str]) -> dict[str, Any]:
    if names.isdisjoint(attrs):
        return attrs
    return {k: v for k, v in attrs.items() if k not in names}


__all__ = ["CACHING_KINDS", "cached_names", "without_cached"]
