"""sortedcontainers' ``SortedDict``, ``SortedList``, ``SortedKeyList`` and ``SortedSet``: ``$sorted``.

A library that keeps a sorted map (portion's ``IntervalDict`` holds a ``SortedDict`` sorted
by its own ``_sortkey``) could not be frozen faithfully: as a plain dict it thaws without its
sort, so any other library's dict subclass is refused
(:meth:`~lockstep.canon.encoding.Encoder._dict_subclass`).  These classes, exactly, freeze
by their key function and their items in their (sorted) order:
``{"$sorted": ["SortedDict", key, [[k, v], ...]]}`` and ``{"$sorted": ["SortedList", key,
[...]]}``, where ``key`` is null or a function that freezes by name (``$fn``: the target's own
package, or a pure builtin; a lambda is refused, as any callable argument is).  They thaw
to the same class built from the key and the items.  The class is looked up in
``sys.modules`` (the replayed code imported it), never imported because the data names
it, and the data can name only these four.
"""

from __future__ import annotations

import sys
from typing import Any, Final

from lockstep.canon._core import JSON, check_level
from lockstep.canon.decoding import (
    TAG_DECODERS,
    _fill,
    _malformed,
    decode_at,
    decode_items,
    list_payload,
)
from lockstep.canon.encoding import FALLBACK_ENCODERS, Encoder
from lockstep.errors import CanonError, ThawError

_MODULES: Final = {
    "SortedDict": "sortedcontainers.sorteddict",
    "SortedList": "sortedcontainers.sortedlist",
    "SortedKeyList": "sortedcontainers.sortedlist",
    "SortedSet": "sortedcontainers.sortedset",
}
"""Each class this tag freezes, by name, and the module that defines it."""


def _enc_sorted(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    t = type(v)
    name = t.__qualname__
    if _MODULES.get(name) != t.__module__:
        return None
    check_level(depth + 3)
    key = getattr(v, "key", None)
    frozen_key = None if key is None else encoder.child(key, ".key", depth + 2)
    if name == "SortedDict":
        return {"$sorted": [name, frozen_key, encoder.pairs(v, depth + 4)]}
    return {"$sorted": [name, frozen_key, encoder.seq(v, depth + 3)]}


def _dec_sorted(payload: Any, path: str, depth: int) -> Any:
    name, key, items = list_payload("$sorted", payload, path, depth, "[class, key, items]")
    module_name = _MODULES.get(name) if type(name) is str else None
    if module_name is None:
        raise _malformed(
            "$sorted", "SortedDict, SortedList, SortedKeyList or SortedSet", name, path
        )
    if key is not None and not (isinstance(key, dict) and "$fn" in key):
        raise _malformed("$sorted", "a $fn or null key", key, path)
    if (name == "SortedList" and key is not None) or (name == "SortedKeyList" and key is None):
        raise _malformed("$sorted", "a key for a SortedKeyList, none for a SortedList", key, path)
    module = sys.modules.get(module_name)
    cls: Any = vars(module).get(name) if module is not None else None  # no __getattr__ runs
    if not isinstance(cls, type):
        raise CanonError(
            f"$sorted names {name}, and sortedcontainers is not imported here (the replayed "
            "code imports it)",
            path,
        )
    sort_key = decode_at(key, f"{path}.key", depth + 2)
    try:
        if name == "SortedDict":
            pairs: dict[Any, Any] = _fill("$sorted", {}, items, path, depth + 1)
            return cls(sort_key, pairs) if sort_key is not None else cls(pairs)
        members = decode_items(list_payload("$sorted", items, path, depth + 1), path, depth + 3)
        return cls(members) if name == "SortedList" else cls(members, key=sort_key)
    except CanonError:
        raise
    except Exception as e:  # members (or a key) that no longer compare under today's code
        raise ThawError(f"cannot rebuild the {name}: {type(e).__name__}: {e}", path) from None


FALLBACK_ENCODERS.append(_enc_sorted)
TAG_DECODERS["$sorted"] = _dec_sorted
