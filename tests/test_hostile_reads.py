"""Files a pull request commits where lockstep reads: only regular files, oracle files never
through a link.

A ledger linked to ``/dev/zero`` was read as one endless line until memory ran out, one
that is a pipe waited forever, and one linked to a file outside the repository was read
as the oracle.  Each is now one line naming the file, exit 2, before anything runs.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import run_cli, run_pytest, write_files
from lockstep.store.reading import A_LINK, NOT_A_FILE, open_file, read_file
from test_corpus_cli import make_project

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


CALC = "def double(x):\n    return x * 2\n"
TESTS = "from shop.calc import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
CONFIG = '[[ledger]]\nname = "double"\ntarget = "shop.calc:double"\n'


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A git repository whose ledger is recorded from its suite and committed."""
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/calc.py": CALC,
            "tests/test_calc.py": TESTS,
            "lockstep.toml": CONFIG,
        },
    )
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    result = run_pytest(
        "-q", "tests", "--lockstep-record", cwd=root, plugins=("lockstep.pytest.plugin",)
    )
    assert result.code == 0, result.output
    assert (root / "lockstep" / "double.ledger.jsonl").is_file()
    assert run_cli("replay", cwd=root).code == 0
    return root


def _ledger(root: Path) -> Path:
    return root / "lockstep" / "double.ledger.jsonl"


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("command", ["replay", "status"])
def test_a_ledger_linked_to_an_endless_device_is_refused(recorded: Path, command: str) -> None:
    ledger = _ledger(recorded)
    ledger.unlink()
    ledger.symlink_to("/dev/zero")
    result = run_cli(command, cwd=recorded, timeout=60)
    assert result.code == 2, result.output
    line = _one_line(result.stderr)
    assert "double.ledger.jsonl" in line and "symbolic link" in line
    assert "error: lockstep/double.ledger.jsonl: " in line  # where it is, not where it points


def test_a_ledger_that_is_a_pipe_is_refused_without_waiting(recorded: Path) -> None:
    ledger = _ledger(recorded)
    ledger.unlink()
    os.mkfifo(ledger)
    result = run_cli("replay", cwd=recorded, timeout=60)  # opening it for reading would wait
    assert result.code == 2, result.output
    line = _one_line(result.stderr)
    assert "double.ledger.jsonl" in line and "not a regular file" in line


def test_a_ledger_linked_to_a_file_outside_is_not_read(recorded: Path, tmp_path: Path) -> None:
    """Even a valid ledger: what is read there is not the repository's."""
    outside = tmp_path / "outside.ledger.jsonl"
    shutil.move(_ledger(recorded), outside)
    _ledger(recorded).symlink_to(outside)
    result = run_cli("replay", cwd=recorded)
    assert result.code == 2, result.output
    assert "symbolic link" in _one_line(result.stderr)
    assert outside.read_bytes().splitlines()[0].decode() not in result.output


@pytest.mark.parametrize("kind", ["a device", "a folder"])
def test_a_configuration_that_is_not_a_file_is_one_line(recorded: Path, kind: str) -> None:
    config = recorded / "lockstep.toml"
    config.unlink()
    if kind == "a device":
        config.symlink_to("/dev/zero")
    else:
        config.mkdir()
    result = run_cli("replay", cwd=recorded, timeout=60)
    assert result.code == 2, result.output
    line = _one_line(result.stderr)
    assert "lockstep.toml: cannot read: not a regular file" in line
    assert "/dev/zero" not in line


def test_a_package_module_that_is_a_device_is_one_line(recorded: Path) -> None:
    (recorded / "lockstep.toml").write_text('[[ledger]]\npackage = "shop"\n')
    (recorded / "shop" / "endless.py").symlink_to("/dev/zero")
    result = run_cli("replay", cwd=recorded, timeout=60)
    assert result.code == 2, result.output
    line = _one_line(result.stderr)
    assert "shop.endless" in line and "not a regular file" in line


def test_a_blob_linked_elsewhere_is_not_read(tmp_path: Path) -> None:
    """A corpus output kept by digest, replaced by a link: a drift shows no document from
    there (even the very bytes), and a link to an endless device does not hang it."""
    root = make_project(tmp_path / "proj")
    assert run_cli("record", "rows", cwd=root).code == 0
    blobs = [p for p in sorted((root / "lockstep" / "blobs").rglob("*")) if p.is_file()]
    for blob in blobs:
        copy = tmp_path / blob.name
        shutil.copyfile(blob, copy)
        blob.unlink()
        blob.symlink_to(copy)
    transform = root / "legacy" / "transform.py"
    transform.write_text(transform.read_text().replace('"UNKNOWN"', '"NOBODY"'))
    for _ in range(2):
        result = run_cli("replay", "rows", cwd=root, timeout=60)
        assert result.code == 1, result.output
        assert "DRIFT rows::c_missing_name.json" in result.stdout
        assert "not in the blob store" in result.stdout
        assert "Unknown" not in result.stdout  # the recorded document, read through a link
        for blob in blobs:
            blob.unlink()
            blob.symlink_to("/dev/zero")


def test_a_corpus_lock_linked_to_an_endless_device_is_one_line(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    assert run_cli("record", "rows", cwd=root).code == 0
    lock = root / "lockstep" / "rows.lock.json"
    lock.unlink()
    lock.symlink_to("/dev/zero")
    result = run_cli("replay", "rows", cwd=root, timeout=60)
    assert result.code == 2, result.output
    line = _one_line(result.stderr)
    assert "rows.lock.json" in line and "symbolic link" in line


# ------------------------------------------------------------------- the reader itself


def test_open_file_reads_a_regular_file_and_a_link_only_when_asked(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_bytes(b"kept")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    assert read_file(real) == b"kept"
    assert read_file(link, through_links=True) == b"kept"
    with pytest.raises(OSError) as caught:
        read_file(link)
    assert caught.value.strerror == A_LINK and caught.value.errno == errno.ELOOP


def test_open_file_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    folder = tmp_path / "folder"
    folder.mkdir()
    device = tmp_path / "zero"
    device.symlink_to("/dev/zero")
    for path in (pipe, folder, device):
        with pytest.raises(OSError) as caught:
            open_file(path, through_links=True)
        assert caught.value.strerror == NOT_A_FILE, path
    with pytest.raises(FileNotFoundError):
        open_file(tmp_path / "missing")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(OSError, match="symbolic link"):
        open_file(dangling)
