"""Rows whose outcome may follow the string hash seed: verified under every seed.

Recording verifies each new row in an interpreter with one other hash seed.  A row that
reproduces there may still depend on the seed by chance, and then fails ``lockstep
replay`` on unchanged code under other seeds.  Rows whose input holds a set were already
replayed under the further verifying seeds (``seed_suspects`` in
:func:`lockstep.oracles.verify.verify`); this module names two more kinds of suspect:

* **Objects filed by hash.**  A class written in Python can keep its items where
  ``hash()`` puts them: pyrsistent's ``PMap`` files each key in bucket ``hash(key) %
  len(buckets)``, so its frozen buckets are the recording seed's.  A row holding an
  object of a class whose module calls ``hash()`` outside a ``__hash__`` method (whose
  result is only compared) is a suspect (:func:`holds_hashing_class`).
* **Texts in a set's order.**  ``", ".join(set(tags))`` and ``list(set(names))`` answer
  in the order of the seed; one other seed gives two items the recorded order one time
  in two.  A row whose outcome holds a text of several words, or a list or tuple of two
  or more items holding texts (:func:`ordered_texts`) is a suspect where the target's package
  builds a set at all (:func:`package_builds_sets`): each run with such suspects starts
  four more verifying interpreters, which a package without sets need not pay for.

Modules' sources are read as text (parsed only when they call ``hash(``), never
imported: only modules already imported are looked at.
"""

from __future__ import annotations

import ast
import base64
import binascii
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from lockstep.surface import parsed_module

_CLASS_NAMES: Final = re.compile(rb'\["([A-Za-z_][\w.]*):[A-Za-z_][\w.]*"')
"""A class named at the head of a tagged payload (``{"$obj": ["pkg.mod:Qual", ...]}``,
``$dataclass``, ``$node``, ``$namedtuple``): its module."""

_KNOWN: dict[str, bool] = {}


def holds_hashing_class(line: bytes) -> bool:
    """Whether the frozen row ``line`` names a class whose module calls ``hash()``."""
    if b":[" not in line:
        return False
    return any(_module_hashes(m.group(1).decode()) for m in _CLASS_NAMES.finditer(line))


def _module_hashes(name: str) -> bool:
    known = _KNOWN.get(name)
    if known is None:
        known = _KNOWN[name] = _calls_hash(name)
    return known


def _calls_hash(name: str) -> bool:
    module = sys.modules.get(name)
    file = getattr(module, "__file__", None)
    if not isinstance(file, str) or not file.endswith(".py"):
        return False
    try:
        path = Path(file)
        return calls_hash_outside_dunder(path.read_bytes(), lambda: parsed_module(path))
    except (OSError, SyntaxError, ValueError):
        return False


_HASH_CALL: Final = re.compile(rb"(?<![\w.])hash\s*\(")


def calls_hash_outside_dunder(
    source: bytes, parsed: Callable[[], ast.Module] | None = None
) -> bool:
    """Whether ``source`` calls the builtin ``hash`` anywhere but inside ``def __hash__``
    (read as text first: a module with no ``hash(`` at all, most of them, is not parsed;
    one in a comment or a string counts, which only verifies more).  ``parsed``: its
    tree, when one read of it may be shared (:func:`~lockstep.surface.parsed_module`)."""
    lines = [source.count(b"\n", 0, m.start()) + 1 for m in _HASH_CALL.finditer(source)]
    if not lines:
        return False
    tree = parsed() if parsed is not None else ast.parse(source)
    spans = [
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "__hash__"
    ]
    return any(not any(low <= line <= high for low, high in spans) for line in lines)


_TOKENS: Final = re.compile(r"[^\s,;|]+")
"""A text's words, as a join of several writes them (``", ".join(...)``)."""


def ordered_texts(value: Any) -> bool:
    """Whether a frozen outcome holds texts in an order a set may have given them: one
    text of two or more words, or an ordered sequence (a list, a tuple, an OrderedDict's
    pairs) of which two or more items hold a text (a string, an object, a tuple of them).

    ``", ".join(set(tags))``, ``list(set(names))`` and ``[(name, 1) for name in
    set(names)]`` answer in the order of the string hash seed.  The verifying
    interpreter's one other seed gives two items the recorded order one time in two, so
    such rows were written and then failed replay under other seeds, on unchanged code.
    A row whose outcome holds such texts is a seed suspect too (replayed under the further
    verifying seeds).  Numbers and single words carry no order; nor does a dict's key
    order, a set's or an object's attributes': every comparison ignores it (the frozen
    form sorts them), so only what their values hold counts."""
    if isinstance(value, str):
        return len(_TOKENS.findall(value, 0, 4096)) >= 2
    if isinstance(value, list):
        return _sequence(value)
    if isinstance(value, dict):
        if len(value) == 1:
            ((tag, payload),) = value.items()
            if tag.startswith("$"):
                return _tagged(tag, payload)
        return any(ordered_texts(v) for v in value.values())
    return False


_ORDERLESS: Final = frozenset(
    {
        *("$date", "$datetime", "$time", "$timedelta", "$timezone", "$pytz", "$uuid"),
        *("$decimal", "$float", "$complex", "$range", "$slice", "$const", "$enum", "$fn"),
        *("$path", "$re", "$regex", "$sentinel", "$kept", "$ref", "$node", "$default", "$lambda"),
        *("$held",),
        *("$struct_time", "$isocalendar", "$zoneinfo", "$module", "$fraction", "$ip"),
        *("$codec", "$logger", "$lock"),
    }
)
"""Tags whose payload is a scalar's parts or a name: no order a set could give."""


def _tagged(tag: str, payload: Any) -> bool:
    """:func:`ordered_texts` of a tagged value, by what its payload is."""
    if tag in _ORDERLESS:
        return False
    if tag == "$match" and isinstance(payload, list) and len(payload) == 4:
        return ordered_texts(payload[1])  # the string searched (a join of a set's items?)
    if tag == "$bytes" and isinstance(payload, str):
        try:
            return ordered_texts(base64.b64decode(payload).decode("latin-1"))
        except (binascii.Error, ValueError):
            return True  # not read: as if it did
    if tag in ("$stringio", "$bytesio", "$deque", "$array") and isinstance(payload, list):
        return bool(payload) and _tagged_first(payload[0])  # the text or items, not the rest
    if tag in ("$set", "$frozenset") and isinstance(payload, list):
        return any(ordered_texts(v) for v in payload)  # sorted: only the items count
    if tag == "$defaultdict" and isinstance(payload, list) and len(payload) == 2:
        payload = payload[1]
        tag = "$dict"
    if tag in ("$dict", "$counter") and isinstance(payload, list):
        # pairs sorted by key: their order counts for nothing, what each holds does
        parts = (part for pair in payload for part in (pair if _pair(pair) else [pair]))
        return any(ordered_texts(part) for part in parts)
    if tag in ("$obj", "$dataclass", "$namedtuple") and isinstance(payload, list):
        return any(ordered_texts(part) for part in payload[1:])  # the class, then its body
    if tag == "$graph" and isinstance(payload, list) and len(payload) == 2:
        root, nodes = payload
        bodies = nodes if isinstance(nodes, list) else [nodes]
        return ordered_texts(root) or any(
            ordered_texts(node[1:] if isinstance(node, list) else node) for node in bodies
        )
    return ordered_texts(payload)  # a tuple's items, an OrderedDict's pairs, the rest


def _tagged_first(value: Any) -> bool:
    """:func:`ordered_texts` of a payload's first part (a file's text, a deque's items)."""
    return ordered_texts(value)


def _pair(item: Any) -> bool:
    return isinstance(item, list) and len(item) == 2


def _sequence(items: list[Any]) -> bool:
    """An ordered sequence's items: two holding a text may be in a set's order."""
    return sum(1 for v in items if _holds_text(v)) >= 2 or any(ordered_texts(v) for v in items)


def _holds_text(value: Any) -> bool:
    """Whether a frozen value holds a string anywhere: a text, a key, a class's name."""
    if isinstance(value, str):
        return True
    if isinstance(value, list):
        return any(_holds_text(v) for v in value)
    if isinstance(value, dict):
        return any(not k.startswith("$") for k in value) or any(
            _holds_text(v) for v in value.values()
        )
    return False


_SET_BUILDING: Final = re.compile(
    rb"\b(?:frozen)?set\(|\{[^{}:\n]*\bfor\b[^{}:\n]*\}|\{\s*[^{}:\s][^{}:\n]*,[^{}:\n]*\}"
)
"""``set(``, ``frozenset(``, a set comprehension or a set literal, read as text: more
than that (a tuple in an f-string's braces) only verifies more."""

_BUILDS_SETS: dict[str, bool] = {}


def package_builds_sets(module: str) -> bool:
    """Whether any imported module of ``module``'s top-level package builds a set: only
    then can an outcome's texts come in a set's order.  Verifying each row with ordered
    texts under four more seeds costs four more interpreters a run; a package that builds
    no set (webcolors, isodate, sqlparse) pays none of it.  Read once per package, as
    text."""
    top = module.partition(".")[0]
    if not top:
        return True
    known = _BUILDS_SETS.get(top)
    if known is None:
        known = _BUILDS_SETS[top] = _reads_set_building(top)
    return known


def _reads_set_building(top: str) -> bool:
    for name, mod in list(sys.modules.items()):
        if name != top and not name.startswith(top + "."):
            continue
        file = getattr(mod, "__file__", None)
        if not isinstance(file, str) or not file.endswith(".py"):
            continue
        try:
            if _SET_BUILDING.search(Path(file).read_bytes()):
                return True
        except OSError:
            return True  # not read: as if it did
    return False


def outcome_parts(row_line: bytes) -> list[Any]:
    """The parts of a row's JSON that say what the call gave: result, error text, the
    arguments it changed."""
    import msgspec

    row = msgspec.json.decode(row_line)
    if not isinstance(row, dict):
        return []
    return [row.get(key) for key in ("result", "exc_stem", "exc_state", "mutated") if key in row]


__all__ = [
    "calls_hash_outside_dunder",
    "holds_hashing_class",
    "ordered_texts",
    "outcome_parts",
    "package_builds_sets",
]
