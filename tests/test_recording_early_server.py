"""A recording's verifying interpreter starts first, in the folder the project is loaded from.

``pytest --lockstep-record`` starts its verifying interpreter before it imports its own
recording machinery and reads the package's surface (a twentieth of a second): the
interpreter's start runs on another core meanwhile, and a short suite no longer ends before
it is ready.  So it is started in the configuration's folder found, not yet read: these
tests hold that folder to the project's root however the configuration is found (walking
up, ``--lockstep-config``, a linked file), that nothing of the recording was imported when
it started, and that a configuration that cannot be read still stops the run in one line,
with the interpreter ended.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import Result, pytest_in, write_files

MONEY = """
def cents(amount):
    return round(amount * 100)
"""

TESTS = """
from money import cents


def test_cents():
    assert cents(1.25) == 125
"""

WATCH = """
import json
import os
import sys

import pytest

from lockstep.oracles.verify_session import VerifySession

_start, _close = VerifySession.start, VerifySession.close


def _note(**fields):
    with open(os.environ["EARLY_NOTES"], "a", encoding="utf-8") as out:
        out.write(json.dumps(fields) + "\\n")


def start(self, seed):
    _note(
        event="start",
        root=str(self.root),
        recording_imported="lockstep.oracles.ledger.pytest_recording" in sys.modules,
    )
    return _start(self, seed)


def close(self):
    _note(event="close", root=str(self.root))
    return _close(self)


VerifySession.start = start
VerifySession.close = close


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if config.getoption("--lockstep-record"):
        from lockstep.pytest.project import project_for

        _note(event="project", root=str(project_for(config).root.resolve()))
"""


def _project(root: Path, config_at: str = "lockstep.toml") -> Path:
    write_files(
        root,
        {
            config_at: '[[ledger]]\nname = "cents"\ntarget = "money:cents"\n',
            "money.py": MONEY,
            "tests/test_money.py": TESTS,
            "watch_early.py": WATCH,
        },
    )
    return root


def _notes(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _recording(root: Path, notes: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    """``pytest --lockstep-record`` in ``root``, what the session did noted in ``notes``."""
    return pytest_in(
        root,
        "-p",
        "watch_early",
        "--lockstep-record",
        *args,
        "-q",
        "tests",
        env={"EARLY_NOTES": str(notes), "PYTHONPATH": str(root), **(env or {})},
    )


def _recorded(root: Path, notes: Path, *args: str) -> list[dict[str, object]]:
    result = _recording(root, notes, *args)
    assert result.code == 0, result.output
    return _notes(notes)


def _stopped_in_one_line(result: Result, said: str) -> None:
    """The run stopped as a usage error, with one line of lockstep's saying ``said``."""
    assert result.code == pytest.ExitCode.USAGE_ERROR, result.output
    assert "INTERNALERROR" not in result.output
    errors = [line for line in result.output.splitlines() if "lockstep:" in line]
    assert len(errors) == 1 and said in errors[0], result.output


def _started_where_loaded(notes: list[dict[str, object]]) -> str:
    (start,) = [n for n in notes if n["event"] == "start"]
    (project,) = [n for n in notes if n["event"] == "project"]
    assert start["recording_imported"] is False
    assert start["root"] == project["root"]
    return str(start["root"])


def test_the_interpreter_starts_in_the_project_root_before_the_recording_is_imported(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "project")
    notes = _recorded(root, tmp_path / "notes.jsonl")
    assert _started_where_loaded(notes) == str(root.resolve())
    assert (root / "lockstep/cents.ledger.jsonl").is_file()


def test_a_configuration_named_on_the_command_line_gives_its_own_folder(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "project", config_at="settings/lockstep.toml")
    (root / "settings/money.py").write_text(MONEY, encoding="utf-8")
    config = root / "settings/lockstep.toml"
    notes = _recorded(root, tmp_path / "notes.jsonl", f"--lockstep-config={config}")
    assert _started_where_loaded(notes) == str((root / "settings").resolve())


def test_a_linked_configuration_gives_the_link_s_folder(tmp_path: Path) -> None:
    elsewhere = tmp_path / "shared"
    write_files(
        elsewhere, {"lockstep.toml": '[[ledger]]\nname = "cents"\ntarget = "money:cents"\n'}
    )
    root = tmp_path / "project"
    write_files(root, {"money.py": MONEY, "tests/test_money.py": TESTS, "watch_early.py": WATCH})
    (root / "lockstep.toml").symlink_to(elsewhere / "lockstep.toml")
    notes = _recorded(root, tmp_path / "notes.jsonl")
    assert _started_where_loaded(notes) == str(root.resolve())


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ('[[ledger]]\nname = "cents"\ntarget = \n', "lockstep.toml"),
        ('[[ledger]]\nname = "cents"\n', "target"),
    ],
)
def test_a_configuration_that_cannot_be_read_stops_the_run_and_ends_the_interpreter(
    tmp_path: Path, config: str, said: str
) -> None:
    root = _project(tmp_path / "project")
    (root / "lockstep.toml").write_text(config, encoding="utf-8")
    notes = tmp_path / "notes.jsonl"
    _stopped_in_one_line(_recording(root, notes), said)
    events = [n["event"] for n in _notes(notes)]
    assert events.count("start") == events.count("close") == 1, events
    assert not (root / "lockstep").exists()


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("option", "config file not found"),
        ("environment", "config file not found"),
        ("folder", "not a regular file"),
    ],
)
def test_a_configuration_named_where_there_is_none_stops_the_run_in_one_line(
    tmp_path: Path, how: str, said: str
) -> None:
    root = _project(tmp_path / "project")
    (root / "lockstep.toml").unlink()
    if how == "folder":  # a folder where the file is named: the session starts, then ends
        named = root / "settings/lockstep.toml"
        named.mkdir(parents=True)
    else:  # in a folder that is not there: no session is started
        named = tmp_path / "nowhere/lockstep.toml"
    notes = tmp_path / "notes.jsonl"
    if how == "environment":
        result = _recording(root, notes, env={"LOCKSTEP_CONFIG": str(named)})
    else:
        result = _recording(root, notes, f"--lockstep-config={named}")
    _stopped_in_one_line(result, said)
    events = [n["event"] for n in _notes(notes)] if notes.exists() else []
    assert events.count("start") == events.count("close") == (how == "folder"), events
