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
