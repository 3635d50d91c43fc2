"""sortedcontainers' ``SortedDict``, ``SortedList`` and ``SortedSet``: ``$sorted``.

A library that keeps a sorted map (portion's ``IntervalDict`` holds a ``SortedDict``) could
not be frozen faithfully: as a plain dict it thaws without its sort, so any other library's
dict subclass is refused (:meth:`~lockstep.canon.encoding.Encoder._dict_subclass`).  These
three classes, exactly and without a key function, freeze by their items in their (sorted)
order, ``{"$sorted": ["SortedDict", [[k, v], ...]]}`` and ``{"$sorted": ["SortedList",
[...]]}``, and thaw to the same class built from those items.  The class is looked up in
``sys.modules`` (the replayed code imported it), never imported because the data names
it, and the data can name only these three.  One with a key function (``SortedKeyList``,
``SortedDict(key, ...)``) is refused: the key is a callable no data names.
"""

from __future__ import annotations

import sys
from typing import Any, Final

from lockstep.canon._core import JSON, Unfreezable, check_level
from lockstep.canon.decoding import TAG_DECODERS, _fill, _malformed, decode_items, list_payload
from lockstep.canon.encoding import FALLBACK_ENCODERS, Encoder
from lockstep.errors import CanonError, ThawError

_MODULES: Final = {
    "SortedDict": "sortedcontainers.sorteddict",
    "SortedList": "sortedcontainers.sortedlist",
    "SortedSet": "sortedcontainers.sortedset",
}
"""Each class this tag freezes, by name, and the module that defines it."""


def _enc_sorted(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    t = type(v)
    name = t.__qualname__
    if _MODULES.get(name) != t.__module__:
        return None
    if getattr(v, "key", None) is not None:
        raise Unfreezable(
            f"cannot freeze a {t.__module__}.{name} with a key function: the key is a "
            "callable that cannot be frozen; register an encoder with lockstep.register_encoder()"
        )
    check_level(depth + 3)
    if name == "SortedDict":
        return {"$sorted": [name, encoder.pairs(v, depth + 4)]}
    return {"$sorted": [name, encoder.seq(v, depth + 3)]}


def _dec_sorted(payload: Any, path: str, depth: int) -> Any:
    name, items = list_payload("$sorted", payload, path, depth, "[class, items]")
    module_name = _MODULES.get(name) if type(name) is str else None
    if module_name is None:
        raise _malformed("$sorted", "SortedDict, SortedList or SortedSet", name, path)
    module = sys.modules.get(module_name)
    cls = vars(module).get(name) if module is not None else None  # no module __getattr__ runs
    if not isinstance(cls, type):
        raise CanonError(
            f"$sorted names {name}, and sortedcontainers is not imported here (the replayed "
            "code imports it)",
            path,
        )
    if name == "SortedDict":
        content: Any = _fill("$sorted", {}, items, path, depth + 1)
    else:
        content = decode_items(list_payload("$sorted", items, path, depth + 1), path, depth + 3)
    try:
        return cls(content)
    except Exception as e:  # members that no longer compare under today's code
        raise ThawError(f"cannot rebuild the {name}: {type(e).__name__}: {e}", path) from None


FALLBACK_ENCODERS.append(_enc_sorted)
TAG_DECODERS["$sorted"] = _dec_sorted
