"""A replayed call may not write into the project's folder (configobj's ``ConfigObj.write``
rows, whose object named ``test.ini``, overwrote a ``test.ini`` of the user's)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from helpers import pytest_in, rows_of, run_cli, write_files
from lockstep.oracles.ledger.write_guard import enter, guarded_folder, leave


def test_writes_inside_the_guarded_folder_are_refused_and_others_are_not(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "keep.txt").write_text("mine")
    (project / "__pycache__").mkdir()
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    before = enter(guarded_folder(str(project)))
    try:
        for write in (
            lambda: open(project / "new.ini", "w"),  # noqa: SIM115
            lambda: open(project / "data" / "keep.txt", "a"),  # noqa: SIM115
            lambda: os.open(project / "data" / "keep.txt", os.O_WRONLY | os.O_TRUNC),
            lambda: os.remove(project / "data" / "keep.txt"),
            lambda: os.rename(project / "data" / "keep.txt", elsewhere / "moved.txt"),
            lambda: os.replace(elsewhere / "x", project / "data" / "keep.txt"),
            lambda: shutil.rmtree(project / "data"),
            lambda: os.mkdir(project / "made"),
        ):
            with pytest.raises(PermissionError, match="in the project's folder"):
                write()
        assert (project / "data" / "keep.txt").read_text() == "mine"  # reading is free
        (elsewhere / "out.txt").write_text("fine")  # outside the project
        (project / "__pycache__" / "m.pyc").write_bytes(b"")  # the interpreter's own
    finally:
        leave(before)
    (project / "after.txt").write_text("no row replays now")
    assert (project / "data" / "keep.txt").read_text() == "mine"


SAVER = """
def save(name, text):
    with open(name, "w") as fh:
        fh.write(text)
    return len(text)


def shout(text):
    return text.upper()
"""


def test_a_call_that_writes_into_the_project_is_refused_and_replay_leaves_files_alone(
    tmp_path: Path,
) -> None:
    root = tmp_path / "saver"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "saver"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/saver/__init__.py": SAVER,
            "tests/test_saver.py": (
                "import os\n\nfrom saver import save, shout\n\n\ndef test_save():\n"
                "    assert save('scratch.ini', 'x = 1') == 5\n"
                "    os.remove('scratch.ini')\n"
                "    assert shout('a') == 'A'\n"
            ),
        },
    )
    run = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert run.code == 0, run.output
    assert "scratch.ini" in run.output and "in the project's folder" in run.output, run.output
    assert rows_of(root / "lockstep/saver.save.ledger.jsonl") == []
    assert len(rows_of(root / "lockstep/saver.shout.ledger.jsonl")) == 1
    (root / "scratch.ini").write_text("the user's own")
    replay = run_cli("replay", cwd=root)
    assert replay.code == 0, replay.output
    assert (root / "scratch.ini").read_text() == "the user's own"
