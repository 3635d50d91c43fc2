"""Import what the configuration names: ``pkg.mod:qualname`` callables, with the root on the path.

Users name their render functions, targets and drivers as strings in config;
this is the one place that turns those strings into objects, so every
"does not import" error reads the same and names the config key.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import os
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from lockstep.errors import TargetError

_ENTRIES: dict[str, tuple[int, tuple[str, ...]]] = {}


def _root_entries(root: Path) -> tuple[str, ...]:
    """The folders :func:`root_on_path` puts on the path.

    Looked up again only when the root folder changed (its mtime: creating ``src/``
    changes it): the block wraps every replayed case, and the path objects and two
    ``stat`` calls per case were a tenth of a mutant run.
    """
    key = str(root)
    try:
        mtime = os.stat(key).st_mtime_ns
    except OSError:
        return ()
    known = _ENTRIES.get(key)
    if known is not None and known[0] == mtime:
        return known[1]
    entries = tuple(str(p) for p in (root / "src", root) if p.is_dir())
    if len(_ENTRIES) > 256:
        _ENTRIES.clear()
    _ENTRIES[key] = (mtime, entries)
    return entries


@contextlib.contextmanager
def root_on_path(root: Path) -> Iterator[None]:
    """Put the project root (and its ``src/`` if present) first on ``sys.path`` for a block."""
    added = [entry for entry in _root_entries(root) if entry not in sys.path]
    if not added:
        yield
        return
    for entry in reversed(added):
        sys.path.insert(0, entry)
    try:
        yield
    finally:
        for entry in added:
            with contextlib.suppress(ValueError):
                sys.path.remove(entry)


def split_target(spec: str, *, where: str) -> tuple[str, str]:
    """Split ``pkg.mod:qualname``; the error names ``where`` (a config key)."""
    module, sep, qualname = spec.partition(":")
    if not sep or not module or not qualname:
        raise TargetError(f"{where}: {spec!r} is not of the form 'pkg.module:function'")
    return module, qualname


def resolve_object(spec: str, root: Path, *, where: str) -> Any:
    """Import ``pkg.mod`` and walk ``qualname``; errors say which part failed."""
    module_name, qualname = split_target(spec, where=where)
    with root_on_path(root):
        try:
            obj: Any = importlib.import_module(module_name)
        except (Exception, SystemExit) as e:  # a module that exits when imported: an error
            raise TargetError(
                f"{where}: cannot import module {module_name!r}: {type(e).__name__}: {e}"
            ) from None
    for part in qualname.split("."):
        if isinstance(obj, type):  # a cached property as the class holds it: its __get__
            static = inspect.getattr_static(obj, part, None)  # may not expect no instance
            if cached_function(static) is not None:
                obj = static
                continue
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise TargetError(
                f"{where}: module {module_name!r} has no attribute {qualname!r}"
            ) from None
    return obj


def cached_function(member: object) -> Callable[..., Any] | None:
    """The function of a cached property: ``functools.cached_property``, or a library's own
    (Django's, py-moneyed's: a descriptor, not callable, holding the function as ``func``,
    which its ``__get__`` calls with the object and caches); None for anything else."""
    if isinstance(member, functools.cached_property):
        return member.func
    func = getattr(member, "func", None) if not callable(member) else None
    if isinstance(func, types.FunctionType) and hasattr(type(member), "__get__"):
        return func
    return None


def resolve_callable(spec: str, root: Path, *, where: str) -> Callable[..., Any]:
    """Like :func:`resolve_object`, and refuse what cannot be called; a property (or a cached
    property, :func:`cached_function`) stands for its getter (``pkg.mod:Class.prop`` is
    called with the instance, as ``Class.prop.fget``)."""
    obj = resolve_object(spec, root, where=where)
    if isinstance(obj, property) and obj.fget is not None:
        return obj.fget
    cached = cached_function(obj)
    if cached is not None:
        return cached
    if not callable(obj):
        raise TargetError(f"{where}: {spec!r} is a {type(obj).__name__}, not a callable")
    return obj  # type: ignore[no-any-return]
