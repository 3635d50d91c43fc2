"""A drifted value of the project's own class shows where it differs.

``pprint`` prints such an object through its ``__repr__``: one line of thousands of
characters (or ``<pkg.Doc object at 0x...>``), so the drift said that two long lines
differ and no more.  Its diff now falls back to the frozen form, one key or item a line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import pytest_in, red_after_change, write_files

DOCS = """
class Doc:
    def __init__(self, rows, tail):
        self.rows = rows
        self.tail = tail


class Page:
    def __init__(self, rows, tail):
        self.rows = rows
        self.tail = tail

    def __repr__(self):
        return f"Page(rows={self.rows!r}, tail={self.tail!r})"


def build(n):
    return Doc([{"i": i, "label": "item-%d" % i} for i in range(n)], n)


def page(n):
    return Page([{"i": i, "label": "item-%d" % i} for i in range(n)], n)
"""

TESTS = """
from docs import build, page


def test_build():
    assert len(build(60).rows) == 60
    assert page(60).tail == 60
"""


def _recorded(root: Path) -> None:
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "docs"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/docs/__init__.py": DOCS,
            "tests/test_docs.py": TESTS,
        },
    )
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output


@pytest.mark.parametrize(
    "cls",
    ["Doc", "Page"],  # no __repr__ of its own; one that prints it on one line
)
def test_a_drifted_object_of_the_projects_class_shows_the_line_that_moved(
    tmp_path: Path, cls: str
) -> None:
    root = tmp_path / "docs"
    _recorded(root)
    line = f'    return {cls}([{{"i": i, "label": "item-%d" % i}} for i in range(n)], n)\n'
    red = red_after_change(root, "src/docs/__init__.py", line, line.replace("], n)", "], n + 1)"))
    assert "+++ replayed" in red.stdout, red.stdout
    assert '-        "tail": 60\n' in red.stdout, red.stdout
    assert '+        "tail": 61\n' in red.stdout, red.stdout
    changed = [x for x in red.stdout.splitlines() if x.lstrip()[:1] in "+-"]
    assert max(map(len, changed)) < 100, changed


RENDER = """
def render(n):
    return "<p>" + "".join("&#%d;" % i for i in range(n)) + "</p>"
"""


def test_a_long_text_without_line_breaks_shows_the_piece_that_changed(tmp_path: Path) -> None:
    """Python-Markdown renders a page as one string: a 32 KB line each side, and the drift's
    diff was empty (no place shown where they differ)."""
    root = tmp_path / "pages"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "pages"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/pages/__init__.py": RENDER,
            "tests/test_pages.py": (
                "from pages import render\n\n\ndef test_render():\n"
                "    assert render(3000).startswith('<p>&#0;')\n"
            ),
        },
    )
    assert pytest_in(root, "--lockstep-record", "-q", "tests").code == 0
    red = red_after_change(
        root, "src/pages/__init__.py", '"&#%d;" % i', '"&#%d;" % (i + (i == 1500))'
    )
    changed = [x for x in red.stdout.splitlines() if x.lstrip()[:1] in "+-" and "&#" in x]
    assert len(changed) == 2, red.stdout[-3000:]
    assert "&#1500;" in changed[0] and "&#1501;&#1501;" in changed[1], changed
    assert max(map(len, changed)) < 140, changed


HIDING = """
class Tag:
    def __init__(self, name, colour):
        self.name = name
        self.colour = colour

    def __repr__(self):
        return f"Tag({self.name!r})"  # the colour left out


def tag(name):
    return Tag(name, "red")


def banner(n):
    return "=" * n + " end"


class Pair:
    def __init__(self, a):
        self.a = a

    def __getstate__(self):
        return ({"a": self.a}, None)

    def __setstate__(self, state):
        self.a = (state[0] or state[1])["a"]


def pair(a):
    return Pair(a)
"""


def test_values_that_print_alike_show_their_frozen_forms(tmp_path: Path) -> None:
    """A ``__repr__`` that leaves out what changed printed the drift's two sides alike, and
    no diff: the sides and the diff are the frozen forms then."""
    root = tmp_path / "tags"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "tags"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/tags/__init__.py": HIDING,
            "tests/test_tags.py": (
                "from tags import banner, pair, tag\n\n\ndef test_tag():\n"
                "    assert tag('x').name == 'x'\n"
                "    assert pair(1).a == 1\n"
                "    assert banner(100_000).endswith('end')\n"
            ),
        },
    )
    assert pytest_in(root, "--lockstep-record", "-q", "tests").code == 0
    red = red_after_change(root, "src/tags/__init__.py", '"red")', '"blue")', "tags.tag")
    lines = [x.strip() for x in red.stdout.splitlines()]
    assert any(x.startswith("-") and '"red"' in x for x in lines), red.stdout  # the diff
    assert any(x.startswith("+") and '"blue"' in x for x in lines), red.stdout
    # a state whose two halves swap places renders alike: the sides are the frozen forms
    swapped = 'return (None, {"a": self.a})'
    red = red_after_change(
        root, "src/tags/__init__.py", 'return ({"a": self.a}, None)', swapped, "tags.pair"
    )
    expected = next(x for x in red.stdout.splitlines() if "expected returned" in x)
    got = next(x for x in red.stdout.splitlines() if "got returned" in x)
    assert expected.split("returned", 1)[1] != got.split("returned", 1)[1], red.stdout
    assert '"$obj"' in expected, red.stdout


def test_a_huge_drifted_value_is_cut_around_its_first_difference(tmp_path: Path) -> None:
    root = tmp_path / "tags"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "tags"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/tags/__init__.py": HIDING,
            "tests/test_tags.py": (
                "from tags import banner\n\n\ndef test_banner():\n"
                "    assert banner(100_000).endswith('end')\n"
            ),
        },
    )
    assert pytest_in(root, "--lockstep-record", "-q", "tests").code == 0
    red = red_after_change(root, "src/tags/__init__.py", '" end"', '" END"', "tags.banner")
    assert len(red.stdout) < 60_000, len(red.stdout)
    assert "= end" in red.stdout and "= END" in red.stdout, red.stdout[-2000:]
