"""A ledger whose rows name files of its checkout replays from a clone elsewhere.

sqlparse's suite hands ``cli.main`` paths built from ``Path(__file__).parent``: the rows
held the absolute path of the checkout that recorded them, so a clone in another folder
(a CI runner's workspace) read the recording checkout's files while it existed, and
drifted on unchanged code once it did not.  The header names the folder the rows were
recorded in; replay from another folder puts its own in place, in the input and in the
recorded outcome alike.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers import GitRepo, pytest_in, red_after_change, run_cli

READER = """
from pathlib import Path


def count_lines(path):
    text = Path(path).read_text()
    return len(text.splitlines())


def describe(path):
    try:
        return f"{path}: {count_lines(path)} line(s)"
    except FileNotFoundError as e:
        raise ValueError(f"no such file: {path}") from e
"""

TESTS = """
from pathlib import Path

import pytest

from reader import count_lines, describe

DATA = Path(__file__).parent / "data"


def test_count():
    assert count_lines(str(DATA / "three.txt")) == 3
    assert describe(str(DATA / "three.txt")).endswith(": 3 line(s)")
    with pytest.raises(ValueError):
        describe(str(DATA / "missing.txt"))
"""


FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "reader"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/reader/__init__.py": READER,
    "tests/test_reader.py": TESTS,
    "tests/data/three.txt": "a\nb\nc\n",
}


def _reader_repo(tmp_path: Path, **more: str) -> tuple[Path, GitRepo]:
    """The reader project committed in a checkout of its own (``more``: files besides)."""
    first = tmp_path / "workspace" / "checkout-on-a-laptop"
    repo = GitRepo(first)
    repo.commit("a reader", {**FILES, **more})
    return first, repo


def test_a_clone_elsewhere_replays_the_rows_with_its_own_paths(tmp_path: Path) -> None:
    first, repo = _reader_repo(tmp_path)
    recorded = pytest_in(first, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    ledger = first / "lockstep/reader.describe.ledger.jsonl"
    header = json.loads(ledger.read_text().splitlines()[0])
    assert header["root"] == str(first.resolve()) and header["lockstep_ledger"] == 5, header
    untouched = json.loads(
        (first / "lockstep/reader.count_lines.ledger.jsonl").read_text().splitlines()[0]
    )
    assert header["rows"] == 2 and "root" in untouched  # both name files of the checkout
    repo.commit("ledgers")

    clone = tmp_path / "ci" / "runner" / "work" / "reader"
    clone.parent.mkdir(parents=True)
    repo.git("clone", "-q", str(first), str(clone))
    shutil.rmtree(first)  # the recording checkout is gone: its paths lead nowhere
    green = run_cli("replay", cwd=clone)
    assert green.code == 0, green.output
    assert green.stdout.splitlines()[-1] == "green: 3 cases: 3 passed", green.stdout

    red = red_after_change(
        clone, "src/reader/__init__.py", "{count_lines(path)} line(s)", "{count_lines(path)} lines"
    )
    assert str(clone.resolve()) in red.stdout  # today's paths, in the call and the outcome


def test_a_folder_too_short_to_stand_alone_is_never_a_root() -> None:
    from lockstep.oracles.ledger.relocation import relocation, root_marker

    assert root_marker(Path("/app")) is None  # "/app/" could be a URL's path
    assert root_marker(Path("/home/dev/project")) == b"/home/dev/project/"
    assert relocation(None, Path("/srv/ci/project")) is None
    for edited in ("/", "", "relative/folder/of/a/project", "/app"):  # never written so
        assert relocation(edited, Path("/srv/ci/project")) is None
    assert relocation("/home/dev/project", Path("/home/dev/project")) is None
    assert relocation("/home/dev/project", Path("/srv/ci/project")) == (
        "/home/dev/project/",
        "/srv/ci/project/",
    )


def test_a_refresh_in_a_clone_moves_the_rows_it_keeps_to_the_clones_folder(
    tmp_path: Path,
) -> None:
    """Refreshed from a clone, a ledger was written again with the rows it kept as the
    first checkout recorded them and no ``root`` for them (no row named the clone, or one
    re-recorded there did): replay read the first checkout's files, green for a change to
    the clone's (cssutils: 22 ledgers written so by a refresh of one test module)."""
    one = (
        "from pathlib import Path\n\nfrom reader import describe\n\n\n"
        "def test_one():\n"
        "    assert describe(str(Path(__file__).parent / 'data' / 'three.txt'))\n"
    )
    first, repo = _reader_repo(tmp_path, **{"tests/test_one.py": one})
    assert pytest_in(first, "--lockstep-record", "-q", "tests").code == 0
    repo.commit("ledgers")
    clone = tmp_path / "ci" / "runner" / "work" / "reader"
    clone.parent.mkdir(parents=True)
    repo.git("clone", "-q", str(first), str(clone))

    # only describe(three.txt) is recorded again: describe(missing.txt) is kept
    again = pytest_in(clone, "--lockstep-record", "--lockstep-refresh", "-q", "tests/test_one.py")
    assert again.code == 0, again.output
    lines = (clone / "lockstep/reader.describe.ledger.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    assert header.get("root") == str(clone.resolve()), header
    assert not any(str(first.resolve()) in line for line in lines[1:]), lines
    assert run_cli("replay", cwd=clone).code == 0
    # the clone's file now exists where the kept row looks: read there, not in the first
    (clone / "tests/data/missing.txt").write_text("one line\n")
    red = run_cli("replay", "reader.describe", cwd=clone)
    assert red.code == 1, red.output
