"""An object holding a ``defaultdict`` or an ``OrderedDict`` replays as the one recorded.

Frozen as plain dicts, their state thawed otherwise: a ``defaultdict`` that counted raised
``KeyError`` in the verifying interpreter (rows refused as "behaviour varies"),
``popitem(last=False)`` of a plain dict raised ``TypeError``, and a change from
``defaultdict(int)`` to ``{}`` replayed green (the frozen state was the same either way).
A dict subclass of another library, which no tag keeps, is refused by name; sortedcontainers'
``SortedDict`` (portion's ``IntervalDict`` holds one) keeps its class.
"""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, rows_of, run_cli, write_files

TALLY = """
from collections import Counter, OrderedDict, defaultdict

from sortedcontainers import SortedDict


class Tally:
    def __init__(self):
        self.counts = defaultdict(int)
        self.seen = OrderedDict()

    def add(self, key):
        self.counts[key] += 1
        self.seen[key] = True
        return self.counts[key]

    def oldest(self):
        return next(iter(self.seen))

    def pop_oldest(self):
        return self.seen.popitem(last=False)[0]

    def common(self):
        return Counter(self.counts).most_common(1)


class Sorted(dict):
    pass


class Book:
    def __init__(self):
        self.pages = SortedDict()

    def add(self, number, text):
        self.pages[number] = text
        return len(self.pages)

    def first(self):
        return self.pages.peekitem(0)

    def tear_last(self):
        return self.pages.popitem()


def sort_keys(pairs):
    return Sorted(sorted(pairs))
"""

TESTS = """
from tally import Tally, sort_keys


def test_tally():
    t = Tally()
    assert t.add("b") == 1
    assert t.add("a") == 1
    assert t.add("b") == 2
    assert t.add("c") == 1
    assert t.oldest() == "b"
    assert t.common() == [("b", 2)]
    assert t.pop_oldest() == "b"


def test_sorted():
    assert list(sort_keys([(2, "x"), (1, "y")])) == [1, 2]


def test_book():
    from tally import Book

    book = Book()
    assert [book.add(10, "ten"), book.add(2, "two"), book.add(7, "seven")] == [1, 2, 3]
    assert book.first() == (2, "two")
    assert book.tear_last() == (10, "ten")
"""


def test_state_holding_dict_kinds_records_replays_and_a_changed_kind_is_red(
    tmp_path: Path,
) -> None:
    write_files(
        tmp_path,
        {
            "tally/__init__.py": TALLY,
            "tests/test_tally.py": TESTS,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
            "lockstep.toml": '[[ledger]]\npackage = "tally"\n',
        },
    )
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert "refused" not in recorded.output.replace("refused 0", ""), recorded.output
    ledgers = tmp_path / "lockstep"
    assert len(rows_of(ledgers / "tally.Tally.add.ledger.jsonl")) == 4
    assert len(rows_of(ledgers / "tally.Tally.pop_oldest.ledger.jsonl")) == 1
    # a class of the package itself freezes by structure: only another library's is refused
    assert len(rows_of(ledgers / "tally.sort_keys.ledger.jsonl")) == 1
    for seed in ("1", "2"):
        green = run_cli("replay", cwd=tmp_path, env={"PYTHONHASHSEED": seed})
        assert green.code == 0, green.output

    source = tmp_path / "tally/__init__.py"
    assert len(rows_of(ledgers / "tally.Book.first.ledger.jsonl")) == 1
    # SortedDict's own default: the same behaviour, green (it was red when the pages
    # thawed as a plain dict, whose popitem takes no index)
    source.write_text(TALLY.replace("self.pages.popitem()", "self.pages.popitem(-1)"))
    same = run_cli("replay", cwd=tmp_path)
    assert same.code == 0, same.output
    for old, new in [
        ("self.counts = defaultdict(int)", "self.counts = {}"),  # __init__'s state: a plain dict
        ("self.seen = OrderedDict()", "self.seen = dict()"),
        ("popitem(last=False)", "popitem(last=True)"),
        ("self.pages.peekitem(0)", "self.pages.peekitem(-1)"),
    ]:
        source.write_text(TALLY.replace(old, new))
        red = run_cli("replay", cwd=tmp_path)
        assert red.code == 1, (old, red.output)
    source.write_text(TALLY)
    assert run_cli("replay", cwd=tmp_path).code == 0
