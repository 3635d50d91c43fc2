"""A test's own subclass of ``str``, ``int`` or ``float`` is skipped by name, not frozen as
its base value.

Frozen as its base, ``kind(Loud("a"))`` and ``kind("a")`` were one input with two
outcomes: both rows were refused as nondeterministic, so the plain call lost its row too
(portion's suite passes an ``int`` subclass whose hash raises; its ``Interval.__hash__``
rows went that way).  A fresh interpreter cannot import the test's class anyway.
"""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, rows_of, run_cli, write_files

KINDS = """
def kind(value):
    return type(value).__name__


def twice(value):
    return value * 2
"""

TESTS = """
from kinds import kind, twice


class Loud(str):
    pass


class Cents(int):
    def __hash__(self):
        raise TypeError("unhashable")


def test_kinds():
    assert kind(Loud("a")) == "Loud"
    assert kind("a") == "str"
    assert kind(Cents(3)) == "Cents"
    assert kind(3) == "int"
    assert twice(Cents(4)) == 8
    assert twice(4) == 8
"""


def test_a_tests_own_scalar_subclass_is_skipped_and_the_base_value_keeps_its_row(
    tmp_path: Path,
) -> None:
    root = tmp_path / "kinds"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "kinds"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/kinds/__init__.py": KINDS,
            "tests/test_kinds.py": TESTS,
        },
    )
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert "refused" not in recorded.output.lower().replace("refused 0", ""), recorded.output
    assert "cannot freeze a test_kinds.Loud: a class of a test module" in recorded.output
    kind_rows = rows_of(root / "lockstep/kinds.kind.ledger.jsonl")
    assert sorted(str(row.result) for row in kind_rows) == ["int", "str"]
    assert [row.args for row in rows_of(root / "lockstep/kinds.twice.ledger.jsonl")] == [[4]]
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output
