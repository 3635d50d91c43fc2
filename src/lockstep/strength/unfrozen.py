"""The unfrozen surface: public functions the recorded cases call that no ledger freezes.

A case of one oracle often runs other public functions of the project on its way
(``parse_datetime`` calls ``parse_time``); those functions are judged only
through what that target returns, for the inputs it happens to pass.  Strength
lists them, most-called first, so the user can freeze them in their own right
(``[[ledger]] target = ...``, or ``package =`` for the whole surface).

"Public" is :mod:`lockstep.surface`'s rule (a public module, ``__all__`` or no
leading ``_``, methods of public classes); "called" is measured by coverage (a
case calls a function when it runs a line of its body), and the rank is the number
of calls the cases made (counted while coverage measured them,
:attr:`~lockstep.strength.coverage.CaseCoverage.calls`), then the number of cases.
A function only a program's cases reach (pins run in their own processes) has no
count and ranks by its cases alone.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lockstep.config import OracleSpec, Project
from lockstep.oracles.ledger.spec import LedgerSpec
from lockstep.strength.coverage import CaseCoverage, function_span, module_of
from lockstep.surface import module_members
from lockstep.targets import resolve_callable


@dataclass(frozen=True)
class Unfrozen:
    """A public function some recorded case runs and no ledger has as its target."""

    target: str
    """``pkg.mod:qualname``, as a ledger's ``target`` names it."""
    file: Path
    line: int
    cases: tuple[str, ...]
    """The cases (``oracle::id``) that run a line of its body, in replay order."""
    calls: int | None = None
    """How often the in-process cases called it; None when only programs' cases reach it."""


def _module_name(root: Path, path: Path) -> str:
    module = module_of(path)
    name = getattr(module, "__name__", "")
    if isinstance(name, str) and name and name != "__main__":
        return name
    parts = list(path.resolve().relative_to(root.resolve()).with_suffix("").parts)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _frozen(project: Project, specs: Sequence[OracleSpec]) -> set[tuple[Path, str]]:
    """``(file, qualname)`` of every ledger's target (a target named through a re-export
    counts where it is defined)."""
    out: set[tuple[Path, str]] = set()
    for spec in specs:
        if not isinstance(spec, LedgerSpec) or not spec.target:
            continue
        try:
            fn = inspect.unwrap(resolve_callable(spec.target, project.root, where=spec.name))
            source = inspect.getsourcefile(fn)
        except Exception:  # an unresolvable target is replay's error to report, not ours
            continue
        qualname = getattr(fn, "__qualname__", "")
        if source and isinstance(qualname, str):
            out.add((Path(source).resolve(), qualname))
    return out


def unfrozen_surface(
    project: Project, coverage: CaseCoverage, specs: Sequence[OracleSpec]
) -> list[Unfrozen]:
    """Public functions the cases of ``coverage`` run that none of ``specs`` (every
    configured oracle) freezes as its target; most calls first, then most cases, then
    by name."""
    frozen = _frozen(project, specs)
    found: list[Unfrozen] = []
    for path, fc in coverage.files.items():
        module = _module_name(project.root, path)
        if not module or any(part.startswith("_") for part in module.split(".")):
            continue
        try:
            tree = ast.parse(path.read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        for member in module_members(module, tree):
            if (path.resolve(), member.qualname) in frozen:
                continue
            span = function_span(path, member.qualname)
            if span is None:
                continue
            cases = fc.cases_reaching(range(span[0] + 1, span[1] + 1))
            if cases:
                calls = coverage.calls.get((path.resolve(), member.qualname))
                target = f"{module}:{member.qualname}"
                found.append(Unfrozen(target, path, span[0], cases, calls))
    return sorted(found, key=lambda u: (-(u.calls or 0), -len(u.cases), u.target))
