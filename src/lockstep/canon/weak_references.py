"""A weak reference held in a value: ``{"$weakref": target}``, ``{"$weakref": null}`` dead.

bidict's inverse keeps its forward mapping by ``weakref.ref(self)``, and an ordered
bidict links its nodes forward by weak references: no call that touched ``.inverse`` or
an ordered bidict could be frozen, and 84% of bidict's calls were skipped under its
suite.  A weak reference to an object of the project the value holds around it (the
inverse's link back to the mapping being frozen) is that object again, ``{"$ref": n}``,
and thaws to a new ``weakref.ref`` to it.

A reference to anything else is refused, as before: thawed, nothing would keep its
target alive (the reference would be dead where the recorded one was not), and freezing
the target through it made an ordered bidict's chain of nodes, each linked weakly to the
next, freeze again at every node (bidict's suite recorded in ten minutes, not fifteen
seconds).  So is a reference with a callback (the callback is code), and a subclass of
``weakref.ref`` (``WeakMethod`` and the like keep more than their target).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from lockstep.canon._core import JSON, Unfreezable, check_level
from lockstep.canon.decoding import TAG_DECODERS, decode_at
from lockstep.canon.encoding import FALLBACK_ENCODERS
from lockstep.canon.objects import held_around
from lockstep.errors import CanonError

if TYPE_CHECKING:
    from lockstep.canon.encoding import Encoder


def _enc_weakref(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    if type(v) is not weakref.ReferenceType:
        return None
    if v.__callback__ is not None:
        raise Unfreezable("cannot freeze a weakref with a callback: the callback is code")
    target = v()
    check_level(depth + 1)
    if target is None:
        return {"$weakref": None}
    if not held_around(target):
        raise Unfreezable(
            f"cannot freeze a weakref to a {type(target).__qualname__} that the value does "
            "not hold around it: thawed, nothing would keep its target alive"
        )
    return {"$weakref": encoder.child(target, "()", depth + 1)}


class _Gone:
    """An object that is gone as soon as it is made: a dead reference's target."""


def _dec_weakref(payload: Any, path: str, depth: int) -> Any:
    if payload is None:
        return weakref.ref(_Gone())  # the object is freed at once: a dead reference
    target = decode_at(payload, path, depth + 1)
    try:
        return weakref.ref(target)
    except TypeError:
        raise CanonError(
            f"malformed $weakref value: a {type(target).__name__} cannot be weakly referenced",
            path,
        ) from None


FALLBACK_ENCODERS.append(_enc_weakref)
TAG_DECODERS["$weakref"] = _dec_weakref
