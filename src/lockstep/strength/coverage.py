"""Coverage by case: which lines and branches of the code under freeze each recorded case reaches.

Measured with coverage.py (branch measurement, one dynamic context per case,
``Coverage.switch_context``) rather than a hand-written tracer: it is the
maintained tool that knows how Python's line events map to statements and
which arcs a statement can take, and its subprocess support measures programs
(pins) too.  In-process oracles replay each case through their kind's
:meth:`~lockstep.oracles.OracleKind.case_runner`; the module bodies are
executed once more, in a throwaway namespace, under the context
:data:`AT_IMPORT`, so module-level code (tables, constants) counts as reached
and functions that only run at import time are known.  Programs run each case
through :meth:`~lockstep.oracles.OracleKind.probe_targets` with a
``sitecustomize`` that starts coverage in the child (and its children) with the
case as static context.

The API is meant for reuse (coverage-guided input generation builds on it):
:func:`measure` for recorded cases, :func:`source_structure` for what a file
could reach at all.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Final

import coverage
from coverage.parser import PythonParser

from lockstep.config import OracleSpec, Project
from lockstep.model import Status
from lockstep.oracles import StrengthScope, kind_of
from lockstep.parallel import run_parallel
from lockstep.process import run

AT_IMPORT: Final = "(import)"
"""The context of module bodies: lines every case depends on, reached before any case runs."""

_SHIM: Final = """\
import os
if os.environ.get("COVERAGE_PROCESS_START"):
    try:
        import coverage
    except ImportError:
        pass
    else:
        coverage.process_startup()
"""


def case_ref(oracle: str, case_id: str) -> str:
    """How a case is named across oracles: ``oracle::case-id``."""
    return f"{oracle}::{case_id}"


def split_ref(ref: str) -> tuple[str, str]:
    oracle, _, case_id = ref.partition("::")
    return oracle, case_id


@dataclass(frozen=True)
class SourceStructure:
    """What a file could reach at all: its statements and its branches (from coverage's parser)."""

    path: Path
    statements: frozenset[int]
    branches: Mapping[int, frozenset[int]]
    """Branch line → the lines it can go to (negative: leaves the function that starts there)."""
    parser: PythonParser = field(repr=False, compare=False)

    def first_line(self, line: int) -> int:
        """The statement a raw line event belongs to (multi-line statements count once)."""
        if line < 0:
            return -self.parser.first_line(-line)
        return self.parser.first_line(line)


def source_structure(path: Path) -> SourceStructure:
    """Statements and branches of ``path``, as coverage.py counts them."""
    parser = PythonParser(text=path.read_text(encoding="utf-8"), filename=str(path))
    parser.parse_source()
    exits = parser.exit_counts()
    branches: dict[int, set[int]] = {}
    for start, end in parser.arcs():
        if exits.get(start, 0) > 1:
            branches.setdefault(start, set()).add(end)
    return SourceStructure(
        path,
        frozenset(parser.statements),
        {line: frozenset(ends) for line, ends in branches.items()},
        parser,
    )


@cache
def functions(path: Path) -> tuple[tuple[int, int, str], ...]:
    """``(first, last, qualname)`` of every function, innermost last for equal starts."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return ()
    found: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    found.append((child.lineno, child.end_lineno or child.lineno, name))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return tuple(found)


def function_at(path: Path, line: int) -> tuple[str, int, int]:
    """The innermost function holding ``line``: name, first and last line (``""`` at module level)."""
    best = ("", 0, 0)
    for first, last, name in functions(path):
        if first <= line <= last and (not best[0] or first >= best[1]):
            best = (name, first, last)
    return best


def function_span(path: Path, qualname: str) -> tuple[int, int] | None:
    """First and last line of the function called ``qualname`` (``Class.method``) in ``path``."""
    for first, last, name in functions(path):
        if name == qualname:
            return first, last
    return None


@dataclass(frozen=True)
class FileCoverage:
    """One source file: which cases reach each statement, and what no case reaches."""

    path: Path
    statements: frozenset[int]
    reached_by: Mapping[int, tuple[str, ...]]
    """Statement line → the cases (``oracle::id``) that run it."""
    at_import: frozenset[int]
    """Statements run while the module is imported (module-level code, import-time calls)."""
    missing_branches: tuple[tuple[int, int], ...]
    """``(line, to)`` of branches whose line a case reaches but that no case takes."""
    lines: tuple[str, ...] = field(repr=False, default=())

    def unreached(self) -> list[int]:
        """Statements neither a case nor the import runs."""
        return sorted(self.statements - set(self.reached_by) - self.at_import)

    def cases_reaching(self, lines: Iterable[int]) -> tuple[str, ...]:
        found: dict[str, None] = {}
        for line in lines:
            found.update(dict.fromkeys(self.reached_by.get(line, ())))
        return tuple(found)

    def enters(self, qualname: str) -> bool:
        """Whether a case, or the import, runs a line of the function ``qualname`` (its ``def``
        aside): a function only the import calls is reached by every case."""
        span = function_span(self.path, qualname)
        if span is None:
            return True
        inside = range(span[0] + 1, span[1] + 1)
        return any(line in self.reached_by or line in self.at_import for line in inside)

    def text(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""


@dataclass(frozen=True)
class CaseCoverage:
    """What :func:`measure` found for a set of oracles."""

    files: Mapping[Path, FileCoverage]
    cases: tuple[str, ...]
    """Every case measured, ``oracle::id``, in replay order."""
    failing: tuple[str, ...]
    """Cases that did not replay green before any mutation (they cannot judge a mutant)."""
    seconds: Mapping[str, float]
    """Per oracle: how long replaying every case took under measurement (the baseline)."""
    in_process: Mapping[str, bool]
    notes: tuple[str, ...] = ()

    def reached(self) -> float:
        total = sum(len(f.statements) for f in self.files.values())
        missed = sum(len(f.unreached()) for f in self.files.values())
        return 1.0 if total == 0 else (total - missed) / total


def scopes(project: Project, specs: Sequence[OracleSpec]) -> dict[str, StrengthScope]:
    """Each oracle's scope, from its kind."""
    return {spec.name: kind_of(spec).strength_scope(project, spec) for spec in specs}


def measure(
    project: Project,
    specs: Sequence[OracleSpec],
    scope_of: Mapping[str, StrengthScope] | None = None,
    *,
    jobs: int = 1,
) -> CaseCoverage:
    """Replay every case of ``specs`` under coverage, one context per case."""
    scope_of = dict(scope_of or scopes(project, specs))
    in_proc = [s for s in specs if scope_of[s.name].in_process]
    programs = [s for s in specs if not scope_of[s.name].in_process]
    files = sorted({f for s in specs for f in scope_of[s.name].files})
    structures = {f: source_structure(f) for f in files}
    raw: dict[Path, dict[int, set[str]]] = {f: {} for f in files}
    arcs: dict[Path, set[tuple[int, int]]] = {f: set() for f in files}
    cases: list[str] = []
    failing: list[str] = []
    seconds: dict[str, float] = {}
    notes: list[str] = []
    if in_proc:
        in_files = sorted({f for s in in_proc for f in scope_of[s.name].files})
        measured = _measure_in_process(project, in_proc, in_files, cases, failing, seconds, notes)
        _collect(measured, in_files, raw, arcs)
    for spec in programs:
        with _program_data(project, spec, scope_of[spec.name].files, cases, seconds, jobs) as data:
            if data is None:
                notes.append(
                    f"{spec.name}: the program reported no coverage (its interpreter needs "
                    "coverage installed, and must not run with -I, -S or -E)"
                )
                continue
            _collect(data, scope_of[spec.name].files, raw, arcs)
    return CaseCoverage(
        files={f: _file_coverage(structures[f], raw[f], arcs[f]) for f in files},
        cases=tuple(cases),
        failing=tuple(failing),
        seconds=seconds,
        in_process={s.name: scope_of[s.name].in_process for s in specs},
        notes=tuple(notes),
    )


def _collect(
    data: coverage.CoverageData,
    files: Iterable[Path],
    raw: dict[Path, dict[int, set[str]]],
    arcs: dict[Path, set[tuple[int, int]]],
) -> None:
    measured = {Path(name).resolve(): name for name in data.measured_files()}
    for path in files:
        name = measured.get(path.resolve())
        if name is None:
            continue
        for line, contexts in data.contexts_by_lineno(name).items():
            raw[path].setdefault(line, set()).update(c for c in contexts if c)
        arcs[path].update(data.arcs(name) or ())


def _file_coverage(
    structure: SourceStructure, raw: Mapping[int, set[str]], arcs: set[tuple[int, int]]
) -> FileCoverage:
    by_line: dict[int, set[str]] = {}
    for line, contexts in raw.items():
        by_line.setdefault(structure.first_line(line), set()).update(contexts)
    at_import = frozenset(line for line, c in by_line.items() if AT_IMPORT in c)
    reached = {
        line: tuple(sorted(c - {AT_IMPORT}))
        for line, c in sorted(by_line.items())
        if c - {AT_IMPORT} and line in structure.statements
    }
    taken = {(structure.first_line(a), structure.first_line(b)) for a, b in arcs}
    missing = tuple(
        (line, to)
        for line, ends in sorted(structure.branches.items())
        if line in reached
        for to in sorted(ends)
        if (line, to) not in taken
    )
    lines = tuple(structure.path.read_text(encoding="utf-8").splitlines())
    return FileCoverage(structure.path, structure.statements, reached, at_import, missing, lines)


# ---------------------------------------------------------------------- in process


def module_of(path: Path) -> object | None:
    """The imported module whose source is ``path`` (None when nothing imported it)."""
    wanted = path.resolve()
    for module in list(sys.modules.values()):
        source = getattr(module, "__file__", None)
        if source and Path(source).resolve() == wanted:
            return module
    return None


def _import_again(path: Path) -> str:
    """Run a module body once more in a throwaway namespace (measured as :data:`AT_IMPORT`)."""
    module = module_of(path)
    namespace = {
        "__name__": getattr(module, "__name__", path.stem),
        "__file__": str(path),
        "__package__": getattr(module, "__package__", None),
        "__builtins__": builtins,
    }
    try:
        exec(compile(path.read_bytes(), str(path), "exec"), namespace)
    except Exception as e:  # module code the user wrote: report, never crash the measurement
        return f"{path.name}: the module body raised {type(e).__name__} when run again: {e}"
    return ""


def _measure_in_process(
    project: Project,
    specs: Sequence[OracleSpec],
    files: Sequence[Path],
    cases: list[str],
    failing: list[str],
    seconds: dict[str, float],
    notes: list[str],
) -> coverage.CoverageData:
    runners = {spec.name: kind_of(spec).case_runner(project, spec) for spec in specs}
    ids = {spec.name: list(kind_of(spec).case_ids(project, spec)) for spec in specs}
    cov = coverage.Coverage(
        data_file=None, branch=True, include=[str(f) for f in files], config_file=False
    )
    quiet = io.StringIO()  # what the code under freeze prints is not part of the report
    cov.start()
    try:
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            cov.switch_context(AT_IMPORT)
            notes.extend(n for n in (_import_again(f) for f in files) if n)
            for spec in specs:
                started = time.perf_counter()
                for case_id in ids[spec.name]:
                    ref = case_ref(spec.name, case_id)
                    cov.switch_context(ref)
                    outcome = runners[spec.name](case_id)
                    cases.append(ref)
                    if outcome.status is not Status.PASS:
                        failing.append(ref)
                seconds[spec.name] = time.perf_counter() - started
    finally:
        cov.stop()
    return cov.get_data()


# ---------------------------------------------------------------------- programs


def _rcfile(folder: Path, n: int, context: str, files: Iterable[Path]) -> Path:
    include = "".join(f"\n    {f}" for f in files)
    rc = folder / f"case-{n}.rc"
    rc.write_text(
        "[run]\nbranch = True\nparallel = True\n"
        f"data_file = {folder / f'case-{n}.coverage'}\ncontext = {context}\ninclude ={include}\n",
        encoding="utf-8",
    )
    return rc


@contextlib.contextmanager
def _program_data(
    project: Project,
    spec: OracleSpec,
    files: Sequence[Path],
    cases: list[str],
    seconds: dict[str, float],
    jobs: int,
) -> Iterator[coverage.CoverageData | None]:
    """Run every recorded case of a program once, measured; the data lives inside the block."""
    recorded = set(kind_of(spec).case_ids(project, spec))
    targets = [
        t for t in kind_of(spec).probe_targets(project, spec) if split_ref(t.label)[1] in recorded
    ]
    with tempfile.TemporaryDirectory(prefix="lockstep-strength-") as tmp:
        folder = Path(tmp)
        (folder / "sitecustomize.py").write_text(_SHIM, encoding="utf-8")
        runs = []
        for n, target in enumerate(targets):
            rc = _rcfile(folder, n, target.label, files)
            path = ":".join(p for p in (str(folder), target.env.get("PYTHONPATH", "")) if p)
            env = {**target.env, "PYTHONPATH": path, "COVERAGE_PROCESS_START": str(rc)}
            runs.append(replace(target, env=env))
            cases.append(target.label)
        started = time.perf_counter()
        list(
            run_parallel(
                (
                    lambda t=t: run(  # type: ignore[misc]
                        t.argv, env=t.env, stdin=t.stdin, cwd=t.cwd, timeout=t.timeout
                    )
                    for t in runs
                ),
                jobs=max(1, jobs),
            )
        )
        seconds[spec.name] = time.perf_counter() - started
        parts = [str(p) for p in folder.glob("case-*.coverage*")]
        if not parts:
            yield None
            return
        combined = coverage.Coverage(data_file=str(folder / "all.coverage"), config_file=False)
        combined.combine(parts, keep=True)
        yield combined.get_data()
