"""Modules as values: ``{"$module": "re"}``.

Code keeps a module in its objects to choose an implementation once: lark's
``LexerConf`` holds ``re_module``, the standard ``re`` or the ``regex`` module when it is
installed.  Every call handed such an object was skipped ("cannot freeze a
builtins.module"): 56% of lark 1.2.2's suite's calls.  A module freezes by its name, when
that name finds it in ``sys.modules``, and thaws to the module of that name the process
has imported.  Only the modules of :data:`PURE_MODULES` do: code handed a module calls its
functions, and a forged ledger must not choose ``os``.  Nothing is imported because data
names it: a module the replayed code no longer imports makes that row an error of today's
code, not a corrupt ledger.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Final

from lockstep.canon._core import JSON, Unfreezable, check_level
from lockstep.canon.decoding import TAG_DECODERS, _malformed
from lockstep.canon.encoding import FALLBACK_ENCODERS, Encoder
from lockstep.canon.registry import _CALLABLE_SCOPE
from lockstep.errors import CanonError, ThawError

PURE_MODULES: Final = frozenset(
    {"re", "regex", "math", "cmath", "string", "unicodedata", "statistics"}
)
"""The modules a value may hold: each one's functions compute a value from their
arguments.  A module is an object of functions, and the code that receives one calls them
by name: a forged ledger handing ``os`` to ``def dedupe(seq, item): seq.remove(item)``
would run ``os.remove(item)``.  So no other module is frozen or thawed, but the project's
own (:func:`_may_hold`)."""


def _may_hold(name: object) -> bool:
    """Whether a value may hold the module ``name``: one of :data:`PURE_MODULES`, or a
    module of the project's own packages (markdown-it's ``MarkdownIt`` keeps its
    ``utils`` module; every call handed one was skipped).  A forged ledger choosing one of
    the project's modules chooses no more than a ``$fn`` already may: the project's own
    functions."""
    if not isinstance(name, str):
        return False
    return name in PURE_MODULES or name.split(".")[0] in _CALLABLE_SCOPE


def _enc_module(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    if not isinstance(v, types.ModuleType):
        return None
    name = getattr(v, "__name__", None)
    if not _may_hold(name):
        raise Unfreezable(
            f"cannot freeze the module {name!r}: only the project's own modules and those "
            f"whose functions compute values ({', '.join(sorted(PURE_MODULES))}) freeze; "
            "code handed any other could be made to call its functions"
        )
    if type(name) is not str or sys.modules.get(name) is not v:
        raise Unfreezable(
            f"cannot freeze the module {name!r}: it is not the module sys.modules holds "
            "under that name"
        )
    check_level(depth)
    return {"$module": name}


def _dec_module(payload: Any, path: str, depth: int) -> Any:
    if type(payload) is not str or not all(p.isidentifier() for p in payload.split(".")):
        raise _malformed("$module", "a module's dotted name", payload, path)
    if not _may_hold(payload):
        raise CanonError(
            f"$module names {payload[:80]!r}, which is not one of the modules a value may hold "
            f"(the project's own, {', '.join(sorted(PURE_MODULES))})",
            path,
        )
    module = sys.modules.get(payload)
    if not isinstance(module, types.ModuleType):
        raise ThawError(
            f"$module names {payload[:80]!r}, which the replayed code has not imported here",
            path,
        )
    return module


FALLBACK_ENCODERS.append(_enc_module)
TAG_DECODERS["$module"] = _dec_module
