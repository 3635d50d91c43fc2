"""The pytest plugin ``lockstep init`` loads (``-p``) into one run of the project's suite.

It counts calls of the functions under the surveyed packages' folders for the whole
session (:class:`~lockstep.strength.calls.CallCounter`) and, when the session ends,
finds each public member of the request by importing nothing new: a member whose
module the suite never imported was never called.  The counts go to the answer file
the request names (a temporary folder outside the project).  See
:mod:`lockstep.scaffold.suite_calls` for the side that runs the suite.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from types import CodeType

import pytest

from lockstep.strength.calls import CallCounter, code_of

REQUEST_ENV = "LOCKSTEP_INIT_SUITE_REQUEST"
"""The environment variable naming the request file (JSON: watched folders, members,
answer file)."""

_COUNTER = pytest.StashKey[CallCounter]()

SHARED = -1
"""The count answered for a member whose code other members run too: not known."""


def _member(target: str) -> object | None:
    """The object ``pkg.mod:Class.name`` names, if its module was imported (a property,
    classmethod or staticmethod as the class holds it)."""
    module_name, _, qualname = target.partition(":")
    obj: object | None = sys.modules.get(module_name)
    parts = qualname.split(".")
    for n, part in enumerate(parts):
        if obj is None:
            return None
        if isinstance(obj, type) and n == len(parts) - 1:
            held = next((k.__dict__[part] for k in obj.__mro__ if part in k.__dict__), None)
            return held
        obj = getattr(obj, part, None)
    return obj


def pytest_configure(config: pytest.Config) -> None:
    request = os.environ.get(REQUEST_ENV)
    if not request:
        return
    data = json.loads(Path(request).read_text(encoding="utf-8"))
    counter = CallCounter(
        (Path(p) for p in data["watched"]), packages=data["packages"], tests_outside=True
    )
    config.stash[_COUNTER] = counter
    from lockstep.pytest.hypothesis_deadline import lift_deadline

    lift_deadline(config, counting=True)  # the profiler slows each example: count, keep none
    counter.__enter__()


def pytest_unconfigure(config: pytest.Config) -> None:
    counter = config.stash.get(_COUNTER, None)
    request = os.environ.get(REQUEST_ENV)
    if counter is None or not request:
        return
    counter.__exit__(None, None, None)
    data = json.loads(Path(request).read_text(encoding="utf-8"))
    codes: dict[str, CodeType] = {}
    for target in data["members"]:
        try:
            code = code_of(_member(target))
        except Exception:  # a module attribute that raises on access: not called, as far as known
            code = None
        if code is not None:
            codes[target] = code
    shared = Counter(codes.values())
    answer: dict[str, list[int]] = {
        # a wrapper's code that several members run (a decorator without functools.wraps:
        # PyPika's ``builder``): its calls are not told apart, so none is credited them
        target: [SHARED, SHARED]
        if shared[code] > 1
        else [counter.from_outside[code], counter.calls[code]]
        for target, code in codes.items()
    }
    Path(data["answer"]).write_text(json.dumps(answer), encoding="utf-8")
