"""Plain classes of other libraries: which of them freeze by structure without being named.

A project's own objects hold objects of the libraries it depends on: furl's ``Query``
keeps an ``orderedmultidict.omdict``, whose items are an ``itemlist`` of ``itemnode``\\ s.
Freezing only the project's own classes skipped every call that touched such an object,
and the gate saw almost none of furl.  Listing the library in ``[lockstep] freeze_classes``
let them freeze, but a user has to find out which library it is first.

So a class of another library freezes by structure too when its objects are plain data:

* its module is not the standard library's (``sys.stdlib_module_names``: a ``Popen``,
  a ``Thread``, a ``TemporaryDirectory`` are resources, not values), nor lockstep's or a
  test runner's (pytest, pluggy, Hypothesis, coverage, xdist): what a test hands a target
  from those is the run's machinery; nor a test module's (``test_*``, ``conftest``, a
  ``tests`` package): the suite's own helper classes;
* every class in its MRO but ``object`` is written in Python (no C base, so no hidden
  state ``__dict__`` and slots do not hold), and none defines ``__del__`` (a finalizer
  would run on an object rebuilt from data), ``__new__`` (instances made or cached by
  the class's own code), or its own state protocol (``__getstate__``,
  ``__setstate__``, ``__reduce__``, ``__reduce_ex__``): those run the class's code on
  data, so such a class freezes only when ``freeze_classes`` names it.

The test reads the class alone, never what was frozen before or which modules happen to
be imported, so record, verification and replay decide alike.  Thawing such an object
runs none of its code: ``object.__new__`` makes it, and its ``__dict__`` and slots (only
slots that are plain member descriptors) are filled directly.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Final

from lockstep.canon.c_state import c_state_base, no_value_base

TOOLING: Final = frozenset(
    {"lockstep", "_pytest", "pytest", "pluggy", "py", "hypothesis", "coverage", "xdist"}
)
"""Top-level packages whose objects are the run's machinery, never a target's values."""

_CODE_RUNNING: Final = (
    "__del__",
    "__new__",
    "__getstate__",
    "__setstate__",
    "__reduce__",
    "__reduce_ex__",
)
"""What a class may not define to freeze unnamed: each would run the class's code on an
object rebuilt from data (or make frozen state mean something else)."""

_HEAP_TYPE: Final = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class statement made it, not C

_PLAIN: dict[type[Any], bool] = {}


def library_plain(cls: type[Any]) -> bool:
    """Whether ``cls``, a class of another library, freezes by structure unnamed."""
    known = _PLAIN.get(cls)
    if known is None:
        known = _PLAIN[cls] = _decide(cls)
    return known


def _decide(cls: type[Any]) -> bool:
    module = getattr(cls, "__module__", None)
    if not isinstance(module, str) or not isinstance(cls, type):
        return False
    top = module.partition(".")[0]
    if top in sys.stdlib_module_names or top in TOOLING or top in ("builtins", "__main__"):
        return False
    if test_module(module):
        return False
    return "<" not in cls.__qualname__ and not_plain_because(cls) is None


def test_module(module: str) -> bool:
    """Whether ``module`` is a test suite's own, by pytest's naming (``test_*``, ``*_test``,
    ``conftest``, a ``tests`` package): its helper classes (furl's ``itemomdict1D``) are
    the suite's, and a fresh interpreter that verifies a row has not imported them."""
    for part in module.split("."):
        if part in ("conftest", "tests", "test", "testing", "testsuite") or part.startswith(
            "test_"
        ):
            return True
        if part.endswith("_test") or part.endswith("_tests"):
            return True
    return False


def not_plain_because(cls: type[Any]) -> str | None:
    """Why objects of ``cls`` are not plain data (a C base, a method that runs the class's
    code on frozen state), or None when they are: for a refusal's message."""
    hidden = c_state_base(cls, no_value_base)  # a C type made from a spec is a heap type
    if hidden is not None:
        return f"it extends {hidden.__module__}.{hidden.__qualname__}, written in C"
    for owner in cls.__mro__[:-1]:  # every class but object
        if not owner.__flags__ & _HEAP_TYPE:
            return f"it extends {owner.__module__}.{owner.__qualname__}, written in C"
        namespace = owner.__dict__
        for name in _CODE_RUNNING:
            if name in namespace:
                return f"{owner.__qualname__} defines {name}"
    return None


def member_slot(cls: type[Any], name: str) -> bool:
    """Whether ``name`` is a slot of ``cls`` held by a plain member descriptor (setting it
    runs no code of the class, as a property's setter would)."""
    for owner in cls.__mro__:
        found = owner.__dict__.get(name)
        if found is not None:
            return type(found) is types.MemberDescriptorType
    return False
