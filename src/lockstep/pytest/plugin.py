"""The pytest plugin (entry point ``lockstep``): hooks and options only, no oracle logic.

* ``pytest --lockstep`` (or ``lockstep = true`` under ``[tool.pytest.ini_options]``... see
  README) collects every recorded case of every configured oracle as a test item
  named ``<oracle file>::<case id>``; a drift fails the item with the same diff
  the CLI prints.
* Recording hooks for ledgers and tapes live in their own modules and are wired
  in here, so each stays small.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from lockstep.pytest import ledger_recording as pytest_ledger
from lockstep.pytest import strength as pytest_strength
from lockstep.pytest import tape_fixture as pytest_tape
from lockstep.pytest.project import add_config_option, oracles_for, project_for
from lockstep.switches import RECORD_IO_OFF

# Free when unused: pytest loads this plugin in every run of a project that installed
# lockstep, so the oracle kinds, the collected items and the strength report are imported
# by the hooks that need them, once a --lockstep* option or the ini key asks for them.
if TYPE_CHECKING:
    from lockstep.config import OracleSpec, Project
    from lockstep.pytest.items import OracleFile


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lockstep", "lockstep: replay frozen behaviour")
    group.addoption(
        "--lockstep",
        action="store_true",
        default=False,
        help="Collect every recorded lockstep case as a test item.",
    )
    add_config_option(group)
    group.addoption(
        "--lockstep-keep-pending",
        action="store_true",
        default=False,
        help="Keep each drifted case's new outcome in <dir>/.pending/ for 'lockstep accept'.",
    )
    parser.addini(
        "lockstep", "Collect lockstep cases as test items (true/false).", type="bool", default=False
    )
    # lockstep:addoption (recording hooks of other oracle kinds register their options below)
    pytest_ledger.addoption(parser)
    pytest_tape.addoption(parser)  # --lockstep-record-tapes, --lockstep-why
    pytest_strength.addoption(parser)  # --lockstep-strength


def pytest_configure(config: pytest.Config) -> None:
    # a bad lockstep.toml stops the run here as one line (met first while collecting, pytest
    # showed it as a collection error with the plugin's traceback); one naming no oracle
    # too, as 'lockstep replay' refuses it: a gate emptied of its oracles is no pass
    if (
        _enabled(config)
        and not oracles_for(config)
        and not config.getoption("--lockstep-record", default=None)
    ):
        project = project_for(config)
        raise pytest.UsageError(f"lockstep: {project.config_name}: no oracles are configured")
    if _enabled(config) and not config.getoption("--lockstep-record", default=None):
        before = os.environ.get(RECORD_IO_OFF)
        os.environ[RECORD_IO_OFF] = "1"

        def restore() -> None:
            if before is None:
                os.environ.pop(RECORD_IO_OFF, None)
            else:
                os.environ[RECORD_IO_OFF] = before

        config.add_cleanup(restore)
    pytest_ledger.configure(config)  # --lockstep-record: wrap ledger targets for this run
    pytest_tape.configure(config)  # the tape fixture and its marker
    _keep_for_replays(config)


def _keep_for_replays(config: pytest.Config) -> None:
    """Before anything is collected: fork the process this run's ledger items replay in,
    which imports no test module and runs no test (:mod:`lockstep.oracles.ledger.keeper`).
    Not for a recording, nor for xdist's controller, which runs no item (each worker keeps
    its own)."""
    if not _enabled(config) or config.getoption("--lockstep-record", default=None):
        return
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    if not any(spec.kind == "ledger" for spec in oracles_for(config)):
        return
    from lockstep.oracles import kind_named
    from lockstep.pytest.replay_warnings import as_interpreter_filters

    keep = getattr(kind_named("ledger"), "keep_replays", None)
    stop = keep(project_for(config), as_interpreter_filters) if keep is not None else None
    if stop is not None:
        config.add_cleanup(stop)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not _enabled(session.config):  # no lockstep items ran: nothing was kept
        return
    from lockstep.pytest.items import bad_input_exit, write_kept

    write_kept(session)  # --lockstep-keep-pending: this session's drifts, for 'lockstep accept'
    bad_input_exit(session)


def _enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("--lockstep") or config.getini("lockstep"))


_COLLECTED = pytest.StashKey[set[Path]]()


def _oracle_file(
    parent: pytest.Collector, project: Project, spec: OracleSpec, path: Path
) -> OracleFile:
    from lockstep.pytest.items import OracleFile

    node = OracleFile.from_parent(parent, path=path)
    node.project = project
    node.spec = spec
    parent.config.stash.setdefault(_COLLECTED, set()).add(path.resolve())
    return node


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> OracleFile | None:
    """``pytest lockstep/transform.lock.json::basic.json`` collects (and selects) oracle cases."""
    if not _enabled(parent.config):
        return None
    from lockstep.oracles import all_kinds, kind_of

    if not file_path.name.endswith(tuple(kind.suffix for kind in all_kinds())):
        return None
    project = project_for(parent.config)
    for spec in oracles_for(parent.config, former=True):
        path = kind_of(spec).oracle_path(project, spec)
        if path.resolve() == file_path.resolve():
            return _oracle_file(parent, project, spec, file_path)
    return None


def _wanted(config: pytest.Config, path: Path) -> bool:
    """Oracles are added to a run with no explicit paths, or under a path the user named.

    Named on the command line itself: paths a project's ``addopts`` names (pyparsing's
    ``tests/test_simple_unit.py``) are pytest's ``args`` too, and reading them so left
    every ledger out of ``pytest --lockstep``, which then passed whatever had drifted."""
    if config.args_source is not pytest.Config.ArgsSource.ARGS:
        return True
    typed = set(config.invocation_params.args)
    named = [arg for arg in config.args if arg in typed]
    if not named:
        return True
    # the oracle file itself is not followed: a ledger replaced by a link to elsewhere is
    # still the file under the folder named (reading it says what is wrong); followed,
    # a link to nothing left the ledger out, and 'pytest --lockstep lockstep' passed
    target = path.parent.resolve() / path.name
    for arg in named:
        where = (config.invocation_params.dir / arg.split("::", 1)[0]).resolve()
        if where == target or where in target.parents:
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
    from lockstep.oracles import kind_of

    project = project_for(config)
    collected = config.stash.get(_COLLECTED, set())
    for spec in oracles_for(config, former=True):
        path = kind_of(spec).oracle_path(project, spec)
        if path.resolve() in collected or not _wanted(config, path):
            continue
        # one not recorded is one failed item, as it is one ERROR of ``lockstep replay``
        # (a usage error ran none of the project's tests); a link to nothing is collected:
        # reading it says so
        items.extend(session.genitems(_oracle_file(session, project, spec, path)))


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    pytest_strength.terminal_summary(terminalreporter, config)  # --lockstep-strength
