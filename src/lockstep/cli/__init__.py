"""The command line: a thin layer that parses, calls, prints and chooses exit codes.

One module per command group keeps each small: ``oracle_commands`` (record,
replay, diff, status), ``probe_command``, ``gate_commands``, ``tape_commands``,
``demo_command``.  They all hang off the :data:`main` group defined in
:mod:`lockstep.cli.app`; importing them here is what registers them.

Exit codes: 0 green; 1 drift, a nondeterministic probe, an exceeded budget, a
guard or review rejection; 2 usage, configuration or corrupt-file errors.
"""

from __future__ import annotations

from lockstep.cli import demo_command as _demo_command  # noqa: F401  (registers commands)
from lockstep.cli import gate_commands as _gate_commands  # noqa: F401
from lockstep.cli import oracle_commands as _oracle_commands  # noqa: F401
from lockstep.cli import probe_command as _probe_command  # noqa: F401
from lockstep.cli import tape_commands as _tape_commands  # noqa: F401
from lockstep.cli.app import main

__all__ = ["main"]
