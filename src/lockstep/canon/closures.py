"""A function written in a function of the project: ``{"$closure": [function, name, n, cells]}``.

mistune's renderers keep each plugin's method as ``lambda m, state: func(self, m, state)``
(made in ``BaseRenderer.register``), markdown parsers keep hooks made by their plugin
functions, toml's comment-preserving encoder a lambda over ``self``: an object holding
one could not be frozen, and 87% of the calls under mistune's suite were skipped.

Such a function is the code its enclosing function holds (the ``n``-th code object named
``name`` among that function's constants, written in the project's own package) and the
values its variables hold, each frozen as any value (``self`` is the object being frozen
around it: ``{"$ref": k}``).  It thaws to a new function of that very code, in its
module's globals, with cells holding the thawed values: the code was in the project
already; data chooses only the values, as a row's arguments do.  A closure with defaults
or attributes of its own, one written two functions deep, or one whose enclosing
function is not the project's, stays refused.  A function written there without
variables (mistune's default ``heading_id``) freezes alike, with no cells; a lambda
without variables keeps its older form, ``$lambda`` (:mod:`.callables`).
"""

from __future__ import annotations

import functools
import types
from typing import TYPE_CHECKING, Any

from lockstep.canon._core import JSON, _short, check_level
from lockstep.canon.callables import _functions_in, _in_scope
from lockstep.canon.decoding import TAG_DECODERS, decode_at, list_payload, str_payload
from lockstep.canon.encoding import FALLBACK_ENCODERS
from lockstep.canon.registry import _imported_object, no_longer_imports
from lockstep.errors import CanonError, ThawError

if TYPE_CHECKING:
    from lockstep.canon.encoding import Encoder


def _enc_closure(encoder: Encoder, v: Any, depth: int) -> JSON | None:
    if type(v) is not types.FunctionType:
        return None
    found = _place(v)
    if found is None:
        return None
    name, code_name, index = found
    check_level(depth + 3)
    values: dict[str, Any] = {}
    for var, cell in zip(v.__code__.co_freevars, v.__closure__ or (), strict=True):
        try:
            values[var] = cell.cell_contents
        except ValueError:  # a variable not bound yet (a function that names itself later)
            return None
    wraps = _wrapping(v, values)
    if wraps is None:
        return None
    cells = {var: encoder.child(x, f".<closure>.{var}", depth + 3) for var, x in values.items()}
    form: list[JSON] = [name, code_name, index, cells]
    return {"$closure": [*form, wraps] if wraps else form}


def _wrapping(v: types.FunctionType, values: dict[str, Any]) -> str | None:
    """``""`` for a closure with no attributes of its own; for one ``functools.wraps`` made
    of a variable's value (hashids' ``_deprecated(self.decode)`` wrapper), that variable's
    name: it thaws wrapping the thawed value again; None for any other."""
    held = v.__dict__
    if not held:
        return ""
    wrapped = held.get("__wrapped__")
    var = next((k for k, x in values.items() if x is wrapped), None)
    if var is None:
        return None
    copied = set(getattr(wrapped, "__dict__", None) or ()) | {"__wrapped__"}
    return var if set(held) <= copied else None


def _place(v: types.FunctionType) -> tuple[str, str, int] | None:
    """``(enclosing function, code name, n)`` of a closure the project's function holds."""
    module = v.__globals__.get("__name__")  # the code's own (functools.wraps copies another's)
    parent, _, rest = v.__code__.co_qualname.rpartition(".<locals>.")
    if (
        not parent
        or "<" in parent
        or "." in rest
        or not isinstance(module, str)
        or v.__defaults__ is not None
        or v.__kwdefaults__ is not None
    ):
        return None
    name = f"{module}:{parent}"
    if not _in_scope(name):
        return None
    for func in _functions_in(_imported_object(name)):
        codes = _codes(func, v.__code__.co_name)
        if v.__globals__ is func.__globals__ and any(c is v.__code__ for c in codes):
            index = next(i for i, c in enumerate(codes) if c is v.__code__)
            return name, v.__code__.co_name, index
    return None


def _codes(func: types.FunctionType, code_name: str) -> list[types.CodeType]:
    """The code objects named ``code_name`` written directly in ``func``, in order."""
    return [
        c for c in func.__code__.co_consts if type(c) is types.CodeType and c.co_name == code_name
    ]


def _dec_closure(payload: Any, path: str, depth: int) -> Any:
    parts = list_payload("$closure", payload, path, depth)
    if len(parts) not in (4, 5):
        raise CanonError(
            "malformed $closure value: want [function, name, index, cells] or "
            "[function, name, index, cells, wrapped variable]",
            path,
        )
    name, code_name, index, cells = parts[:4]
    wraps = str_payload("$closure", parts[4], path) if len(parts) == 5 else ""
    name = str_payload("$closure", name, path)
    code_name = str_payload("$closure", code_name, path)
    held = _imported_object(name, importing=True) if _in_scope(name) else None
    if held is None and _in_scope(name):
        no_longer_imports(name, "$closure", path)
    for func in _functions_in(held):
        codes = _codes(func, code_name)
        if type(index) is not int or type(cells) is not dict:
            break
        if not 0 <= index < len(codes):
            raise ThawError(  # the function is the package's: a refactor took the code out
                f"$closure names code {_short(code_name)} {index!r} of {name}, which today's "
                f"{func.__qualname__} no longer holds (removed or renamed?)",
                path,
            )
        code = codes[index]
        if sorted(cells) != sorted(code.co_freevars):
            raise ThawError(
                f"$closure names code {_short(code_name)} {index!r} of {name}, which today "
                f"closes over {list(code.co_freevars)!r}, not the recorded {sorted(cells)!r}",
                path,
            )
        values = [
            decode_at(cells[var], f"{path}.<closure>.{var}", depth + 3) for var in code.co_freevars
        ]
        closure = tuple(types.CellType(x) for x in values) if values else None
        made = types.FunctionType(code, func.__globals__, code_name, None, closure)
        made.__qualname__ = f"{func.__qualname__}.<locals>.{code_name}"
        made.__module__ = func.__module__
        if wraps:
            if wraps not in code.co_freevars:
                raise CanonError(f"malformed $closure value: it wraps no {wraps!r}", path)
            functools.update_wrapper(made, values[code.co_freevars.index(wraps)])
        return made
    raise CanonError(
        f"$closure names code {_short(str(code_name))} {index!r} of {_short(name)}, which is not "
        "a function written in a function of the target's package",
        path,
    )


FALLBACK_ENCODERS.append(_enc_closure)
TAG_DECODERS["$closure"] = _dec_closure
