"""Which of the project's classes keep part of an object's state in a base written in C.

A project class freezes by structure: its builtin value base (``str``, ``dict``,
``datetime`` ...) read through the builtin's own slots, then its ``__dict__`` and slots
(:mod:`lockstep.canon.objects`).  A class that extends another C type -- numpy's
``ndarray`` (uncertainties' ``unumpy.matrix``), ``array.array``, ``collections.deque``,
``io.StringIO``, ``threading.local``, ``functools.partial`` -- holds its items in that
type's C fields, which neither its ``__dict__`` nor Python's default ``__getstate__`` show.
Frozen that way, ``matrix([[1, 2]])`` and ``matrix([[9, 9]])`` were the same value: a
changed result replayed green.  Such an object is refused instead, naming the base,
unless the project's own Python code defines how its state is read: a ``__getstate__``
(what it gives is the state), or a ``__reduce__`` in pickle's ``copyreg.__newobj__``
form (its arguments rebuild the C part; told per object by the caller).  Verification
proves such a state thaws.

A C base is told by its instance layout, not its name: walking the chain of layout
bases (``__base__``), a class written in Python adds only its ``__dict__``, its weak
reference list and its ``__slots__`` to its base's size; anything more is C fields.  A C
class that adds no field (``typing.Generic`` on 3.12, ``datetime.tzinfo``) holds no state.
Exceptions are frozen by their own rule, and a C class the value base derives from
(``OrderedDict`` under ``dict``) is read as that base.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, Final

_POINTER: Final = 8
_STATE_PROTOCOL: Final = ("__getstate__",)

_KNOWN: dict[tuple[type[Any], object], type[Any] | None] = {}
"""By class and the value-base rule asked with (the project's, or none)."""


def c_state_base(
    cls: type[Any], value_base: Callable[[type[Any]], type[Any] | None]
) -> type[Any] | None:
    """The C class whose fields hold part of the state of ``cls``'s objects, or None when
    the project's structure freezing sees all of it (``value_base(cls)``: the builtin
    value type ``cls`` is frozen as, if any).  Answered once per class."""
    key = (cls, value_base)
    try:
        return _KNOWN[key]
    except KeyError:
        found = _KNOWN[key] = _decide(cls, value_base(cls))
        return found


def no_value_base(cls: type[Any]) -> None:
    """For a caller that freezes ``cls`` with no value base."""
    return None


def _decide(cls: type[Any], value_base: type[Any] | None) -> type[Any] | None:
    if issubclass(cls, BaseException):
        return None
    python_protocol = False
    layout: type[Any] | None = cls
    while layout is not None and layout is not object:
        base = layout.__base__
        if base is None or layout is value_base:
            break  # the value base and its own bases are read as that base
        namespace = layout.__dict__
        python_protocol = python_protocol or any(
            isinstance(namespace.get(name), types.FunctionType) for name in _STATE_PROTOCOL
        )
        under_value_base = value_base is not None and issubclass(layout, value_base)
        if _adds_c_fields(layout, base) and not python_protocol and not under_value_base:
            return layout  # (a C class under the value base, OrderedDict: read as dict)
        layout = base
    return None


def _adds_c_fields(cls: type[Any], base: type[Any]) -> bool:
    """Whether ``cls``'s objects are larger than ``base``'s by more than a class statement
    adds: a pointer per ``__slots__`` member, and one each for a ``__dict__`` and a weak
    reference list it adds where they are not kept outside the object (3.11's managed
    dict)."""
    extra = cls.__basicsize__ - base.__basicsize__
    if extra <= 0:
        return False
    namespace = cls.__dict__
    allowed = 0
    if "__slots__" in namespace:
        members = (v for v in namespace.values() if type(v) is types.MemberDescriptorType)
        allowed += _POINTER * sum(1 for _ in members)
    if type(namespace.get("__weakref__")) is types.GetSetDescriptorType:
        allowed += _POINTER
    if type(namespace.get("__dict__")) is types.GetSetDescriptorType and cls.__dictoffset__ > 0:
        allowed += _POINTER
    return extra > allowed


__all__ = ["c_state_base", "no_value_base"]
