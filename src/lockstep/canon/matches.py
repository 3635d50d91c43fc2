"""Match objects of ``re`` and of the ``regex`` module: ``$match``.

Legacy parsing code returns them (``return DATE.search(line)``) and hands them on
(``re.sub(PATTERN, _replace, text)`` calls ``_replace(match)``; a parse tree keeps the
match of each token, as parsimonious's ``RegexNode`` does).  A match is what searching
its string with its pattern finds, so it freezes as the question, not the answer:
``{"$match": [pattern, string, pos, endpos]}`` with the pattern as ``$re`` or
``$regex``.  Two matches freeze alike exactly when they are the same search, and a
changed pattern or string shows as one.

Freezing checks that the search, asked again, finds this very match (same spans of every
group): a later match of ``finditer`` or an overlapped search is refused, so every frozen
match thaws to an equal one.  Thawing asks the search (the pattern thawed as
``$re``/``$regex`` are, inert); a payload whose search finds nothing, or reports other
bounds than it names, is malformed (only the canonical form is read).
"""

from __future__ import annotations

import re
from typing import Any

from lockstep.canon._core import JSON, Unfreezable, check_level
from lockstep.canon.decoding import TAG_DECODERS, _malformed, decode_at, list_payload
from lockstep.canon.encoding import FALLBACK_ENCODERS, Encoder


def _is_match(t: type[Any]) -> bool:
    return t is re.Match or (t.__module__ == "_regex" and t.__qualname__ == "Match")


def _enc_match(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    if not _is_match(type(v)):
        return None
    if getattr(v, "partial", False):
        raise Unfreezable("cannot freeze a partial match (regex's partial=True)")
    again = v.re.search(v.string, v.pos, v.endpos)
    if again is None or again.regs != v.regs:
        raise Unfreezable(
            "cannot freeze a match that searching its string again from its pos does not "
            "find first (a later match of finditer, or an overlapped search)"
        )
    check_level(depth + 2)
    pattern = encoder.child(v.re, ".re", depth + 2)
    string = encoder.child(v.string, ".string", depth + 2)
    return {"$match": [pattern, string, v.pos, v.endpos]}


def _dec_match(payload: Any, path: str, depth: int) -> Any:
    frozen_pattern, frozen_string, pos, endpos = list_payload(
        "$match", payload, path, depth, "[pattern, string, pos, endpos]"
    )
    if not (isinstance(frozen_pattern, dict) and set(frozen_pattern) <= {"$re", "$regex"}):
        raise _malformed("$match", "a $re or $regex pattern", frozen_pattern, path + ".re")
    pattern = decode_at(frozen_pattern, path + ".re", depth + 2)
    string = decode_at(frozen_string, path + ".string", depth + 2)
    if type(string) not in (str, bytes) or type(pos) is not int or type(endpos) is not int:
        raise _malformed("$match", "[pattern, string, pos (int), endpos (int)]", payload, path)
    try:
        found = pattern.search(string, pos, endpos)
    except TypeError as e:  # a text pattern over bytes, or the other way round
        raise _malformed("$match", f"a string its pattern searches ({e})", payload, path) from None
    if found is None or (found.pos, found.endpos) != (pos, endpos):
        raise _malformed("$match", "a search that finds a match within its bounds", payload, path)
    return found


FALLBACK_ENCODERS.append(_enc_match)
TAG_DECODERS["$match"] = _dec_match
