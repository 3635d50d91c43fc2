"""The type registry: what a name in a frozen value may mean.

Encoders a user registered for a type (``$ext``), classes registered to thaw by name
(``$enum``/``$dataclass``/``$namedtuple``), the leaf table the recorders' fast paths look an
argument's type up in, and the lookup of a ``module:Qual.Name`` in an already-imported
module, which imports nothing and runs no code.
"""

from __future__ import annotations

import binascii
import dataclasses
import enum
import math
import os
import sys
import types
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any, Final, NamedTuple, TypeVar

from lockstep.canon._core import JSON, qualified_name


class Extension(NamedTuple):
    """A user-registered encoder for one type."""

    name: str
    cls: type[Any]
    to_json: Callable[[Any], Any]
    from_json: Callable[[Any], Any]


_T = TypeVar("_T", bound=type[Any])

_EXT_BY_TYPE: dict[type[Any], Extension] = {}
_EXT_BY_NAME: dict[str, Extension] = {}
_TYPES_BY_NAME: dict[str, type[Any]] = {}
_OBJECT_PLANS: dict[type[Any], str | None] = {}
"""Per type, the qualified name when its objects freeze as just ``__dict__`` (the common
plain class, which the hot path encodes inline), else None (:mod:`~lockstep.canon.objects`);
cleared whenever what may freeze by structure changes."""
_NODE_NAMES: dict[type[Any], str] = {}
"""Per type of another library's plain class met already, its qualified name: its objects
are nodes of a graph (:mod:`~lockstep.canon.graphs`), found at once by the encoder;
cleared with :data:`_OBJECT_PLANS`."""


_CLASS_FACTS: dict[type[Any], tuple[object, bool, bool]] = {}
"""Per type, what :func:`~lockstep.canon.objects.project_or_zone` asks of it: the
``__module__`` it was answered for, whether it is the project's own class, whether it is
a tzinfo class.  An object graph asks it of every node, several times each."""
_CACHED_NAMES: dict[type[Any], frozenset[str]] = {}
"""Per class, the attributes it caches on its objects
(:mod:`~lockstep.canon.cached_attributes`)."""
_NAMEDTUPLE_ROUTE: set[type[Any]] = set()
"""Named tuple classes the slow encoder froze as ``$namedtuple`` once, every kind of value
before that branch ruled out by the type alone (its length is still checked)."""
_OWN_ROUTE: set[type[Any]] = set()
"""Types the slow encoder sent to :func:`~lockstep.canon.objects.freeze_object` once,
every other kind of value ruled out by the type alone: it goes there at once next time."""


def forget_plans() -> None:
    """Drop what was decided per type: what may freeze by structure changed."""
    _OBJECT_PLANS.clear()
    _NODE_NAMES.clear()
    _CLASS_FACTS.clear()
    _OWN_ROUTE.clear()
    _NAMEDTUPLE_ROUTE.clear()
    _CACHED_NAMES.clear()


_SLOTTED_PLANS: dict[type[Any], str] = {}
"""Per type, the qualified name when its objects freeze as just ``object.__getstate__``'s
state but have ``__slots__`` (so no plain ``__dict__``): set or dropped together with its
entry in :data:`_OBJECT_PLANS` (None there), so it is read only right after that."""


def register_encoder(
    cls: type[Any],
    to_json: Callable[[Any], Any],
    from_json: Callable[[Any], Any],
    *,
    name: str | None = None,
) -> None:
    """Teach the codec to freeze instances of ``cls``.

    ``to_json`` returns any freezable value (it is itself canonicalized, so it may
    return tuples, Decimals, ...); ``from_json`` rebuilds the instance from the
    thawed value.  ``name`` is what the oracle file records (default
    ``module:QualName``); keep it stable, because renaming it changes every
    recorded value of that type.
    """
    ext_name = name or qualified_name(cls)
    ext = Extension(ext_name, cls, to_json, from_json)
    _EXT_BY_TYPE[cls] = ext
    _EXT_BY_NAME[ext_name] = ext
    forget_plans()
    LEAF_ENCODERS.pop(cls, None)


def unregister_encoder(cls: type[Any]) -> None:
    """Forget a registered encoder (mostly for tests)."""
    ext = _EXT_BY_TYPE.pop(cls, None)
    if ext is not None:
        _EXT_BY_NAME.pop(ext.name, None)
    if cls in _BUILTIN_LEAVES:
        LEAF_ENCODERS[cls] = _BUILTIN_LEAVES[cls]
    forget_plans()


def register_type(cls: _T) -> _T:
    """Let :func:`decode` thaw ``cls`` (an Enum, a dataclass or a NamedTuple) by its name.

    Needed only for a class that decoding cannot find already imported by
    ``module:QualName``: one defined inside a function, or in a module that is
    not imported when values are thawed.  Usable as a class decorator.
    """
    if not any(check(cls) for check, _ in _KINDS.values()):
        raise TypeError(f"{cls!r} is not an Enum, a dataclass or a NamedTuple class")
    _TYPES_BY_NAME[qualified_name(cls)] = cls
    return cls


def unregister_type(cls: type[Any]) -> None:
    """Forget a class registered with :func:`register_type` (mostly for tests)."""
    name = qualified_name(cls)
    if _TYPES_BY_NAME.get(name) is cls:
        del _TYPES_BY_NAME[name]


def _float_leaf(v: float) -> JSON:
    if math.isfinite(v):
        return v
    return {"$float": "nan" if v != v else ("inf" if v > 0 else "-inf")}


_BUILTIN_LEAVES: Final[dict[type[Any], Callable[[Any], JSON]]] = {
    type(None): lambda v: None,
    bool: lambda v: v,
    float: _float_leaf,
    Decimal: lambda v: {"$decimal": str(v)},
    bytes: lambda v: {"$bytes": binascii.b2a_base64(v, newline=False).decode("ascii")},
    bytearray: lambda v: {"$bytearray": binascii.b2a_base64(v, newline=False).decode("ascii")},
}

LEAF_ENCODERS: Final[dict[type[Any], Callable[[Any], JSON]]] = dict(_BUILTIN_LEAVES)
"""The frozen form of a value of one of these exact types, by one lookup and one call.

Each is what :func:`encode` writes for such a value: one scalar or one tag around ASCII
text, never refused, never nested.  A recorder freezing an argument on every call
looks its type up here before walking the value.  A type given its own encoder with
:func:`register_encoder` leaves this table (the full encoder then decides).
"""


def _is_enum_class(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, enum.Enum)


def _is_dataclass_class(cls: Any) -> bool:
    return isinstance(cls, type) and dataclasses.is_dataclass(cls)


_NAMEDTUPLE_FIELDS: dict[type[Any], tuple[str, ...]] = {}
"""Per named tuple class found so, the ``_fields`` it was found with (asked of every item
of a tree of them, freezing and thawing)."""


def _is_namedtuple_class(cls: Any) -> bool:
    if not (isinstance(cls, type) and issubclass(cls, tuple)):
        return False
    fields = getattr(cls, "_fields", None)
    if fields is not None and _NAMEDTUPLE_FIELDS.get(cls) is fields:
        return True
    if type(fields) is tuple and all(type(f) is str for f in fields):
        _NAMEDTUPLE_FIELDS[cls] = fields
        return True
    return False


class _Kind(NamedTuple):
    """What a class-naming tag may resolve to."""

    check: Callable[[Any], bool]
    noun: str


_KINDS: Final = {
    "$enum": _Kind(_is_enum_class, "an Enum class"),
    "$dataclass": _Kind(_is_dataclass_class, "a dataclass"),
    "$namedtuple": _Kind(_is_namedtuple_class, "a NamedTuple class"),
}


_CALLABLE_SCOPE: set[str] = set()
"""Top-level packages whose functions and classes ``$fn`` may name, and whose classes
freeze by structure: the targets' own (:func:`~lockstep.canon.callables.allow_callables_from`)."""

_IMPORTABLE: set[str] = set()
"""Modules a thawed value may import when nothing has yet: those of the project's
configured targets (:func:`allow_imports_of`)."""


def allow_imports_of(*modules: str) -> None:
    """Let a thawed value import these modules (the configured targets' own) when it names
    a class or function of one that is not imported yet (:func:`_own_module`)."""
    _IMPORTABLE.update(modules)


_IMPORTABLE_LATER: list[Callable[[], Iterable[str]]] = []
"""Finders of more importable modules, asked once, the first time a value names a module
:data:`_IMPORTABLE` lacks (:func:`allow_imports_found_by`)."""


def allow_imports_found_by(find: Callable[[], Iterable[str]]) -> None:
    """Let a thawed value import the modules ``find`` names, asked only when a value names
    a module not importable yet: finding them reads the suite's source, which most
    processes that replay a ledger never need.  An equal finder is kept once."""
    if find not in _IMPORTABLE_LATER:
        _IMPORTABLE_LATER.append(find)


def _importable(module_name: str) -> bool:
    while module_name not in _IMPORTABLE and _IMPORTABLE_LATER:
        find = _IMPORTABLE_LATER.pop(0)
        try:
            _IMPORTABLE.update(find())
        except Exception:  # a source that no longer reads adds nothing
            continue
    return module_name in _IMPORTABLE


def _own_module(module_name: str) -> types.ModuleType | None:
    """A module of a configured target that nothing imported yet, imported now; None for
    any other name.

    A value the suite handed a target can be of a class the target's module never
    imports (dateutil's ``relativedelta`` given a datetime in a ``dateutil.tz`` zone): in
    the fresh interpreter that verifies a ledger, and in the fork that replays it, that
    class's module is not loaded, and the row would not thaw.  The modules of the
    project's configured targets are imported by replay anyway, one ledger or another,
    and so are those of a configured package surface that define a class and that the
    package or its suite imports (code that runs anyway, found from the source:
    :func:`lockstep.project_codec.apply`); any other module (one a pull request planted in
    the package and nothing imports, another package's, a test module) is never imported
    because data names it."""
    if module_name in _NOT_IMPORTED or not _importable(module_name):
        return None
    import importlib

    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # the replay of its own ledger reports that import's failure
        first = str(e).strip().splitlines()[:1]
        _NOT_IMPORTED[module_name] = ": ".join([type(e).__name__, *first])
        return None
    return module if isinstance(module, types.ModuleType) else None


_NOT_IMPORTED: dict[str, str] = {}
"""Modules of configured targets whose import raised here, with the exception (one line):
tried once per process, and named by :func:`no_longer_imports`."""


def no_longer_imports(name: str, tag: str, path: str) -> None:
    """Raise :class:`~lockstep.errors.ThawError` when ``name`` (``pkg.mod:Qual``) is of a
    configured target's module whose import raised here, or is a class or function today's
    code of the targets' package no longer defines (:func:`_no_longer_defined`).

    A change that breaks a module's import-time code (parsimonious builds its own grammar
    at import) leaves every value naming one of its classes unthawable.  That is today's
    code failing, reported on each such case, not a corrupt ledger: before, the first row
    of another ledger naming such a class ended the whole replay with exit 2."""
    module_name, _, qualname = name.partition(":")
    reason = _NOT_IMPORTED.get(module_name)
    if reason is None:
        reason = _no_longer_defined(module_name, qualname)
        if reason is None:
            return
    else:
        reason = f"its module {module_name!r} no longer imports: {reason}"
    from lockstep.errors import ThawError

    raise ThawError(f"{tag} names {name}, and {reason}", path)


def _no_longer_defined(module_name: str, qualname: str) -> str | None:
    """Why today's code of the targets' own package does not define ``module:qualname``
    (a class or function a refactor renamed, moved or removed), or None.

    Only for the packages of the configured targets (:data:`_CALLABLE_SCOPE`), a module
    already imported whose namespace lacks a part of the name, or a module that no longer
    exists beside its imported package: the change's failure on the cases naming it, not
    a corrupt file.  Nothing is imported or run to tell (``__dict__`` lookups, and a
    search of the imported package's folders for the module's file).  A name of another
    package, or of a module of the package that exists but nothing imported, stays a
    value no replay rebuilds (a file naming it is refused whole)."""
    if not qualname or module_name.split(".")[0] not in _CALLABLE_SCOPE:
        return None
    module = sys.modules.get(module_name)
    if isinstance(module, types.ModuleType):
        namespace: Any = object.__getattribute__(module, "__dict__")
        parts = qualname.split(".")
        for i, part in enumerate(parts):
            if not isinstance(namespace, dict | types.MappingProxyType):
                return None  # a nested function's name: not walked
            if part not in namespace:
                gone = ".".join(parts[: i + 1])
                return f"{module_name} no longer defines {gone!r} (renamed, moved or removed?)"
            held = namespace[part]
            namespace = (
                object.__getattribute__(held, "__dict__") if isinstance(held, type) else None
            )
        return None
    parent, _, leaf = module_name.rpartition(".")
    package = sys.modules.get(parent) if parent else None
    folders = getattr(package, "__path__", None) if isinstance(package, types.ModuleType) else None
    if not isinstance(folders, list) or not all(isinstance(f, str) for f in folders):
        return None
    for folder in folders:
        base = os.path.join(folder, leaf)
        if os.path.exists(base) or any(
            os.path.exists(base + suffix) for suffix in _module_suffixes()
        ):
            return None
    return f"its module {module_name!r} no longer exists (renamed, moved or removed?)"


def _module_suffixes() -> list[str]:
    """The file suffixes a module may have here (source, bytecode, extension)."""
    import importlib.machinery

    return list(importlib.machinery.all_suffixes())


def module_and_rest(name: str) -> tuple[types.ModuleType | None, str]:
    """For ``"pkg.mod:rest"``: the module, imported already (or a configured target's,
    imported now: :func:`_own_module`), and ``rest``; None for any other module."""
    module_name, sep, rest = name.partition(":")
    module = sys.modules.get(module_name) if sep else None
    if module is None and sep:
        module = _own_module(module_name)
    return (module if isinstance(module, types.ModuleType) else None), rest


def _already_imported(name: str, *, importing: bool = False) -> Any:
    """The class ``module:Qual.Name`` if its module is in ``sys.modules``, else None.

    Looks in ``__dict__`` only: no import, no ``getattr`` (a module's ``__getattr__``
    or a lazy module would run code), and the class found must carry that very name.
    ``importing`` (a value being thawed): a configured target's module that is not
    imported yet is imported first (:func:`_own_module`).
    """
    found = _imported_object(name, importing=importing)
    if isinstance(found, type):
        if qualified_name(found) == name:
            return found
        module_name, _, rest = name.partition(":")
        if found.__module__ == module_name and _module_alias(found) == rest:
            return found  # its module's own class, bound under another name
    return None


def _module_alias(cls: type[Any]) -> str | None:
    """The name a class's own module binds it under when the class's name does not find it
    (aniso8601's ``TimezoneTuple = namedtuple("Timezone", ...)``, an ``Enum("Colour", ...)``
    bound as ``Color``): the first such name in sorted order, so that every process picks
    the same one; None when the module binds it nowhere at its top level."""
    module = sys.modules.get(cls.__module__)
    if not isinstance(module, types.ModuleType):
        return None
    namespace: Any = object.__getattribute__(module, "__dict__")
    names = sorted(k for k, v in namespace.items() if v is cls and type(k) is str)
    return next((k for k in names if k.isidentifier()), None)


_NAMED: dict[type[Any], tuple[str, object, object, types.ModuleType, tuple[str, ...]]] = {}
"""Per class found by its name once: the name, its ``__module__`` and ``__qualname__``
then, its module and the qualname's parts (:func:`reachable_name`)."""


def reachable_name(cls: type[Any]) -> str | None:
    """``module:QualName`` of ``cls`` when that name finds ``cls`` itself now, in a module
    already imported (:func:`_already_imported`); None for a class defined inside a function
    or no longer found there.  A class found before is looked up again in its module's
    dicts without building its name: an object graph asks it of every node."""
    module_name, qualname = cls.__module__, cls.__qualname__
    known = _NAMED.get(cls)
    if (
        known is not None
        and known[1] is module_name
        and known[2] is qualname
        and sys.modules.get(module_name) is known[3]
    ):
        found: Any = known[3]
        namespace: Any = object.__getattribute__(found, "__dict__")
        for part in known[4]:
            if not isinstance(namespace, dict | types.MappingProxyType):
                return None
            found = namespace.get(part)
            namespace = found.__dict__ if isinstance(found, type) else None
        return known[0] if found is cls else None
    name = qualified_name(cls)
    if "<" in qualname:
        return None
    parts = tuple(qualname.split("."))
    if _already_imported(name) is not cls:
        alias = _module_alias(cls)
        if alias is None:
            return None
        name, parts = f"{module_name}:{alias}", (alias,)
    module = sys.modules[module_name]
    _NAMED[cls] = (name, module_name, qualname, module, parts)
    return name


_FOUND_BY_NAME: dict[str, type[Any]] = {}
"""Per name a value being thawed named, the class :func:`_already_imported` found."""


def class_named(name: str, *, importing: bool = False) -> Any:
    """:func:`_already_imported`, answered at once with the class found under ``name``
    before while that name still finds it (:func:`reachable_name`): a thawed tree names
    the same few classes at every node."""
    known = _FOUND_BY_NAME.get(name)
    if known is not None and reachable_name(known) == name:
        return known
    found = _already_imported(name, importing=importing)
    if found is not None:
        _FOUND_BY_NAME[name] = found
    return found


def _imported_object(name: str, *, importing: bool = False) -> Any:
    """What ``module:Qual.Name`` names in an already-imported module, or None.

    Walks ``__dict__``s only (module, then classes): no import, no ``getattr``; but see
    ``importing`` in :func:`_already_imported`.
    """
    module_name, sep, qualname = name.partition(":")
    module = sys.modules.get(module_name) if sep else None
    if module is None and sep and importing:
        module = _own_module(module_name)
    if not isinstance(module, types.ModuleType) or not qualname:
        return None
    namespace: Any = object.__getattribute__(module, "__dict__")
    found: Any = None
    parts = qualname.split(".")
    for i, part in enumerate(parts):
        if not isinstance(namespace, dict | types.MappingProxyType):
            return None
        found = namespace.get(part)
        if isinstance(found, type):
            namespace = found.__dict__
        elif i == len(parts) - 2 and parts[-1] in HELD_FUNCTION_ATTRS:
            namespace = _plain_instance_dict(_unrecorded(found))
        else:
            namespace = None
    return found


def _unrecorded(found: Any) -> Any:
    """``found``, or the function a recording wrapper stands for: while a surface is
    recorded, ``validators.url:url`` holds the recorder's wrapper around validators' own
    decorator, and ``url.__wrapped__`` must name what it names at replay, the undecorated
    function (validators' ``ValidationError`` keeps it as its first argument)."""
    for _ in range(4):
        if type(found) is not types.FunctionType:  # reads no ``__dict__`` a class computes
            return found
        inner = found.__dict__.get("__lockstep_wrapped__")
        if inner is None:
            return found
        found = inner
    return found


HELD_FUNCTION_ATTRS: Final = ("func", "__wrapped__")
"""Where a decorator's object keeps the function it stands for (toolz's ``@curry`` keeps
it as ``func``, ``functools.wraps`` as ``__wrapped__``): ``$fn`` may name the function
through the object its name holds (``toolz.functoolz:flip.func``)."""


def _plain_instance_dict(obj: Any) -> dict[str, Any] | None:
    """``obj``'s own ``__dict__`` when reading it runs no code (no class on its type's MRO
    defines ``__dict__`` itself, as a property could), else None."""
    if isinstance(obj, type | types.ModuleType) or not type(obj).__dictoffset__:
        return None  # (a slotted object has no __dict__: nothing to look up)
    for klass in type(obj).__mro__:
        entry = klass.__dict__.get("__dict__")
        if entry is not None and type(entry) is not types.GetSetDescriptorType:
            return None
    try:
        found = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return None
    return found if type(found) is dict else None


def combine_flags(cls: Any, members: list[Any]) -> Any:
    """``cls(0) | m1 | m2 ...``: a Flag combination made up again from its members."""
    combined = cls(0)
    for member in members:
        combined |= member
    return combined
