"""Exceptions as values: ``{"$exc": [class, [args], {attributes}, chain]}``.

An exception a call *raises* is frozen as its type and message stem (the outcome).  But
legacy code also passes exceptions and returns them: a validator returns the list of
errors it collected, a parser returns an error object among its results, a library's
exception class has methods and properties of its own (schema's ``SchemaError.code``,
whose ``self`` is the exception).  Before, each such call was skipped ("cannot freeze a
builtins.ValueError").

An exception freezes by what the code can read of it:

* its class: a builtin exception by its name (``"ValueError"``), one of the project's
  own classes (``"schema:SchemaError"``), or of a standard library module the process
  imported (``"json.decoder:JSONDecodeError"``);
* ``args``, as the object holds them (what its ``__init__`` passed up, not what the
  caller passed in);
* its attributes (``__dict__``: what its ``__init__`` set, and ``__notes__``);
* its chain, ``[__cause__, __context__, __suppress_context__]``, null when it has none
  (a context it suppresses, as ``raise ... from`` does, is not kept: no traceback shows
  it).

Its traceback is not frozen: frames cannot be rebuilt, and a thawed exception has none.
Code that formats it with its traceback replays differently, which recording's
verification sees: such a row does not reproduce and is refused, never written.

Thawing allocates the object without running its class's ``__new__`` or ``__init__``
(pickle's way, minus the ``__init__`` call pickle makes: a subclass whose ``__init__``
takes other arguments than ``args`` would fail or change it), then sets ``args``, the
attributes and the chain.  Only exceptions whose state that covers are frozen: a class
whose C base keeps more fields (``OSError``'s ``errno``, ``SyntaxError``'s ``lineno``,
``StopIteration``'s ``value``) or that adds ``__slots__`` is refused, naming why.  The data
names a class the decoder finds among the builtins or the project's already-importable
classes; nothing else is imported.  Only an ``Exception`` is frozen: code that raises an
error it was handed must not be made to raise ``SystemExit`` by a forged ledger.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

from lockstep.canon._core import JSON, Unfreezable, check_level, qualified_name
from lockstep.canon.decoding import TAG_DECODERS, _malformed, decode_at, list_payload
from lockstep.canon.encoding import FALLBACK_ENCODERS, Encoder
from lockstep.canon.objects import project_or_zone
from lockstep.canon.registry import class_named, no_longer_imports, reachable_name
from lockstep.errors import CanonError

_PLAIN_SIZE: Final = BaseException.__basicsize__
"""The size of an exception whose C part is ``BaseException``'s alone (``args``, the chain,
the traceback, ``__dict__``); a builtin base larger than it keeps fields of its own."""


def _shown(t: type[Any]) -> str:
    return t.__name__ if t.__module__ == "builtins" else qualified_name(t)


def _builtin_base(t: type[Any]) -> type[BaseException]:
    """The nearest builtin exception class ``t`` extends (``t`` itself when builtin)."""
    for cls in t.__mro__:
        if cls.__module__ == "builtins":
            return cls
    return BaseException  # pragma: no cover -- every exception extends it


def _refusal(t: type[Any]) -> str | None:
    """Why objects of the exception class ``t`` cannot be frozen whole, or None."""
    base = _builtin_base(t)
    if base.__basicsize__ != _PLAIN_SIZE:
        return (
            f"its base {base.__name__} keeps fields of its own in C that no rebuild "
            "from args and attributes restores"
        )
    for cls in t.__mro__:
        if cls is base:
            break
        if cls.__dict__.get("__slots__"):
            return f"{qualified_name(cls)} declares __slots__"
    return None


def _standard_library(t: type[Any]) -> bool:
    """Whether ``t`` is a class of a standard library module (its name finds it only in a
    module already imported: such a module is never imported because data names it)."""
    module = t.__module__
    return isinstance(module, str) and module.partition(".")[0] in sys.stdlib_module_names


def _class_name(t: type[Any]) -> str | None:
    """How the data names ``t``: a builtin's bare name, the project's or the standard
    library's ``mod:Qual`` (``json.decoder:JSONDecodeError``); None for any other
    library's exception."""
    if t.__module__ == "builtins" and vars(builtins).get(t.__name__) is t:
        return str(t.__name__)
    if not (project_or_zone(t) or _standard_library(t)):
        return None
    name = reachable_name(t)
    if name is None:
        raise Unfreezable(
            f"cannot freeze a {qualified_name(t)}: the class is not reachable by its name "
            "(defined inside a function?), so it could not be rebuilt"
        )
    return name


_CHAINLESS: Final[ContextVar[bool]] = ContextVar("lockstep_exceptions_chainless", default=False)


@contextmanager
def without_chains() -> Iterator[None]:
    """Inside the block, an exception freezes without its chain (``null``): what a row
    keeps of an exception's attributes compares the exceptions they hold by class,
    arguments and attributes, not by the interpreter's own error they were raised while
    handling (:mod:`lockstep.oracles.ledger.exc_state`)."""
    token = _CHAINLESS.set(True)
    try:
        yield
    finally:
        _CHAINLESS.reset(token)


def _enc_exception(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    if not isinstance(v, BaseException):
        return None
    t = type(v)
    if not isinstance(v, Exception):
        raise Unfreezable(
            f"cannot freeze a {_shown(t)}: only an Exception freezes as a value (code that "
            "raises what it is handed must not end the replay)"
        )
    name = _class_name(t)
    if name is None:
        return None  # another library's exception: refused by the caller, naming it
    why = _refusal(t)
    if why is not None:
        raise Unfreezable(f"cannot freeze a {_shown(t)}: {why}")
    check_level(depth + 2)
    args = encoder.child(list(v.args), ".args", depth + 1)
    attributes = v.__dict__
    if any(type(key) is not str for key in attributes):
        raise Unfreezable(f"cannot freeze a {_shown(t)}: an attribute not named by a str")
    state = {key: encoder.child(item, f".{key}", depth + 2) for key, item in attributes.items()}
    chain: JSON = None
    # a context the exception suppresses (``raise ... from``) is not kept: no traceback
    # shows it, and it is often the library's own (json's StopIteration)
    context = None if v.__suppress_context__ else v.__context__
    chained = v.__cause__ is not None or context is not None or v.__suppress_context__
    if chained and not _CHAINLESS.get():  # chainless: frozen to be compared, not thawed
        check_level(depth + 3)
        chain = [
            encoder.child(v.__cause__, ".__cause__", depth + 2),
            encoder.child(context, ".__context__", depth + 2),
            bool(v.__suppress_context__),
        ]
    return {"$exc": [name, args, state, chain]}


def _exception_class(name: Any, path: str) -> type[BaseException]:
    if type(name) is not str:
        raise _malformed("$exc", "a class name", name, path)
    if ":" not in name:
        cls = vars(builtins).get(name)
        if not isinstance(cls, type) or not issubclass(cls, BaseException):
            raise CanonError(f"$exc names {name[:80]!r}, which is not a builtin exception", path)
    else:
        cls = class_named(name, importing=True)
        if cls is None:
            no_longer_imports(name, "$exc", path)
        if not isinstance(cls, type) or not issubclass(cls, BaseException):
            cls = None
        if cls is None or not (project_or_zone(cls) or _standard_library(cls)):
            raise CanonError(
                f"$exc names {name[:80]!r}, which is not an exception class of the project "
                "or of the standard library already imported",
                path,
            )
    if not issubclass(cls, Exception):  # SystemExit, KeyboardInterrupt: raised, they end it
        raise CanonError(f"$exc names {name[:80]!r}, which is not an Exception", path)
    why = _refusal(cls)
    if why is not None:
        raise CanonError(f"$exc names {name[:80]!r}, which cannot be rebuilt: {why}", path)
    return cls


def _dec_exception(payload: Any, path: str, depth: int) -> Any:
    name, args, state, chain = list_payload(
        "$exc", payload, path, depth, "[class, [args], {attributes}, chain]"
    )
    cls = _exception_class(name, path)
    if type(args) is not list or type(state) is not dict:
        raise _malformed("$exc", "[class, [args], {attributes}, chain]", payload, path)
    exc = _builtin_base(cls).__new__(cls)
    exc.args = tuple(decode_at(args, f"{path}.args", depth + 2))
    for key, item in state.items():
        exc.__dict__[key] = decode_at(item, f"{path}.{key}", depth + 2)
    if chain is not None:
        if type(chain) is not list or len(chain) != 3 or type(chain[2]) is not bool:
            raise _malformed("$exc", "a chain [cause, context, suppress_context]", chain, path)
        cause = decode_at(chain[0], f"{path}.__cause__", depth + 2)
        context = decode_at(chain[1], f"{path}.__context__", depth + 2)
        if not all(c is None or isinstance(c, BaseException) for c in (cause, context)):
            raise _malformed("$exc", "a chain of exceptions or null", chain, path)
        if cause is None and context is None and not chain[2]:
            raise _malformed("$exc", "null for an empty chain", chain, path)
        if chain[2] and context is not None:
            raise _malformed("$exc", "no context kept where it is suppressed", chain, path)
        exc.__cause__, exc.__context__ = cause, context
        exc.__suppress_context__ = chain[2]
    return exc


FALLBACK_ENCODERS.append(_enc_exception)
TAG_DECODERS["$exc"] = _dec_exception
