"""Patterns compiled by the ``regex`` module (``regex.compile``): ``$regex``.

``regex`` is the standard library's ``re`` extended (fuzzy matching, possessive
quantifiers, full Unicode case-folding), and parsers keep its compiled patterns inside
their own objects: parsimonious's grammars hold one in each ``Regex`` expression, so
every call given a grammar, or returning a parse tree that names its expressions, was
skipped (39% of its suite's calls).  A ``regex`` pattern freezes as ``re``'s does
(:mod:`lockstep.canon.patterns`), by its source (``str`` or a ``$bytes``) and its flags as
the compiled pattern reports them: ``{"$regex": [pattern, flags]}``.

It thaws with ``regex.compile`` taken from ``sys.modules`` (the replayed code imported
``regex``), never imported because the data names it; compiling runs no code named by the
data, and a payload whose flags are not what compiling its pattern gives is malformed
(only the canonical form is read).
"""

from __future__ import annotations

import sys
from typing import Any

from lockstep.canon._core import JSON, check_level
from lockstep.canon.decoding import TAG_DECODERS, _malformed, decode_at, list_payload
from lockstep.canon.encoding import FALLBACK_ENCODERS, Encoder
from lockstep.errors import CanonError


def _enc_regex(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    t = type(v)
    if t.__module__ != "_regex" or t.__qualname__ != "Pattern":
        return None
    check_level(depth + 1)
    return {"$regex": [encoder.child(v.pattern, ".pattern", depth + 2), int(v.flags)]}


def _dec_regex(payload: Any, path: str, depth: int) -> Any:
    source, flags = list_payload("$regex", payload, path, depth, "[pattern, flags]")
    pattern = decode_at(source, path + ".pattern", depth + 2)
    if type(pattern) not in (str, bytes) or type(flags) is not int:
        raise _malformed("$regex", "[pattern (str or bytes), flags (int)]", payload, path)
    module = sys.modules.get("regex")
    compile_ = vars(module).get("compile") if module is not None else None  # no __getattr__
    if not callable(compile_):
        raise CanonError(
            "$regex names a pattern of the regex module, which is not imported here (the "
            "replayed code imports it)",
            path,
        )
    try:
        compiled = compile_(pattern, flags)
    except Exception as e:  # regex.error, or a pattern too deep for it
        raise CanonError(
            f"malformed $regex value: the pattern does not compile: {type(e).__name__}: {e}",
            path,
        ) from None
    if compiled.flags != flags:
        raise _malformed(
            "$regex", f"the flags compiling it gives ({compiled.flags})", payload, path
        )
    return compiled


FALLBACK_ENCODERS.append(_enc_regex)
TAG_DECODERS["$regex"] = _dec_regex
