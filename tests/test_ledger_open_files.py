"""A file open for reading, handed to a target, freezes as the in-memory file that reads
the same: a parser's calls with a file are recorded, replay green unchanged, and a change
to what the parser does with the lines is red (unidiff's ``PatchSet(open(path))`` was
skipped in 33 of its 35 calls, and two one-line changes of its parser replayed green)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import pytest_in, red_after_change, rows_of, run_cli, write_files
from lockstep import canon

PARSER = """
import codecs


class Entries(list):
    def __init__(self, f, encoding=None):
        super().__init__()
        self.header = None
        for raw in f:
            line = raw.decode(encoding) if encoding else raw
            line = line.rstrip("\\n")
            if self.header is None:
                self.header = line
            elif line:
                key, _, value = line.partition("=")
                self.append((key.strip(), value.strip()))


def count_lines(f):
    return sum(1 for _ in f)


def first_word(f):
    return f.readline().split()[0]
"""

TESTS = """
import codecs

from ini import Entries, count_lines, first_word


def test_text(tmp_path):
    path = tmp_path / "a.ini"
    path.write_text("[top]\\nname = lockstep\\nsize=3\\n")
    with open(path) as f:
        assert Entries(f) == [("name", "lockstep"), ("size", "3")]
    with codecs.open(path, "r", "utf-8") as f:
        assert Entries(f).header == "[top]"
    with open(path, "rb") as f:
        assert len(Entries(f, encoding="utf-8")) == 2
    with open(path) as f:
        assert first_word(f) == "[top]"
        assert count_lines(f) == 2  # the rest: the file handed on where the last call left it
"""


def _recorded(tmp_path: Path) -> Path:
    root = tmp_path / "ini"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "ini"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/ini/__init__.py": PARSER,
            "tests/test_ini.py": TESTS,
        },
    )
    run = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert run.code == 0, run.output
    assert "no call skipped" in run.output, run.output
    return root


def test_calls_given_a_file_are_recorded_and_replay_green(tmp_path: Path) -> None:
    root = _recorded(tmp_path)
    rows = rows_of(root / "lockstep/ini.Entries.__init__.ledger.jsonl")
    assert len(rows) == 2, rows  # text and codecs (one row: the same text); binary
    held = json.dumps([r.args for r in rows])
    assert "$stringio" in held and "$bytesio" in held
    counted = rows_of(root / "lockstep/ini.count_lines.ledger.jsonl")
    assert [r.args[0]["$stringio"][2] for r in counted] == [6], counted  # read past line one
    assert [r.mutated for r in counted] != [None], counted  # and to its end by the call
    replay = run_cli("replay", cwd=root)
    assert replay.code == 0, replay.output


def test_a_change_to_how_the_lines_are_read_is_red(tmp_path: Path) -> None:
    root = _recorded(tmp_path)
    red = red_after_change(
        root, "src/ini/__init__.py", 'line.partition("=")', 'line.partition(":")'
    )
    assert "ini.Entries.__init__" in red.stdout, red.stdout


def test_a_file_read_midway_by_next_is_skipped_as_before(tmp_path: Path) -> None:
    root = _recorded(tmp_path)
    (root / "tests/test_next.py").write_text(
        "from ini import count_lines\n\n\ndef test_next(tmp_path):\n"
        "    path = tmp_path / 'b.txt'\n    path.write_text('a\\nb\\nc\\n')\n"
        "    with open(path) as f:\n        next(f)\n        assert count_lines(f) == 2\n"
    )
    run = pytest_in(root, "--lockstep-record", "--lockstep-new-only", "-q", "tests")
    assert run.code == 0, run.output
    assert "where it is read is not known" in run.output, run.output
    assert run_cli("replay", cwd=root).code == 0


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=200
    ),
    read=st.integers(0, 50),
)
def test_a_text_file_thaws_reading_what_the_file_reads(tmp_path_factory, text, read) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("f") / "f.txt"
    path.write_text(text, encoding="utf-8", newline="")
    with open(path, encoding="utf-8") as f:
        f.read(read)
        frozen = canon.dumps(f)
        rest = f.read()  # the file is where it was
        back = canon.loads(frozen)
        assert back.read() == rest
        back.seek(0)
        f.seek(0)
        assert back.readlines() == f.readlines()


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=300), read=st.integers(0, 80))
def test_a_binary_file_thaws_reading_what_the_file_reads(tmp_path_factory, data, read) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("f") / "f.bin"
    path.write_bytes(data)
    with open(path, "rb") as f:
        f.read(read)
        frozen = canon.dumps(f)
        rest = f.read()
        back = canon.loads(frozen)
        assert back.read() == rest
        back.seek(0)
        f.seek(0)
        assert list(back) == list(f)
