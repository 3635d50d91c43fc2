"""Calls a module's own doctests make are recorded, as calls from a test.

A module's doctest runs with that module's globals, so the recording guard took its
calls for the package calling itself and recorded none: python-stdnum's ``isbn.format``
and ``nl.bsn.format`` are checked by their doctests alone (``--doctest-modules``), their
ledgers had no row, and two changes its suite caught went unseen."""

from __future__ import annotations

from pathlib import Path

from helpers import recorded, red_after_change, rows_of, run_cli

FMT = '''"""Formatting of codes.

>>> dash("abc")
'a-b-c'
>>> group("12345678", 4)
'1234 5678'
"""


def dash(text):
    return "-".join(text)


def group(text, size):
    """Groups of ``size``.

    >>> group("abcdef", 2)
    'ab cd ef'
    """
    return " ".join(text[i : i + size] for i in range(0, len(text), size))


def code(text):
    return group(dash(text), 2)  # the package calling itself: part of this row
'''

TESTS = """
from codes import code


def test_code():
    assert code("ab") == "a- b"
"""


def test_a_modules_doctests_are_recorded_as_calls_from_outside(tmp_path: Path) -> None:
    root = tmp_path / "codes"
    run = recorded(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "codes"\n',
            "pytest.ini": "[pytest]\naddopts = --doctest-modules src tests\npythonpath = src\n",
            "src/codes/__init__.py": FMT,
            "tests/test_codes.py": TESTS,
        },
    )
    assert "3 passed" in run.output, run.output
    assert len(rows_of(root / "lockstep/codes.dash.ledger.jsonl")) == 1
    assert len(rows_of(root / "lockstep/codes.group.ledger.jsonl")) == 2
    assert len(rows_of(root / "lockstep/codes.code.ledger.jsonl")) == 1  # its inner calls: not rows
    assert run_cli("replay", cwd=root).code == 0
    red = red_after_change(
        root, "src/codes/__init__.py", 'return "-".join(text)', 'return "_".join(text)'
    )
    assert "codes.dash" in red.stdout
