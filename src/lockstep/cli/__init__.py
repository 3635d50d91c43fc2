"""The command line: a thin layer that parses, calls, prints and chooses exit codes.

One module per command group keeps each small: ``oracle_commands`` (record,
replay, diff, status), ``probe_command``, ``gate_commands``, ``tape_commands``,
``demo_command``.  They all hang off the :data:`main` group defined in
:mod:`lockstep.cli.app`, which imports a command's module only when that command
runs (``COMMAND_MODULES`` there lists them).

Exit codes: 0 green; 1 drift, a nondeterministic probe, an exceeded budget, a
guard or review rejection; 2 usage, configuration or corrupt-file errors.
"""

from __future__ import annotations

from typing import Any

__all__ = ["main"]


def __getattr__(name: str) -> Any:
    """``main`` on first use: ``python -m lockstep.cli.verify_child`` (record's verifying
    interpreter) imports this package too, and has no use for click and rich."""
    if name == "main":
        from lockstep.cli.app import main

        return main
    raise AttributeError(name)
