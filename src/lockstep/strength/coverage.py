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
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Final

import coverage
import msgspec
from coverage.parser import PythonParser

from lockstep.config import OracleSpec, Project
from lockstep.model import Status
from lockstep.oracles import StrengthScope, kind_of
from lockstep.parallel import run_parallel
from lockstep.process import run
from lockstep.strength.calls import CallCounter

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


TYPE_ONLY: Final = r"^\s*if\s+(typing\.)?TYPE_CHECKING\s*:"
"""Blocks that never run (type checkers read them): not statements a case could reach."""


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
    parser = PythonParser(
        text=path.read_text(encoding="utf-8"), filename=str(path), exclude=TYPE_ONLY
    )
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


@cache
def headers(path: Path) -> tuple[tuple[int, int, str], ...]:
    """``(first, last, qualname)`` of the header of every function defined at import (at
    module level or in a class body): its decorators and ``def`` lines, up to its body."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return ()
    found: list[tuple[int, int, str]] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                last = max(node.lineno, node.body[0].lineno - 1)
                found.append((first, last, f"{prefix}{node.name}"))
            else:  # a def under a module-level if/try/with runs at import too
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, None) or [], prefix)
                for handler in getattr(node, "handlers", None) or []:
                    visit(handler.body, prefix)

    visit(tree.body, "")
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
    reached_files: Mapping[str, tuple[Path, ...]] = field(default_factory=dict)
    """Per oracle: every project source file its cases execute a line of (its kind's scope
    first), the files :func:`widened` adds to what the oracle judges."""
    calls: Mapping[tuple[Path, str], int] = field(default_factory=dict)
    """How often the in-process cases called each project function, by ``(file,
    qualname)``: every call, the target's own calls of its helpers included (programs'
    cases run in their own processes and are not counted)."""

    def reached(self) -> float:
        total = sum(len(f.statements) for f in self.files.values())
        missed = sum(len(f.unreached()) for f in self.files.values())
        return 1.0 if total == 0 else (total - missed) / total


def scopes(project: Project, specs: Sequence[OracleSpec]) -> dict[str, StrengthScope]:
    """Each oracle's scope, from its kind."""
    return {spec.name: kind_of(spec).strength_scope(project, spec) for spec in specs}


def widened(
    scope_of: Mapping[str, StrengthScope], coverage: CaseCoverage
) -> dict[str, StrengthScope]:
    """Each oracle's scope with every project file its cases execute (what it can judge)."""
    return {
        name: msgspec.structs.replace(scope, files=coverage.reached_files.get(name, scope.files))
        for name, scope in scope_of.items()
    }


_NOT_PROJECT: Final = (
    ".git",
    ".hg",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    "site-packages",
    "dist-packages",
    "__pycache__",
    ".lockstep-cache",
)
"""Folders under the project root whose Python files are not the project's code."""


def _omitted(root: Path) -> list[str]:
    """coverage.py ``omit`` patterns for what is under the root but not the project's code."""
    return [f"*/{name}/*" for name in _NOT_PROJECT]


@cache
def _own_package() -> Path:
    """lockstep's own source folder: its replay machinery is never the code under freeze."""
    import lockstep

    return Path(lockstep.__file__).resolve().parent


def project_file(root: Path, path: Path, scope: Iterable[Path] = ()) -> bool:
    """Whether ``path`` is the project's Python source: a ``.py`` file under ``root``, outside
    virtual environments, caches and lockstep itself (unless an oracle's kind named it)."""
    path = path.resolve()
    if path in set(scope):
        return True
    if path.suffix != ".py" or root.resolve() not in path.parents:
        return False
    rel = path.relative_to(root.resolve()).parts
    if any(part in _NOT_PROJECT for part in rel):
        return False
    return _own_package() not in path.parents


def measure(
    project: Project,
    specs: Sequence[OracleSpec],
    scope_of: Mapping[str, StrengthScope] | None = None,
    *,
    jobs: int = 1,
) -> CaseCoverage:
    """Replay every case of ``specs`` under coverage, one context per case."""
    """Replay every case of ``specs`` under coverage, one context per case.

    Every project file a case executes is measured, not only the kind's scope (the target's
    module): a helper module the target calls is code the cases judge too
    (:attr:`CaseCoverage.reached_files`).
    """
    scope_of = dict(scope_of or scopes(project, specs))
    in_proc = [s for s in specs if scope_of[s.name].in_process]
    programs = [s for s in specs if not scope_of[s.name].in_process]
    named = {f.resolve() for s in specs for f in scope_of[s.name].files}
    raw: dict[Path, dict[int, set[str]]] = {}
    arcs: dict[Path, set[tuple[int, int]]] = {}
    cases: list[str] = []
    failing: list[str] = []
    seconds: dict[str, float] = {}
    notes: list[str] = []
    calls: Counter[tuple[Path, str]] = Counter()
    if in_proc:
        in_files = sorted({f for s in in_proc for f in scope_of[s.name].files})
        measured = _measure_in_process(
            project, in_proc, in_files, cases, failing, seconds, notes, calls
        )
        _collect(project, measured, named, raw, arcs)
        extra = sorted(set(raw) - set(in_files))
        if extra:  # module bodies of the helper files the cases ran, as for the scope's
            _collect(project, _measure_import(extra, notes), named, raw, arcs)
    for spec in programs:
        with _program_data(project, spec, scope_of[spec.name].files, cases, seconds, jobs) as data:
            if data is None:
                notes.append(
                    f"{spec.name}: the program reported no coverage (its interpreter needs "
                    "coverage installed, and must not run with -I, -S or -E)"
                )
                continue
            _collect(project, data, named, raw, arcs)
    reached = _reached_files(specs, scope_of, raw)
    files = sorted({f for found in reached.values() for f in found})
    return CaseCoverage(
        files={
            f: _file_coverage(source_structure(f), raw.get(f, {}), arcs.get(f, set()))
            for f in files
        },
        cases=tuple(cases),
        failing=tuple(failing),
        seconds=seconds,
        in_process={s.name: scope_of[s.name].in_process for s in specs},
        notes=tuple(notes),
        reached_files=reached,
        calls=dict(calls),
    )


def _reached_files(
    specs: Sequence[OracleSpec],
    scope_of: Mapping[str, StrengthScope],
    raw: Mapping[Path, Mapping[int, set[str]]],
) -> dict[str, tuple[Path, ...]]:
    """Per oracle: its kind's files, then every other file one of its cases executes."""
    by_oracle: dict[str, set[Path]] = {}
    for path, lines in raw.items():
        for contexts in lines.values():
            for context in contexts:
                if context != AT_IMPORT:
                    by_oracle.setdefault(split_ref(context)[0], set()).add(path)
    out: dict[str, tuple[Path, ...]] = {}
    for spec in specs:
        own = tuple(scope_of[spec.name].files)
        more = sorted(by_oracle.get(spec.name, set()) - {*own, *scope_of[spec.name].harness})
        out[spec.name] = (*own, *more)
    return out


def _collect(
    project: Project,
    data: coverage.CoverageData,
    named: Iterable[Path],
    raw: dict[Path, dict[int, set[str]]],
    arcs: dict[Path, set[tuple[int, int]]],
) -> None:
    """Add what ``data`` measured in the project's files (``named``: the kinds' scopes)."""
    named = frozenset(named)
    for name in data.measured_files():
        path = Path(name).resolve()
        if not project_file(project.root, path, named):
            continue
        for line, contexts in data.contexts_by_lineno(name).items():
            raw.setdefault(path, {}).setdefault(line, set()).update(c for c in contexts if c)
        arcs.setdefault(path, set()).update(data.arcs(name) or ())


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
    calls: Counter[tuple[Path, str]],
) -> coverage.CoverageData:
    """Replay the cases of ``specs`` in this process under coverage, one context per case;
    ``calls`` gets how often they called each project function."""
    runners = {spec.name: kind_of(spec).case_runner(project, spec) for spec in specs}
    ids = {spec.name: list(kind_of(spec).case_ids(project, spec)) for spec in specs}
    cov = coverage.Coverage(
        data_file=None,
        branch=True,
        source=[str(project.root.resolve())],
        omit=_omitted(project.root),
        config_file=False,
    )
    quiet = io.StringIO()  # what the code under freeze prints is not part of the report
    counter = CallCounter([project.root])
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
                    with counter:
                        outcome = runners[spec.name](case_id)
                    cases.append(ref)
                    if outcome.status is not Status.PASS:
                        failing.append(ref)
                seconds[spec.name] = time.perf_counter() - started
    finally:
        cov.stop()
    calls.update(counter.by_name())
    return cov.get_data()


def _measure_import(files: Sequence[Path], notes: list[str]) -> coverage.CoverageData:
    """Module bodies of ``files`` run once more, measured as :data:`AT_IMPORT`."""
    cov = coverage.Coverage(
        data_file=None, branch=True, include=[str(f) for f in files], config_file=False
    )
    quiet = io.StringIO()
    cov.start()
    try:
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            cov.switch_context(AT_IMPORT)
            notes.extend(n for n in (_import_again(f) for f in files) if n)
    finally:
        cov.stop()
    return cov.get_data()


def import_statements(path: Path, structure: SourceStructure) -> frozenset[int]:
    """Statements of ``path`` its module body runs, run once more and measured (none when
    nothing imported the module: its body is never run for a file no case loaded)."""
    if module_of(path) is None:
        return frozenset()
    data = _measure_import([path], [])
    lines = data.lines(str(path.resolve())) or data.lines(str(path)) or []
    return frozenset(structure.first_line(line) for line in lines)


# ---------------------------------------------------------------------- programs


def _rcfile(folder: Path, n: int, context: str, root: Path) -> Path:
    """Every project file is measured (the program's own and the modules it runs)."""
    source = f"\n    {root.resolve()}"
    omit = "".join(f"\n    {pattern}" for pattern in _omitted(root))
    rc = folder / f"case-{n}.rc"
    rc.write_text(
        "[run]\nbranch = True\nparallel = True\n"
        f"data_file = {folder / f'case-{n}.coverage'}\ncontext = {context}\n"
        f"source ={source}\nomit ={omit}\n",
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
            rc = _rcfile(folder, n, target.label, project.root)
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
