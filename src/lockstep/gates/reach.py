"""Whether the recorded cases run the code a change touches, as that code was at BASE.

Every oracle replaying green at HEAD proves nothing about a line no case runs: a change to
a branch the suite never took, or to a method nothing recorded, replays green because
nothing looks.  This row of the review asks, for each line of production code the change
removes or rewrites at BASE, whether a recorded case runs its statement there; where the
change only adds lines inside a function, whether a case enters that function; and where
it touches a function's header (its decorators, ``def`` line, defaults), whether a case
calls it.  Module-level and class-level statements run at import, so every case depends
on them, and count as run (a changed constant is the mutants' business, ``lockstep
strength``).  Comments and blank lines need nothing.

What the cases run is measured with coverage.py (:mod:`lockstep.strength.coverage`) in a
fresh interpreter started in a worktree of BASE (``python -m lockstep.cli.reach_child``),
so the code the review's own process imported at HEAD never stands in for BASE's.
"""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import tokenize
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

import msgspec

from lockstep.errors import LockstepError
from lockstep.gates.git import Change, Git

CHILD_MODULE: Final = "lockstep.cli.reach_child"
TEXT_LIMIT: Final = 60


class Touched(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a change does to one file's lines at BASE."""

    lines: list[int] = []
    """Lines it removes or rewrites."""
    after: list[tuple[int, int]] = []
    """``(line, indent)`` where it only adds lines: the BASE line they follow, and the
    indentation of the first added line that is code (adding only comments needs nothing)."""


class Unreached(msgspec.Struct, frozen=True):
    """Lines of one function (or of module level) that the change touches and no case runs."""

    path: str
    first: int
    last: int
    function: str
    text: str
    header: bool = False
    """The lines are the function's header: no case calls it."""

    def __str__(self) -> str:
        where = f"{self.path}:{self.first}" + (f"-{self.last}" if self.last > self.first else "")
        if self.header:
            sep = " " if self.text.endswith(":") else ": "
            return f"{where}: {self.text}{sep}no recorded case calls {self.function} at BASE"
        owner = f" (in {self.function})" if self.function else ""
        return f"{where}: {self.text}{owner}: no recorded case runs it at BASE"


class Answer(msgspec.Struct, frozen=True):
    """The child's answer: what no case runs, how many cases ran, what measuring noted."""

    unreached: list[Unreached] = []
    checked: int = 0
    """Touched statements and functions that needed a case."""
    cases: int = 0
    notes: list[str] = []
    error: str = ""


# --------------------------------------------------------------------------- the change


def touched_lines(removed: Sequence[str], old_start: int, added: Sequence[str]) -> Touched:
    """One hunk's :class:`Touched` (``removed`` lines from ``old_start`` at BASE).  Where
    the hunk rewrites lines one for one, a line whose code is the same, with only its
    comment or spacing changed, is not touched."""
    if removed:
        same = len(removed) == len(added)
        return Touched(
            lines=[
                old_start + i
                for i, line in enumerate(removed)
                if not (same and _code_of(line) == _code_of(added[i]))
            ]
        )
    first = next((line for line in added if line.strip() and not _comment(line)), None)
    if first is None:
        return Touched()
    return Touched(after=[(old_start, len(first) - len(first.lstrip()))])


def _comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _code_of(line: str) -> tuple[str, ...] | str:
    """A line's tokens without comments and spacing; the line itself when it does not
    tokenize alone (part of a string or a bracket spanning lines)."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline)
        return tuple(t.string for t in tokens if t.type not in _NOT_CODE)
    except (tokenize.TokenError, SyntaxError):
        return line


_NOT_CODE: Final = frozenset(
    {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENDMARKER,
    }
)


def merged(parts: Iterable[Touched]) -> Touched:
    lines: list[int] = []
    after: list[tuple[int, int]] = []
    for part in parts:
        lines += part.lines
        after += part.after
    return Touched(sorted(set(lines)), sorted(set(after)))


# --------------------------------------------------------------------------- at BASE


@dataclass(frozen=True)
class Function:
    """A function's lines: its header (decorators to the line before its body) and body."""

    name: str
    header_first: int
    header_last: int
    last: int
    indent: int

    @property
    def body(self) -> range:
        """Its body's lines (a one-line function's body shares its ``def`` line)."""
        return range(min(self.header_last + 1, self.last), self.last + 1)


@cache
def _functions(path: Path) -> tuple[Function, ...]:
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return ()
    found: list[Function] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                header_last = _signature_end(child)
                last = child.end_lineno or child.lineno
                name = f"{prefix}{child.name}"
                found.append(Function(name, first, header_last, last, child.col_offset))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return tuple(found)


def _signature_end(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The last line of a function's signature (a comment before its body is not part)."""
    ends = [fn.lineno]
    for node in ast.walk(fn.args):
        ends.append(getattr(node, "end_lineno", None) or fn.lineno)
    if fn.returns is not None:
        ends.append(fn.returns.end_lineno or fn.lineno)
    return min(max(ends), fn.body[0].lineno - 1) if fn.body[0].lineno > fn.lineno else fn.lineno


def _innermost(functions: Iterable[Function], line: int, header: bool) -> Function | None:
    best: Function | None = None
    for fn in functions:
        span = (
            range(fn.header_first, fn.header_last + 1)
            if header
            else range(fn.header_last, fn.last + 1)
        )
        if line in span and (best is None or fn.header_first >= best.header_first):
            best = fn
    return best


@dataclass(frozen=True)
class Needs:
    """What one file's touched lines need of the cases."""

    statements: Mapping[int, int]
    """Touched line → its statement's first line, for statements a case must run."""
    entered: Mapping[Function, tuple[int, ...]]
    """Functions a case must enter (headers touched, or lines added inside), with the
    touched lines that ask for it."""

    def __len__(self) -> int:
        return len(self.statements) + len(self.entered)


def needs_of(
    path: Path, touched: Touched, statements: frozenset[int], first_line: Callable[[int], int]
) -> Needs:
    """What ``touched`` lines of ``path`` (at BASE) need a case to run."""
    functions = _functions(path)
    wanted: dict[int, int] = {}
    entered: dict[Function, list[int]] = {}
    for line in touched.lines:
        fn = _innermost(functions, line, header=True)
        if fn is not None:
            entered.setdefault(fn, []).append(line)
            continue
        statement = first_line(line)
        if statement in statements:
            wanted[line] = statement
    for line, indent in touched.after:
        fn = _innermost(functions, line, header=False)
        if fn is not None and (line < fn.last or indent > fn.indent):
            entered.setdefault(fn, []).append(line)
    return Needs(wanted, {fn: tuple(lines) for fn, lines in entered.items()})


def unreached(
    rel: str,
    path: Path,
    needs: Needs,
    reached: frozenset[int],
    at_import: frozenset[int],
    lines: list[str],
) -> list[Unreached]:
    """The needs no case meets, consecutive lines of one function merged."""
    ran = reached | at_import
    found: list[Unreached] = []
    functions = _functions(path)

    def text(line: int) -> str:
        shown = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return shown if len(shown) <= TEXT_LIMIT else shown[: TEXT_LIMIT - 1] + "…"

    for fn, asking in needs.entered.items():
        if not any(line in ran for line in fn.body):
            found.append(Unreached(rel, min(asking), max(asking), fn.name, text(min(asking)), True))
    missing = sorted(line for line, statement in needs.statements.items() if statement not in ran)
    for run in _runs(missing, functions):
        owner = _innermost(functions, run[0], header=False)
        name = owner.name if owner else ""
        found.append(Unreached(rel, run[0], run[-1], name, text(run[0])))
    return sorted(found, key=lambda u: (u.path, u.first))


def _runs(lines: list[int], functions: tuple[Function, ...]) -> Iterator[list[int]]:
    """Consecutive lines of one function, together."""
    current: list[int] = []
    for line in lines:
        if current and (
            line != current[-1] + 1
            or _innermost(functions, line, False) != _innermost(functions, current[-1], False)
        ):
            yield current
            current = []
        current.append(line)
    if current:
        yield current


# --------------------------------------------------------------------------- the review's side


def touched_by(git: Git, change: Change, files: Iterable[str]) -> dict[str, Touched]:
    """The lines ``change`` touches at BASE in each of ``files`` that exists there."""
    at_base = [path for path in files if git.read(path, change.base) is not None]
    found: dict[str, Touched] = {}
    for path, hunks in git.hunks(change.base, change.head, at_base).items():
        part = merged(touched_lines(h.removed, h.old_start, h.added) for h in hunks)
        if part.lines or part.after:
            found[path] = part
    return found


def ask(config_path: Path, root: Path, tree: Path, touched: Mapping[str, Touched]) -> Answer:
    """Measure, in a fresh interpreter in ``root`` (the project's root in BASE's ``tree``),
    what the cases run of the ``touched`` files (paths relative to ``tree``)."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    argv = [sys.executable, "-m", CHILD_MODULE, "--config", str(config_path), "--root", str(root)]
    argv += ["--tree", str(tree)]
    proc = subprocess.run(
        argv,
        cwd=root,
        env=env,
        input=msgspec.json.encode(dict(touched)),
        capture_output=True,
        check=False,
    )
    try:
        answer = msgspec.json.decode(proc.stdout, type=Answer)
    except msgspec.DecodeError:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LockstepError(
            "could not measure what the recorded cases run at BASE: "
            + (tail[-1] if tail else f"the measuring interpreter exited {proc.returncode}")
        ) from None
    if answer.error:
        raise LockstepError(answer.error)
    return answer
