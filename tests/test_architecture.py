"""The shape the design promises, checked on lockstep's own import graph (grimp).

* no import cycle between modules (an import inside a function counts too:
  it is a cycle that only shows at run time);
* nothing outside an oracle kind's package imports that kind's modules, except
  through the registry (``lockstep.oracles.kind_of``) -- the command line, the
  gates and the reporters never know a kind's details;
* nothing below ``cli/`` prints or exits.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

import lockstep

SRC = Path(lockstep.__file__).parent
KINDS = ("corpus", "ledger", "pins", "tape")


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
        for module in inside
        for importer in graph.find_modules_that_directly_import(module)
        if importer not in inside
        and importer not in allowed_outside
        and not importer.startswith(package)
    }
    assert not offenders, f"{package} is imported from outside: {sorted(offenders)}"


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
