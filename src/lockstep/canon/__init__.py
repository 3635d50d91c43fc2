"""The canonical value codec: Python values ⇄ tagged JSON that no two different values share.

:mod:`lockstep.canon.codec` encodes and decodes; :mod:`lockstep.canon.text` renders a
frozen value (and a frozen call) as Python-like text for reports.  This package
re-exports the codec, the one vocabulary every oracle kind freezes values with.
Decoding imports no module and calls nothing named in the data; the limits on
nesting and number sizes are in :mod:`lockstep.canon.codec`'s docstring.
"""

from __future__ import annotations

from lockstep.canon.codec import (
    DEFAULT_STEM,
    JSON,
    KNOWN_TAGS,
    LEAF_ENCODERS,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    Extension,
    FrozenException,
    IterItems,
    allow_callables_from,
    allow_classes_matching,
    canonical_json,
    decode,
    dumps,
    encode,
    encode_call,
    encode_call_keyed,
    equal,
    exception_type_name,
    freeze_exception,
    loads,
    loads_json,
    message_stem,
    object_key,
    qualified_name,
    register_encoder,
    register_type,
    unregister_encoder,
    unregister_type,
)

__all__ = [
    "DEFAULT_STEM",
    "JSON",
    "KNOWN_TAGS",
    "LEAF_ENCODERS",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "Extension",
    "FrozenException",
    "IterItems",
    "allow_callables_from",
    "allow_classes_matching",
    "canonical_json",
    "decode",
    "dumps",
    "encode",
    "encode_call",
    "encode_call_keyed",
    "equal",
    "exception_type_name",
    "freeze_exception",
    "loads",
    "loads_json",
    "message_stem",
    "object_key",
    "qualified_name",
    "register_encoder",
    "register_type",
    "unregister_encoder",
    "unregister_type",
]
