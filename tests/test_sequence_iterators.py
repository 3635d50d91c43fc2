"""Iterators over a sequence, a set or a dict, returned or held inside a value.

more-itertools' ``always_reversible([1, 2, 3])`` returns ``reversed(...)``: relayed through
a generator, the caller got another class, and its suite (which compares the classes)
failed under recording only.  Its ``divide(2, items)`` returns a list of ``list_iterator``s,
which could not be frozen at all, so every such call was skipped.  Both are read from the
iterator's ``__reduce__``, which consumes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import recorded, red_after_change, refused_in_one_line, rows_of, run_cli
from lockstep import canon
from lockstep.canon.text import value_text
from lockstep.errors import CanonError

PARTS = """
def divide(n, items):
    # items in n parts, each an iterator over its share
    seq = tuple(items)
    q, r = divmod(len(seq), n)
    parts, stop = [], 0
    for i in range(1, n + 1):
        start = stop
        stop += q + 1 if i <= r else q
        parts.append(iter(seq[start:stop]))
    return parts


def backwards(items):
    return reversed(list(items))
"""

TESTS = """
from parts import backwards, divide


def test_divide():
    first, second = divide(2, [1, 2, 3, 4, 5])
    assert list(first) == [1, 2, 3] and list(second) == [4, 5]


def test_backwards():
    it = backwards("abc")
    assert type(it) is type(reversed([]))
    assert next(it) == "c"
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "parts"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/parts/__init__.py": PARTS,
    "tests/test_parts.py": TESTS,
}


def test_iterators_returned_or_held_in_a_list_are_recorded_and_guarded(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "no call skipped" in run.output, run.output
    (divided,) = rows_of(root / "lockstep/parts.divide.ledger.jsonl")
    assert divided.result == [{"$iterator": [1, 2, 3]}, {"$iterator": [4, 5]}]
    (back,) = rows_of(root / "lockstep/parts.backwards.ledger.jsonl")
    assert back.result == {"$iter": {"items": ["c", "b", "a"], "end": "exhausted"}}
    assert run_cli("replay", cwd=root).code == 0

    red = red_after_change(root, "src/parts/__init__.py", "if i <= r else q", "if i < r else q")
    assert "iter([1, 2])" in red.stdout, red.stdout


@pytest.mark.parametrize(
    ("make", "left"),
    [
        (lambda: iter([1, 2, 3]), [1, 2, 3]),
        (lambda: reversed([1, 2, 3]), [3, 2, 1]),
        (lambda: reversed((1, 2, 3)), [3, 2, 1]),
        (lambda: iter((1, "a")), [1, "a"]),
        (lambda: iter(range(3, 9, 2)), [3, 5, 7]),
        (lambda: reversed(range(3)), [2, 1, 0]),
        (lambda: iter("h\u00e9"), ["h", "\u00e9"]),
        (lambda: iter(b"hi"), [104, 105]),
        (lambda: iter({"k": 1}), ["k"]),
        (lambda: iter({"k": 1}.values()), [1]),
        (lambda: iter({"k": 1}.items()), [("k", 1)]),
        (lambda: iter(frozenset({7})), [7]),
    ],
)
def test_what_an_iterator_has_left_is_frozen_without_reading_it(make: Any, left: list[Any]) -> None:
    for consumed in range(len(left) + 1):
        it = make()
        for _ in range(consumed):
            next(it)
        (thawed,) = canon.decode(canon.encode([it]))
        assert list(thawed) == left[consumed:]
        assert list(it) == left[consumed:]  # freezing it consumed nothing


@given(st.lists(st.one_of(st.integers(), st.text(max_size=4), st.none()), max_size=12), st.data())
def test_a_list_iterator_anywhere_round_trips(items: list[Any], data: st.DataObject) -> None:
    consumed = data.draw(st.integers(0, len(items)))
    it = iter(items)
    for _ in range(consumed):
        next(it)
    frozen = canon.encode({"rows": it})
    assert frozen == {"rows": {"$iterator": items[consumed:]}}
    assert list(canon.decode(frozen)["rows"]) == items[consumed:]
    assert value_text(frozen).startswith("{'rows': iter([")


def test_other_iterators_and_very_long_ones_are_still_refused() -> None:
    for it in (map(str, [1]), (x for x in [1]), iter(range(10**6))):
        with pytest.raises(CanonError, match="cannot freeze"):
            canon.encode([it])


def test_a_hostile_form_is_a_one_line_error() -> None:
    message = refused_in_one_line({"$iterator": {"a": 1}})
    assert "a list of the items it has left" in message, message


PARSER = """
import re


def tokenize(text):
    for match in re.finditer(r"\\d+|[a-z]+|[.\\[\\]]", text):
        yield match.group()


class Parser:
    def __init__(self, text):
        self.tokenizer = tokenize(text)
        self.tokens = list(self.tokenizer)  # read to the end, and kept

    def depth(self):
        return self.tokens.count("[")

    def fields(self):
        return [t for t in self.tokens if t.isalpha()]
"""

PARSER_TESTS = """
from parser import Parser


def test_parser():
    parsed = Parser("a.b[0].c[1]")
    assert parsed.depth() == 2
    assert parsed.fields() == ["a", "b", "c"]
"""


def test_an_object_keeping_a_finished_generator_is_recorded_and_guarded(tmp_path: Path) -> None:
    """jmespath's parser keeps the tokenizer it read to the end: every call holding a
    parser was skipped ("cannot freeze a generator").  A finished generator has nothing
    left, and says so without being read: it freezes as ``$iterator: []``."""
    root = tmp_path / "project"
    run = recorded(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "parser"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/parser/__init__.py": PARSER,
            "tests/test_parser.py": PARSER_TESTS,
        },
    )
    assert "no call skipped" in run.output, run.output
    (depth,) = rows_of(root / "lockstep/parser.Parser.depth.ledger.jsonl")
    assert depth.args[0]["$obj"][1]["state"]["tokenizer"] == {"$iterator": []}, depth  # type: ignore[index,call-overload]
    assert run_cli("replay", cwd=root).code == 0
    red_after_change(root, "src/parser/__init__.py", 'count("[")', 'count("]") - 1')


def test_a_generator_still_running_or_not_started_is_refused() -> None:
    def gen() -> Any:
        yield 1
        yield 2

    fresh, started = gen(), gen()
    next(started)
    for it in (fresh, started):
        with pytest.raises(CanonError, match="cannot freeze a generator"):
            canon.encode({"tokens": it})
    assert list(started) == [2]  # nothing read from it
    finished = gen()
    assert list(finished) == [1, 2]
    assert canon.encode({"tokens": finished}) == {"tokens": {"$iterator": []}}
