"""Shapes of real libraries' surfaces that a package ledger must freeze as it finds them:
a parameter whose default is the package's own class (``klass=Interval``), and a value
class's ``__hash__`` (the suite checks ``hash(a) != hash(b)``)."""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, rows_of, run_cli, write_files

SPANS = """
class Span:
    def __init__(self, low, high):
        self.low = low
        self.high = high

    def __eq__(self, other):
        return (self.low, self.high) == (other.low, other.high)

    def __hash__(self):
        return hash((self.low, self.high))


class Tag:
    def __init__(self, text):
        self.text = text

    def __hash__(self):
        return hash(self.text)  # differs from one interpreter to the next


def closed(low, high, *, klass=Span):
    return klass(low, high)
"""

TESTS = """
from spans import Span, Tag, closed


def test_spans():
    assert closed(1, 2) == Span(1, 2)
    assert closed(0, 5).high == 5
    assert hash(closed(1, 2)) != hash(closed(2, 3))
    assert hash(Span(0, 0)) == hash(Span(0, 0))
    assert hash(Tag("a")) == hash(Tag("a"))
"""


def _project(root: Path) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "spans"\n',
            "src/spans/__init__.py": SPANS,
            "tests/test_spans.py": TESTS,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        },
    )
    return root


def test_a_default_naming_the_package_s_own_class_records_and_replays(tmp_path: Path) -> None:
    root = _project(tmp_path)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    # the interpreter that verifies new rows froze ``klass=Span`` as the recorder did
    assert recorded.code == 0, recorded.output
    assert "could not replay" not in recorded.output
    assert len(rows_of(root / "lockstep/spans.closed.ledger.jsonl")) == 3  # (1, 2) twice
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output


def test_a_value_class_s_hash_is_surface_and_a_changed_hash_is_red(tmp_path: Path) -> None:
    root = _project(tmp_path)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    span_rows = rows_of(root / "lockstep/spans.Span.__hash__.ledger.jsonl")
    assert len(span_rows) == 3  # Span(1, 2), Span(2, 3), Span(0, 0)
    # a string's hash is another in the verifying interpreter: refused, not frozen
    assert rows_of(root / "lockstep/spans.Tag.__hash__.ledger.jsonl") == []
    assert "does not reproduce in a fresh interpreter" in recorded.output
    for seed in ("1", "2"):
        green = run_cli("replay", cwd=root, env={"PYTHONHASHSEED": seed})
        assert green.code == 0, green.output

    source = root / "src/spans/__init__.py"
    source.write_text(source.read_text().replace("hash((self.low, self.high))", "hash(self.low)"))
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "spans.Span.__hash__" in red.stdout
