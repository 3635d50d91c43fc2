"""``cli.output.Lines`` writes what rich's console writes, without loading rich for plain lines.

A green ``lockstep replay`` in a pipe prints its summary through :class:`Lines`; the
selftest transcripts and every user's CI log hold rich's rendering, so the plain path
must give the same bytes for every string it takes (and hand the rest to rich).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.text import Text

from helpers import write_files
from lockstep.cli.app import console
from lockstep.cli.output import Lines

# Text rich rewrites mixed with text it does not: markup, emoji codes, tabs, control
# characters, trailing spaces, wide and combining characters, long lines.
PIECES = [
    *"ab :[]/\\#\n\t\r\x07\x1b\x7f",
    *("é", "…", "字", "\u0301", "✓", ":smile:", "[bold]", "[/]", "x" * 170),
]
texts = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)

NO_TERMINAL_ENV = {
    k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")
}


def written(show: Any) -> str:
    """What ``show()`` writes to a stdout that is a pipe (no terminal), or what it raised
    (rich refuses bad markup: so must the plain path, by handing such text to rich)."""
    buffer = io.StringIO()
    with (
        mock.patch.dict(os.environ, NO_TERMINAL_ENV, clear=True),
        contextlib.redirect_stdout(buffer),
    ):
        try:
            show()
        except Exception as e:
            return f"raised {type(e).__name__}: {e}"
    return buffer.getvalue()


@given(texts, st.sampled_from(["\n", ""]), st.sampled_from([None, False]))
@settings(max_examples=500)
def test_print_writes_what_rich_writes(text: str, end: str, markup: bool | None) -> None:
    ours = written(lambda: Lines().print(text, end=end, markup=markup))
    rich = written(lambda: console().print(text, end=end, markup=markup))
    assert ours == rich


@given(texts)
@settings(max_examples=500)
def test_literal_writes_what_rich_writes_for_text(text: str) -> None:
    ours = written(lambda: Lines().literal(text))
    rich = written(lambda: console().print(Text(text)))
    assert ours == rich


def test_lines_off_a_terminal_is_no_terminal_and_hands_styled_text_to_rich() -> None:
    def show() -> None:
        out = Lines()
        assert not out.is_terminal
        out.print(Text("styled", style="bold red"))

    assert written(show) == "styled\n"


def test_a_green_replay_in_a_pipe_loads_no_rich(tmp_path: Path) -> None:
    """The point of the plain path: a green replay of one oracle prints without rich."""
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[corpus]]\nname = "rows"\nfixtures = "fx/*.txt"\n'
            'render = "h:render"\n',
            "h.py": "def render(path):\n    return {'text': path.read_text()}\n",
            "fx/a.txt": "alpha",
        },
    )
    env = {**NO_TERMINAL_ENV, "PYTHONPATH": str(tmp_path)}
    subprocess.run(
        [sys.executable, "-m", "lockstep", "record", "rows"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
    )
    probe = (
        "import runpy, sys\n"
        "sys.argv = ['lockstep', 'replay']\n"
        "try:\n"
        "    runpy.run_module('lockstep', run_name='__main__')\n"
        "except SystemExit as e:\n"
        "    code = e.code\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'rich')\n"
        "print('exit', code, 'rich', loaded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    assert done.stdout == "green: 1 case: 1 passed\nexit 0 rich []\n"


def test_an_output_encoding_without_lockstep_s_marks_is_written_plainer(tmp_path: Path) -> None:
    """``PYTHONIOENCODING=ascii`` (or a Latin-1 terminal): the summary's ``·`` and ``…``
    and a drift's recorded text ended a replay of unchanged code with a traceback, exit
    1.  Written plainer now: lockstep's marks in ASCII, any other character escaped."""
    from helpers import pytest_in, run_cli

    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\npackage = "greet"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/greet/__init__.py": "def hello(name):\n    return f'héllo · {name}'\n",
            "tests/test_greet.py": (
                "from greet import hello\n\n\ndef test_hello():\n"
                "    assert hello('x').endswith('x')\n"
            ),
        },
    )
    assert pytest_in(tmp_path, "--lockstep-record", "-q", "tests").code == 0
    for encoding in ("ascii", "latin-1"):
        env = {"PYTHONIOENCODING": encoding}
        for command in (["replay"], ["status"], ["replay", "-v"]):
            run = run_cli(*command, cwd=tmp_path, env=env)
            assert run.code == 0, (encoding, command, run.output)
            assert "Traceback" not in run.output, run.output
    source = tmp_path / "src/greet/__init__.py"
    source.write_text(source.read_text().replace("héllo", "hallo"))
    red = run_cli("replay", cwd=tmp_path, env={"PYTHONIOENCODING": "ascii"})
    assert red.code == 1, red.output
    assert "h\\xe9llo" in red.stdout and "Traceback" not in red.output, red.output
