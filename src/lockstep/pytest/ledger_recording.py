"""``pytest --lockstep-record=TARGET``: record a ledger while the project's own tests run.

The project's tests already call the messy function the way production does;
this wraps each named target for the duration of the run (including names
other modules bound with ``from pkg.mod import func``), then writes the
ledger once at the end.  ``TARGET`` is a ``[[ledger]]`` name or its
``pkg.mod:qualname`` target; repeat the option for several.

Under pytest-xdist every worker records in memory and, at its session end,
appends its whole recording as one line to a spool file next to the ledger
(:class:`lockstep.store.JsonlAppender`: whole lines under a file lock, so
nothing is lost or interleaved).  The controller finishes after every worker,
merges the spool (an input whose outcome differs between workers is refused
like one that differed within a worker), writes the ledger atomically in the
chosen ``--lockstep-record-mode`` and removes the spool.  The run id that
names the spool travels to workers in ``workerinput``, so a stale spool from an
interrupted run is never merged into a new one.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec
import pytest

from lockstep.config import LedgerSpec, Project
from lockstep.errors import LockstepError
from lockstep.model import RecordMode, RecordReport
from lockstep.pytest.project import project_for
from lockstep.store import JsonlAppender, iter_jsonl, lock_for

if TYPE_CHECKING:  # the recording machinery is imported only when a run asks for it
    from lockstep.oracles.ledger.recorder import Installation, Wrapped

RUN_KEY: Final = "lockstep_record_run"
"""The ``workerinput`` key carrying the controller's run id to xdist workers."""


def addoption(parser: pytest.Parser) -> None:
    """Register ``--lockstep-record`` and ``--lockstep-record-mode``."""
    group = parser.getgroup("lockstep")
    group.addoption(
        "--lockstep-record",
        action="append",
        default=[],
        metavar="TARGET",
        help="Record the calls of a [[ledger]] (its name or pkg.mod:qualname) while the tests "
        "run, and write its ledger at the end. Repeatable.",
    )
    group.addoption(
        "--lockstep-record-mode",
        choices=[m.value for m in RecordMode],
        default=RecordMode.CREATE.value,
        help="create (default: refuse over an existing ledger), new-only, force or trim.",
    )


@dataclass
class _Target:
    spec: LedgerSpec
    spool: Path
    wrapped: Wrapped | None = None


@dataclass
class LedgerRecording:
    """The plugin object for one run: wraps at configure, writes at session end."""

    project: Project
    mode: RecordMode
    run_id: str
    controller: bool
    targets: list[_Target]
    installation: Installation
    reports: list[RecordReport] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def install(self) -> None:
        stem = self.project.config.lockstep.stem_length
        try:
            for target in self.targets:
                target.wrapped = self.installation.wrap(
                    target.spec.target,
                    self.project.root,
                    where=self.project.where(target.spec, "target"),
                    stem_length=stem,
                )
        except LockstepError as e:
            self.installation.undo()
            raise pytest.UsageError(f"lockstep: {e}") from None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: tell each worker which spool this run appends to."""
        node.workerinput[RUN_KEY] = self.run_id

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.installation.undo()
        for target in self.targets:
            assert target.wrapped is not None
            part = target.wrapped.recorder.part()
            JsonlAppender(target.spool).append(msgspec.json.encode(part))
        if self.controller:
            for target in self.targets:
                self._write(target)

    def _write(self, target: _Target) -> None:
        from lockstep.oracles.ledger import kind as ledger_oracle
        from lockstep.oracles.ledger.recorder import RecordingPart, merge_parts

        assert target.wrapped is not None
        try:
            parts = [part for _, part in iter_jsonl(target.spool, RecordingPart)]
            recording = merge_parts(target.spec.target, parts)
            self.reports.append(
                ledger_oracle.write_recording(
                    self.project, target.spec, self.mode, recording, target.wrapped.signature
                )
            )
        except LockstepError as e:
            self.errors.append(str(e))
        finally:
            target.spool.unlink(missing_ok=True)
            Path(lock_for(target.spool).lock_file).unlink(missing_ok=True)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.controller:
            return
        from lockstep.report.terminal import record_text

        terminalreporter.section("lockstep ledger recording")
        for report in self.reports:
            for line in record_text(report, self.project.root).plain.splitlines():
                terminalreporter.write_line(line)
        for error in self.errors:
            terminalreporter.write_line(f"lockstep: error: {error}", red=True)


def _spec_for(project: Project, wanted: str) -> LedgerSpec:
    for spec in project.config.ledger:
        if wanted in (spec.name, spec.target):
            return spec
    known = ", ".join(s.name for s in project.config.ledger) or "none configured"
    raise pytest.UsageError(
        f"lockstep: --lockstep-record={wanted}: no [[ledger]] in {project.config_name} has that "
        f"name or target (known: {known}); add one with name and target"
    )


def configure(config: pytest.Config) -> None:
    """Wrap the requested targets for this run (controller, plain run or xdist worker)."""
    wanted: list[str] = config.getoption("--lockstep-record", default=[]) or []
    if not wanted:
        return
    from lockstep.oracles.ledger import kind as ledger_oracle
    from lockstep.oracles.ledger.recorder import Installation

    project = project_for(config)
    mode = RecordMode(config.getoption("--lockstep-record-mode"))
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    controller = workerinput is None
    run_id = uuid.uuid4().hex[:12] if workerinput is None else str(workerinput.get(RUN_KEY, ""))
    if not run_id:
        return  # a worker of a controller that does not record
    specs: list[LedgerSpec] = []
    for name in wanted:
        spec = _spec_for(project, name)
        if spec not in specs:
            specs.append(spec)
    if controller:
        for spec in specs:
            try:
                ledger_oracle.check_mode(project, spec, mode)
            except LockstepError as e:
                raise pytest.UsageError(f"lockstep: {e}") from None
    targets = [
        _Target(
            spec,
            project.oracle_dir / f".{spec.name}.ledger.jsonl.{run_id}.spool",
        )
        for spec in specs
    ]
    plugin = LedgerRecording(project, mode, run_id, controller, targets, Installation())
    plugin.install()
    config.pluginmanager.register(plugin, "lockstep-ledger-recording")


__all__ = ["LedgerRecording", "addoption", "configure"]
