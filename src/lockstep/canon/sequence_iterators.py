"""Iterators over a sequence, a set or a dict, held inside a value: ``{"$iterator": [items]}``.

more-itertools' ``divide(2, [1, 2, 3, 4])`` returns a list of two ``list_iterator``s; an
object may keep ``self._it = iter(rows)``.  Such an iterator was refused ("an iterator's
items exist only as it is read"), so every call returning or passing one was skipped.  Its
items can be read without reading it: its ``__reduce__`` hands back the sequence and its
position (``(iter, (seq,), index)``, ``(reversed, (seq,), index)``), or a copy of what a set
or dict iterator has left (``(iter, (items,))``), and consumes nothing.  So it freezes as
the items it has left, and thaws to an iterator over a list of them (a ``list_iterator``,
whatever it iterated before): what it yields is what is compared.  One that has more than
:data:`MOST_ITEMS` left (a ``range`` of 2**70) is refused as before, and so is any other
iterator (a generator, ``map``, ``itertools``), whose items exist only as it is read.

Except a generator that has finished: it has nothing left, and says so without being read
(its frame is gone), so it freezes as ``{"$iterator": []}``.  jmespath's parser keeps the
tokenizer it has read to the end (``self.tokenizer``), and every call holding a parser
was skipped for it.
"""

from __future__ import annotations

import types
from typing import Any, Final

from lockstep.canon._core import JSON, check_level
from lockstep.canon.decoding import TAG_DECODERS, _malformed, decode_items
from lockstep.canon.encoding import FALLBACK_ENCODERS, Encoder

SEQUENCE_ITERATORS: Final = frozenset(
    {
        type(iter([])),
        type(reversed([])),
        type(iter(())),
        reversed,
        type(iter(range(0))),
        type(iter(range(2**70))),
        type(iter("")),
        type(iter("\u00e9")),
        type(iter(b"")),
        type(iter(set())),
        type(iter({})),
        type(iter({}.values())),
        type(iter({}.items())),
    }
)
"""The iterators whose ``__reduce__`` gives what they have left without consuming it."""

MOST_ITEMS: Final = 10_000
"""Items past which such an iterator is not read through (a ``range`` of 2**70 is one)."""


def remaining_items(it: Any) -> list[Any] | None:
    """The items ``it`` (one of :data:`SEQUENCE_ITERATORS`) has left, read from its
    ``__reduce__``; None when they are more than :data:`MOST_ITEMS` or not of a known form."""
    if type(it) not in SEQUENCE_ITERATORS:
        return None
    try:
        fn, args, *rest = it.__reduce__()
        (seq,) = args
        index = rest[0] if rest else None
        if len(seq) - (index or 0) > MOST_ITEMS:
            return None
        if fn is reversed:  # index: the next item's, -1 once it is exhausted
            if index is None:
                return list(reversed(seq))
            return list(seq[index::-1]) if index >= 0 else []
        if fn is iter:
            return list(seq[index:]) if index is not None else list(seq)
    except Exception:
        return None
    return None


def _enc_iterator(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    if type(v) is types.GeneratorType and v.gi_frame is None:  # finished: nothing left
        check_level(depth)
        return {"$iterator": []}
    items = remaining_items(v)
    if items is None:
        return None
    check_level(depth + 1)
    return {"$iterator": encoder.seq(items, depth + 2)}


def _dec_iterator(payload: Any, path: str, depth: int) -> Any:
    if type(payload) is not list:
        raise _malformed("$iterator", "a list of the items it has left", payload, path)
    return iter(decode_items(payload, path, depth + 1))


FALLBACK_ENCODERS.append(_enc_iterator)
TAG_DECODERS["$iterator"] = _dec_iterator
