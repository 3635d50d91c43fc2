"""Rows holding objects whose layout may follow the string hash seed.

A class written in Python can keep its items where ``hash()`` puts them: pyrsistent's
``PMap`` files each key in bucket ``hash(key) % len(buckets)``.  Frozen by structure,
such a map keeps the buckets the recording's hash seed chose; rebuilt in an interpreter
with another seed, its keys are looked up elsewhere and not found.  The interpreter that
verifies new rows runs under one other seed, which puts a key in the same bucket by
chance (one time in two for a map of two buckets), so such rows were written and then
failed ``lockstep replay`` on unchanged code.

So a row that holds an object of a class whose module calls ``hash()`` (outside a
``__hash__`` method, whose result is only compared) is a *seed suspect*: verification
replays it under further hash seeds too, as it does a row holding a set
(``seed_suspects`` in :func:`lockstep.oracles.verify.verify`).  The module's source is
read, never imported: only a module already imported is looked at.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Final

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
        return calls_hash_outside_dunder(Path(file).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return False


_HASH_CALL: Final = re.compile(rb"(?<![\w.])hash\s*\(")


def calls_hash_outside_dunder(source: bytes) -> bool:
    """Whether ``source`` calls the builtin ``hash`` anywhere but inside ``def __hash__``
    (read as text first: a module with no ``hash(`` at all, most of them, is not parsed;
    one in a comment or a string counts, which only verifies more)."""
    lines = [source.count(b"\n", 0, m.start()) + 1 for m in _HASH_CALL.finditer(source)]
    if not lines:
        return False
    spans = [
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "__hash__"
    ]
    return any(not any(low <= line <= high for low, high in spans) for line in lines)


__all__ = ["calls_hash_outside_dunder", "holds_hashing_class"]
