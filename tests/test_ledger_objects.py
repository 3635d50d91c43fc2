"""Objects of the project's own classes through the real CLI: every class shape freezes by
structure, methods and properties are targets, a changed attribute is drift even where
``__eq__`` says equal, tz-aware datetimes keep their tzinfo class, and an oracle naming a
class outside the project is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import GitRepo, run_cli

VALUES = '''
"""Legacy value classes of every shape the ledger must freeze."""
import dataclasses
import datetime as dt
import enum
from decimal import Decimal
from typing import NamedTuple

import attrs


class Money:
    """A plain class whose __eq__ ignores the currency (the ledger must not trust it)."""

    def __init__(self, amount, currency="EUR"):
        self.amount = Decimal(amount)
        self.currency = currency

    def __eq__(self, other):
        return isinstance(other, Money) and self.amount == other.amount

    __hash__ = None

    def add(self, other):
        return Money(self.amount + other.amount, self.currency)

    __add__ = add

    def __str__(self):
        return "%.2f %s" % (self.amount, self.currency)

    @property
    def cents(self):
        return int(self.amount * 100)

    @classmethod
    def parse(cls, text):
        amount, _, currency = text.partition(" ")
        return cls(amount, currency or "EUR")


class Account:
    """__slots__, and a method that changes the object it is called on."""

    __slots__ = ("owner", "entries")

    def __init__(self, owner):
        self.owner = owner
        self.entries = []

    def post(self, money):
        self.entries.append(money)
        return len(self.entries)


class Code(str):
    def __str__(self):
        return "overridden"


class Cents(int):
    pass


class Term(dt.timedelta):
    pass


class Day(dt.date):
    pass


class Tags(dict):
    pass


@dataclasses.dataclass(frozen=True)
class Line:
    sku: str
    qty: int
    price: Money


class Rate(NamedTuple):
    code: str
    pct: Decimal


class Kind(enum.Enum):
    SALE = "sale"
    REFUND = "refund"


class Perm(enum.Flag):
    R = 1
    W = 2
    X = 4


class Fixed(dt.tzinfo):
    """A tzinfo of the project's own: a fixed offset with a name."""

    def __init__(self, minutes, name):
        self.minutes = minutes
        self.name = name

    def utcoffset(self, when):
        return dt.timedelta(minutes=self.minutes)

    def tzname(self, when):
        return self.name

    def dst(self, when):
        return dt.timedelta(0)


class Node:
    def __init__(self):
        self.parent = self


@attrs.define
class Slot:
    """An attrs class (slotted: attrs writes its own __getstate__/__setstate__)."""

    code: str
    size: int = 1


class Label:
    """Hashable by its text: a set of labels is only as wide as __eq__ says."""

    def __init__(self, text):
        self.text = text

    def __eq__(self, other):
        return isinstance(other, Label) and self.text == other.text

    def __hash__(self):
        return hash(self.text)
'''

BOOK = '''
"""Legacy functions that take and return the project's own objects."""
from ledgerbook.values import Account, Cents, Code, Day, Kind, Line, Money, Perm, Rate, Tags, Term


def invoice_total(lines, rate, kind):
    total = Money("0")
    for line in lines:
        total = total + Money(line.price.amount * line.qty, line.price.currency)
    taxed = total.amount * (1 + rate.pct / 100)
    sign = -1 if kind is Kind.REFUND else 1
    return Money(sign * taxed.quantize(total.amount.__class__("0.01")), total.currency)


def stamp(when):
    return when.strftime("%Y-%m-%d %H%M%z %Z")


def shift(day, term):
    moved = day + term
    return Day(moved.year, moved.month, moved.day)


def normalize(code, tags, cents, perms):
    return Code(code.upper()), Tags(sorted(tags.items())), Cents(cents * 2), perms | Perm.R


def depth(node):
    return 1


def resize(slot, by):
    return type(slot)(slot.code, slot.size + by)


def widest(labels):
    return max(len(label.text) for label in labels)
'''

DRIVE = """
import datetime as dt
from decimal import Decimal

from ledgerbook.book import depth, invoice_total, normalize, resize, shift, stamp, widest
from ledgerbook.values import (
    Account, Cents, Code, Day, Fixed, Kind, Label, Line, Money, Node, Perm, Rate, Slot, Tags,
    Term,
)

lines = [Line("a", 2, Money("1.50")), Line("b", 1, Money("0.25", "EUR"))]
for kind in Kind:
    invoice_total(lines, Rate("std", Decimal("20")), kind)
invoice_total([], Rate("zero", Decimal("0")), Kind.SALE)
for minutes, name in [(90, "ACST"), (-300, "EST"), (0, "UTC")]:
    stamp(dt.datetime(2024, 1, 31, 12, 0, tzinfo=Fixed(minutes, name)))
shift(Day(2024, 1, 31), Term(days=30))
normalize(Code("ab"), Tags(b=2, a=1), Cents(3), Perm.W | Perm.X)
Money("1").add(Money("2", "USD"))
Money("1") + Money("0.5")
str(Money("3", "GBP"))
Money("2.5").cents
Money.parse("4.20 CHF")
account = Account("ann")
account.post(Money("1"))
account.post(Money("2"))
depth(Node())
widest(frozenset({Label("a"), Label("bb")}))
resize(Slot("s"), 2)
"""

LEDGERS = {
    "invoice_total": "ledgerbook.book:invoice_total",
    "stamp": "ledgerbook.book:stamp",
    "shift": "ledgerbook.book:shift",
    "normalize": "ledgerbook.book:normalize",
    "depth": "ledgerbook.book:depth",
    "widest": "ledgerbook.book:widest",
    "resize": "ledgerbook.book:resize",
    "money_add": "ledgerbook.values:Money.add",
    "money_str": "ledgerbook.values:Money.__str__",
    "money_cents": "ledgerbook.values:Money.cents",
    "money_parse": "ledgerbook.values:Money.parse",
    "account_post": "ledgerbook.values:Account.post",
}

CONFIG = "".join(
    f'[[ledger]]\nname = "{name}"\ntarget = "{target}"\ndriver = "drive.py"\n\n'
    for name, target in LEDGERS.items()
)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("objects") / "repo"
    repo = GitRepo(root)
    repo.commit(
        "legacy code",
        {
            "ledgerbook/__init__.py": "",
            "ledgerbook/values.py": VALUES,
            "ledgerbook/book.py": BOOK,
            "drive.py": DRIVE,
            "lockstep.toml": CONFIG,
        },
    )
    result = run_cli("record", cwd=root)
    assert result.code == 0, result.output
    repo.commit("freeze")
    return root


def _rows(root: Path, name: str) -> list[dict[str, object]]:
    lines = (root / "lockstep" / f"{name}.ledger.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines[1:] if line.strip()]


def _copy_with(recorded: Path, tmp_path: Path, old: str, new: str, file: str) -> Path:
    import shutil

    root = tmp_path / "changed"
    shutil.copytree(recorded, root)
    path = root / file
    source = path.read_text()
    assert old in source
    path.write_text(source.replace(old, new, 1))
    return root


def test_every_shape_records_and_replays_green(recorded: Path) -> None:
    for name in LEDGERS:
        assert _rows(recorded, name), f"{name}: no rows"
    text = json.dumps(_rows(recorded, "normalize"))
    for shape in ("ledgerbook.values:Code", "ledgerbook.values:Tags", "ledgerbook.values:Cents"):
        assert shape in text
    assert '["ledgerbook.values:Perm", ["R", "W", "X"]]' in text
    result = run_cli("replay", cwd=recorded)
    assert result.code == 0, result.output


def test_a_reference_cycle_freezes_as_a_ref_to_the_object_around_it(recorded: Path) -> None:
    rows = _rows(recorded, "depth")
    assert [row["args"] for row in rows] == [
        [{"$obj": ["ledgerbook.values:Node", {"state": {"parent": {"$ref": 0}}}]}]
    ]
    assert run_cli("replay", "depth", cwd=recorded).code == 0


def test_a_changed_attribute_is_drift_even_where_eq_says_equal(
    recorded: Path, tmp_path: Path
) -> None:
    root = _copy_with(
        recorded,
        tmp_path,
        "return Money(self.amount + other.amount, self.currency)",
        "return Money(self.amount + other.amount, self.currency.lower())",
        "ledgerbook/values.py",
    )
    result = run_cli("replay", "money_add", cwd=root)
    assert result.code == 1, result.output
    assert "currency" in result.output and "'eur'" in result.output


def test_a_method_that_changes_self_is_frozen_with_the_mutation(
    recorded: Path, tmp_path: Path
) -> None:
    rows = _rows(recorded, "account_post")
    assert len(rows) == 2
    assert all("0" in row["mutated"] for row in rows)  # type: ignore[operator]
    assert all("mutated" not in row for row in _rows(recorded, "money_add"))
    root = _copy_with(
        recorded,
        tmp_path,
        "self.entries.append(money)",
        "self.entries.insert(0, money)",
        "ledgerbook/values.py",
    )
    result = run_cli("replay", "account_post", cwd=root)
    assert result.code == 1, result.output


def test_properties_classmethods_and_dunders_are_targets(recorded: Path, tmp_path: Path) -> None:
    assert [row["result"] for row in _rows(recorded, "money_cents")] == [250]
    assert len(_rows(recorded, "money_str")) == 1
    parsed = _rows(recorded, "money_parse")
    assert "CHF" in json.dumps(parsed)
    root = _copy_with(
        recorded, tmp_path, 'return "%.2f %s"', 'return "%.1f %s"', "ledgerbook/values.py"
    )
    assert run_cli("replay", "money_str", cwd=root).code == 1


def test_tz_aware_datetimes_keep_their_tzinfo_class(recorded: Path, tmp_path: Path) -> None:
    rows = _rows(recorded, "stamp")
    assert len(rows) == 3
    assert all("ledgerbook.values:Fixed" in json.dumps(row["args"]) for row in rows)
    assert {row["result"] for row in rows} == {
        "2024-01-31 1200+0130 ACST",
        "2024-01-31 1200-0500 EST",
        "2024-01-31 1200+0000 UTC",
    }
    root = _copy_with(
        recorded, tmp_path, "return self.name", "return self.name.lower()", "ledgerbook/values.py"
    )
    result = run_cli("replay", "stamp", cwd=root)
    assert result.code == 1, result.output


def _rewrite_with_digest(path: Path, rows: list[dict[str, object]]) -> None:
    """The careful attacker: rows edited, ids recomputed, the header's count and digest fixed."""
    import hashlib

    header = json.loads(path.read_text().splitlines()[0])
    for row in rows:
        key = json.dumps(
            [row["args"], row.get("kwargs", {})], sort_keys=True, separators=(",", ":")
        )
        row["id"] = hashlib.sha256(key.encode()).hexdigest()[:16]
    rows.sort(key=lambda row: str(row["id"]))
    body = [json.dumps(r, sort_keys=True, separators=(",", ":")) for r in rows]
    header["rows"] = len(body)
    header["digest"] = hashlib.sha256("".join(b + "\n" for b in body).encode()).hexdigest()
    path.write_text("\n".join([json.dumps(header, sort_keys=True), *body]) + "\n")


@pytest.mark.parametrize("hostile", ["subprocess:Popen", "os:PathLike", "ledgerbook.planted:Boom"])
@pytest.mark.parametrize("field", ["args", "result"])
def test_an_oracle_naming_a_class_outside_the_project_is_refused(
    recorded: Path, tmp_path: Path, hostile: str, field: str
) -> None:
    root = _copy_with(recorded, tmp_path, "", "", "ledgerbook/values.py")
    (root / "ledgerbook" / "planted.py").write_text(
        "import pathlib\npathlib.Path('IMPORTED').write_text('x')\nclass Boom:\n    pass\n"
    )
    rows = _rows(root, "money_add")
    planted = {"$obj": [hostile, {"state": {"args": ["touch", "RAN"]}}]}
    if field == "args":
        rows[0]["args"] = [planted, planted]
    else:
        rows[0]["result"] = planted
    _rewrite_with_digest(root / "lockstep" / "money_add.ledger.jsonl", rows)
    result = run_cli("replay", "money_add", cwd=root)
    assert result.code == 2, result.output
    assert hostile in result.stderr and "not a class of the project" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (root / "IMPORTED").exists() and not (root / "RAN").exists()


def test_values_today_s_code_cannot_rebuild_are_an_error_not_a_corrupt_file(
    recorded: Path, tmp_path: Path
) -> None:
    assert len(_rows(recorded, "widest")) == 1
    root = _copy_with(
        recorded, tmp_path, "return hash(self.text)", "return 0", "ledgerbook/values.py"
    )
    source = (root / "ledgerbook/values.py").read_text()
    (root / "ledgerbook/values.py").write_text(
        source.replace("self.text == other.text", "len(self.text) > 0")
    )
    result = run_cli("replay", "widest", cwd=root)
    assert result.code == 1, result.output
    assert "do not rebuild with today's code" in result.output


def test_a_hash_that_raises_today_is_the_case_s_error_and_replay_goes_on(
    recorded: Path, tmp_path: Path
) -> None:
    """Rebuilding a set of the project's objects runs their ``__hash__``: raising there is
    what today's code does, so it is that case's error (exit 1), not a corrupt line that
    stops the replay (exit 2)."""
    root = _copy_with(
        recorded,
        tmp_path,
        "return hash(self.text)",
        "raise ValueError('no hash today')",
        "ledgerbook/values.py",
    )
    result = run_cli("replay", cwd=root)
    assert result.code == 1, result.output
    assert "do not rebuild with today's code" in result.output
    assert "which raised ValueError: no hash today" in result.output
    assert "malformed" not in result.output
    assert "passed" in result.output  # the other ledgers were replayed


@pytest.mark.parametrize(
    ("ledger", "old", "new"),
    [
        ("normalize", "Code(code.upper())", "Code(code.upper() + ' ')"),  # str subclass
        ("normalize", "Tags(sorted(tags.items()))", "Tags(sorted(tags.items())[1:])"),  # dict
        ("normalize", "Cents(cents * 2)", "Cents(cents * 2 + 1)"),  # int subclass
        ("normalize", "perms | Perm.R", "perms"),  # Flag combination
        ("shift", "moved = day + term", "moved = day + term + term"),  # date subclass
        ("invoice_total", "line.price.amount * line.qty", "line.price.amount"),  # dataclass
        ("invoice_total", "rate.pct / 100", "rate.pct / 10"),  # NamedTuple
        ("invoice_total", "kind is Kind.REFUND", "kind is Kind.SALE"),  # Enum
        ("resize", "slot.size + by", "slot.size - by"),  # attrs class
    ],
)
def test_a_change_behind_each_class_shape_is_drift(
    recorded: Path, tmp_path: Path, ledger: str, old: str, new: str
) -> None:
    assert _rows(recorded, ledger)
    root = _copy_with(recorded, tmp_path, old, new, "ledgerbook/book.py")
    result = run_cli("replay", ledger, cwd=root)
    assert result.code == 1, result.output
    assert "DRIFT" in result.stdout


def test_a_row_whose_recorded_object_does_not_thaw_is_refused_at_recording(
    tmp_path: Path,
) -> None:
    """A row is written only where what it recorded thaws in the verifying interpreter:
    the object a constructor left is read back by the class's own ``__setstate__``, which
    here accepts only kinds a test registered (none are, in a fresh interpreter).  Written,
    the row replayed green until a drift, then could not say what had drifted."""
    from helpers import pytest_in, write_files

    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\nname = "make"\ntarget = "kinds:Kind.__init__"\n',
            "kinds.py": (
                "KNOWN = set()\n\n\n"
                "class Kind:\n"
                "    def __init__(self, name):\n"
                "        self.name = name\n\n"
                "    def __getstate__(self):\n"
                "        return {'name': self.name}\n\n"
                "    def __setstate__(self, state):\n"
                "        if state['name'] not in KNOWN:\n"
                "            raise KeyError(state['name'])\n"
                "        self.name = state['name']\n"
            ),
            "tests/test_kinds.py": (
                "from kinds import KNOWN, Kind\n\n\n"
                "def test_kind():\n"
                "    KNOWN.add('spice')\n"
                "    assert Kind('spice').name == 'spice'\n"
            ),
        },
    )
    run = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert run.code == 0, run.output
    assert "refused" in run.output and "KeyError" in run.output, run.output
    header = (tmp_path / "lockstep/make.ledger.jsonl").read_text().splitlines()[0]
    assert '"rows":0' in header
