"""The cases file of a ``[[pins]]`` oracle: which runs of the program to freeze.

A TOML file of ``[[case]]`` tables with a closed schema::

    [[case]]
    id = "empty-input"          # stable, human-readable; letters, digits, '.', '_', '-'
    argv = ["--format", "csv"]  # appended to the oracle's ``command``
    env = { CURRENCY = "EUR" }  # only these keys (plus the documented base) reach the program
    stdin = ""                  # text fed on stdin; absent means empty stdin
    cwd_rel = "."               # working folder, relative to the project root

A duplicate id, an unknown key, a wrong type or a ``cwd_rel`` that escapes the
project root is an error naming the file and the key, before anything runs.
When the oracle declares ``env_keys``, a case may only set those keys, so the
declared list stays the truth about what the program depends on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from lockstep.config import NAME_PATTERN, Project, parse_toml
from lockstep.errors import DataError
from lockstep.oracles.pins.spec import PinsSpec
from lockstep.store import display_path


class PinCase(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """One ``[[case]]`` table."""

    id: str
    argv: list[str] = []
    env: dict[str, str] = {}
    stdin: str = ""
    cwd_rel: str = "."


class _CasesFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    case: list[PinCase] = []


def _where(err: msgspec.ValidationError) -> str:
    text = str(err)
    what, _, at = text.partition(" - at `$")
    at = at.rstrip("`").lstrip(".")
    if what.startswith("Object contains unknown field"):
        field = what.split("`")[1]
        return f"{at}.{field}: unknown key" if at else f"{field}: unknown key"
    if what.startswith("Object missing required field"):
        field = what.split("`")[1]
        return (
            f"{at}.{field}: required key is missing" if at else f"{field}: required key is missing"
        )
    return f"{at}: {what}" if at else what


def cases_path(project: Project, spec: PinsSpec) -> Path:
    return project.resolve(spec.cases, key=f"pins {spec.name!r}.cases")


def resolve_cwd(project: Project, cwd_rel: str, *, where: str) -> Path:
    """The working folder ``cwd_rel`` names; one outside the project root is a data error."""
    root = project.root.resolve()
    folder = (root / cwd_rel).resolve()
    if folder != root and root not in folder.parents:
        raise DataError(f"{where}: {cwd_rel!r} escapes the project root")
    return folder


def read_cases(project: Project, spec: PinsSpec) -> list[PinCase]:
    """Read and validate the cases file of ``spec``; every problem names the file and the key."""
    path = cases_path(project, spec)
    shown = display_path(path, project.root)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{shown}: cases file not found (pins {spec.name!r}.cases)") from None
    except OSError as e:
        raise DataError(f"{shown}: cannot read: {e.strerror}") from None
    raw: dict[str, Any] = parse_toml(data, shown, DataError)
    try:
        parsed = msgspec.convert(raw, _CasesFile)
    except msgspec.ValidationError as e:
        raise DataError(f"{shown}: {_where(e)}") from None
    check_cases(parsed.case, project=project, spec=spec, shown=shown)
    return parsed.case


def check_cases(cases: Sequence[PinCase], *, project: Project, spec: PinsSpec, shown: str) -> None:
    """Ids unique and well-formed, folders inside the root, env keys declared."""
    first: dict[str, int] = {}
    declared = set(spec.env_keys)
    for i, case in enumerate(cases):
        if not NAME_PATTERN.match(case.id):
            raise DataError(
                f"{shown}: case[{i}].id: {case.id!r} is not a valid case id "
                "(letters, digits, '.', '_' and '-')"
            )
        if case.id in first:
            raise DataError(
                f"{shown}: case[{i}].id: duplicate id {case.id!r} "
                f"(first used by case[{first[case.id]}])"
            )
        first[case.id] = i
        resolve_cwd(project, case.cwd_rel, where=f"{shown}: case[{i}].cwd_rel")
        if declared:
            for key in case.env:
                if key not in declared:
                    raise DataError(
                        f"{shown}: case[{i}].env.{key}: not declared in env_keys of pins "
                        f"{spec.name!r} (declared: {', '.join(sorted(declared))})"
                    )
