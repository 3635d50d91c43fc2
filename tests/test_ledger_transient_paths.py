"""A row whose input names a path in pytest's temporary folder is refused at record: the
folder is there when the session's end verifies it and gone by a later replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import pytest_in, rows_of, run_cli, write_files

FILES = {
    "lockstep.toml": '[[ledger]]\nname = "lines"\ntarget = "report:count_lines"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
    "report.py": (
        "def count_lines(path):\n"
        "    try:\n"
        "        with open(path, encoding='utf-8') as f:\n"
        "            return sum(1 for _ in f)\n"
        "    except OSError:\n"
        "        return -1\n"
    ),
    "data/kept.txt": "a\nb\nc\n",
    "tests/test_report.py": (
        "from report import count_lines\n\n\n"
        "def test_a_kept_file():\n"
        "    assert count_lines('data/kept.txt') == 3\n\n\n"
        "def test_a_temporary_file(tmp_path):\n"
        "    out = tmp_path / 'out.txt'\n"
        "    out.write_text('x\\ny\\n')\n"
        "    assert count_lines(str(out)) == 2\n"
    ),
}


@pytest.mark.parametrize("how", ["default", "basetemp", "xdist"])
def test_a_row_naming_a_tmp_path_is_refused_and_the_replay_stays_green(
    tmp_path: Path, how: str
) -> None:
    root = tmp_path / "project"
    write_files(root, FILES)
    args = ["--lockstep-record", "-q", "tests"]
    if how == "basetemp":
        args += ["--basetemp", str(tmp_path / "base")]
    if how == "xdist":
        args += ["-n", "2"]
    recorded = pytest_in(root, *args, xdist=how == "xdist")
    assert recorded.code == 0, recorded.output
    assert "pytest's temporary folder" in recorded.output, recorded.output
    assert "tests/test_report.py::test_a_temporary_file" in recorded.output
    rows = rows_of(root / "lockstep/lines.ledger.jsonl")
    assert [row.args for row in rows] == [["data/kept.txt"]]
    # the temporary folder gone, as pytest removes it a few sessions later
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output


NESTING = {
    "lockstep.toml": '[[ledger]]\nname = "depth"\ntarget = "nesting:depth"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
    "nesting.py": (
        "def depth(text):\n"
        "    try:\n"
        "        return _depth(text, 0)\n"
        "    except RecursionError:\n"
        "        raise ValueError('nested too deeply') from None\n\n\n"
        "def _depth(text, at):\n"
        "    if not text.startswith('['):\n"
        "        return at\n"
        "    return _depth(text[1:], at + 1)\n"
    ),
    "tests/test_nesting.py": (
        "import sys\n\nimport pytest\n\nfrom nesting import depth\n\n\n"
        "@pytest.fixture\n"
        "def low_limit():\n"
        "    before = sys.getrecursionlimit()\n"
        "    sys.setrecursionlimit(150)\n"
        "    yield\n"
        "    sys.setrecursionlimit(before)\n\n\n"
        "def test_shallow():\n"
        "    assert depth('[[x') == 2\n\n\n"
        "def test_too_deep(low_limit):\n"
        "    with pytest.raises(ValueError):\n"
        "        depth('[' * 5000)\n"
    ),
}


def test_a_row_recorded_under_a_recursion_limit_the_test_set_is_refused(tmp_path: Path) -> None:
    """sqlparse's ``test_max_recursion`` sets the limit to 100 and parses 1,000 brackets:
    recorded, the call raised at once; replayed at the interpreter's limit it recursed for
    27 s (and on a slower machine would pass the ledger's timeout), or may not raise."""
    root = tmp_path / "project"
    write_files(root, NESTING)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert "recursion limit changed (" in recorded.output, recorded.output
    assert "-> 150)" in recorded.output
    assert "tests/test_nesting.py::test_too_deep" in recorded.output
    rows = rows_of(root / "lockstep/depth.ledger.jsonl")
    assert [row.args for row in rows] == [["[[x"]]
    assert run_cli("replay", cwd=root).code == 0


def test_rows_recorded_under_a_raised_recursion_limit_are_verified_not_refused(
    tmp_path: Path,
) -> None:
    """Hypothesis raises the limit around every example it runs: natsort's property tests
    had all 1,447 of their rows refused.  A row that needs the raised depth does not
    reproduce at the interpreter's own limit, and verification refuses that one."""
    root = tmp_path / "raised"
    files = dict(NESTING)
    files["tests/test_nesting.py"] = (
        "import sys\n\nimport pytest\n\nfrom nesting import depth\n\n\n"
        "@pytest.fixture\n"
        "def high_limit():\n"
        "    before = sys.getrecursionlimit()\n"
        "    sys.setrecursionlimit(before + 4000)\n"
        "    yield\n"
        "    sys.setrecursionlimit(before)\n\n\n"
        "def test_shallow(high_limit):\n"
        "    assert depth('[[x') == 2\n\n\n"
        "def test_deep(high_limit):\n"
        "    assert depth('[' * 2500) == 2500\n"
    )
    write_files(root, files)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    # the shallow call is kept; the deep one needed the raised limit: at the
    # interpreter's own it raises, so it does not reproduce and is not written
    assert [row.args for row in rows_of(root / "lockstep/depth.ledger.jsonl")] == [["[[x"]]
    assert "does not reproduce in a fresh interpreter" in recorded.output, recorded.output
    assert "test_deep" in recorded.output
    assert run_cli("replay", cwd=root).code == 0
