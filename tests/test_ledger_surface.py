"""A package's public surface as one oracle (``[[ledger]] package = "..."``) and a bare
``pytest --lockstep-record`` that records every configured ledger."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from helpers import package_project, pytest_in, replayed_after, rows_of, run_cli, write_files
from lockstep.surface import module_members

MONEY = """
__all__ = ["Money", "parse", "total"]


def _clean(text):
    return text.strip()


def parse(text):
    amount, currency = _clean(text).split(" ")
    return Money(int(amount), currency)


def total(items):
    result = Money(0, "EUR")
    for item in items:
        result = result.add(parse(item))  # internal calls: part of total's row
    return result


def helper_not_exported(x):
    return x


class Money:
    def __init__(self, cents, currency):
        self.cents = cents
        self.currency = currency

    def add(self, other):
        if other.currency != self.currency:
            raise ValueError("currency mismatch")
        return Money(self.cents + other.cents, self.currency)

    __radd__ = add

    @property
    def euros(self):
        return self.cents / 100

    @classmethod
    def zero(cls, currency):
        return cls(0, currency)

    @staticmethod
    def currencies():
        return ["EUR", "USD"]

    def __str__(self):
        return f"{self.cents} {self.currency}"

    def _private(self):
        return 1
"""

FORMAT = """
from shop.money import parse  # a re-export: not format's surface
from os.path import join  # another package's: not the surface


def show(money):
    return str(money)
"""

PRIVATE = """
def hidden(x):
    return x
"""

TESTS = """
from shop import format
from shop.money import Money, parse, total


def test_parse():
    assert parse("150 EUR").cents == 150
    assert parse(" 7 USD ").currency == "USD"


def test_total():
    assert total(["100 EUR", "50 EUR"]).cents == 150


def test_money():
    m = Money(250, "EUR")
    assert m.euros == 2.5
    assert m.add(Money(1, "EUR")).cents == 251
    assert Money.zero("USD").cents == 0
    assert Money.currencies() == ["EUR", "USD"]
    assert format.show(m) == "250 EUR"
"""


def _project(root: Path, config: str) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": config,
            "src/shop/__init__.py": "",
            "src/shop/money.py": MONEY,
            "src/shop/format.py": FORMAT,
            "src/shop/_impl.py": PRIVATE,
            "tests/test_shop.py": TESTS,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        },
    )
    return root


SURFACE = """
[[ledger]]
package = "shop"
"""


def test_the_surface_is_what_the_modules_define_and_export() -> None:
    members = [m.target for m in module_members("shop.money", ast.parse(MONEY))]
    assert members == [
        "shop.money:parse",
        "shop.money:total",
        "shop.money:Money.add",
        "shop.money:Money.euros",
        "shop.money:Money.zero",
        "shop.money:Money.currencies",
        "shop.money:Money.__str__",
    ]
    assert [m.target for m in module_members("shop.format", ast.parse(FORMAT))] == [
        "shop.format:show"
    ]


PROTOCOLS = """
import typing
from typing import Protocol, TypeVar

T = TypeVar("T")


class SupportsNeg(Protocol):
    def __neg__(self): ...


class SupportsAdd(typing.Protocol[T]):
    def __add__(self, other: T): ...


class Amount:
    def __neg__(self):
        return self
"""


def test_a_protocol_s_stub_methods_are_no_surface() -> None:
    """py-moneyed declares ``class SupportsNeg(Protocol)``: its ``__neg__`` is a stub."""
    members = [m.target for m in module_members("shop.types", ast.parse(PROTOCOLS))]
    assert members == ["shop.types:Amount.__neg__"]


DELTAS = """
class Delta:
    def __init__(self, days):
        self.days = days

    def __div__(self, other):
        return Delta(self.days // other)

    __truediv__ = __div__

    def __mul__(self, other):
        return Delta(self.days * other)

    __rmul__ = __mul__

    def _handle(self):
        return self.days

    handle = _handle
    __floordiv__ = __div__
"""


def test_a_method_bound_under_a_surface_name_is_surface() -> None:
    """python-dateutil's ``relativedelta`` divides in ``__div__`` (a Python 2 name) and
    binds it as ``__truediv__``: the alias is the member, one per method (calls through
    ``__floordiv__`` are recorded with it, as an alias of a member, ``__rmul__ = __mul__``,
    is recorded with that member)."""
    members = [m.target for m in module_members("dates", ast.parse(DELTAS))]
    assert members == ["dates:Delta.__mul__", "dates:Delta.__truediv__", "dates:Delta.handle"]


def test_a_method_bound_under_a_surface_name_records_and_catches_a_change(
    tmp_path: Path,
) -> None:
    tests = (
        "from dates import Delta\n\n\ndef test_divide():\n"
        "    assert (Delta(28) / 7).days == 4\n    assert (Delta(30) // 7).days == 4\n"
    )
    root = package_project(tmp_path / "dates", "dates", DELTAS, tests)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert len(rows_of(root / "lockstep/dates.Delta.__truediv__.ledger.jsonl")) == 2
    assert run_cli("replay", cwd=root).code == 0
    red = replayed_after(root, "src/dates/__init__.py", "days // other", "days // other + 1")
    assert red.code == 1 and "dates.Delta.__truediv__" in red.stdout, red.output


def test_status_lists_one_ledger_per_member_named_after_the_package(tmp_path: Path) -> None:
    root = _project(tmp_path, SURFACE)
    status = run_cli("status", cwd=root)
    assert status.code == 0, status.output
    for name in ("shop.money.parse", "shop.money.Money.euros", "shop.format.show"):
        assert f"lockstep/{name}.ledger.jsonl" in status.stdout
    assert "hidden" not in status.stdout  # a private module
    assert "helper_not_exported" not in status.stdout  # not in __all__
    assert "_clean" not in status.stdout and "__init__" not in status.stdout


def test_package_surface_records_at_the_boundary_replays_and_catches_a_change(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path, SURFACE)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    oracle = root / "lockstep"
    parse_rows = rows_of(oracle / "shop.money.parse.ledger.jsonl")
    # only the test's own calls: total()'s internal parse() calls are part of total's row
    assert sorted(r.args for r in parse_rows) == sorted([["150 EUR"], [" 7 USD "]])
    add_rows = rows_of(oracle / "shop.money.Money.add.ledger.jsonl")
    assert len(add_rows) == 1  # the test's m.add(...), not total's two
    assert len(rows_of(oracle / "shop.money.total.ledger.jsonl")) == 1
    assert len(rows_of(oracle / "shop.money.Money.euros.ledger.jsonl")) == 1
    assert len(rows_of(oracle / "shop.format.show.ledger.jsonl")) == 1
    # a member the suite only reaches from inside the package is no row and no error
    assert rows_of(oracle / "shop.money.Money.__str__.ledger.jsonl") == []

    # beyond the surface: what the tests call directly (the two Money(...) constructions);
    # a private function only the package calls gets no file
    assert len(rows_of(oracle / "shop.money.Money.__init__.ledger.jsonl")) == 2
    assert not (oracle / "shop.money._clean.ledger.jsonl").exists()
    assert not (oracle / "shop._impl.hidden.ledger.jsonl").exists()

    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output
    by_package = run_cli("replay", "shop", cwd=root)  # the package ledger's name: every member
    assert by_package.code == 0, by_package.output
    assert "green: 10 cases: 10 passed" in by_package.stdout
    items = pytest_in(root, "-q", "--lockstep", "lockstep")
    assert items.code == 0, items.output
    assert "10 passed" in items.stdout  # parse 2, total, add, euros, zero, currencies, show

    money = root / "src/shop/money.py"
    source = money.read_text()
    money.write_text(source.replace("self.cents + other.cents", "self.cents"))
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "shop.money.Money.add" in red.stdout and "shop.money.total" in red.stdout

    # a module that no longer imports: each case names the table's key, which names the
    # package (the table has no ``target`` key to look for)
    money.write_text("import shop_gone\n" + source)
    broken = run_cli("replay", cwd=root)
    assert broken.code == 1, broken.output
    assert "cannot run: lockstep.toml: ledger[0].package: cannot import module" in broken.stdout


def test_a_bare_record_flag_records_every_ledger_and_a_name_still_selects(
    tmp_path: Path,
) -> None:
    config = """
    [[ledger]]
    name = "parse"
    target = "shop.money:parse"

    [[ledger]]
    name = "show"
    target = "shop.format:show"
    """
    root = _project(tmp_path, config)
    every = pytest_in(root, "-q", "tests", "--lockstep-record")
    assert every.code == 0, every.output
    assert len(rows_of(root / "lockstep/parse.ledger.jsonl")) == 4  # 2 direct, 2 via total
    assert len(rows_of(root / "lockstep/show.ledger.jsonl")) == 1
    parse_bytes = (root / "lockstep/parse.ledger.jsonl").read_bytes()
    (root / "lockstep/show.ledger.jsonl").unlink()
    one = pytest_in(root, "-q", "--lockstep-record=show", "tests")
    assert one.code == 0, one.output
    assert len(rows_of(root / "lockstep/show.ledger.jsonl")) == 1
    assert (root / "lockstep/parse.ledger.jsonl").read_bytes() == parse_bytes
    assert run_cli("replay", cwd=root).code == 0


def test_a_bare_record_flag_without_ledgers_is_a_usage_error(tmp_path: Path) -> None:
    root = _project(tmp_path, '[lockstep]\ndir = "lockstep"\n')
    result = pytest_in(root, "-q", "tests", "--lockstep-record")
    assert result.code == 4
    assert "configures no [[ledger]]" in result.stderr


@pytest.mark.parametrize("given", ["tests", "tests/test_{}.py::test_{}"])
def test_a_path_taken_as_the_ledger_name_says_so(tmp_path: Path, given: str) -> None:
    root = _project(tmp_path, SURFACE)
    test_file = next((root / "tests").glob("test_*.py"))
    stem = test_file.stem.removeprefix("test_")
    wanted = given.format(stem, stem)
    result = pytest_in(root, "-q", "--lockstep-record", wanted)
    assert result.code == 4
    said = f"{wanted!r} is a test path: a bare --lockstep-record takes the next word"
    assert said in result.stderr, result.stderr
    assert not (root / "lockstep").exists()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'name = "x"\ntarget = "shop.money:parse"\npackage = "shop"',
            "lockstep.toml: ledger[0].package: give target or package, not both",
        ),
        ('name = "x"', "lockstep.toml: ledger[0].target: required key is missing"),
        ('package = "nosuchpkg"', "lockstep.toml: ledger[0].package: no package 'nosuchpkg'"),
        ('package = "shop.money"', "ledger[0].package: 'shop.money' is not a top-level package"),
        ('package = "os"', "ledger[0].package: 'os' is a module of Python's standard library"),
        ('package = "json"', "ledger[0].package: 'json' is a module of Python's standard"),
    ],
)
def test_package_and_target_config_errors_name_the_key(
    tmp_path: Path, table: str, message: str
) -> None:
    root = _project(tmp_path, f"[[ledger]]\n{table}\n")
    result = run_cli("status", cwd=root)
    assert result.code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_surface_module_that_does_not_import_here_records_nothing_and_replays_green(
    tmp_path: Path,
) -> None:
    """dateutil.tz.win imports winreg: off Windows its members are written empty, with a
    note, and the rest of the surface records and replays."""
    root = _project(tmp_path, SURFACE)
    write_files(
        root,
        {
            "src/shop/winonly.py": (
                "import lockstep_no_such_module_here\n\n\ndef registry_rate(name):\n    return 1\n"
            )
        },
    )
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert "1 member(s) of a package surface recorded no call" in recorded.output
    assert "shop.winonly.registry_rate (ModuleNotFoundError" in recorded.output
    assert rows_of(root / "lockstep/shop.winonly.registry_rate.ledger.jsonl") == []
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output
    assert "green: 10 cases: 10 passed" in green.stdout  # the 8 and Money(...) twice


TOKENS = """
class _Kind(tuple):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        made = _Kind(self + (name,))
        setattr(self, name, made)
        return made


Kind = _Kind()
Word = Kind.Word  # looks like a method of a module-level instance; it is a value


def kind_of(text):
    return "Word" if text.isalpha() else "Other"
"""


def test_a_surface_name_that_is_no_callable_once_imported_is_left_out_with_a_note(
    tmp_path: Path,
) -> None:
    """sqlparse's ``Text = Token.Text`` (a token type made by ``__getattr__``) read like a
    method of a module-level instance: recording stopped before any test with "is a
    _TokenType, not a callable". It is no member: the rest records and replays."""
    root = _project(tmp_path, SURFACE)
    write_files(
        root,
        {
            "src/shop/tokens.py": TOKENS,
            "tests/test_tokens.py": (
                "from shop.tokens import kind_of\n\n\ndef test_kind():\n"
                '    assert kind_of("abc") == "Word"\n'
            ),
        },
    )
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert "1 name(s) of a package surface are not functions once imported" in recorded.output
    assert "shop.tokens.Word" in recorded.output
    assert rows_of(root / "lockstep/shop.tokens.Word.ledger.jsonl") == []
    assert rows_of(root / "lockstep/shop.tokens.kind_of.ledger.jsonl") != []
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output


def test_a_configured_target_that_is_no_callable_is_still_a_one_line_error(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path, '[[ledger]]\nname = "word"\ntarget = "shop.tokens:Word"\n')
    write_files(root, {"src/shop/tokens.py": TOKENS})
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code != 0
    assert "is a _Kind, not a callable" in recorded.output, recorded.output


REEXPORTING = {
    "lockstep.toml": '[[ledger]]\npackage = "calc"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/calc/__init__.py": (
        "from calc._core import Acc, add\nfrom calc._core import _hidden\n\n"
        '__all__ = ["Acc", "add"]\n'
    ),
    "src/calc/_core.py": (
        "def add(a, b):\n    return a + b\n\n\ndef _hidden(x):\n    return x\n\n\n"
        "class Acc:\n    def __init__(self):\n        self.items = []\n\n"
        "    def total(self, extra):\n        return sum(self.items) + extra\n"
    ),
    "tests/test_calc.py": (
        "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n\n\n"
        "def test_total():\n    acc = calc.Acc()\n    acc.items.append(4)\n"
        "    assert acc.total(1) == 5\n"
    ),
}


def test_what_a_public_module_re_exports_from_a_private_one_is_its_surface(
    tmp_path: Path,
) -> None:
    """dateutil.parser.parse is defined in dateutil/parser/_parser.py and re-exported:
    users call it by the public name, so the surface records it there, once."""
    write_files(tmp_path, REEXPORTING)
    from lockstep.surface import surface

    targets = [m.target for m in surface("calc", tmp_path, where="test")]
    assert targets == ["calc:Acc.total", "calc:add"]
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert len(rows_of(tmp_path / "lockstep/calc.add.ledger.jsonl")) == 1
    assert len(rows_of(tmp_path / "lockstep/calc.Acc.total.ledger.jsonl")) == 1
    green = run_cli("replay", cwd=tmp_path)
    assert green.code == 0, green.output
    core = tmp_path / "src/calc/_core.py"
    core.write_text(core.read_text().replace("return a + b", "return a + b + 0.0"))
    red = run_cli("replay", cwd=tmp_path)
    assert red.code == 1, red.output
    assert "calc.add" in red.stdout


BOUND_ALIAS = {
    "lockstep.toml": '[[ledger]]\npackage = "iso"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/iso/__init__.py": "",
    "src/iso/parsing.py": (
        "class Parser:\n    def __init__(self, sep):\n        self._sep = sep\n\n"
        "    def minutes(self, text):\n        h, m = text.split(self._sep)\n"
        "        if int(m) > 59:\n            raise ValueError('minutes')\n"
        "        return int(h) * 60 + int(m)\n\n\n"
        "DEFAULT = Parser(':')\nminutes = DEFAULT.minutes\n"
    ),
    "tests/test_iso.py": (
        "import pytest\n\nfrom iso.parsing import minutes\n\n\n"
        "def test_minutes():\n    assert minutes('1:30') == 90\n"
        "    with pytest.raises(ValueError):\n        minutes('1:60')\n"
    ),
}


def test_a_module_level_alias_of_a_bound_method_is_surface(tmp_path: Path) -> None:
    """dateutil's ``isoparse = DEFAULT_ISOPARSER.isoparse``: the public function users
    call is a method of a module-level instance."""
    write_files(tmp_path, BOUND_ALIAS)
    from lockstep.surface import surface

    assert "iso.parsing:minutes" in [m.target for m in surface("iso", tmp_path, where="t")]
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert len(rows_of(tmp_path / "lockstep/iso.parsing.minutes.ledger.jsonl")) == 2
    green = run_cli("replay", cwd=tmp_path)
    assert green.code == 0, green.output
    source = tmp_path / "src/iso/parsing.py"
    source.write_text(source.read_text().replace("int(m) > 59", "int(m) > 60"))
    red = run_cli("replay", cwd=tmp_path)
    assert red.code == 1, red.output


def test_a_large_surface_is_summed_up_and_only_ledgers_with_something_to_say_are_printed(
    tmp_path: Path,
) -> None:
    functions = "\n".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(14))
    module = functions + (  # a callable iterator: not one the recorder relays
        "\ndef evens(n):\n    return iter(iter(range(0, n, 2)).__next__, None)\n"
    )
    tests = "\n".join(f"def test_f{i}():\n    assert wide.f{i}(1) == {1 + i}\n" for i in range(12))
    tests += "\ndef test_evens():\n    assert list(wide.evens(5)) == [0, 2, 4]\n"
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\npackage = "wide"\n',
            "src/wide/__init__.py": module,
            "tests/test_wide.py": "import wide\n\n" + tests,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        },
    )
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    out = recorded.stdout
    assert "15 ledger(s): saw 13 call(s); added 12 row(s), replaced 0, refused 0" in out
    assert "SKIPPED 1 call(s) (7.7%) whose values cannot be frozen" in out
    assert "most skipped: 1 call(s): result: cannot freeze a builtins.callable_iterator" in out
    # the ledger with a hole is printed in full; the twelve routine ones are counted
    assert "wide.evens (create) → lockstep/wide.evens.ledger.jsonl" in out
    assert "wide.f0 (create)" not in out
    assert "14 other ledger(s) recorded with nothing to note: added 12 row(s)" in out
    assert (
        "2 of them saw no call from the suite and hold no row, so they guard nothing: "
        "wide.f12, wide.f13"
    ) in out
    status = run_cli("status", cwd=tmp_path)
    assert status.code == 0, status.output
    lines = {line.split()[0]: line for line in status.stdout.splitlines()[1:] if line.strip()}
    for name in ("wide.f12", "wide.f13"):  # files with no row: said, not just "ok"
        assert "ok (no rows: it guards nothing (no call was recorded, or each was" in lines[name]
    assert lines["wide.f0"].rstrip().endswith("ok")
    one = pytest_in(tmp_path, "--lockstep-record", "--lockstep-new-only", "-q", "-k", "f0", "tests")
    assert one.code == 0, one.output  # a run of one test: the others keep their rows
    assert "3 of them saw no call from the suite and hold no row" in one.stdout, one.output
    assert "wide.f12, wide.f13, wide.evens\n" in one.stdout, one.output  # evens': skipped

    (tmp_path / "lockstep").rename(tmp_path / "first")
    verbose = pytest_in(tmp_path, "--lockstep-record", "-v", "tests")
    assert verbose.code == 0, verbose.output
    for i in range(14):
        assert f"wide.f{i} (create) → lockstep/wide.f{i}.ledger.jsonl" in verbose.stdout
    assert "other ledger(s) recorded with nothing to note" not in verbose.stdout


TESTED_PRIVATE = {
    "lockstep.toml": '[[ledger]]\npackage = "dates"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/dates/__init__.py": (
        "class Day:\n"
        "    def __init__(self, month, day):\n"
        "        self.month, self.day = month, day\n"
        "        self._check()\n\n"
        "    def _check(self):\n"
        "        if not 1 <= self.day <= _length(self.month):\n"
        "            raise ValueError('day out of range')\n\n"
        "    def iso(self):\n"
        "        return f'{self.month:02}-{self.day:02}'\n\n\n"
        "def _length(month):\n"
        "    return 29 if month == 2 else 30 + (month + month // 8) % 2\n"
    ),
    "tests/test_dates.py": (
        "from dates import Day, _length\n\n\n"
        "def test_iso():\n"
        "    assert Day(3, 4).iso() == '03-04'\n\n\n"
        "def test_lengths():  # the suite pins a private helper directly\n"
        "    assert [_length(m) for m in (1, 2, 4, 12)] == [31, 29, 30, 31]\n\n\n"
        "def test_last_day_is_valid():\n"
        "    Day(1, 31)\n"
    ),
}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("return 29 if month == 2", "return 28 if month == 2"),  # only _length's test sees it
        ("1 <= self.day <= _length", "1 <= self.day < _length"),  # only a construction sees it
    ],
)
def test_what_the_suite_calls_directly_beyond_the_surface_is_frozen_too(
    tmp_path: Path, old: str, new: str
) -> None:
    """A suite that tests a private helper or a constructor catches a change there; so does
    the package ledger, whose tested members are written once the suite calls them."""
    write_files(tmp_path, TESTED_PRIVATE)
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    oracle = tmp_path / "lockstep"
    assert len(rows_of(oracle / "dates._length.ledger.jsonl")) == 4
    assert len(rows_of(oracle / "dates.Day.__init__.ledger.jsonl")) == 2
    assert not (oracle / "dates.Day._check.ledger.jsonl").exists()  # only __init__ calls it
    status = run_cli("status", cwd=tmp_path)
    assert "dates.Day._check" not in status.stdout and "dates._length" in status.stdout
    assert run_cli("replay", cwd=tmp_path).code == 0

    module = tmp_path / "src/dates/__init__.py"
    module.write_text(module.read_text().replace(old, new))
    suite = pytest_in(tmp_path, "-q", "tests")
    assert suite.code == 1  # the suite catches it ...
    red = run_cli("replay", cwd=tmp_path)
    assert red.code == 1, red.output  # ... and so does the gate


def test_private_false_keeps_to_the_public_surface(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {**TESTED_PRIVATE, "lockstep.toml": '[[ledger]]\npackage = "dates"\nprivate = false\n'},
    )
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    names = sorted(p.name for p in (tmp_path / "lockstep").glob("*.ledger.jsonl"))
    assert names == ["dates.Day.iso.ledger.jsonl"]


def test_a_call_from_the_package_s_own_code_is_no_row_and_its_shipped_tests_are_outside(
    tmp_path: Path,
) -> None:
    """``__iter__`` is no member, so nothing marks its call of ``normalized`` as inside a
    recorded call: the calling frame's module tells that the package is calling itself.
    Tests shipped inside the package (``bag/tests/``) are callers from outside."""
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\npackage = "bag"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/bag/__init__.py": (
                "class Bag:\n"
                "    def __init__(self, items):\n"
                "        self.items = items\n\n"
                "    def __iter__(self):\n"
                "        return iter(self.normalized())\n\n"
                "    def normalized(self):\n"
                "        return sorted(self.items)\n"
            ),
            "src/bag/tests/__init__.py": "",
            "src/bag/tests/test_bag.py": (
                "from bag import Bag\n\n\n"
                "def test_iter():\n"
                "    assert list(Bag([3, 1])) == [1, 3]\n\n\n"
                "def test_normalized():\n"
                "    assert Bag([2, 1]).normalized() == [1, 2]\n"
            ),
        },
    )
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "src/bag/tests")
    assert recorded.code == 0, recorded.output
    rows = rows_of(tmp_path / "lockstep/bag.Bag.normalized.ledger.jsonl")
    assert len(rows) == 1  # the test's own call; __iter__'s is the package calling itself
    assert len(rows_of(tmp_path / "lockstep/bag.Bag.__init__.ledger.jsonl")) == 2
    assert run_cli("replay", cwd=tmp_path).code == 0


def test_a_tested_member_whose_every_call_was_skipped_still_counts_in_the_summary(
    tmp_path: Path,
) -> None:
    """A private helper the suite calls only with values that cannot be frozen gets no
    ledger, but its skipped calls and their reason are in the run's summary, not lost."""
    files = dict(TESTED_PRIVATE)
    files["src/dates/__init__.py"] += "\n\ndef _locked(lock):\n    with lock:\n        return 1\n"
    files["tests/test_locked.py"] = (
        "import threading\n\nfrom dates import _locked\n\n\n"
        "def test_locked():\n"
        "    assert _locked(threading.Semaphore()) == 1\n"
        "    assert _locked(threading.Semaphore()) == 1\n"
    )
    write_files(tmp_path, files)
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert not (tmp_path / "lockstep/dates._locked.ledger.jsonl").exists()
    out = recorded.output
    assert "3 ledger(s) and 1 member(s) without one: saw 9 call(s)" in out, out
    assert "SKIPPED 2 call(s) (22.2%)" in out and "cannot freeze a threading.Semaphore" in out
    assert "dates._locked: no ledger: the tests called it 2 time(s), every call skipped" in out
    member = next(line for line in out.splitlines() if line.startswith("dates._locked: no ledger"))
    assert "2 call(s): " in member and "cannot freeze a threading.Semaphore" in member, member
    assert run_cli("replay", cwd=tmp_path).code == 0


def test_a_name_the_package_deletes_once_imported_is_no_member(tmp_path: Path) -> None:
    """toolz's ``from ._version import get_versions``, ``__version__ = get_versions()...``,
    then ``del get_versions``: the name is gone once the package is imported, and a
    surface that held it stopped the whole recording ("module 'toolz' has no attribute
    'get_versions'")."""
    files = dict(REEXPORTING)
    files["src/calc/_version.py"] = "def get_versions():\n    return {'version': '1.0'}\n"
    files["src/calc/__init__.py"] = files["src/calc/__init__.py"].replace("__all__", "_all")
    files["src/calc/__init__.py"] += (
        "\nfrom ._version import get_versions\n__version__ = get_versions()['version']\n"
        "del get_versions\n\n\ndef _gone():\n    return 0\n\n\ndef gone():\n    return 1\n\n\n"
        "del gone\n"
    )
    write_files(tmp_path, files)
    from lockstep.surface import surface

    targets = [m.target for m in surface("calc", tmp_path, where="test")]
    assert targets == ["calc:Acc.total", "calc:add"]
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output


CURRIED = {
    "lockstep.toml": '[[ledger]]\npackage = "fn"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/fn/__init__.py": (
        "class curry:\n    def __init__(self, func):\n        self.func = func\n\n"
        "    def __call__(self, *args):\n        return self.func(*args)\n\n\n"
        "@curry\ndef double(x):\n    return 2 * x\n"
    ),
    "tests/test_fn.py": (
        "import fn\nfrom fn import curry, double\n\n\n"
        "def test_double():\n    assert isinstance(double, curry) and double.func.__name__ == 'double'\n"
        "    assert double(3) == 6\n    assert fn.double is double\n"
    ),
}


def test_an_object_of_the_package_s_callable_class_stays_itself(tmp_path: Path) -> None:
    """toolz's ``@curry def flip``: the name holds an object of the package's own callable
    class.  A function in its place was no ``curry`` (no ``.func``, no pickling by name:
    toolz's test failed only while recording); the object stays, and its calls are
    recorded where its class's ``__call__`` is."""
    write_files(tmp_path, CURRIED)
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert "object of the package's own callable class" in recorded.stdout, recorded.stdout
    rows = rows_of(tmp_path / "lockstep/fn.curry.__call__.ledger.jsonl")
    assert [row.args[1:] for row in rows] == [[3]]
    green = run_cli("replay", cwd=tmp_path)
    assert green.code == 0, green.output


WARNING_PACKAGE = {
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/sums/__init__.py": """
        import warnings


        def old_total(items):
            warnings.warn("use total", DeprecationWarning, stacklevel=2)
            return sum(items)


        def total(items):
            return sum(items)
        """,
    "tests/test_sums.py": """
        import pytest

        from sums import old_total, total


        def test_old_total_warns_at_its_caller():
            with pytest.warns(DeprecationWarning) as caught:
                assert old_total([1, 2]) == 3
            assert caught[0].filename == __file__


        def test_total():
            assert total([1, 2]) == 3
        """,
}


def test_a_member_whose_code_reads_its_own_stack_is_recorded_by_leaving_it_out(
    tmp_path: Path,
) -> None:
    """``warnings.warn(stacklevel=2)`` names the frame two levels up: under the recorder's
    wrapper, that is the wrapper, and a test checking where the warning points fails, so
    nothing is recorded.  ``exclude`` leaves that member unwrapped."""
    write_files(tmp_path, {**WARNING_PACKAGE, "lockstep.toml": '[[ledger]]\npackage = "sums"\n'})
    failed = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert failed.code != 0 and "nothing recorded" in failed.output, failed.output
    (tmp_path / "lockstep.toml").write_text('[[ledger]]\npackage = "sums"\nexclude = ["old_*"]\n')
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert rows_of(tmp_path / "lockstep/sums.total.ledger.jsonl")
    assert not (tmp_path / "lockstep/sums.old_total.ledger.jsonl").exists()
    status = run_cli("status", cwd=tmp_path)
    assert "old_total" not in status.stdout, status.stdout
    assert run_cli("replay", cwd=tmp_path).code == 0


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'package = "sums"\nexclude = ["olde_*"]',
            "lockstep.toml: ledger[0].exclude[0]: 'olde_*' names no member of package 'sums'",
        ),
        (
            'name = "t"\ntarget = "sums:total"\nexclude = ["x"]',
            "lockstep.toml: ledger[0].exclude: only with package",
        ),
        ('package = "sums"\nexclude = "old_*"', "ledger[0].exclude"),
    ],
)
def test_an_exclude_that_leaves_nothing_out_is_a_one_line_error(
    tmp_path: Path, table: str, message: str
) -> None:
    write_files(tmp_path, {**WARNING_PACKAGE, "lockstep.toml": f"[[ledger]]\n{table}\n"})
    result = run_cli("status", cwd=tmp_path)
    assert result.code == 2, result.output
    assert message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_script_module_that_exits_on_import_and_a_shipped_testsuite_are_no_surface(
    tmp_path: Path,
) -> None:
    """pint 0.24.4: ``pint/pint_convert.py`` parses ``sys.argv`` when imported, so importing
    it to wrap its functions read pytest's arguments and exited: pytest ended with an
    INTERNALERROR.  And its suite ships as ``pint/testsuite/``, whose ``setup_class`` was
    wrapped as a member and then called without its class by pytest."""
    files = {
        "lockstep.toml": '[[ledger]]\npackage = "units"\n',
        "pyproject.toml": (
            '[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["src/units/testsuite"]\n'
        ),
        "src/units/__init__.py": "def meters(feet):\n    return round(feet * 0.3048, 4)\n",
        "src/units/convert.py": """
            import argparse

            from units import meters

            parser = argparse.ArgumentParser()
            parser.add_argument("feet", type=float)
            args = parser.parse_args()


            def main():
                print(meters(args.feet))
            """,
        "src/units/testsuite/__init__.py": "",
        "src/units/testsuite/helpers.py": """
            class UnitsTestCase:
                @classmethod
                def setup_class(cls):
                    cls.factor = 0.3048
            """,
        "src/units/testsuite/test_units.py": """
            from units import meters
            from units.testsuite.helpers import UnitsTestCase


            class TestMeters(UnitsTestCase):
                def test_meters(self):
                    assert meters(10) == round(10 * self.factor, 4)
            """,
    }
    write_files(tmp_path, files)
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q")
    assert recorded.code == 0, recorded.output
    assert "INTERNALERROR" not in recorded.output
    assert "the module exits when imported" in recorded.output, recorded.output
    assert rows_of(tmp_path / "lockstep/units.meters.ledger.jsonl")
    assert not list((tmp_path / "lockstep").glob("*testsuite*"))
    replayed = run_cli("replay", cwd=tmp_path)
    assert replayed.code == 0, replayed.output


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        # the call itself asks to end the process: its outcome, a drift from its return
        (
            "def meters(feet):\n",
            "import sys\ndef meters(feet):\n    sys.exit(0)\n",
            "got raised SystemExit: 0",
        ),
        # the module exits as it is imported
        ("def meters(feet):\n", "import sys\nsys.exit(0)\ndef meters(feet):\n", "SystemExit: 0"),
    ],
)
def test_today_s_code_ending_the_process_is_red_not_a_silent_green(
    tmp_path: Path, old: str, new: str, says: str
) -> None:
    """``sys.exit(0)`` in the code under test ended ``lockstep replay`` with status 0 and
    no output: a green gate on a change that breaks every call."""
    files = {
        "lockstep.toml": '[[ledger]]\npackage = "units"\n',
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        "src/units/__init__.py": "def meters(feet):\n    return round(feet * 0.3048, 4)\n",
        "tests/test_units.py": "from units import meters\n\n\ndef test_m():\n    assert meters(10) == 3.048\n",
    }
    write_files(tmp_path, files)
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q")
    assert recorded.code == 0, recorded.output
    source = tmp_path / "src/units/__init__.py"
    source.write_text(source.read_text().replace(old, new))
    red = run_cli("replay", cwd=tmp_path)
    assert red.code == 1, red.output
    assert says in red.stdout, red.stdout
    assert "NOT GREEN" in red.stdout or "DRIFT:" in red.stdout, red.stdout


def test_an_exclude_may_name_a_member_recorded_beyond_the_surface(tmp_path: Path) -> None:
    """pyparsing's ``core.Tag._add_tag`` (a private method, wrapped while recording: its
    wrapper broke a test reading the stack) was refused as naming no member."""
    package = dict(WARNING_PACKAGE)
    package["src/sums/__init__.py"] = WARNING_PACKAGE["src/sums/__init__.py"].replace(
        "def total(items):\n            return sum(items)",
        "def total(items):\n            return _add(items)\n\n\n"
        "        def _add(items):\n            return sum(items)",
    )
    package["tests/test_sums.py"] = (
        "from sums import _add, total\n\n\ndef test_total():\n"
        "    assert total([1, 2]) == _add([1, 2]) == 3\n"
    )
    config = '[[ledger]]\npackage = "sums"\nexclude = ["_add", "old_*"]\n'
    write_files(tmp_path, {**package, "lockstep.toml": config})
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert rows_of(tmp_path / "lockstep/sums.total.ledger.jsonl")
    assert not (tmp_path / "lockstep/sums._add.ledger.jsonl").exists()
    (tmp_path / "lockstep.toml").write_text(config.replace('"_add"', '"_addd"'))
    typo = run_cli("status", cwd=tmp_path)
    assert typo.code == 2 and "'_addd' names no member of package 'sums'" in typo.stderr


def test_an_oracle_s_file_given_for_its_name_is_named_and_the_known_list_is_short(
    tmp_path: Path,
) -> None:
    """more-itertools' 194 members: ``lockstep replay lockstep/<name>.ledger.jsonl`` was a
    one-line error of seven kilobytes listing every name, none of them the one meant."""
    source = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(20))
    root = package_project(tmp_path / "many", "many", source, "def test_none():\n    pass\n")
    result = run_cli("replay", "lockstep/many.f13.ledger.jsonl", cwd=root)
    assert result.code == 2, result.output
    line = result.stderr.strip()
    assert "\n" not in line and "that is the file of oracle 'many.f13'" in line, line
    assert line.endswith(", … (+8))"), line  # twelve names of twenty, then how many more
