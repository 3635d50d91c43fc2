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
