"""The pytest plugin (entry point ``lockstep``): adapts pytest to the oracle API, holds no logic.

* ``pytest --lockstep`` (or ``lockstep = true`` under ``[tool.pytest.ini_options]``... see
  README) collects every recorded case of every configured oracle as a test item
  named ``<oracle file>::<case id>``; a drift fails the item with the same diff
  the CLI prints.
* Recording hooks for ledgers and tapes live in their own modules and are wired
  in here, so each stays small.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockstep.config import OracleSpec, Project, load_project
from lockstep.errors import LockstepError
from lockstep.model import Outcome
from lockstep.oracles import CaseRunner, case_runner, kind_of
from lockstep.pytest import ledger_recording as pytest_ledger
from lockstep.pytest import tape_fixture as pytest_tape


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lockstep", "lockstep: replay frozen behaviour")
    group.addoption(
        "--lockstep",
        action="store_true",
        default=False,
        help="Collect every recorded lockstep case as a test item.",
    )
    group.addoption(
        "--lockstep-config",
        default=None,
        metavar="PATH",
        help="lockstep config file (default: found from the rootdir upwards).",
    )
    parser.addini(
        "lockstep", "Collect lockstep cases as test items (true/false).", type="bool", default=False
    )
    # lockstep:addoption (recording hooks of other oracle kinds register their options below)
    pytest_ledger.addoption(parser)
    pytest_tape.addoption(parser)  # --lockstep-record-tapes, --lockstep-why


def pytest_configure(config: pytest.Config) -> None:
    pytest_ledger.configure(config)  # --lockstep-record: wrap ledger targets for this run
    pytest_tape.configure(config)  # the tape fixture and its marker


def _enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("--lockstep") or config.getini("lockstep"))


class LockstepDrift(Exception):
    """Raised by an item whose case drifted; carries the outcome for the report."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.case_id)
        self.outcome = outcome


class OracleFile(pytest.File):
    """One oracle file; its children are the recorded cases."""

    project: Project
    spec: OracleSpec

    def collect(self) -> Iterator[pytest.Item]:
        try:
            ids = list(kind_of(self.spec).case_ids(self.project, self.spec))
        except LockstepError as e:
            raise self.CollectError(str(e)) from None
        for case_id in ids:
            yield OracleItem.from_parent(self, name=case_id)


class OracleItem(pytest.Item):
    """One recorded case: replays it and fails with the same text the CLI prints."""

    parent: OracleFile

    def runtest(self) -> None:
        runner = _runner(self)
        outcome = runner(self.name)
        if not outcome.ok:
            raise LockstepDrift(outcome)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, LockstepDrift):
            from lockstep.report.terminal import outcome_text

            return outcome_text(excinfo.value.outcome).plain
        if isinstance(excinfo.value, LockstepError):
            return f"lockstep: {excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.parent.spec.kind} {self.parent.spec.name}::{self.name}"


_RUNNERS = pytest.StashKey[dict[str, CaseRunner]]()


def _runner(item: OracleItem) -> CaseRunner:
    """The prepared runner for the item's oracle, built once per session (per xdist worker)."""
    runners = item.session.stash.setdefault(_RUNNERS, {})
    spec = item.parent.spec
    if spec.name not in runners:
        runners[spec.name] = case_runner(item.parent.project, spec)
    return runners[spec.name]


_PROJECT = pytest.StashKey[Project]()
_COLLECTED = pytest.StashKey[set[Path]]()


def _project(config: pytest.Config) -> Project:
    """The lockstep project, loaded once per pytest run; config errors stop the run."""
    if _PROJECT not in config.stash:
        explicit = config.getoption("--lockstep-config")
        try:
            if explicit:
                project = load_project(config_path=Path(explicit))
            else:
                project = load_project(Path(str(config.rootpath)))
        except LockstepError as e:
            raise pytest.UsageError(f"lockstep: {e}") from None
        config.stash[_PROJECT] = project
    return config.stash[_PROJECT]


def _oracle_file(parent: pytest.Collector, project: Project, spec: OracleSpec, path: Path) -> OracleFile:
    node = OracleFile.from_parent(parent, path=path)
    node.project = project
    node.spec = spec
    parent.config.stash.setdefault(_COLLECTED, set()).add(path.resolve())
    return node


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> OracleFile | None:
    """``pytest lockstep/transform.lock.json::basic.json`` collects (and selects) oracle cases."""
    if not _enabled(parent.config):
        return None
    if not file_path.name.endswith((".lock.json", ".ledger.jsonl", ".pins.jsonl", ".tape.json")):
        return None
    project = _project(parent.config)
    for spec in project.oracles():
        path = kind_of(spec).oracle_path(project, spec)
        if path.resolve() == file_path.resolve():
            return _oracle_file(parent, project, spec, file_path)
    return None


def _wanted(config: pytest.Config, path: Path) -> bool:
    """Oracles are added to a run with no explicit paths, or under a path the user named."""
    if config.args_source is not pytest.Config.ArgsSource.ARGS:
        return True
    target = path.resolve()
    for arg in config.args:
        named = (config.invocation_params.dir / arg.split("::", 1)[0]).resolve()
        if named == target or named in target.parents:
            return True
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Append the cases of oracles that ordinary collection did not reach (the oracle folder
    is usually outside ``testpaths``), before -k/-m deselection sees the list."""
    if not _enabled(config):
        return
    project = _project(config)
    collected = config.stash.get(_COLLECTED, set())
    for spec in project.oracles():
        path = kind_of(spec).oracle_path(project, spec)
        if path.resolve() in collected or not _wanted(config, path):
            continue
        if not path.exists():
            raise pytest.UsageError(
                f"lockstep: oracle {spec.name!r} is not recorded ({path.name} is missing); "
                f"run 'lockstep record {spec.name}' and commit the file"
            )
        items.extend(session.genitems(_oracle_file(session, project, spec, path)))


