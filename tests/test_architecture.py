"""The shape the design promises, checked on lockstep's own import graph (grimp).

* no import cycle between modules (an import inside a function counts too:
  it is a cycle that only shows at run time);
* nothing outside an oracle kind's package imports that kind's modules, except
  through the registry (``lockstep.oracles.kind_of``) -- the command line, the
  gates and the reporters never know a kind's details; its configuration table
  (``<kind>.spec``: types and checks, as public as the file they decode) is the one
  module others may name;
* nothing below ``cli/`` prints or exits;
* the oracle kinds: listed once (``lockstep.kinds.KINDS``), each a conforming
  ``OracleKind`` with its own table; the configuration names none of them; no ``global`` statement under ``oracles/``, no module-level
  mutable state in the ledger recorder's modules (its process state is one object),
  no module of ``oracles/`` or ``pytest/`` over 900 lines;
* refusals are data: no code but their one renderer holds their text;
* one record pipeline: each kind's record reaches ``lifecycle.record``, and no module but
  ``lifecycle.py`` sorts old and fresh cases into a report (the one merge).
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

import lockstep
from lockstep.config import Config
from lockstep.kinds import KIND_SPECS
from lockstep.kinds import KINDS as CONFIGURED_KINDS
from lockstep.oracles import OracleKind, kind_named
from lockstep.tables import OracleSpec

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


SRC = Path(lockstep.__file__).parent
KINDS = CONFIGURED_KINDS


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("lockstep", exclude_type_checking_imports=True, cache_dir=None)


def _strongly_connected(graph: grimp.ImportGraph) -> list[set[str]]:
    """Tarjan's algorithm over the module graph; components of two or more modules are cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.find_modules_directly_imported_by(node)):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycles(graph: grimp.ImportGraph) -> None:
    cycles = _strongly_connected(graph)
    shown = [" -> ".join(sorted(c)) for c in cycles]
    assert not cycles, "import cycles: " + "; ".join(shown)


@pytest.mark.parametrize("kind", KINDS)
def test_only_the_kind_and_its_wiring_import_a_kind(graph: grimp.ImportGraph, kind: str) -> None:
    package = f"lockstep.oracles.{kind}"
    inside = {package, *graph.find_descendants(package)}
    # The pytest plugin wires the two kinds that record from a test run; the public
    # API re-exports record_io and Tape lazily; the tape command accepts tape drifts.
    allowed_outside = {
        "ledger": {"lockstep.pytest.ledger_recording"},
        "tape": {
            "lockstep.pytest.tape_fixture",
            "lockstep.pytest.tape_golden",
            "lockstep.cli.tape_commands",
        },
    }.get(kind, set())
    offenders = {
        importer
        for module in inside - {f"{package}.spec"}
        for importer in graph.find_modules_that_directly_import(module)
        if importer not in inside
        and importer not in allowed_outside
        and not importer.startswith(package)
    }
    assert not offenders, f"{package} is imported from outside: {sorted(offenders)}"


def test_the_shared_oracle_modules_know_no_kind(graph: grimp.ImportGraph) -> None:
    """What every kind shares (the verifier, the lifecycle, status, pending...) imports no
    kind's module, not even its table: it works on any kind the registry lists."""
    kinds = {f"lockstep.oracles.{kind}" for kind in KINDS}
    shared = graph.find_children("lockstep.oracles") - kinds
    offenders = sorted(
        f"{module} imports {imported}"
        for module in shared
        for imported in graph.find_modules_directly_imported_by(module)
        if any(imported == k or imported.startswith(f"{k}.") for k in kinds)
    )
    assert not offenders, offenders


def test_nothing_below_cli_prints_or_exits() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(("cli/", "demo/project/", "demo/variants/")) or rel == "__main__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id == "print":
                offenders.append(f"{rel}:{node.lineno}: print")
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "exit"
                and isinstance(func.value, ast.Name)
                and func.value.id == "sys"
            ):
                offenders.append(f"{rel}:{node.lineno}: sys.exit")
    assert not offenders, offenders


def _modules(under: str = "") -> list[tuple[str, ast.Module]]:
    return [
        (path.relative_to(SRC).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted((SRC / under).rglob("*.py"))
    ]


def test_each_kind_conforms_and_is_listed_once() -> None:
    """Every registered name is a package whose KIND is a concrete OracleKind of that name
    (mypy checks the signatures; this checks the registry), decoded by the config."""
    suffixes = set()
    for name in KINDS:
        kind = kind_named(name)
        assert isinstance(kind, OracleKind) and kind.name == name
        assert not type(kind).__abstractmethods__, name
        assert kind.suffix.startswith(".") and kind.suffix not in suffixes
        suffixes.add(kind.suffix)
        assert name in Config.__struct_fields__, f"Config has no [[{name}]] tables"
        spec = KIND_SPECS[name]
        assert issubclass(spec, OracleSpec) and spec.__module__ == f"lockstep.oracles.{name}.spec"
    offenders = []
    for rel, tree in _modules():
        if rel == "kinds.py" or rel.startswith("demo/"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
                items = node.keys if isinstance(node, ast.Dict) else node.elts
                words = {n.value for n in items if isinstance(n, ast.Constant)}
                if set(KINDS) <= words:
                    offenders.append(f"{rel}:{node.lineno}")
    assert not offenders, f"the list of kinds is written again: {offenders}"


def test_the_configuration_names_no_kind() -> None:
    """config.py builds the tables of every kind from the registry: no kind's name is a
    string in its code, and no kind's table is defined there (a fifth kind touches its
    own package and the registry's one line, never the configuration)."""
    rel = "config.py"
    tree = ast.parse((SRC / rel).read_text(encoding="utf-8"))
    docs = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    named = [
        f"{rel}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and id(node) not in docs and node.value in KINDS
    ]
    defined = [
        f"{rel}:{node.lineno}: class {node.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(ast.unparse(base).endswith("OracleSpec") for base in node.bases)
    ]
    assert not named and not defined, named + defined


def test_an_accepts_reason_is_checked_in_one_place() -> None:
    """Every door that accepts a change (``lockstep accept``, the tape's reviewed accept,
    ``pytest --lockstep-why``) checks its reason with the lifecycle's one ``check_why``."""
    found = [
        f"{rel}:{node.lineno}"
        for rel, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "check_why"
    ]
    assert found == ["oracles/lifecycle.py:" + found[0].split(":")[1]], found


def test_no_global_statement_under_oracles() -> None:
    found = [
        f"{rel}:{node.lineno}"
        for rel, tree in _modules("oracles")
        for node in ast.walk(tree)
        if isinstance(node, ast.Global)
    ]
    assert not found, found


_MUTABLE_CALLS = {"list", "dict", "set", "local", "RLock", "Lock", "defaultdict", "Counter"}


@pytest.mark.parametrize(
    "module",
    [
        "recorder",
        "call_state",
        "part",
        "merging",
        "wrapping",
        "decorator",
        "exit_hooks",
        "pytest_recording",
    ],
)
def test_the_recorder_keeps_no_module_level_mutable_state(module: str) -> None:
    """A module-level name is a Final constant (or an alias of a function or a type); the
    process's exit state is the one ExitState object, EXIT."""
    rel = f"oracles/ledger/{module}.py"
    tree = ast.parse((SRC / rel).read_text(encoding="utf-8"))
    offenders = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names = [ast.unparse(t) for t in node.targets]
            if names != ["__all__"] and not isinstance(node.value, ast.Attribute | ast.Name):
                offenders.append(f"{rel}:{node.lineno}: not Final")
        elif isinstance(node, ast.AnnAssign):
            final = ast.unparse(node.annotation) == "TypeAlias" or "Final" in ast.unparse(
                node.annotation
            )
            value = node.value
            mutable = isinstance(
                value, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp | ast.SetComp
            ) or (
                isinstance(value, ast.Call)
                and ast.unparse(value.func).rsplit(".", 1)[-1] in _MUTABLE_CALLS
            )
            if not final or mutable:
                offenders.append(f"{rel}:{node.lineno}: {ast.unparse(node.target)}")
    assert not offenders, offenders


def test_no_module_of_the_oracles_or_the_pytest_plugin_is_over_900_lines() -> None:
    long = [
        f"{path.relative_to(SRC)}: {n} lines"
        for folder in ("oracles", "pytest")
        for path in sorted((SRC / folder).rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 900
    ]
    assert not long, long


def test_no_code_reads_refusal_text() -> None:
    """A refusal is a :class:`lockstep.model.Refusal`, rendered by its ``text()`` alone: no
    other code holds the words that tell a secret's refusal apart (to search a message
    for them), and no pattern recovers a row id from text."""
    offenders = []
    for rel, tree in _modules():
        docs = {
            id(node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
                continue
            if id(node) in docs:
                continue
            if rel != "model.py" and "secret refused" in node.value:
                offenders.append(f"{rel}:{node.lineno}: secret refused")
            if "[0-9a-f]{16}" in node.value:
                offenders.append(f"{rel}:{node.lineno}: a row id pattern")
    assert not offenders, offenders


_CATEGORIES = {"added", "replaced", "trimmed", "unchanged", "unchanged_unlisted"}


def test_only_the_one_merge_sorts_cases_into_a_report() -> None:
    """Merging old and fresh cases is written once (``lifecycle.merged``): no other module
    adds to a report's added, replaced, trimmed or unchanged cases (a kind may clear them
    when it refuses the whole write, never sort a case into one)."""
    offenders = []
    for rel, tree in _modules():
        if rel == "oracles/lifecycle.py":
            continue
        for node in ast.walk(tree):
            target = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in {"append", "extend", "insert"}:
                    target = node.func.value
            elif isinstance(node, ast.AugAssign):
                target = node.target
            if isinstance(target, ast.Attribute) and target.attr in _CATEGORIES:
                offenders.append(f"{rel}:{node.lineno}: {ast.unparse(node)[:60]}")
    assert not offenders, offenders


def _reached(package: str, start: str) -> set[str]:
    """The names of the functions a function of ``package`` named ``start`` calls, and
    theirs, transitively (by name: bare calls, ``self.method()`` and ``module.function()``),
    among the functions the package defines; called names the package does not define
    end a path (they are in the result, not followed)."""
    defined: dict[str, list[ast.AST]] = {}
    for _, tree in _modules(f"oracles/{package}"):
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                defined.setdefault(node.name, []).append(node)
    reached = {start}
    todo = [start]
    while todo:
        for function in defined.get(todo.pop(), []):
            for node in ast.walk(function):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name is not None and name not in reached:
                    reached.add(name)
                    todo.append(name)
    return reached


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_records_through_the_one_record_sequence(kind: str) -> None:
    """A kind's ``record_cases`` reaches ``lifecycle.record`` (the one sequence: mode,
    unreadable file, contract, freeze, the one merge, write), which the package imports
    from there and does not define again."""
    imports_record = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "lockstep.oracles.lifecycle"
        and any(alias.name == "record" and alias.asname is None for alias in node.names)
        for _, tree in _modules(f"oracles/{kind}")
        for node in ast.walk(tree)
    )
    defines_record = [
        rel
        for rel, tree in _modules(f"oracles/{kind}")
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "record"
    ]
    assert imports_record and not defines_record, (kind, defines_record)
    assert "record" in _reached(kind, "record_cases"), f"{kind}: record_cases never reaches it"
