"""Objects a module keeps whose state refers back to itself: frozen as the path they are
kept at, ``{"$kept": "pkg.mod:Name.attr"}``.

sqlparse's token types (pygments' too) are tuples kept in ``sqlparse.tokens``, each with a
``parent`` link and an attribute per child type, made on first use (``Keyword.DML``).
Frozen by structure, every token of a parsed statement carried the whole tree of token
types, as far as this process had grown it: a test that added a keyword grew it, so 311
of 312 ``parse`` rows did not reproduce in a fresh interpreter and were refused, and the
rows kept held 135 KB each.  What identifies such an object is where its module keeps it,
as a class or a function is identified by its name.

Which objects: an object of the project's own classes (not a tzinfo, which keeps its
state so a datetime thaws with its zone) that is a node of a tree -- its own attributes
hold another object of its very class, a parent or a child -- and is reachable from the
globals of its class's module through instance attributes, at most :data:`MAX_STEPS`
steps.  Both are told by the object and its module, never by what was frozen before
it, so record and replay decide alike; of every way to reach it, the shortest, then the
first in sorted order.  A plain value object (a ``Money``, a ``Version``, a default
instance holding a ``ParserInfo``) links to no object of its own class and freezes by
structure as before, even when a module keeps it: its contents stay compared.

Thawing walks the same path: the module must be imported already (or be a configured
target's); each step is looked up in the object's ``__dict__``, or through the class's
own ``__getattr__`` for a type made on first use in this process; the object found must
be of a project class.  Nothing else is called.
"""

from __future__ import annotations

import sys
import threading
import types
from collections import deque
from typing import Any, Final

MAX_STEPS: Final = 6
"""How many attribute steps past a module global an object may be kept at."""

MAX_VISITED: Final = 20_000
"""Objects one index visits at most: a module keeping more is not indexed past that."""


class _Index:
    """For one module: each object reachable from its globals by a path, and the classes
    of those objects (a class with none is never looked up again until a miss of one that
    has some)."""

    __slots__ = ("classes", "module", "paths", "size")

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.paths: dict[int, tuple[Any, str]] = {}
        self.classes: set[type[Any]] = set()
        self.size = -1
        """How many names the module and the indexed objects held when it was built: a
        miss re-indexes only when that changed (a child type made since), so what is
        found never depends on when the index was built, and a tree's many other
        objects (a document's nodes) cost a count each, not a walk."""

    def current_size(self) -> int:
        namespace = object.__getattribute__(self.module, "__dict__")
        return len(namespace) + sum(len(_instance_dict(v)) for v, _ in self.paths.values())


_INDEXES: dict[str, _Index] = {}
_LOCK: Final = threading.Lock()


def kept_path(v: Any, t: type[Any], own: Any) -> str | None:
    """``module:path`` where ``v``'s class's module keeps ``v``, or None.  ``own(cls)``
    tells a project class."""
    module_name = getattr(t, "__module__", None)
    module = sys.modules.get(module_name) if isinstance(module_name, str) else None
    if not isinstance(module, types.ModuleType):
        return None
    with _LOCK:
        index = _INDEXES.get(module_name)  # type: ignore[arg-type]
        if index is not None and index.module is module:  # not one reloaded since
            found = index.paths.get(id(v))
            if found is not None and found[0] is v:
                return found[1]
            if t not in index.classes or index.current_size() == index.size:
                return None
        index = _build(module, module_name, own)  # type: ignore[arg-type]
        _INDEXES[module_name] = index  # type: ignore[index]
        found = index.paths.get(id(v))
        return found[1] if found is not None and found[0] is v else None


def _build(module: types.ModuleType, name: str, own: Any) -> _Index:
    index = _Index(module)
    namespace = object.__getattribute__(module, "__dict__")
    queue: deque[tuple[Any, str, int]] = deque()
    for key in sorted(k for k in namespace if isinstance(k, str)):
        value = namespace[key]
        if _candidate(value, own):
            queue.append((value, f"{name}:{key}", 0))
    while queue and len(index.paths) < MAX_VISITED:
        value, path, steps = queue.popleft()
        if id(value) in index.paths:
            continue  # reached by a shorter (or earlier sorted) path already
        index.paths[id(value)] = (value, path)
        index.classes.add(type(value))
        if steps >= MAX_STEPS:
            continue
        attrs = _instance_dict(value)
        for key in sorted(k for k in attrs if isinstance(k, str) and k.isidentifier()):
            child = attrs[key]
            if _candidate(child, own) and id(child) not in index.paths:
                queue.append((child, f"{path}.{key}", steps + 1))
    index.size = index.current_size()
    return index


def linked(v: Any, t: type[Any]) -> bool:
    """Whether ``v``'s own attributes hold an object of its very class (a parent, a child):
    a node of a tree, told by the object itself, whatever was frozen before it."""
    return any(type(value) is t for value in _instance_dict(v).values())


def _candidate(value: Any, own: Any) -> bool:
    t = type(value)
    return not isinstance(value, type | types.ModuleType | types.FunctionType) and bool(own(t))


def _instance_dict(value: Any) -> dict[str, Any]:
    if not type(value).__dictoffset__:  # slotted (dateutil's _ttinfo): no raise to catch
        return {}
    try:
        attrs = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return {}
    return attrs if type(attrs) is dict else {}


def resolve_kept(path: str, module: types.ModuleType, own: Any) -> Any:
    """The object ``path`` (``Name.attr...``, after the module) names in ``module``;
    ``LookupError`` with the step that failed."""
    parts = path.split(".")
    namespace = object.__getattribute__(module, "__dict__")
    if parts[0] not in namespace:
        raise LookupError(parts[0])
    value = namespace[parts[0]]
    for part in parts[1:]:
        if not own(type(value)):
            raise LookupError(part)
        attrs = _instance_dict(value)
        if part in attrs:
            value = attrs[part]
        elif "__getattr__" in vars(type(value)) and part.isidentifier():
            value = getattr(value, part)  # a type made on first use, by its own class
        else:
            raise LookupError(part)
    if not own(type(value)):
        raise LookupError(parts[-1])
    return value


def forget() -> None:
    """Drop every index (tests; a module reloaded)."""
    with _LOCK:
        _INDEXES.clear()
