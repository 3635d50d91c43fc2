"""Counting calls of a project's functions, by code object, while something runs.

Coverage says which lines ran, not how often a function was entered; a ranking "by
calls" needs the count.  A profile hook (:func:`sys.setprofile`, and
:func:`threading.setprofile` for threads started meanwhile) sees every Python call;
it counts the ones whose code lives in the watched files and folders, and tells a
call from outside them (what a ledger at a package boundary records) from one the
watched code makes to itself.  The hook runs only while :class:`CallCounter` is
active, and decides once per code object whether it is watched.

A call counts from outside only when no watched code is running further up the stack:
as the recording does, which records no call of a package while one of its calls is
being recorded.  Called through ``functools`` (a comparison ``total_ordering`` made,
from the package's own ``<=``), semantic_version's ``AlphaIdentifier.__lt__`` read as
called 65 times from outside, and no row was ever recorded.

A generator or coroutine counts once, when it starts: the profile hook reports each
resumption as a call too, and sqlparse's ``offset`` (a ``contextmanager``, entered and
left) read as called 362 times from outside.  A start is told by where its frame runs:
at its code's first ``RESUME``.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import threading
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from types import CodeType, FrameType, FunctionType, TracebackType
from typing import Any, Final

from lockstep.surface import names_tests

_RESUMABLE: Final = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


@functools.cache
def _start_of(code: CodeType) -> int:
    """Where a generator's (or coroutine's) frame runs when it starts: its first
    ``RESUME`` (after the instructions that made the generator)."""
    import dis

    return next((i.offset for i in dis.get_instructions(code) if i.opname == "RESUME"), -1)


class CallCounter:
    """Counts calls of the functions defined under ``watched`` (files or folders), or in
    a module of one of ``packages``, while active (``with CallCounter(...) as counter:``)."""

    def __init__(
        self,
        watched: Iterable[Path] = (),
        *,
        packages: Iterable[str] = (),
        tests_outside: bool = False,
    ) -> None:
        resolved = [Path(p).resolve() for p in watched]
        self._files = frozenset(str(p) for p in resolved if not p.is_dir())
        self._folders = tuple(str(p) + os.sep for p in resolved if p.is_dir())
        self._packages = frozenset(packages)
        """Top-level packages watched by module name, wherever they were imported from
        (an installed copy rather than the project's folder)."""
        self._prefixes = tuple(f"{p}." for p in self._packages)
        self._tests_outside = tests_outside
        """Whether test code shipped inside a watched package or folder (``pkg/test/``)
        is a caller from outside, as it is for a ledger at the package boundary."""
        self._verdict: dict[CodeType, bool] = {}
        self._wrapper: dict[tuple[CodeType, CodeType], bool] = {}
        self.calls: Counter[CodeType] = Counter()
        """Every call of a watched function."""
        self.from_outside: Counter[CodeType] = Counter()
        """Calls whose caller is not watched code (the test, another package)."""
        self._before: Any = None
        self._before_threads: Any = None

    def _watched(self, code: CodeType, frame: FrameType) -> bool:
        verdict = self._verdict.get(code)
        if verdict is None:
            name = code.co_filename
            if name and not name.startswith("<"):
                name = os.path.realpath(name)
            folder = next((f for f in self._folders if name.startswith(f)), None)
            verdict = name in self._files or folder is not None
            module = frame.f_globals.get("__name__")
            if not verdict and self._packages:
                verdict = isinstance(module, str) and (
                    module in self._packages or module.startswith(self._prefixes)
                )
            if verdict and self._tests_outside:
                verdict = not _test_code(name, folder, module)
            self._verdict[code] = verdict
        return verdict

    def _hook(self, frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        code = frame.f_code
        if not self._watched(code, frame):
            return
        if code.co_flags & _RESUMABLE and frame.f_lasti != _start_of(code):
            return  # a generator or coroutine resumed, not started
        self.calls[code] += 1
        caller = frame.f_back
        if caller is not None and caller.f_code.co_name == "__get__":
            caller = caller.f_back  # a descriptor ran it (a cached property): the read's site
        called = code
        while caller is not None and self._watched(caller.f_code, caller):
            if not self._wraps(caller, called):
                return
            # a decorator's wrapper of it (``functools.wraps``): the wrapper's caller called it
            called, caller = caller.f_code, caller.f_back
        while caller is not None:  # watched code further up: its call is the one recorded
            if self._watched(caller.f_code, caller):
                return
            caller = caller.f_back
        self.from_outside[code] += 1

    def _wraps(self, frame: FrameType, code: CodeType) -> bool:
        """Whether ``frame`` runs a wrapper of the function whose code is ``code``: the
        function is among its variables (the closure's ``func``), as a decorator's wrapper
        holds it.  Asked once per pair of codes: reading a frame's variables is not cheap.

        Only a closure's frame is read (a wrapper holds the function in a cell): reading
        the variables of a frame that runs an inlined comprehension (Python 3.12, at a
        module's top level) from a profile hook broke that comprehension -- hyperlink's
        suite failed under ``lockstep init`` with a TypeError of its own code."""
        key = (frame.f_code, code)
        known = self._wrapper.get(key)
        if known is None:
            cells = frame.f_code.co_freevars
            known = bool(cells) and any(
                type(v) is FunctionType and v.__code__ is code
                for name, v in frame.f_locals.items()
                if name in cells
            )
            self._wrapper[key] = known
        return known

    def __enter__(self) -> CallCounter:
        self._before = sys.getprofile()
        self._before_threads = threading.getprofile()
        sys.setprofile(self._hook)
        threading.setprofile(self._hook)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        sys.setprofile(self._before)
        threading.setprofile(self._before_threads)

    def by_name(self) -> Counter[tuple[Path, str]]:
        """Calls by ``(source file, qualified name)``: how a function is found again from
        its source alone (code objects of one name in one file add up)."""
        out: Counter[tuple[Path, str]] = Counter()
        for code, n in self.calls.items():
            out[(Path(os.path.realpath(code.co_filename)), code.co_qualname)] += n
        return out


def _test_code(filename: str, folder: str | None, module: object) -> bool:
    """Whether a watched function is test code shipped inside the package: by its module's
    dotted name below the top-level package, else by its file's path below the folder."""
    if isinstance(module, str) and "." in module:
        return names_tests(module.split(".")[1:])
    if folder is not None:
        return names_tests(Path(filename[len(folder) :]).with_suffix("").parts)
    return False


_DESCRIBED: Final = ("func", "fget", "wrapped", "function")
"""Where a descriptor that is not ``property``'s kind keeps the function it runs (Django's
and py-moneyed's ``cached_property``, boltons' ``cachedproperty``, Pyramid's ``reify``)."""


def code_of(obj: object) -> CodeType | None:
    """The code object a public member runs: a function's, a method's, a property's
    getter's, through decorators that keep ``__wrapped__``."""
    if isinstance(obj, property):
        obj = obj.fget
    elif isinstance(obj, classmethod | staticmethod):
        obj = obj.__func__
    elif isinstance(obj, functools.cached_property):
        obj = obj.func
    elif not callable(obj):  # a library's caching descriptor keeps its function
        obj = next(
            (
                inner
                for inner in (getattr(obj, a, None) for a in _DESCRIBED)
                if isinstance(inner, FunctionType)
            ),
            obj,
        )
    seen = 0
    while seen < 100:
        seen += 1
        inner = getattr(obj, "__func__", None)  # a bound method
        if inner is not None and inner is not obj:
            obj = inner
            continue
        wrapped = getattr(obj, "__wrapped__", None)
        if wrapped is not None and wrapped is not obj:
            obj = wrapped
            continue
        break
    if isinstance(obj, property):
        return code_of(obj)
    code = getattr(obj, "__code__", None)
    return code if isinstance(code, CodeType) else None


__all__ = ["CallCounter", "code_of"]
