"""Shapes of real libraries' surfaces that a package ledger must freeze as it finds them:
a parameter whose default is the package's own class (``klass=Interval``), and a value
class's ``__hash__`` (the suite checks ``hash(a) != hash(b)``)."""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, red_after_change, rows_of, run_cli, write_files

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


def _package_project(root: Path, package: str, source: str, tests: str) -> Path:
    """A project of one package, ``src/<package>``, its surface the one ledger, and a suite."""
    write_files(
        root,
        {
            "lockstep.toml": f'[[ledger]]\npackage = "{package}"\n',
            f"src/{package}/__init__.py": source,
            f"tests/test_{package}.py": tests,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        },
    )
    return root


def _project(root: Path) -> Path:
    return _package_project(root, "spans", SPANS, TESTS)


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


# A one-module distribution (``parse.py`` at the root, ``py-modules = ["tinyparse"]``):
# its parser caches a compiled pattern on first use, keeps a table of partials as its
# converters, and ``findall`` returns an iterator object.
TINYPARSE = """
import functools
import re

__all__ = ["compile", "findall"]


def to_int(text, base):
    return int(text, base)


class Parser:
    def __init__(self, word):
        self.word = word
        self.convert = {"hex": functools.partial(to_int, base=16)}
        self._pattern = None

    def _search_re(self):
        if self._pattern is None:
            self._pattern = re.compile(self.word + r"=([0-9a-f]+)", re.IGNORECASE)
        return self._pattern

    def parse(self, text):
        match = self._search_re().search(text)
        return None if match is None else self.convert["hex"](match.group(1))


class Results:
    def __init__(self, parser, text):
        self.parser = parser
        self.text = text
        self.pos = 0

    def __iter__(self):
        return self

    def __next__(self):
        match = self.parser._search_re().search(self.text, self.pos)
        if match is None:
            raise StopIteration
        self.pos = match.end()
        return self.parser.convert["hex"](match.group(1))


def compile(word):
    return Parser(word)


def findall(word, text):
    return Results(Parser(word), text)
"""

TINYPARSE_TESTS = """
import tinyparse


def test_parse():
    p = tinyparse.compile("x")
    assert p.parse("a x=ff b") == 255
    assert p.parse("X=10") == 16
    assert p.parse("nothing") is None


def test_findall():
    assert list(tinyparse.findall("k", "k=1 k=a k=10")) == [1, 10, 16]
"""


def test_a_one_module_library_is_proposed_recorded_and_replayed(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "tinyparse.py": TINYPARSE,
            "setup.py": "from setuptools import setup\nsetup(py_modules=['tinyparse'])\n",
            "tests/test_tinyparse.py": TINYPARSE_TESTS,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
        },
    )
    init = run_cli("init", "--yes", cwd=tmp_path)
    assert init.code == 0, init.output
    assert "1 package surface(s)" in init.stdout
    config = (tmp_path / "lockstep.toml").read_text()
    assert 'package = "tinyparse"' in config and 'package = "setup"' not in config

    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert "SKIPPED" not in recorded.output  # the pattern and the partials freeze
    # a method whose self caches a compiled pattern, and an iterator's __next__
    assert len(rows_of(tmp_path / "lockstep/tinyparse.Parser.parse.ledger.jsonl")) == 3
    assert len(rows_of(tmp_path / "lockstep/tinyparse.Results.__next__.ledger.jsonl")) == 4
    for seed in ("1", "2"):
        green = run_cli("replay", cwd=tmp_path, env={"PYTHONHASHSEED": seed})
        assert green.code == 0, green.output

    source = tmp_path / "tinyparse.py"
    original = source.read_text()
    for old, new in [
        ("base=16", "base=10"),  # inside a partial the parser holds
        ("re.IGNORECASE", "0"),  # the flags of the cached pattern
        ("self.pos = match.end()", "self.pos = match.end() + 1"),  # only __next__ sees it
    ]:
        source.write_text(original.replace(old, new))
        red = run_cli("replay", cwd=tmp_path)
        assert red.code == 1, (old, red.output)
    source.write_text(original)


BOX = """
import functools


class cached_property:  # a library's own (Django's, py-moneyed's): __get__ needs an object
    def __init__(self, func):
        self.func = func

    def __get__(self, instance, owner):
        value = instance.__dict__[self.func.__name__] = self.func(instance)
        return value


class Box:
    def __init__(self, n):
        self.n = n

    @functools.cached_property
    def double(self):
        return self.n * 2

    @cached_property
    def half(self):
        return self.n // 2

    def triple(self):
        return self.n * 3
"""

BOX_TESTS = """
from box import Box


def test_box():
    b = Box(2)
    assert b.double == 4 and b.double == 4  # the second read finds the cached value
    assert Box(3).triple() == 9 and Box(5).double == 10
    assert Box(7).half == 3
"""


def test_a_cached_property_is_recorded_as_its_first_read(tmp_path: Path) -> None:
    """A ``functools.cached_property`` (or a library's own cached property) on the surface
    stopped the whole recording ("is a cached_property, not a callable", exit 4); its
    function is recorded like a property's getter, one row per object's first read."""
    write_files(
        tmp_path,
        {
            "box/__init__.py": BOX,
            "tests/test_box.py": BOX_TESTS,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
            "lockstep.toml": '[[ledger]]\npackage = "box"\n',
        },
    )
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert len(rows_of(tmp_path / "lockstep/box.Box.double.ledger.jsonl")) == 2
    assert len(rows_of(tmp_path / "lockstep/box.Box.half.ledger.jsonl")) == 1
    assert run_cli("replay", cwd=tmp_path).code == 0
    source = tmp_path / "box/__init__.py"
    for old, new, name in [
        ("return self.n * 2", "return self.n * 2 + 1", "box.Box.double"),
        ("return self.n // 2", "return self.n / 2", "box.Box.half"),
    ]:
        source.write_text(BOX.replace(old, new))
        red = run_cli("replay", cwd=tmp_path)
        assert red.code == 1 and name in red.output, red.output


def test_a_surface_not_yet_recorded_names_the_command_that_records_it(tmp_path: Path) -> None:
    """A ledger without a driver is recorded from the tests: the hint names pytest, not
    ``lockstep record NAME`` (which refuses a ledger with no driver)."""
    write_files(
        tmp_path,
        {
            "box/__init__.py": BOX,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
            "lockstep.toml": '[[ledger]]\npackage = "box"\n',
        },
    )
    red = run_cli("replay", cwd=tmp_path)
    assert red.code == 1, red.output
    assert "is not recorded yet: run 'pytest --lockstep-record'" in red.output, red.output
    assert "lockstep record box" not in red.output


# Attributes a class computes when asked for (arrow's ``Arrow.quarter`` and ``week``):
# ``__getattr__`` is their only code, so it is part of the surface.
MOMENTS = """
class Moment:
    def __init__(self, year, month):
        self.year = year
        self.month = month

    def __getattr__(self, name):
        if name == "quarter":
            return (self.month - 1) // 3 + 1
        raise AttributeError(name)
"""

MOMENT_TESTS = """
import copy

from moments import Moment


def test_quarters():
    assert [Moment(2024, m).quarter for m in (1, 4, 12)] == [1, 2, 4]
    assert not hasattr(Moment(2024, 1), "week")
    assert copy.copy(Moment(2024, 5)).quarter == 2
"""


def test_an_attribute_computed_by_getattr_is_surface_and_a_changed_one_is_red(
    tmp_path: Path,
) -> None:
    root = _package_project(tmp_path, "moments", MOMENTS, MOMENT_TESTS)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    rows = rows_of(root / "lockstep/moments.Moment.__getattr__.ledger.jsonl")
    asked = sorted(str(row.args[1]) for row in rows)
    assert {"quarter", "week"} <= set(asked), asked
    # hasattr's probe, and copy's of __setstate__: raising is the behaviour kept
    raised = sorted(str(row.args[1]) for row in rows if row.exc_type == "AttributeError")
    assert raised == ["__setstate__", "week"], raised
    assert run_cli("replay", cwd=root).code == 0

    red = red_after_change(
        root, "src/moments/__init__.py", "(self.month - 1) // 3", "self.month // 3"
    )
    assert "moments.Moment.__getattr__" in red.stdout


# tabulate keeps its line-drawing functions in its table formats and compares the one a
# format holds with the module's name for it; a wrapper bound to that name would not be
# the function the format holds, and its HTML tables came back as plain strings.
TABLES = """
def _html_begin(widths):
    return "<table>"


def plain_begin(widths):
    return ""


FORMATS = {"html": (_html_begin,), "plain": (plain_begin,)}


class HTMLStr(str):
    def _repr_html_(self):
        return str(self)


def render(cells, fmt="plain"):
    begin = FORMATS[fmt][0]
    text = begin([]) + ",".join(cells)
    if begin == _html_begin:
        return HTMLStr(text)
    return text.upper() if begin is plain_begin else text
"""

TABLE_TESTS = """
from tables import _html_begin, plain_begin, render


def test_html_is_marked():
    assert hasattr(render(["a"], "html"), "_repr_html_")
    assert render(["a", "b"]) == "A,B"
    assert _html_begin([]) == "<table>" and plain_begin([]) == ""
"""


def test_a_function_the_package_compares_as_a_value_is_left_in_place(tmp_path: Path) -> None:
    _package_project(tmp_path, "tables", TABLES, TABLE_TESTS)
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output  # the suite passes while recording, too
    assert "1 function(s) of a package surface are compared as values" in recorded.output
    assert "tables.plain_begin" in recorded.output, recorded.output
    assert rows_of(tmp_path / "lockstep/tables.plain_begin.ledger.jsonl") == []
    assert len(rows_of(tmp_path / "lockstep/tables.render.ledger.jsonl")) == 2
    assert not (tmp_path / "lockstep/tables._html_begin.ledger.jsonl").exists()
    assert run_cli("replay", cwd=tmp_path).code == 0

    red = red_after_change(tmp_path, "src/tables/__init__.py", "text.upper()", "text.lower()")
    assert "tables.render" in red.stdout, red.output


# glom keys its evaluation scope by its own ``glom`` function (``{glom: _glom}``,
# ``scope[glom]``): with a wrapper bound to the module's name, every lookup missed and 141
# of its 199 tests failed while recording.
SCOPES = """
def run(spec, target):
    scope = {run: _run}
    return scope[run](spec, target, scope)


def _run(spec, target, scope):
    if isinstance(spec, list):
        return [scope.get(run)(s, target, scope) for s in spec]
    return target[spec]
"""

SCOPE_TESTS = """
from scopes import run


def test_run():
    assert run("a", {"a": 1}) == 1
    assert run(["a", "b"], {"a": 1, "b": 2}) == [1, 2]
"""


def test_a_function_the_package_keys_a_dict_by_is_left_in_place(tmp_path: Path) -> None:
    _package_project(tmp_path, "scopes", SCOPES, SCOPE_TESTS)
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output  # the suite passes while recording, too
    assert "1 function(s) of a package surface are compared as values" in recorded.output
    assert "scopes.run" in recorded.output, recorded.output
    assert rows_of(tmp_path / "lockstep/scopes.run.ledger.jsonl") == []
    assert run_cli("replay", cwd=tmp_path).code == 0


# Value classes whose comparisons and arithmetic no ``def`` in their body shows: a
# dataclass's ``order=True`` writes ``__lt__`` and ``__eq__``, and a module that adds
# operators in a loop (uncertainties' ``setattr(AffineScalarFunc, "__add__", ...)``).
MONEY = """
import dataclasses
import operator


@dataclasses.dataclass(frozen=True, order=True)
class Price:
    amount: int
    currency: str = "EUR"

    def __post_init__(self):
        object.__setattr__(self, "currency", self.currency.upper())


class Cents:
    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"Cents({self.value})"


def _arith(op):
    def method(self, other):
        return Cents(op(self.value, other.value))
    return method


for _name, _op in [("add", operator.add), ("sub", operator.sub)]:
    setattr(Cents, f"__{_name}__", _arith(_op))


class Plain:
    pass
"""

MONEY_TESTS = """
from money import Cents, Price, Plain


def test_price_order():
    assert Price(1, "USD") < Price(2, "EUR")
    assert Price(5, "usd").currency == "USD"
    assert sorted([Price(3, "USD"), Price(3)]) == [Price(3), Price(3, "USD")]


def test_cents():
    assert (Cents(5) + Cents(7)).value == 12
    assert (Cents(5) - Cents(7)).value == -2
    assert Plain() != Plain()
"""


def test_dunders_a_decorator_or_setattr_writes_are_recorded_where_the_class_holds_them(
    tmp_path: Path,
) -> None:
    root = _package_project(tmp_path, "money", MONEY, MONEY_TESTS)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    ledgers = root / "lockstep"
    assert len(rows_of(ledgers / "money.Price.__lt__.ledger.jsonl")) >= 1
    assert len(rows_of(ledgers / "money.Cents.__add__.ledger.jsonl")) == 1
    assert len(rows_of(ledgers / "money.Cents.__sub__.ledger.jsonl")) == 1
    # inherited from object, and setattr never gave Cents a __mul__: no ledger
    assert not (ledgers / "money.Plain.__eq__.ledger.jsonl").exists()
    assert not (ledgers / "money.Cents.__mul__.ledger.jsonl").exists()
    assert run_cli("replay", cwd=root).code == 0

    # (a change of another length: the bytecode cached a moment ago is not taken for it)
    red = red_after_change(
        root, "src/money/__init__.py", '("sub", operator.sub)', '("sub", operator.floordiv)'
    )
    assert "money.Cents.__sub__" in red.stdout
    source = root / "src/money/__init__.py"
    source.write_text(source.read_text().replace("operator.floordiv", "operator.sub"))
    # the order compares the fields in the order they are written (and the __init__ it
    # writes takes them in that order: its ledger refuses the new signature)
    red = red_after_change(
        root,
        "src/money/__init__.py",
        '    amount: int\n    currency: str = "EUR"',
        '    currency: str = "EUR"\n    amount: int = 0',
        "money.Price.__lt__",
    )
    assert "money.Price.__lt__" in red.stdout
    assert run_cli("replay", cwd=root).code == 1
    source.write_text(
        source.read_text().replace(
            '    currency: str = "EUR"\n    amount: int = 0',
            '    amount: int\n    currency: str = "EUR"',
        )
    )
    # the __init__ a dataclass writes runs __post_init__, where it normalizes
    red = red_after_change(root, "src/money/__init__.py", ".upper()", ".strip()")
    assert "money.Price.__init__" in red.stdout


TRIVIA = """
import dataclasses


@dataclasses.dataclass
class Trivia:
    indent: str = ""
    comment: str = ""


class Item:
    def __init__(self, value, trivia):
        self.value = value
        self.trivia = trivia
        self.children = [self]  # a cycle, as a parsed document's items point back


def render(item):
    return item.trivia.indent + str(item.value) + item.trivia.comment
"""

TRIVIA_TESTS = """
from doc import Item, Trivia, render


def test_render():
    assert render(Item(1, Trivia("  ", " # one"))) == "  1 # one"
    assert render(Item(2, Trivia())) == "2"
"""


def test_a_dataclass_whose_init_is_recorded_still_freezes_as_its_fields(tmp_path: Path) -> None:
    """Recording the ``__init__`` a dataclass writes freezes its blank ``self`` first, as an
    allocated object; that sent every later object of the class the same way, filled ones
    held by another object too, where a fresh interpreter freezes them as ``$dataclass``:
    on tomlkit every row holding a ``Trivia`` (nearly all of them) was refused as not
    reproducing."""
    root = _package_project(tmp_path, "doc", TRIVIA, TRIVIA_TESTS)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert "does not reproduce" not in recorded.stdout, recorded.stdout
    assert len(rows_of(root / "lockstep/doc.Trivia.__init__.ledger.jsonl")) == 2
    rendered = (root / "lockstep/doc.render.ledger.jsonl").read_text()
    assert len(rows_of(root / "lockstep/doc.render.ledger.jsonl")) == 2
    assert '"$dataclass":["doc:Trivia"' in rendered.replace(" ", "")
