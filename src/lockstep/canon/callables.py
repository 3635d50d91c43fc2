"""Callables and iterators as arguments: ``$fn``, ``$default`` and ``$iter``."""

from __future__ import annotations

import operator
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from lockstep.canon._core import Unfreezable, _short
from lockstep.canon.decoding import (
    TAG_DECODERS,
    decode_at,
    decode_items,
    list_payload,
    str_payload,
)
from lockstep.canon.held_lambdas import held_in, held_place
from lockstep.canon.library_classes import test_module
from lockstep.canon.registry import (
    _CALLABLE_SCOPE,
    _TYPES_BY_NAME,
    HELD_FUNCTION_ATTRS,
    _imported_object,
    forget_plans,
    no_longer_imports,
)
from lockstep.errors import CanonError, ThawError

# A module-level function or class passed as an argument (a ``key=``, a ``format=``
# callback) freezes by its name, ``{"$fn": "pkg.mod:qualname"}``.  Data must never name
# code to run, so a name resolves only (a) inside a package a caller allowed with
# :func:`allow_callables_from` (the ledger's target's own package: the recorder and
# replay allow it), looked up in an already-imported module's ``__dict__`` without an
# import or a ``getattr``; (b) to a class registered with :func:`register_type`; or
# (c) to one of a few side-effect-free builtins (:data:`_PURE_BUILTINS`, ``str.lower``
# and the like), the functions of ``math`` or the standard library's value classes
# (:data:`_PURE_STDLIB`: ``datetime``, ``Decimal``, ``OrderedDict``).  A lambda
# written in a module or class body freezes by a name that holds it there, or as
# ``{"$default": ["pkg.mod:Class.__init__", "parameter"]}`` when it is that parameter's
# default (under the same package rule); one written in a function, holding none of its
# variables, as ``{"$lambda": ["pkg.mod:Class.method", n]}``, the ``n``-th lambda of that
# function's code; closures have no such place and stay refused
# (bound methods: :mod:`lockstep.canon.methods`).  Encoding applies the same rule, so a
# name that froze always thaws.
#
# ``{"$iter": [...]}`` is an iterator argument the recorder materialized at call time
# (:class:`IterItems`); it thaws to a fresh :class:`IterItems` over the same items.

_CALLABLE_TYPES: Final = frozenset(
    {types.FunctionType, types.BuiltinFunctionType, types.MethodDescriptorType}
)
_PURE_BUILTINS: Final = frozenset(
    # value constructors and combinators a callback argument names (a ``key=len``, toolz's
    # ``reduceby(key, add, seq, set)``, ``itemmap(reversed, d)``): they run nothing else
    [
        "abs",
        "all",
        "any",
        "bin",
        "bool",
        "bytes",
        "callable",
        "chr",
        "complex",
        "dict",
        "divmod",
        "enumerate",
        "float",
        "format",
        "frozenset",
        "hex",
        "int",
        "iter",
        "len",
        "list",
        "max",
        "min",
        "next",
        "object",
        "oct",
        "ord",
        "pow",
        "range",
        "repr",
        "reversed",
        "round",
        "set",
        "sorted",
        "str",
        "sum",
        "tuple",
        "type",  # python-box keeps ``type`` as an object's default attribute factory
        "zip",
    ]
)
_PURE_OPERATORS: Final = frozenset(
    # operator's functions (``_operator:add``): each applies one operator to its arguments
    [
        "abs",
        "add",
        "and_",
        "concat",
        "contains",
        "countOf",
        "eq",
        "floordiv",
        "ge",
        "getitem",
        "gt",
        "index",
        "indexOf",
        "inv",
        "invert",
        "is_",
        "is_not",
        "le",
        "length_hint",
        "lshift",
        "lt",
        "matmul",
        "mod",
        "mul",
        "ne",
        "neg",
        "not_",
        "or_",
        "pos",
        "pow",
        "rshift",
        "sub",
        "truediv",
        "truth",
        "xor",
    ]
)
_PURE_METHOD_OWNERS: Final = (str, bytes, int, float)
_PURE_STDLIB: Final = frozenset(
    [
        "collections:ChainMap",
        "collections:Counter",
        "collections:OrderedDict",
        "collections:defaultdict",
        "collections:deque",
        "datetime:date",
        "datetime:datetime",
        "datetime:time",
        "datetime:timedelta",
        "datetime:timezone",
        "decimal:Decimal",
        "fractions:Fraction",
        "ipaddress:IPv4Address",
        "ipaddress:IPv4Interface",
        "ipaddress:IPv4Network",
        "ipaddress:IPv6Address",
        "ipaddress:IPv6Interface",
        "ipaddress:IPv6Network",
        "ipaddress:ip_address",
        "ipaddress:ip_interface",
        "ipaddress:ip_network",
        "pathlib:PurePath",
        "pathlib:PurePosixPath",
        "pathlib:PureWindowsPath",
        "types:SimpleNamespace",
        "uuid:UUID",
    ]
)
"""Value classes and constructors of the standard library a callable argument may name
(parse's ``converter=Decimal``, croniter's ``ret_type=datetime``, a ``factory=OrderedDict``):
making a value of them from other values reads no file, starts nothing and changes no
state.  ``pathlib.Path`` is not one (a pure path is): what a target does with a path it
made can touch the disk, and a ledger must not choose that.  Every function of ``math``
may be named too (``key=math.floor``)."""

_PURE_MODULES: Final = frozenset({"math", "cmath"})
"""Standard-library modules all of whose module-level functions compute a number from
numbers (:func:`_in_scope`)."""


class PastRecorded(BaseException):
    """A replayed call asked an argument recorded as it was used (an iterator's items, a
    callable's answers) for what the recorded call never asked: what it would have given is
    not known.  A ``BaseException``, so the target's own ``except Exception`` does not take
    it for the argument's error; replay reports it as the case's drift (:meth:`drift`)."""

    def drift(self) -> tuple[str, str, str]:
        """What drifted, what the recorded call did, and what this one did."""
        raise NotImplementedError


class IterPastRecorded(PastRecorded):
    """A replayed call asked an iterator argument for more items than the recorded call
    took from it, where the recorded call never found its end."""

    def __init__(self, taken: int) -> None:
        super().__init__(taken)
        self.taken = taken

    def drift(self) -> tuple[str, str, str]:
        return (
            "iterator argument",
            f"took {self.taken} item(s) and stopped",
            f"asked for item {self.taken + 1}",
        )


class IterItems:
    """An iterator over items materialized before the call: what a target is handed for an
    iterator argument, at record and at replay alike.  It freezes as ``{"$iter": [...]}``
    with all its items however far it was consumed, so it thaws and freezes alike; one the
    recorded call took items from without reaching its end (``open``) freezes as
    ``{"$iter": {"items": [...], "end": "open"}}`` and, asked for more, raises
    :class:`IterPastRecorded`."""

    __slots__ = ("_rest", "items", "open")

    def __init__(self, items: list[Any], open: bool = False) -> None:
        self.items = items
        self._rest = iter(items)
        self.open = open

    def __iter__(self) -> IterItems:
        return self

    def __next__(self) -> Any:
        try:
            return next(self._rest)
        except StopIteration:
            if self.open:
                raise IterPastRecorded(len(self.items)) from None
            raise

    @property
    def taken(self) -> int:
        """How many of its items were taken (what is left is counted, not each item taken)."""
        return len(self.items) - operator.length_hint(self._rest)

    def __repr__(self) -> str:
        return f"<iterator over {len(self.items)} materialized item(s)>"


def allow_callables_from(*packages: str) -> None:
    """Let ``$fn`` name functions and classes of these top-level packages (and their modules)."""
    added = {p.split(".")[0] for p in packages if p} - _CALLABLE_SCOPE
    if added:  # a package allowed already changes nothing (each ledger's replay allows its own)
        _CALLABLE_SCOPE.update(added)
        forget_plans()  # their classes now freeze by structure too


@contextmanager
def callables_from(package: str) -> Iterator[None]:
    """Within the block, also let ``$fn`` name what ``package``'s top-level package defines.

    For a value that must freeze alike whatever the caller allowed so far: a target's
    parameter defaults (``klass=Interval``) are frozen into its ledger's header by the
    recorder, which has allowed the target's package, and again by the interpreter that
    verifies new rows before it has.  The scope is as it was after the block.
    """
    top = package.split(".")[0]
    if not top or top in _CALLABLE_SCOPE:
        yield
        return
    _CALLABLE_SCOPE.add(top)
    forget_plans()
    try:
        yield
    finally:
        _CALLABLE_SCOPE.discard(top)
        forget_plans()


@contextmanager
def callables_only_from(package: str) -> Iterator[None]:
    """Within the block, let ``$fn`` name only what ``package``'s top-level package defines.

    For a value that must freeze alike in every process, whatever each allowed: a target's
    parameter defaults are frozen into its ledger's header by the recorder (under a suite
    that wraps several packages' targets, each allowed) and again by replay (which allows
    what the configuration names) and by a decorator's run (its target's package only).
    A default naming another package's class (jsonpatch's ``pointer_cls=JsonPointer``)
    was frozen by name in one and not in another: unchanged code replayed as a changed
    default.  The scope is as it was after the block.
    """
    top = package.split(".")[0]
    wanted = {top} if top else set()
    if wanted == _CALLABLE_SCOPE:
        yield
        return
    before = set(_CALLABLE_SCOPE)
    _CALLABLE_SCOPE.clear()
    _CALLABLE_SCOPE.update(wanted)
    forget_plans()
    try:
        yield
    finally:
        _CALLABLE_SCOPE.clear()
        _CALLABLE_SCOPE.update(before)
        forget_plans()


def _builtin_exception(name: str) -> bool:
    """Whether ``name`` is a builtin exception class: an argument naming the error a call
    expects or wraps (aniso8601's tests pass ``ValueError``); making one runs nothing.
    Only an ``Exception``: code that raises what it is handed must not be made to raise
    ``SystemExit`` or ``KeyboardInterrupt`` by a forged ledger (ending the replay)."""
    import builtins

    found = vars(builtins).get(name)
    return isinstance(found, type) and issubclass(found, Exception)


def _in_scope(name: str) -> bool:
    module, _, qualname = name.partition(":")
    if module == "builtins":
        owner, _, method = qualname.partition(".")
        if not method:
            return owner in _PURE_BUILTINS or _builtin_exception(owner)
        return owner in {c.__name__ for c in _PURE_METHOD_OWNERS} and "." not in method
    if module == "_operator":
        return qualname in _PURE_OPERATORS
    if module in _PURE_MODULES:  # a function, never the module's loader or spec
        return "." not in qualname and not qualname.startswith("_")
    if module == "ast":
        return _ast_node_class(qualname)
    if module == "random":
        return _random_function(qualname)
    return module.split(".")[0] in _CALLABLE_SCOPE or name in _TYPES_BY_NAME or name in _PURE_STDLIB


def _ast_node_class(qualname: str) -> bool:
    """Whether ``ast:qualname`` is a node class of the syntax tree (``ast.Add``): an
    evaluator keys its tables by them (simpleeval's ``operators``), and making one runs
    nothing.  ``ast`` is imported wherever such a class was frozen."""
    ast = sys.modules.get("ast")
    found = vars(ast).get(qualname) if ast is not None else None
    return isinstance(found, type) and issubclass(found, vars(ast)["AST"])


def _random_function(qualname: str) -> bool:
    """Whether ``random:qualname`` is a function of ``random``'s module (``random.random``,
    a method of its hidden generator): a table of an evaluator's functions holds one
    (simpleeval's ``rand``), and calling it changes nothing but that generator's state."""
    random = sys.modules.get("random")
    if random is None or qualname.startswith("_") or "." in qualname:
        return False
    found = vars(random).get(qualname)
    return getattr(found, "__self__", None) is vars(random).get("_inst") is not None


def _random_module_function(v: Any) -> bool:
    """Whether ``v`` is a function of ``random``'s module, taken from it (``from random
    import random``: its hidden generator's bound method, under its own name there)."""
    random = sys.modules.get("random")
    name = getattr(v, "__name__", None)
    if random is None or not isinstance(name, str) or not _random_function(name):
        return False
    return bool(vars(random).get(name) == v)


def _named_callable(name: str, *, importing: bool = False) -> Any:
    """The function or class ``module:Qual.Name`` in an imported module's namespace, or None
    (``importing``: see :func:`~lockstep.canon.registry._already_imported`)."""
    found = _imported_object(name, importing=importing)
    if type(found) is staticmethod:  # a class's __dict__ holds the wrapper, not its function
        found = found.__func__
    if type(found) in _CALLABLE_TYPES or isinstance(found, type):
        return found
    return None


def freeze_callable(v: Any) -> dict[str, Any]:
    """``{"$fn": name}`` for a function or class by its name, or ``{"$default": [function,
    parameter]}`` for a lambda that is a parameter's default; refuse anything else."""
    try:
        return {"$fn": _callable_name(v)}
    except Unfreezable:
        if type(v) is not types.FunctionType or not v.__qualname__.endswith("<lambda>"):
            raise
        kept = _kept_lambda(v) or _local_lambda(v) or _top_level_lambda(v)
        if kept is None:
            raise
        return kept


def _top_level_lambda(v: types.FunctionType) -> dict[str, Any] | None:
    """``{"$held": ["pkg.mod:TABLE", key]}`` for a lambda written in the body of a module of
    the target's package and kept in one of its tables (:mod:`lockstep.canon.held_lambdas`),
    under a key that freezes by itself: a text, a number, a class or function by name."""
    place = held_place(v)
    if place is None or not _in_scope(place[0]):
        return None
    name, key = place
    if key is None or type(key) in (str, int, bool):
        return {"$held": [name, key]}
    if isinstance(key, type) or type(key) in _CALLABLE_TYPES:
        try:
            return {"$held": [name, freeze_callable(key)]}
        except Unfreezable:
            return None
    return None


def _callable_name(v: Any) -> str:
    """``pkg.mod:qualname`` of a function or class that thaws back to itself, or refuse it."""
    owner = getattr(v, "__objclass__", None)
    module = getattr(owner if owner is not None else v, "__module__", None)
    qualname = getattr(v, "__qualname__", "")
    if type(v) is types.BuiltinFunctionType and not isinstance(
        getattr(v, "__self__", None), types.ModuleType
    ):
        # random.random: its module's name for it; any other ([].append): none reaches it
        module, qualname = (
            ("random", v.__name__) if _random_module_function(v) else (None, qualname)
        )
    name = f"{module}:{qualname}"
    if module and "<" not in qualname and not _names(_named_callable(name), v):
        name = _held_name(name, v)
    if not module or "<" in qualname or not _names(_named_callable(name), v):
        raise Unfreezable(
            f"cannot freeze {type(v).__name__} {qualname or v!r}: only module-level functions "
            "and classes freeze (by name), and a lambda of the target's package kept by name, "
            "as a parameter's default or written in a function without its variables; a "
            "closure freezes only written directly in a function of the target's package, "
            "without defaults or attributes of its own"
        )
    if not _in_scope(name):
        tests = (
            ": list its module's file in [lockstep] test_modules, and replay imports it"
            if test_module(name.partition(":")[0])
            else ""
        )
        raise Unfreezable(
            f"cannot freeze {name}: a callable argument freezes by name only from the "
            "target's own package (or a few pure builtins such as len, str.lower, and the "
            "standard library's value classes such as datetime, Decimal, OrderedDict)" + tests
        )
    return name


def _held_name(name: str, v: Any) -> str:
    """``name`` of the object a decorator made of ``v`` (toolz's ``@curry def flip`` keeps
    the object under ``flip``), extended by the attribute it keeps ``v`` in
    (``toolz.functoolz:flip.func``); ``name`` itself when its object keeps no ``v``."""
    for attr in HELD_FUNCTION_ATTRS:
        held = f"{name}.{attr}"
        if _named_callable(held) is v:
            return held
    return name


def _names(found: Any, v: Any) -> bool:
    """Whether the callable a name holds is ``v``, or the recorder's wrapper around ``v``:
    while a package's surface is recorded its module holds the wrapper, and a default of
    another function (``visit=default_visit``) is still the function itself."""
    for _ in range(4):
        if found is v:
            return True
        if type(found) is not types.FunctionType:
            return False
        found = found.__dict__.get("__lockstep_wrapped__")
    return False


def _kept_lambda(v: types.FunctionType) -> dict[str, Any] | None:
    """Where the module or class a lambda was written in keeps it: a name holding it
    (``_identity = lambda x: x`` -> ``$fn``), or a parameter of one of its functions whose
    default it is (``def __init__(self, force_absolute=lambda _: False)`` -> ``$default``);
    of several, the first in sorted order.  Only in the target's own package."""
    module = v.__module__
    parent = v.__qualname__[: -len("<lambda>")].rstrip(".")
    if not isinstance(module, str) or "<" in parent:
        return None  # written inside a function: a closure, made anew by each call
    where = f"{module}:{parent}" if parent else f"{module}:"
    namespace = _namespace(where)
    if namespace is None:
        return None
    names = sorted(k for k in namespace if isinstance(k, str))
    prefix = f"{module}:{parent}." if parent else f"{module}:"
    for key in names:
        if namespace[key] is v and _in_scope(prefix + key):
            return {"$fn": prefix + key}
    for key in names:
        for func in _functions_in(namespace[key]):
            parameter = _parameter_defaulting_to(func, v)
            if parameter is not None and _in_scope(prefix + key):
                return {"$default": [prefix + key, parameter]}
    return None


def _local_lambda(v: types.FunctionType) -> dict[str, Any] | None:
    """``{"$lambda": ["pkg.mod:Class.method", n]}`` for a lambda written in a function of the
    target's package that holds no variable of it and no default (``self._sort_key =
    sort_key or (lambda x: x)`` in prettytable's ``__init__``): each call of that function
    makes it anew from the same code, which is the ``n``-th lambda among the function's
    constants, so it thaws to a function of that code in the module's globals, and any
    two freeze alike.  A closure, a lambda with defaults (``lambda x, n=n: ...`` keeps a
    value of the call) or one nested deeper stays refused."""
    module = v.__module__
    parent, _, rest = v.__qualname__.rpartition(".<locals>.")
    if (
        rest != "<lambda>"
        or not isinstance(module, str)
        or "<" in parent
        or v.__closure__ is not None
        or v.__defaults__ is not None
        or v.__kwdefaults__ is not None
    ):
        return None
    name = f"{module}:{parent}"
    if not _in_scope(name):
        return None
    for func in _functions_in(_imported_object(name)):
        lambdas = _lambda_codes(func)
        if v.__code__ in lambdas and v.__globals__ is func.__globals__:
            return {"$lambda": [name, lambdas.index(v.__code__)]}
    return None


def _lambda_codes(func: types.FunctionType) -> list[types.CodeType]:
    """The code of each lambda written directly in ``func``, in the order of its constants."""
    return [
        c for c in func.__code__.co_consts if type(c) is types.CodeType and c.co_name == "<lambda>"
    ]


def _dec_lambda(payload: Any, path: str, depth: int) -> Any:
    """``{"$lambda": ["pkg.mod:Class.method", n]}``: a function of that method's ``n``-th
    lambda code, in its module's globals (see :func:`_local_lambda`)."""
    name, index = list_payload("$lambda", payload, path, depth, "[function, index]")
    name = str_payload("$lambda", name, path)
    held = _imported_object(name, importing=True) if _in_scope(name) else None
    if held is None and _in_scope(name):
        no_longer_imports(name, "$lambda", path)
    chain = _functions_in(held)
    for func in chain:
        lambdas = _lambda_codes(func)
        if type(index) is int and 0 <= index < len(lambdas):
            code = lambdas[index]
            if code.co_freevars:
                break
            made = types.FunctionType(code, func.__globals__, "<lambda>")
            made.__qualname__ = f"{func.__qualname__}.<locals>.<lambda>"
            made.__module__ = func.__module__
            return made
    if chain and type(index) is int and all(index >= len(_lambda_codes(f)) for f in chain):
        raise ThawError(  # the function is the package's: a refactor took the lambda out
            f"$lambda names lambda {index!r} of {name}, which today's {chain[0].__qualname__} "
            "no longer holds (removed?)",
            path,
        )
    raise CanonError(
        f"$lambda names lambda {index!r} of {_short(name)}, which is not a lambda without "
        "variables written in a function of the target's package",
        path,
    )


def _dec_held(payload: Any, path: str, depth: int) -> Any:
    """``{"$held": ["pkg.mod:TABLE", key]}``: the lambda that module's table holds under
    that key today (see :func:`_top_level_lambda`)."""
    name, key_form = list_payload("$held", payload, path, depth, "[table, key]")
    name = str_payload("$held", name, path)
    if not _in_scope(name) or "." in name.partition(":")[2]:
        raise CanonError(
            f"$held names {_short(name)}, which is not a module-level name of the target's package",
            path,
        )
    table = _imported_object(name, importing=True)
    if table is None:
        no_longer_imports(name, "$held", path)
    key = decode_at(key_form, f"{path}[1]", depth + 2)
    found = held_in(table, key)
    if found is None:
        raise ThawError(
            f"$held names {_short(name)}, which today holds no function under {repr(key)[:80]}",
            path,
        )
    return found


def _namespace(where: str) -> Any:
    """The ``__dict__`` of the module (``"mod:"``) or the class (``"mod:Qual"``) named,
    imported already; None if there is none."""
    module_name, _, qualname = where.partition(":")
    if not qualname:
        module = sys.modules.get(module_name)
        return object.__getattribute__(module, "__dict__") if module is not None else None
    found = _imported_object(where)
    return found.__dict__ if isinstance(found, type) else None


def _functions_in(held: Any) -> list[types.FunctionType]:
    """The function a module or class namespace holds (a static or class method's too),
    then each function it wraps (``__wrapped__``, as ``functools.wraps`` keeps it: the
    recorder's own wrapper, a user's decorator), read from ``__dict__`` without ``getattr``."""
    if type(held) in (staticmethod, classmethod):
        held = held.__func__
    chain: list[types.FunctionType] = []
    while type(held) is types.FunctionType and len(chain) < 16 and held not in chain:
        chain.append(held)
        held = held.__dict__.get("__wrapped__")
    return chain


def _parameter_defaulting_to(func: types.FunctionType, value: Any) -> str | None:
    """The name of ``func``'s parameter whose default is ``value`` itself, or None."""
    code = func.__code__
    defaults = func.__defaults__ or ()
    positional = code.co_varnames[: code.co_argcount]
    for name, default in zip(positional[len(positional) - len(defaults) :], defaults, strict=True):
        if default is value:
            return name
    for name, default in sorted((func.__kwdefaults__ or {}).items()):
        if default is value:
            return name
    return None


def _dec_default(payload: Any, path: str, depth: int) -> Any:
    """``{"$default": ["pkg.mod:Class.function", "parameter"]}``: the lambda that parameter
    defaults to, read from the function's ``__defaults__``/``__kwdefaults__``."""
    name, parameter = list_payload("$default", payload, path, depth, "[function, parameter]")
    name = str_payload("$default", name, path)
    parameter = str_payload("$default", parameter, path)
    held = _imported_object(name, importing=True) if _in_scope(name) else None
    if held is None and _in_scope(name):
        no_longer_imports(name, "$default", path)
    found: Any = None
    for func in _functions_in(held):
        code = func.__code__
        defaults = func.__defaults__ or ()
        positional = code.co_varnames[: code.co_argcount]
        by_name = dict(zip(positional[len(positional) - len(defaults) :], defaults, strict=True))
        by_name.update(func.__kwdefaults__ or {})
        found = by_name.get(parameter)
        if type(found) is types.FunctionType:
            break
    if type(found) is not types.FunctionType:
        raise CanonError(
            f"$default names {_short(name)} {_short(parameter)}, which is not a parameter of a "
            "function of the target's package defaulting to a function",
            path,
        )
    return found


def _dec_fn(payload: Any, path: str, depth: int) -> Any:
    name = str_payload("$fn", payload, path)
    found = _named_callable(name, importing=True) if _in_scope(name) else None
    if found is None and _in_scope(name):
        no_longer_imports(name, "$fn", path)
    if found is None:
        raise CanonError(
            f"$fn names {_short(name)}, which is not a function or class of the target's "
            "package already imported (or a pure builtin)",
            path,
        )
    return found


ITER_ENDS: Final = ("exhausted", "raised", "open")
"""How an iterator result ended: run out, raised after its items, or left unfinished."""


def _dec_iter(payload: Any, path: str, depth: int) -> Any:
    if type(payload) is dict:  # an iterator result, or an argument left open: {"items": ...}
        items = decode_items(_iter_result_items(payload, path, depth), path, depth + 3)
        return IterItems(items, open=payload["end"] == "open")
    items = list_payload("$iter", payload, path, depth)
    return IterItems(decode_items(items, path, depth + 2))


def _iter_result_items(payload: dict[str, Any], path: str, depth: int) -> list[Any]:
    """The items of an iterator result's payload, checked to be the form the recorder writes."""
    want = 'an object {"items": [...], "end": "exhausted"|"raised"|"open"}'
    end = payload.get("end")
    keys = {"items", "end", "exc_type", "exc_stem"} if end == "raised" else {"items", "end"}
    if set(payload) != keys or end not in ITER_ENDS:
        raise CanonError(f"malformed $iter value: expected {want}", path)
    if end == "raised" and not (
        type(payload["exc_type"]) is str and type(payload["exc_stem"]) is str
    ):
        raise CanonError("malformed $iter value: exc_type and exc_stem must be strings", path)
    return list_payload("$iter", payload["items"], path, depth + 1)


TAG_DECODERS["$fn"] = _dec_fn
TAG_DECODERS["$default"] = _dec_default
TAG_DECODERS["$lambda"] = _dec_lambda
TAG_DECODERS["$held"] = _dec_held
TAG_DECODERS["$iter"] = _dec_iter
