"""Bound methods as values: ``{"$method": [self, "name"]}``.

An object keeps a bound method as a callback: furl hands each ``Path`` its URL's
``furl._force_absolute``, so every furl object holds one, and every call that touched a
furl was skipped.  A bound method is its object and the name of the function its class
holds: ``self`` freezes as any value does (the enclosing object again is a ``{"$ref": n}``
cycle), and the name is kept only when looking it up on the class statically, through the
``__dict__`` of each class of the MRO, finds that very function -- so it thaws to an equal
method.  A classmethod bound to its class freezes with the class by name (``$fn``).

Thawing rebuilds ``types.MethodType(function, self)`` from the function the thawed
object's class holds under that name: a plain Python function (a classmethod's, for a
class), found without ``getattr``, so no descriptor, ``__getattr__`` or property runs.
"""

from __future__ import annotations

import re
import types
from typing import TYPE_CHECKING, Any, Final

from lockstep.canon._core import JSON, Unfreezable, _short, check_level
from lockstep.canon.callables import _names, freeze_callable
from lockstep.canon.decoding import TAG_DECODERS, decode_at, list_payload, str_payload
from lockstep.canon.registry import _CALLABLE_SCOPE
from lockstep.errors import CanonError, ThawError

if TYPE_CHECKING:
    from lockstep.canon.encoding import Encoder


def _held(cls: type[Any], name: str) -> Any:
    """What the first class of ``cls``'s MRO holding ``name`` holds, read from ``__dict__``."""
    for owner in cls.__mro__:
        namespace = owner.__dict__
        if name in namespace:
            return namespace[name]
    return None


def _function_of(owner: Any, name: str) -> types.FunctionType | None:
    """The plain function ``owner`` binds under ``name``: a function its class holds, or,
    for a class, a classmethod's function that class holds; None for anything else."""
    if isinstance(owner, type):
        held = _held(owner, name)
        func = held.__func__ if type(held) is classmethod else None
    else:
        func = _held(type(owner), name)
    return func if type(func) is types.FunctionType else None


def freeze_method(encoder: Encoder, v: types.MethodType, depth: int) -> JSON:
    """``{"$method": [self, name]}`` for a method bound to an object that freezes."""
    owner = v.__self__
    func = v.__func__
    name = getattr(func, "__name__", None)
    # a method bound before the recorder wrapped its class's function (mistune's parsers,
    # made at import, keep ``getattr(self, "parse_" + name)``) is that function still
    if type(name) is not str or not _names(_function_of(owner, name), func):
        named = _free_function(func)
        if named is None:
            raise Unfreezable(
                f"cannot freeze the bound method {_short(repr(v))}: its class does not hold "
                "that function under its name, so it could not be bound again"
            )
        check_level(depth + 1)  # a module's function bound to an object by types.MethodType
        return {"$method": [encoder.child(owner, ".__self__", depth + 2), named]}
    check_level(depth + 1)
    return {"$method": [encoder.child(owner, ".__self__", depth + 2), name]}


_BUILTIN_OWNERS: Final[frozenset[type[Any]]] = frozenset(
    {re.Pattern, str, bytes, int, float, complex, tuple, frozenset}
)
"""Classes whose objects' builtin methods a value may hold bound (pyparsing keeps
``self.re_match = self.re.match`` in every ``Word``, ``Char`` and ``Regex``): each
object freezes as a value, none of their methods does more than read it, and none can
change it.  A list's ``append`` is refused: thawed, it would append to a copy of the
list, not to the one the value holds beside it."""


def builtin_owner(v: Any) -> bool:
    """Whether ``v`` is a builtin method bound to an object of :data:`_BUILTIN_OWNERS`."""
    owner = getattr(v, "__self__", None)
    return type(owner) in _BUILTIN_OWNERS and _bound_builtin(type(owner), v.__name__)


def _bound_builtin(cls: type[Any], name: Any) -> bool:
    return (
        type(name) is str
        and not name.startswith("_")
        and type(cls.__dict__.get(name)) is types.MethodDescriptorType
    )


def freeze_builtin_method(encoder: Encoder, v: Any, depth: int) -> JSON:
    """``{"$method": [owner, name]}`` for a builtin method bound to such an object."""
    check_level(depth + 1)
    return {"$method": [encoder.child(v.__self__, ".__self__", depth + 2), v.__name__]}


def _free_function(func: Any) -> dict[str, Any] | None:
    """``{"$fn": name}`` for a module-level function of the project bound to an object with
    ``types.MethodType`` (mistune's abbr plugin binds its ``process_text`` to a parser),
    or None."""
    if type(func) is not types.FunctionType:
        return None
    try:
        frozen = freeze_callable(func)
    except Unfreezable:
        return None
    return frozen if "$fn" in frozen else None


def _dec_method(payload: Any, path: str, depth: int) -> types.MethodType:
    frozen_self, name = list_payload("$method", payload, path, depth, "[self, name]")
    if type(name) is dict and set(name) == {"$fn"}:  # a module's function bound to it
        func = decode_at(name, path, depth + 2)
        if type(func) is not types.FunctionType:
            raise CanonError(f"$method binds {_short(repr(name))}, which is not a function", path)
        return types.MethodType(func, decode_at(frozen_self, path, depth + 2))
    name = str_payload("$method", name, path)
    owner = decode_at(frozen_self, path, depth + 2)
    if type(owner) in _BUILTIN_OWNERS:
        if not _bound_builtin(type(owner), name):
            raise CanonError(
                f"$method names {_short(name)}, which {type(owner).__name__} does not hold "
                "as a public method",
                path,
            )
        return getattr(owner, name)  # type: ignore[no-any-return]
    func = _function_of(owner, name)
    if func is None:
        cls = type(owner)
        if _project_class(cls) and name.isidentifier() and _held(cls, name) is None:
            raise ThawError(  # the project's class: a refactor renamed or removed it
                f"$method names {_short(name)}, which today's {cls.__qualname__} no longer "
                "holds (renamed or removed?)",
                path,
            )
        raise CanonError(
            f"$method names {_short(name)}, which {cls.__name__} does not hold as a method",
            path,
        )
    return types.MethodType(func, owner)


def _project_class(cls: type[Any]) -> bool:
    """Whether ``cls`` is of the targets' own packages (:data:`_CALLABLE_SCOPE`)."""
    module = getattr(cls, "__module__", None)
    return isinstance(module, str) and module.split(".")[0] in _CALLABLE_SCOPE


def enc_builtin_method(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    """A bound C method of a subclass of ``builtin_function_or_method`` (``re.Pattern``'s
    ``match`` is a ``builtin_method``), which the encoder's type dispatch does not know."""
    if isinstance(v, types.BuiltinMethodType) and builtin_owner(v):
        return freeze_builtin_method(encoder, v, depth)
    return None


TAG_DECODERS["$method"] = _dec_method
