"""The oracle kinds: corpus, ledger, pins, tape.

Each kind is one module exposing the same functions (the :class:`OracleKind`
protocol) over the shared :mod:`lockstep.model` types, so the command line,
the pytest plugin and the reporters treat every kind alike.  Modules are
imported lazily: replaying a corpus never imports the pins machinery.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, cast

from lockstep.config import OracleSpec, Project
from lockstep.model import OracleStatus, Outcome, RecordMode, RecordReport, ReplayOptions


class OracleKind(Protocol):
    """What every oracle module provides."""

    def oracle_path(self, project: Project, spec: OracleSpec, /) -> Path:
        """The committed file that holds this oracle."""
        ...

    def record(
        self, project: Project, spec: OracleSpec, mode: RecordMode, /
    ) -> RecordReport:
        """Freeze today's behaviour; never half-writes, refuses a plain record over an oracle."""
        ...

    def replay(
        self, project: Project, spec: OracleSpec, options: ReplayOptions, /
    ) -> Iterator[Outcome]:
        """Re-run the recorded cases (streaming) and yield one outcome per case."""
        ...

    def case_ids(self, project: Project, spec: OracleSpec, /) -> Iterator[str]:
        """The recorded case ids, streaming (pytest collects one item per id)."""
        ...

    def status(self, project: Project, spec: OracleSpec, /) -> OracleStatus:
        """Whether the oracle file is present and readable, and how many cases it holds."""
        ...


def kind_of(spec: OracleSpec) -> OracleKind:
    """The module implementing ``spec``'s kind."""
    module = importlib.import_module(f"lockstep.oracles.{spec.kind}")
    return cast(OracleKind, module)
