"""Which line-to-line arcs of the project's code one input runs.

``sys.settrace`` restricted to the code of the project (the target's files, and
every other project file the call runs: a thin wrapper's helpers): every other
frame (the standard library, lockstep, Hypothesis) gets no local tracer, so the
cost is one check per call outside the target and one per line inside it.  A
*new arc* (line A followed by line B, or A leaving the function) is a new branch
direction, which is what ``if``/``in``/``endswith`` checks decide.

Chosen over coverage.py's ``Coverage(branch=True)`` here because mining asks one
question per input -- "which arcs did this call take?" -- and starting, stopping
and reading a coverage.py collector per call costs more than the target's body;
coverage.py remains the tool for a report over a whole run.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

Arc = tuple[str, int, int]
"""``(code name, from line, to line)``; ``-1`` as the to-line is leaving the function."""


def _code_objects(code: types.CodeType) -> Iterable[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def executable_lines(target: Any) -> set[tuple[str, int]]:
    """The lines of ``target``'s body (nested functions too), for "lines hit of total"."""
    code = getattr(getattr(target, "__wrapped__", target), "__code__", None)
    if code is None:
        return set()
    lines: set[tuple[str, int]] = set()
    for c in _code_objects(code):
        for _, _, line in c.co_lines():
            if line is not None and line != c.co_firstlineno:
                lines.add((c.co_filename, line))
    return lines


@dataclass
class ArcCollector:
    """Collects the arcs one call runs in ``files`` (and, with ``root``, in every project
    file under it: :func:`lockstep.strength.coverage.project_file`)."""

    files: frozenset[str]
    root: Path | None = None
    codes: dict[str, types.CodeType] = field(default_factory=dict)
    """Every code object traced so far, by its arc name (``file:first line``)."""

    @classmethod
    def for_paths(cls, paths: Iterable[Path], root: Path | None = None) -> ArcCollector:
        """Each path as given and resolved (a module's ``co_filename`` may be either)."""
        files = frozenset(name for p in paths for name in (str(p), os.path.realpath(p)))
        return cls(files, root)

    def _traced(self, name: str) -> bool:
        if name in self.files or os.path.realpath(name) in self.files:
            return True
        if self.root is None or name.startswith("<"):
            return False
        from lockstep.strength.coverage import project_file

        return project_file(self.root, Path(name))

    def total_lines(self) -> set[tuple[str, int]]:
        """The lines of every function traced so far (what "lines hit of total" counts)."""
        lines: set[tuple[str, int]] = set()
        for code in self.codes.values():
            for _, _, line in code.co_lines():
                if line is not None and line != code.co_firstlineno:
                    lines.add((code.co_filename, line))
        return lines

    def run(self, fn: Callable[[], T]) -> tuple[T, frozenset[Arc]]:
        """Call ``fn`` with the tracer on; return its value and the arcs it ran."""
        arcs: set[Arc] = set()

        def local(code_name: str) -> Callable[..., Any]:
            last = -1

            def trace(frame: types.FrameType, event: str, arg: Any) -> Any:
                nonlocal last
                if event == "line":
                    arcs.add((code_name, last, frame.f_lineno))
                    last = frame.f_lineno
                elif event == "return":
                    arcs.add((code_name, last, -1))
                return trace

            return trace

        traced: dict[str, bool] = {}
        """Per code file: whether it is one of ``files`` (resolved once per file)."""

        def calls(frame: types.FrameType, event: str, arg: Any) -> Any:
            code = frame.f_code
            if event != "call":
                return None
            name = code.co_filename
            hit = traced.get(name)
            if hit is None:
                hit = traced[name] = self._traced(name)
            if hit:
                key = f"{name}:{code.co_firstlineno}"
                self.codes.setdefault(key, code)
                return local(key)
            return None

        previous = sys.gettrace()
        sys.settrace(calls)
        try:
            value = fn()
        finally:
            sys.settrace(previous)
        return value, frozenset(arcs)


def lines_of(arcs: Iterable[Arc]) -> set[tuple[str, int]]:
    """The lines the arcs touched, as ``(file, line)``, to compare with :func:`executable_lines`."""
    return {(name.rsplit(":", 1)[0], line) for name, _, line in arcs if line > 0}
