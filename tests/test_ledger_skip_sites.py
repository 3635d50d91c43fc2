"""A skipped call names the test line that made it, also when what was skipped is an item
a relayed generator yielded: the site named lockstep's own ``iter_results.py``."""

from __future__ import annotations

from pathlib import Path

from helpers import recorded

MODS = """
import os


def modules():
    yield os
"""

TESTS = """
from mods import modules


def test_modules():
    assert len(list(modules())) == 1
"""


def test_a_skipped_generator_item_names_the_tests_line(tmp_path: Path) -> None:
    root = tmp_path / "mods"
    run = recorded(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "mods"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/mods/__init__.py": MODS,
            "tests/test_mods.py": TESTS,
        },
    )
    skipped = [line for line in run.output.splitlines() if "result item 0" in line]
    assert skipped, run.output
    assert all("(called from tests/test_mods.py:5)" in line for line in skipped), skipped
    assert "iter_results.py" not in run.output
