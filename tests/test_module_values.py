"""Modules kept or passed as values: ``{"$module": "re"}``.

lark 1.2.2 keeps the regular-expression module it chose (``re``, or ``regex`` when
installed) in its ``LexerConf``: every call handed one was skipped ("cannot freeze a
builtins.module"), 56% of its suite's calls.  Here a small lexer of that shape records,
replays green and goes red for a change seen only through such a call; a module name
thaws to the module the process imported and never imports one.
"""

from __future__ import annotations

import math
import os
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from helpers import recorded, red_after_change, refused_in_one_line, rows_of, run_cli
from lockstep import canon
from lockstep.canon.text import value_text
from lockstep.errors import CanonError, ThawError

LEXER = """
import re


class LexerConf:
    def __init__(self, patterns, re_module=re):
        self.patterns = patterns
        self.re_module = re_module


def tokens(conf, text):
    found = []
    for name, pattern in conf.patterns:
        for match in conf.re_module.finditer(pattern, text):
            found.append((match.start(), name, match.group()))
    return sorted(found)
"""

TESTS = """
import re

from lexer import LexerConf, tokens


def test_tokens():
    conf = LexerConf([("NUM", r"\\d+"), ("WORD", r"[a-z]+")], re)
    assert tokens(conf, "ab 12 c") == [(0, "WORD", "ab"), (3, "NUM", "12"), (6, "WORD", "c")]
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "lexer"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/lexer/__init__.py": LEXER,
    "tests/test_lexer.py": TESTS,
}


def test_an_object_keeping_its_module_is_recorded_and_guarded(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "no call skipped" in run.output and "cannot freeze" not in run.output, run.output
    rows = rows_of(root / "lockstep/lexer.tokens.ledger.jsonl")
    assert '{"$module": "re"}' in str(rows[0].args).replace("'", '"'), rows[0].args
    assert run_cli("replay", cwd=root).code == 0
    red = red_after_change(root, "src/lexer/__init__.py", "match.group()", "match.group().upper()")
    assert "DRIFT lexer.tokens" in red.stdout, red.stdout


def test_a_module_round_trips_to_itself() -> None:
    frozen = canon.encode({"module": re, "items": [math]})
    assert frozen == {"module": {"$module": "re"}, "items": [{"$module": "math"}]}
    assert canon.decode(frozen)["module"] is re
    assert value_text(frozen["module"]) == "<module 're'>"


@pytest.mark.parametrize("module", [os, sys, types.ModuleType("made_by_hand")])
def test_a_module_other_than_the_pure_ones_is_refused(module: types.ModuleType) -> None:
    with pytest.raises(CanonError, match=r"only the project.s own modules and those whose"):
        canon.encode([module])


def test_a_module_the_replayed_code_did_not_import_is_an_error_of_that_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "statistics", raising=False)
    with pytest.raises(ThawError, match="has not imported here"):
        canon.decode({"v": {"$module": "statistics"}})
    assert "statistics" not in sys.modules


@pytest.mark.parametrize(
    ("document", "says"),
    [
        # a forged ledger handing os to ``seq.remove(item)`` would delete a file
        ({"$module": "os"}, "not one of the modules a value may hold"),
        ({"$module": "shutil"}, "not one of the modules a value may hold"),
        ({"$module": "os; import x"}, "a module's dotted name"),
        ({"$module": ["re"]}, "malformed $module value"),
        ({"$module": ""}, "a module's dotted name"),
    ],
)
def test_a_hostile_module_name_is_a_one_line_error_and_imports_nothing(
    document: Any, says: str
) -> None:
    message = refused_in_one_line(document)
    assert says in message, message


RENDERER = {
    "lockstep.toml": '[[ledger]]\npackage = "mdown"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/mdown/__init__.py": "from mdown.main import Renderer\n",
    "src/mdown/utils.py": "def escape(text):\n    return text.replace('&', '&amp;')\n",
    "src/mdown/main.py": (
        "from mdown import utils\n\n\n"
        "class Renderer:\n"
        "    def __init__(self):\n"
        "        self.utils = utils  # as markdown-it's MarkdownIt keeps its utils module\n\n"
        "    def render(self, text):\n"
        "        return '<p>' + self.utils.escape(text) + '</p>'\n"
    ),
    "tests/test_render.py": (
        "from mdown import Renderer\n\n\n"
        "def test_render():\n"
        "    assert Renderer().render('a & b') == '<p>a &amp; b</p>'\n"
    ),
}


def test_an_object_keeping_a_module_of_the_project_is_recorded(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, RENDERER)
    assert "cannot freeze" not in run.output, run.output
    rows = rows_of(root / "lockstep/mdown.main.Renderer.render.ledger.jsonl")
    assert '{"$module": "mdown.utils"}' in str(rows[0].args).replace("'", '"'), rows[0].args
    assert run_cli("replay", cwd=root).code == 0
    red_after_change(root, "src/mdown/utils.py", "'&amp;'", "'&#38;'", "mdown.main.Renderer.render")
