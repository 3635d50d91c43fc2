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
        tree = ast.parse(Path(file).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return False
    return _hash_outside_dunder(tree)


def _hash_outside_dunder(node: ast.AST) -> bool:
    """A call of the builtin ``hash`` anywhere in ``node`` but inside ``def __hash__``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and (child.name == "__hash__"):
            continue
        if (
            isinstance(child, ast.Call)
            and isinstance(child.func, ast.Name)
            and child.func.id == "hash"
        ):
            return True
        if _hash_outside_dunder(child):
            return True
    return False


__all__ = ["holds_hashing_class"]
