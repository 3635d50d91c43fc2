"""A ledger beyond a package's public surface (a constructor, a private helper) is an
oracle once recorded, and stays one when its file goes: the oracle folder lists it.

Told by its file alone, deleting the file -- or putting a folder in its place -- dropped
the oracle, and replay and review went on green with its cases gone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import GitRepo, pytest_in, recorded, run_cli

SHAPES = """
class Square:
    def __init__(self, side):
        self.side = _checked(side)

    def area(self):
        return self.side * self.side


def _checked(side):
    if side < 0:
        raise ValueError(f"negative side: {side}")
    return side * 2 // 2
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "shapes"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/shapes/__init__.py": "",
    "src/shapes/square.py": SHAPES,
    "tests/test_square.py": (
        "import pytest\n\nfrom shapes.square import Square, _checked\n\n\n"
        "def test_area():\n"
        "    assert Square(3).area() == 9\n"
        "    assert Square(4).area() == 16\n\n\n"
        "def test_checked():\n"
        "    assert _checked(5) == 5\n"
        "    with pytest.raises(ValueError):\n"
        "        _checked(-1)\n"
    ),
}

INIT = "lockstep/shapes.square.Square.__init__.ledger.jsonl"
LIST = "lockstep/beyond-surface.json"


def _recorded(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "project")
    recorded(repo.root, FILES)
    repo.commit("shapes, recorded")
    return repo


def test_the_recording_lists_what_it_wrote_beyond_the_surface(tmp_path: Path) -> None:
    root = _recorded(tmp_path).root
    listed = json.loads((root / LIST).read_text())
    assert listed == {
        "ledgers": ["shapes.square.Square.__init__", "shapes.square._checked"],
        "lockstep_beyond_surface": 1,
    }
    assert run_cli("replay", cwd=root).code == 0


def test_a_deleted_ledger_beyond_the_surface_is_red_and_review_fails(tmp_path: Path) -> None:
    repo = _recorded(tmp_path)
    root = repo.root
    (root / INIT).unlink()
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "shapes.square.Square.__init__" in red.stdout
    assert "is missing, but beyond-surface.json lists it as recorded (deleted?)" in red.stdout
    status = run_cli("status", cwd=root)
    assert status.code == 0, status.output  # replay is the gate; status says what it sees
    assert "listed as recorded (deleted?)" in status.stdout, status.stdout

    repo.commit("drop a ledger")  # an oracle-only commit: the guard allows it, replay does not
    review = run_cli("review", "HEAD~1..HEAD", cwd=root)
    assert review.code == 1, review.output

    # the suite still calls it: the next recording writes it again
    again = pytest_in(root, "--lockstep-record", "--lockstep-new-only", "-q", "tests")
    assert again.code == 0, again.output
    assert (root / INIT).is_file()
    assert run_cli("replay", cwd=root).code == 0


def test_dropping_one_from_the_list_too_is_an_oracle_change_the_guard_sees(
    tmp_path: Path,
) -> None:
    repo = _recorded(tmp_path)
    root = repo.root
    (root / INIT).unlink()
    (root / LIST).write_text(
        json.dumps({"ledgers": ["shapes.square._checked"], "lockstep_beyond_surface": 1})
    )
    assert run_cli("replay", cwd=root).code == 0  # as when a [[ledger]] table is removed
    (root / "src/shapes/square.py").write_text(SHAPES.replace("side * side", "side + side"))
    guard = run_cli("guard", cwd=root)
    assert guard.code == 1, guard.output
    assert LIST in guard.output


def test_a_folder_or_link_in_a_listed_ledgers_place_is_an_error(tmp_path: Path) -> None:
    root = _recorded(tmp_path).root
    (root / INIT).unlink()
    (root / INIT).mkdir()
    folder = run_cli("replay", cwd=root)
    assert folder.code == 2, folder.output
    assert folder.stderr.count("\n") == 1 and INIT in folder.stderr

    (root / INIT).rmdir()
    (root / INIT).symlink_to("/etc/hostname")
    link = run_cli("replay", cwd=root)
    assert link.code == 2, link.output
    assert link.stderr.count("\n") == 1 and INIT in link.stderr

    (root / INIT).unlink()
    (root / INIT).symlink_to(root / "nowhere")  # a link to nothing is a link too
    dangling = run_cli("replay", cwd=root)
    assert dangling.code == 2, dangling.output
    assert "symbolic link" in dangling.stderr and INIT in dangling.stderr


def test_a_list_that_cannot_be_read_is_one_line_naming_it(tmp_path: Path) -> None:
    root = _recorded(tmp_path).root
    (root / INIT).unlink()
    kept = (root / LIST).read_bytes()
    for bad in (b'{"ledgers": 3, "lockstep_beyond_surface": 1}', b"{", b"\xff\xfe"):
        (root / LIST).write_bytes(bad)
        run = run_cli("replay", cwd=root)
        assert run.code == 2, run.output
        assert run.stderr.count("\n") == 1 and "beyond-surface.json" in run.stderr
    (root / LIST).write_bytes(
        kept.replace(b'"lockstep_beyond_surface": 1', b'"lockstep_beyond_surface": 9')
    )
    run = run_cli("replay", cwd=root)
    assert run.code == 2 and "not a version this lockstep reads" in run.stderr, run.output
    assert (root / LIST).read_bytes() != kept  # nothing rewrote it


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.one_of(st.binary(max_size=80), st.text(max_size=80).map(str.encode)))
def test_reading_the_list_gives_names_or_one_error(tmp_path: Path, data: bytes) -> None:
    from lockstep.errors import DataError
    from lockstep.store.beyond_surface import FILE_NAME, listed

    folder = tmp_path / "oracles"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    (folder / FILE_NAME).write_bytes(data)
    try:
        names = listed(folder)
    except DataError as e:
        assert "\n" not in str(e) and FILE_NAME in str(e)
    else:
        assert all(isinstance(n, str) for n in names)


def test_under_pytest_a_list_that_cannot_be_read_is_a_usage_error(tmp_path: Path) -> None:
    root = _recorded(tmp_path).root
    (root / LIST).write_text('{"ledgers": [')
    replayed = pytest_in(root, "--lockstep", "-q")
    assert replayed.code == 4, replayed.output  # pytest's usage error, not INTERNALERROR
    assert "INTERNALERROR" not in replayed.output and "Traceback" not in replayed.output
    assert "beyond-surface.json" in replayed.output
    again = pytest_in(root, "--lockstep-record", "--lockstep-new-only", "-q", "tests")
    assert "INTERNALERROR" not in again.output and "Traceback" not in again.output
    assert again.code != 0 and "beyond-surface.json" in again.output, again.output
    assert (root / LIST).read_text() == '{"ledgers": ['  # left as it was


def test_a_list_too_large_is_refused_before_it_is_read(tmp_path: Path) -> None:
    from lockstep.errors import DataError
    from lockstep.store.beyond_surface import FILE_NAME, MAX_BYTES, listed

    (tmp_path / FILE_NAME).write_bytes(b" " * (MAX_BYTES + 1))
    try:
        listed(tmp_path)
    except DataError as e:
        assert "more than a list of ledger names takes" in str(e)
    else:
        raise AssertionError("a list past the limit was read")


def test_under_pytest_a_deleted_listed_ledger_names_the_recording_command(
    tmp_path: Path,
) -> None:
    root = _recorded(tmp_path).root
    (root / INIT).unlink()
    replayed = pytest_in(root, "--lockstep", "-q")
    # one failed item, as one ERROR of lockstep replay; the project's tests still run
    # (a usage error, exit 4, ran none of them)
    assert replayed.code == 1, replayed.output
    assert "shapes.square.Square.__init__" in replayed.output
    assert "run 'pytest --lockstep-record'" in replayed.output
    assert "1 failed" in replayed.output and " passed" in replayed.output


def test_a_listed_name_that_is_no_ledger_name_is_one_line(tmp_path: Path) -> None:
    """A hand-edited list (a path, a name with a slash) is refused: a recording writes only
    ledger names into it."""
    root = _recorded(tmp_path).root
    for bad in ("../../../etc/passwd", "/etc/passwd", "shapes/square"):
        (root / LIST).write_text(
            json.dumps({"ledgers": ["shapes.square._checked", bad], "lockstep_beyond_surface": 1})
        )
        run = run_cli("replay", cwd=root)
        assert run.code == 2, run.output
        assert run.stderr.count("\n") == 1, run.stderr
        assert (
            "beyond-surface.json: ledgers[1]" in run.stderr and "not a ledger's name" in run.stderr
        )


def test_a_listed_member_the_package_no_longer_has_is_red(tmp_path: Path) -> None:
    root = _recorded(tmp_path).root
    listed = json.loads((root / LIST).read_text())
    listed["ledgers"].append("shapes.square._gone")
    (root / LIST).write_text(json.dumps(listed))
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "no longer has 'square._gone'" in red.stdout and "still lists it" in red.stdout
