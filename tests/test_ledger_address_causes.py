"""A row whose value holds an object's address is refused naming that cause.

sqlparse's ``Token.__repr__`` is ``<Single 'x' at 0x7FE7B7B3CB20>``: no fresh interpreter
reproduces it, and the refusal named an unrelated global that an earlier test had
changed as its likely cause."""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, rows_of, run_cli, write_files

TOKENS = """
class Token:
    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"<Token {self.value!r} at 0x{id(self):012X}>"


REGISTRY = {}


def describe(value):
    return repr(Token(value))


def upper(value):
    return value.upper()
"""

TESTS = """
import tokens


def test_describe(monkeypatch):
    monkeypatch.setitem(tokens.REGISTRY, "seen", True)  # a global changed meanwhile
    assert describe_ok(tokens.describe("x"))
    assert tokens.upper("x") == "X"


def describe_ok(text):
    return text.startswith("<Token 'x' at 0x")
"""


def test_an_address_in_the_value_is_named_as_the_cause(tmp_path: Path) -> None:
    root = tmp_path / "tokens"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "tokens"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/tokens/__init__.py": TOKENS,
            "tests/test_tokens.py": TESTS,
        },
    )
    result = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert result.code == 0, result.output
    refused = [line for line in result.stdout.splitlines() if "describe('x')" in line]
    assert refused and "cause: an object's address in the value" in refused[0], result.stdout
    assert "REGISTRY" not in refused[0], refused[0]
    assert not rows_of(root / "lockstep/tokens.describe.ledger.jsonl")
    assert len(rows_of(root / "lockstep/tokens.upper.ledger.jsonl")) == 1
    assert run_cli("replay", cwd=root).code == 0
