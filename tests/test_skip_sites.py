"""A skipped call names the test that made it, not the library code it went through.

parsimonious's ``Node.__eq__`` is called by ``unittest``'s ``assertEqual``: its skipped
calls were said to come from ``.../lib/python3.11/unittest/case.py:863``, a line of the
standard library nobody can act on."""

from __future__ import annotations

from pathlib import Path

from helpers import recorded

PACKAGE = """
class Guarded:
    def __init__(self, value):
        self.value = value
        self.pending = map(str, [value])  # an iterator its items exist only as it is read

    def __eq__(self, other):
        return isinstance(other, Guarded) and self.value == other.value

    __hash__ = None
"""

TESTS = """
import unittest

from guarded import Guarded


class TestGuarded(unittest.TestCase):
    def test_equal(self):
        self.assertEqual(Guarded(1), Guarded(1))
"""


def test_a_call_made_through_unittest_names_the_test_line(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(
        root,
        {
            "lockstep.toml": '[[ledger]]\nname = "eq"\ntarget = "guarded:Guarded.__eq__"\n',
            "guarded.py": PACKAGE,
            "tests/test_guarded.py": TESTS,
        },
    )
    lines = [line for line in run.output.splitlines() if "called from" in line]
    assert lines, run.output
    assert all("tests/test_guarded.py:8" in line for line in lines), run.output
    assert not any("unittest" in line.split("called from", 1)[1] for line in lines), run.output
