"""A ``threading.local`` held in a value: ``{"$local": {attribute: value}}``.

parsedatetime's ``Calendar`` keeps its context stack in a ``threading.local``: no call of
a calendar could be frozen, and 85% of the calls under its suite were skipped.  What the
object holds is what the thread running the call sees, which is the thread a recorded
call and its replay run in; it thaws to a new ``threading.local`` holding those
attributes in the thread that thaws it.  A subclass of ``threading.local`` is refused: it
runs its own ``__init__`` again in each thread that touches it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from lockstep.canon._core import JSON, Unfreezable, check_level
from lockstep.canon.decoding import TAG_DECODERS, decode_at
from lockstep.canon.encoding import FALLBACK_ENCODERS
from lockstep.errors import CanonError

if TYPE_CHECKING:
    from lockstep.canon.encoding import Encoder


def _enc_local(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    if not isinstance(v, threading.local):
        return None
    if type(v) is not threading.local:
        raise Unfreezable(
            f"cannot freeze a {type(v).__qualname__}: a subclass of threading.local runs its "
            "__init__ again in each thread; register an encoder with lockstep.register_encoder()"
        )
    check_level(depth + 1)
    attrs = dict(vars(v))
    return {"$local": encoder.child(attrs, ".__dict__", depth + 1)}


def _dec_local(payload: Any, path: str, depth: int) -> threading.local:
    attrs = decode_at(payload, path, depth + 1)
    if type(attrs) is not dict or not all(type(k) is str for k in attrs):
        raise CanonError("malformed $local value: want an object of attributes", path)
    made = threading.local()
    for name, value in attrs.items():
        setattr(made, name, value)
    return made


FALLBACK_ENCODERS.append(_enc_local)
TAG_DECODERS["$local"] = _dec_local
