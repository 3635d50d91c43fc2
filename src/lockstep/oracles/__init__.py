"""The oracle kinds: corpus, ledger, pins, tape.

Each kind is one module exposing the same functions (the :class:`OracleKind`
protocol) over the shared :mod:`lockstep.model` types, so the command line,
the pytest plugin and the reporters treat every kind alike.  Modules are
imported lazily: replaying a corpus never imports the pins machinery.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol, cast

from lockstep.config import OracleSpec, Project
from lockstep.model import (
    OracleStatus,
    Outcome,
    RecordMode,
    RecordReport,
    ReplayOptions,
    Status,
)


class OracleKind(Protocol):
    """What every oracle module provides."""

    def oracle_path(self, project: Project, spec: OracleSpec, /) -> Path:
        """The committed file that holds this oracle."""
        ...

    def record(self, project: Project, spec: OracleSpec, mode: RecordMode, /) -> RecordReport:
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


CaseRunner = Callable[[str], Outcome]
"""Replays one case by id; prepared once so that running N cases one at a time stays O(N)."""


def case_runner(project: Project, spec: OracleSpec) -> CaseRunner:
    """A prepared single-case replayer (the pytest plugin runs one item at a time).

    An oracle module may define ``case_runner(project, spec)`` to load its file and
    import its target once; otherwise each call replays with ``only={case_id}``.
    """
    kind = kind_of(spec)
    prepared = getattr(kind, "case_runner", None)
    if prepared is not None:
        return cast(CaseRunner, prepared(project, spec))

    def run(case_id: str) -> Outcome:
        options = ReplayOptions(only=frozenset({case_id}))
        for outcome in kind.replay(project, spec, options):
            if outcome.case_id == case_id:
                return outcome
        return Outcome(spec.name, case_id, Status.MISSING, note="no such case in the oracle")

    return run


def default_jobs(spec: OracleSpec, configured: int) -> int:
    """Workers for a replay that did not say ``--jobs``.

    ``configured`` (``[lockstep] jobs``) wins when above 0.  Otherwise each kind
    chooses: kinds whose cases run as separate processes anyway (pins) use one
    worker per core, since a waiting child costs nothing; in-process kinds use
    one, because a process pool's start-up outweighs small replays.
    """
    if configured > 0:
        return configured
    if getattr(kind_of(spec), "PARALLEL_BY_DEFAULT", False):
        return max(1, os.cpu_count() or 1)
    return 1


def kind_of(spec: OracleSpec) -> OracleKind:
    """The module implementing ``spec``'s kind."""
    module = importlib.import_module(f"lockstep.oracles.{spec.kind}.kind")
    return cast(OracleKind, module)
