"""Sentinels: a marker a module keeps, frozen as where it is kept,
``{"$sentinel": "pkg.mod:_absent"}``.

``_MISSING = object()`` stands for "no value" where None is a value: orderedmultidict's
item list keeps ``_absent`` as the key of its root node, so every furl ``Query`` holds
one.  A bare object has no state to freeze; what it means is which marker it is.  So do
the markers a factory makes (boltons' ``_MISSING = make_sentinel('_MISSING')``, an object
of a class defined inside the factory, which no name reaches): they freeze the same way.

Which module: the modules of the classes of the objects being frozen around it,
innermost first (the node's class's module keeps its marker); of the names holding it
there, the first in sorted order.  Both read the value's own objects and their modules,
never what was frozen before, so record and replay decide alike.  A bare object kept by
none of them (made by the call, or a module's that no enclosing object belongs to) is
refused as before.

Thawing looks the name up in the ``__dict__`` of a module already imported (or a
configured target's), and accepts only a marker there (a bare ``object``, or an object of
a class defined inside a function): nothing runs.
"""

from __future__ import annotations

import sys
import threading
import types
from typing import Any, Final

from lockstep.canon._core import JSON, Unfreezable, _short, check_level
from lockstep.canon.decoding import TAG_DECODERS, str_payload
from lockstep.canon.registry import module_and_rest
from lockstep.errors import CanonError

_MARKERS: dict[str, tuple[types.ModuleType, int, dict[int, tuple[Any, str]]]] = {}
"""Per module name: (the module, how many globals it had, bare objects by id -> (object,
the first sorted name holding it)); built again when the module's globals changed."""
_LOCK: Final = threading.Lock()


def freeze_sentinel(v: object, enclosing: list[type[Any]], depth: int) -> JSON:
    """``{"$sentinel": "module:name"}`` for a bare object kept by the module of one of the
    ``enclosing`` classes (innermost last in the list), or refuse it."""
    frozen = marker_of(v, enclosing, depth)
    if frozen is None:
        raise Unfreezable(
            "cannot freeze a bare object(): only a marker kept as a global by the module of "
            "an object holding it freezes (by that name)"
        )
    return frozen


def marker_of(v: object, enclosing: list[type[Any]], depth: int) -> JSON | None:
    """``{"$sentinel": "module:name"}`` for a marker (:func:`is_marker`) kept by the module
    of one of the ``enclosing`` classes (innermost last in the list) or, for a factory's
    marker, by its own class's module; else None."""
    seen: set[str] = set()
    # the marker's own class's module last: a factory's class is set in the module that
    # called the factory, which is where such a marker is kept
    own = [type(v)] if type(v) is not object else []
    for cls in [*reversed(enclosing), *own]:
        module_name = getattr(cls, "__module__", None)
        if not isinstance(module_name, str) or module_name in seen:
            continue
        seen.add(module_name)
        name = _marker_name(module_name, v)
        if name is not None:
            check_level(depth)
            return {"$sentinel": f"{module_name}:{name}"}
    return None


def is_marker(value: object) -> bool:
    """A bare ``object()``, or an object of a class made inside a function (a factory's)."""
    t = type(value)
    return t is object or (
        "<locals>" in t.__qualname__
        and not isinstance(value, type | types.FunctionType | types.ModuleType)
    )


def _marker_name(module_name: str, v: object) -> str | None:
    module = sys.modules.get(module_name)
    if not isinstance(module, types.ModuleType):
        return None
    namespace: dict[str, Any] = object.__getattribute__(module, "__dict__")
    with _LOCK:
        known = _MARKERS.get(module_name)
        if known is None or known[0] is not module or known[1] != len(namespace):
            markers: dict[int, tuple[Any, str]] = {}
            for key in sorted(k for k in namespace if isinstance(k, str)):
                value = namespace[key]
                if is_marker(value) and id(value) not in markers:
                    markers[id(value)] = (value, key)
            known = _MARKERS[module_name] = (module, len(namespace), markers)
    found = known[2].get(id(v))
    return found[1] if found is not None and found[0] is v else None


def _dec_sentinel(payload: Any, path: str, depth: int) -> object:
    name = str_payload("$sentinel", payload, path)
    module, key = module_and_rest(name)
    found: Any = None
    if module is not None and key:
        found = object.__getattribute__(module, "__dict__").get(key)
    if found is None or not is_marker(found):
        raise CanonError(
            f"$sentinel names {_short(name)}, which is not a marker (a bare object(), or an "
            "object of a class made inside a function) kept by a module already imported",
            path,
        )
    return found


TAG_DECODERS["$sentinel"] = _dec_sentinel
