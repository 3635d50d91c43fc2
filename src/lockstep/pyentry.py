"""What a Python command runs: ``python SCRIPT ARGS`` or ``python -m MODULE ARGS``.

Warm pins (``warm = true``) run a case by forking a server interpreter, which
only reproduces a fresh interpreter for these two forms; interpreter options
(``-u``, ``-X``, ``-I``, ``-c``, …) change how the interpreter starts, so a command
with them is refused in the configuration.  Which environment keys a fresh
interpreter reads at start (so a case setting them must run cold) is here too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

MODULE_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_PYTHON: Final = re.compile(r"^python(\d+(\.\d+)?)?$")


@dataclass(frozen=True)
class PythonEntry:
    """The interpreter, the script or module it runs, and the arguments after it."""

    interpreter: str
    script: str
    module: str
    args: tuple[str, ...]


def python_entry(argv: Sequence[str]) -> PythonEntry | str:
    """The entry point of ``argv``, or why it is not one warm pins can run."""
    if not argv or not _PYTHON.match(Path(argv[0]).name):
        return "the command must start with a Python interpreter (python, python3, …)"
    rest = list(argv[1:])
    if rest[:1] == ["-m"]:
        if len(rest) < 2 or not MODULE_NAME.match(rest[1]):
            return "'-m' must be followed by a module name"
        return PythonEntry(argv[0], "", rest[1], tuple(rest[2:]))
    if not rest or rest[0].startswith("-"):
        return (
            "the interpreter must run a script or '-m MODULE' with no interpreter options "
            f"(got {rest[0]!r})"
            if rest
            else "the interpreter must run a script or '-m MODULE'"
        )
    return PythonEntry(argv[0], rest[0], "", tuple(rest[1:]))


def start_sensitive(key: str) -> bool:
    """Whether a fresh interpreter reads ``key`` while it starts (hash seed, paths, locale, zone)."""
    return key.startswith(("PYTHON", "LC_")) or key in {"LANG", "LANGUAGE", "TZ"}


def cold_reason(case_env: Mapping[str, str], server_env: Mapping[str, str]) -> str:
    """Why a case must run cold: it sets a start-time key to another value than the server's."""
    for key, value in sorted(case_env.items()):
        if start_sensitive(key) and server_env.get(key) != value:
            return f"its env sets {key}, which Python reads at start"
    return ""
