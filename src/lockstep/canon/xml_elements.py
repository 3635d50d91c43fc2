"""An ``xml.etree.ElementTree.Element`` held in a value: a parsed document's node.

Python-Markdown's ``Markdown`` keeps the tree it renders from (``parser.root``): 838 of
840 ``convert`` calls under its suite were skipped, for "cannot freeze a
xml.etree.ElementTree.Element", and a one-line change to its tables extension replayed
green.  An element freezes as what defines it, in its own order::

    {"$element": [tag, [[name, value], ...], text, tail, [child, ...]]}

``tag`` is the element's text, or ``["Comment"]`` / ``["ProcessingInstruction"]`` for the
two factories ElementTree keeps as the tag of a comment or a processing instruction; the
attributes are pairs, in the order they were set (``tostring`` writes them so); each child
is an element again.  It thaws to a new ``Element`` of the same class with the same parts.
Only the exact class ``Element`` (the C one or the pure-Python one, whichever the module
exports): a subclass may change what its objects do.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any, Final

from lockstep.canon._core import JSON, Unfreezable, check_level
from lockstep.canon.decoding import TAG_DECODERS, decode_at, list_payload
from lockstep.canon.encoding import FALLBACK_ENCODERS
from lockstep.errors import CanonError

if TYPE_CHECKING:
    from lockstep.canon.encoding import Encoder

_FACTORIES: Final[dict[str, Any]] = {
    "Comment": ET.Comment,
    "ProcessingInstruction": ET.ProcessingInstruction,
}


def _enc_element(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    if type(v) is not ET.Element:
        return None
    tag = v.tag
    if type(tag) is str:
        frozen_tag: JSON = tag
    else:
        name = next((k for k, f in _FACTORIES.items() if f is tag), None)
        if name is None:
            raise Unfreezable(
                f"cannot freeze an Element whose tag is a {type(tag).__qualname__}: only a "
                "text, or ElementTree's Comment or ProcessingInstruction, names what it is"
            )
        frozen_tag = [name]
    check_level(depth + 3)
    attrib: list[JSON] = [
        [
            encoder.child(k, f".attrib[{k!r}]", depth + 3),
            encoder.child(x, f".attrib[{k!r}]", depth + 3),
        ]
        for k, x in v.attrib.items()
    ]
    text = encoder.child(v.text, ".text", depth + 2)
    tail = encoder.child(v.tail, ".tail", depth + 2)
    children = [encoder.child(c, f"[{i}]", depth + 2) for i, c in enumerate(v)]
    return {"$element": [frozen_tag, attrib, text, tail, children]}


def _dec_element(payload: Any, path: str, depth: int) -> ET.Element:
    tag, attrib, text, tail, children = list_payload(
        "$element", payload, path, depth, "[tag, attributes, text, tail, children]"
    )
    if type(tag) is list and len(tag) == 1 and tag[0] in _FACTORIES:
        made = ET.Element(_FACTORIES[tag[0]])
    elif type(tag) is str:
        made = ET.Element(tag)
    else:
        raise CanonError("malformed $element value: its tag must be a text", path)
    if type(attrib) is not list or type(children) is not list:
        raise CanonError("malformed $element value: want lists of attributes and children", path)
    for pair in attrib:
        if type(pair) is not list or len(pair) != 2:
            raise CanonError("malformed $element value: an attribute is a [name, value]", path)
        made.set(decode_at(pair[0], path, depth + 3), decode_at(pair[1], path, depth + 3))
    made.text = decode_at(text, f"{path}.text", depth + 2)
    made.tail = decode_at(tail, f"{path}.tail", depth + 2)
    for i, frozen in enumerate(children):
        child = decode_at(frozen, f"{path}[{i}]", depth + 2)
        if type(child) is not ET.Element:
            raise CanonError("malformed $element value: a child is not an element", path)
        made.append(child)
    return made


FALLBACK_ENCODERS.append(_enc_element)
TAG_DECODERS["$element"] = _dec_element
