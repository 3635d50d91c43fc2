"""The environment and command line of a case: a documented base, ``PATH`` inherited, and
``python`` meaning the interpreter that runs lockstep (see :mod:`lockstep.process`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from lockstep.errors import TargetError

ENV_BASE: Final[Mapping[str, str]] = {
    "LC_ALL": "C.UTF-8",
    "LANG": "C.UTF-8",
    "TZ": "UTC",
    "PYTHONHASHSEED": "0",
}
"""Fixed keys every case runs with (recorded in the oracle file)."""

ENV_INHERIT: Final[tuple[str, ...]] = ("PATH",)
"""Keys whose value is taken from lockstep's own environment (only so programs are found)."""

PYTHON_NAMES: Final = frozenset({"python", "python3"})


def build_env(
    case_env: Mapping[str, str],
    *,
    base: Mapping[str, str] = ENV_BASE,
    inherit: Sequence[str] = ENV_INHERIT,
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The complete environment of one run: base, inherited keys, then the case's keys."""
    source = os.environ if source is None else source
    env = dict(base)
    for key in inherit:
        if key in source:
            env[key] = source[key]
    env.update(case_env)
    return env


def resolve_argv(argv: Sequence[str]) -> list[str]:
    """``python``/``python3`` as the first word means the interpreter running lockstep."""
    if not argv:
        raise TargetError("empty command: give the program to run")
    if argv[0] in PYTHON_NAMES:
        return [sys.executable, *argv[1:]]
    return list(argv)


def is_python(argv: Sequence[str]) -> bool:
    """Whether ``argv`` starts a Python interpreter (env discovery only works for those)."""
    if not argv:
        return False
    name = Path(argv[0]).name
    return argv[0] in PYTHON_NAMES or name.startswith("python") or argv[0] == sys.executable
