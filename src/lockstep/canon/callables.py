"""Callables and iterators as arguments: ``$fn`` and ``$iter``."""

from __future__ import annotations

import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from lockstep.canon._core import Unfreezable, _short
from lockstep.canon.decoding import TAG_DECODERS, decode_items, list_payload, str_payload
from lockstep.canon.registry import (
    _CALLABLE_SCOPE,
    _OBJECT_PLANS,
    _TYPES_BY_NAME,
    _imported_object,
)
from lockstep.errors import CanonError

# A module-level function or class passed as an argument (a ``key=``, a ``format=``
# callback) freezes by its name, ``{"$fn": "pkg.mod:qualname"}``.  Data must never name
# code to run, so a name resolves only (a) inside a package a caller allowed with
# :func:`allow_callables_from` (the ledger's target's own package: the recorder and
# replay allow it), looked up in an already-imported module's ``__dict__`` without an
# import or a ``getattr``; (b) to a class registered with :func:`register_type`; or
# (c) to one of a few side-effect-free builtins (:data:`_PURE_BUILTINS`, ``str.lower``
# and the like).  Lambdas, closures, bound methods and partials have no such name and
# stay refused.  Encoding applies the same rule, so a name that froze always thaws.
#
# ``{"$iter": [...]}`` is an iterator argument the recorder materialized at call time
# (:class:`IterItems`); it thaws to a fresh :class:`IterItems` over the same items.

_CALLABLE_TYPES: Final = frozenset(
    {types.FunctionType, types.BuiltinFunctionType, types.MethodDescriptorType}
)
_PURE_BUILTINS: Final = frozenset(
    [
        "abs",
        "bool",
        "bytes",
        "chr",
        "float",
        "frozenset",
        "int",
        "len",
        "list",
        "max",
        "min",
        "ord",
        "repr",
        "round",
        "sorted",
        "str",
        "sum",
        "tuple",
    ]
)
_PURE_METHOD_OWNERS: Final = (str, bytes, int, float)


class IterItems:
    """An iterator over items materialized before the call: what a target is handed for an
    iterator argument, at record and at replay alike.  It freezes as ``{"$iter": [...]}``
    with all its items however far it was consumed, so it thaws and freezes alike."""

    __slots__ = ("_rest", "items")

    def __init__(self, items: list[Any]) -> None:
        self.items = items
        self._rest = iter(items)

    def __iter__(self) -> IterItems:
        return self

    def __next__(self) -> Any:
        return next(self._rest)

    def __repr__(self) -> str:
        return f"<iterator over {len(self.items)} materialized item(s)>"


def allow_callables_from(*packages: str) -> None:
    """Let ``$fn`` name functions and classes of these top-level packages (and their modules)."""
    _CALLABLE_SCOPE.update(p.split(".")[0] for p in packages if p)
    _OBJECT_PLANS.clear()  # their classes now freeze by structure too


@contextmanager
def callables_from(package: str) -> Iterator[None]:
    """Within the block, also let ``$fn`` name what ``package``'s top-level package defines.

    For a value that must freeze alike whatever the caller allowed so far: a target's
    parameter defaults (``klass=Interval``) are frozen into its ledger's header by the
    recorder, which has allowed the target's package, and again by the interpreter that
    verifies new rows before it has.  The scope is as it was after the block.
    """
    top = package.split(".")[0]
    if not top or top in _CALLABLE_SCOPE:
        yield
        return
    _CALLABLE_SCOPE.add(top)
    _OBJECT_PLANS.clear()
    try:
        yield
    finally:
        _CALLABLE_SCOPE.discard(top)
        _OBJECT_PLANS.clear()


def _in_scope(name: str) -> bool:
    module, _, qualname = name.partition(":")
    if module == "builtins":
        owner, _, method = qualname.partition(".")
        if not method:
            return owner in _PURE_BUILTINS
        return owner in {c.__name__ for c in _PURE_METHOD_OWNERS} and "." not in method
    return module.split(".")[0] in _CALLABLE_SCOPE or name in _TYPES_BY_NAME


def _named_callable(name: str, *, importing: bool = False) -> Any:
    """The function or class ``module:Qual.Name`` in an imported module's namespace, or None
    (``importing``: see :func:`~lockstep.canon.registry._already_imported`)."""
    found = _imported_object(name, importing=importing)
    if type(found) in _CALLABLE_TYPES or isinstance(found, type):
        return found
    return None


def _callable_name(v: Any) -> str:
    """``pkg.mod:qualname`` of a function or class that thaws back to itself, or refuse it."""
    owner = getattr(v, "__objclass__", None)
    module = getattr(owner if owner is not None else v, "__module__", None)
    if type(v) is types.BuiltinFunctionType and not isinstance(
        getattr(v, "__self__", None), types.ModuleType
    ):
        module = None  # a bound builtin method ([].append): no name reaches it
    qualname = getattr(v, "__qualname__", "")
    name = f"{module}:{qualname}"
    if not module or "<" in qualname or _named_callable(name) is not v:
        raise Unfreezable(
            f"cannot freeze {type(v).__name__} {qualname or v!r}: only module-level functions "
            "and classes freeze (by name); a lambda, closure, bound method or partial does not"
        )
    if not _in_scope(name):
        raise Unfreezable(
            f"cannot freeze {name}: a callable argument freezes by name only from the "
            "target's own package (or a few pure builtins such as len, str.lower)"
        )
    return name


def _dec_fn(payload: Any, path: str, depth: int) -> Any:
    name = str_payload("$fn", payload, path)
    found = _named_callable(name, importing=True) if _in_scope(name) else None
    if found is None:
        raise CanonError(
            f"$fn names {_short(name)}, which is not a function or class of the target's "
            "package already imported (or a pure builtin)",
            path,
        )
    return found


ITER_ENDS: Final = ("exhausted", "raised", "open")
"""How an iterator result ended: run out, raised after its items, or left unfinished."""


def _dec_iter(payload: Any, path: str, depth: int) -> Any:
    if type(payload) is dict:  # an iterator result: {"items": [...], "end": ..., ...}
        return IterItems(decode_items(_iter_result_items(payload, path, depth), path, depth + 3))
    items = list_payload("$iter", payload, path, depth)
    return IterItems(decode_items(items, path, depth + 2))


def _iter_result_items(payload: dict[str, Any], path: str, depth: int) -> list[Any]:
    """The items of an iterator result's payload, checked to be the form the recorder writes."""
    want = 'an object {"items": [...], "end": "exhausted"|"raised"|"open"}'
    end = payload.get("end")
    keys = {"items", "end", "exc_type", "exc_stem"} if end == "raised" else {"items", "end"}
    if set(payload) != keys or end not in ITER_ENDS:
        raise CanonError(f"malformed $iter value: expected {want}", path)
    if end == "raised" and not (
        type(payload["exc_type"]) is str and type(payload["exc_stem"]) is str
    ):
        raise CanonError("malformed $iter value: exc_type and exc_stem must be strings", path)
    return list_payload("$iter", payload["items"], path, depth + 1)


TAG_DECODERS["$fn"] = _dec_fn
TAG_DECODERS["$iter"] = _dec_iter
