"""``pytest --lockstep-record``: record from a project's own test suite (plain and under xdist),
then replay each row as a pytest item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import copy_project, pytest_in, snapshot_tree, write_files

PRICING = """
from decimal import Decimal

SHARED = ("shared", "object")


def parse_amount(raw, strict=False):
    if raw == "shared":
        return SHARED
    if raw is None:
        return None
    if not raw.strip():
        if strict:
            raise ValueError("empty amount")
        return ""
    return (Decimal(raw), "USD")
"""

CART = """
import asyncio
from dataclasses import dataclass, field


@dataclass
class Cart:
    items: list = field(default_factory=list)
    rate = 2

    def total(self, extra=0):
        return sum(self.items) + extra

    @staticmethod
    def clean(text):
        return text.strip().lower()

    @classmethod
    def scaled(cls, n):
        return [n * cls.rate]


async def fetch_price(sku):
    await asyncio.sleep(0)
    if sku == "gone":
        raise KeyError(sku)
    return {"sku": sku, "price": len(sku)}
"""

CONFTEST = """
import pytest

from shop.pricing import parse_amount as early_parse  # bound before lockstep wraps the target


@pytest.fixture
def parse():
    return early_parse
"""

TESTS = """
import asyncio

import pytest

import shop.pricing
from shop.cart import Cart, fetch_price
from shop.pricing import parse_amount


@pytest.mark.parametrize("n", range(30))
def test_amounts(n):
    assert parse_amount(str(n % 10)) == (__import__("decimal").Decimal(n % 10), "USD")


def test_same_object_is_returned():
    assert parse_amount("shared") is shop.pricing.SHARED


def test_exception_keeps_its_traceback():
    with pytest.raises(ValueError, match="empty amount") as info:
        parse_amount("  ", strict=True)
    assert info.traceback[-1].name == "parse_amount"


def test_via_module_attribute():
    assert shop.pricing.parse_amount(None) is None


def test_via_early_binding(parse):
    assert parse("7.5") == (__import__("decimal").Decimal("7.5"), "USD")


def test_methods():
    assert Cart([1, 2]).total(extra=3) == 6
    assert Cart.clean("  Hi ") == "hi"
    assert Cart.scaled(4) == [8]


def test_async():
    assert asyncio.run(fetch_price("ab")) == {"sku": "ab", "price": 2}
    with pytest.raises(KeyError):
        asyncio.run(fetch_price("gone"))
"""

CONFIG = """
[[ledger]]
name = "amount"
target = "shop.pricing:parse_amount"

[[ledger]]
name = "total"
target = "shop.cart:Cart.total"

[[ledger]]
name = "clean"
target = "shop.cart:Cart.clean"

[[ledger]]
name = "scaled"
target = "shop.cart:Cart.scaled"

[[ledger]]
name = "fetch"
target = "shop.cart:fetch_price"
"""

ALL = ("amount", "total", "clean", "scaled", "fetch")


def make_project(root: Path) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": CONFIG,
            "conftest.py": CONFTEST,
            "shop/__init__.py": "",
            "shop/pricing.py": PRICING,
            "shop/cart.py": CART,
            "tests/test_shop.py": TESTS,
        },
    )
    return root


def record_args(*extra: str) -> list[str]:
    return [*(f"--lockstep-record={name}" for name in ALL), *extra]


def ledger_rows(root: Path, name: str) -> list[dict[str, object]]:
    lines = (root / f"lockstep/{name}.ledger.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("plain"))
    result = pytest_in(root, "-q", *record_args())
    assert result.code == 0, result.output
    assert "lockstep ledger recording" in result.stdout
    return root


def test_recording_keeps_the_suite_green_and_writes_every_ledger(plain: Path) -> None:
    amount = ledger_rows(plain, "amount")
    inputs = sorted(json.dumps([r["args"], r["kwargs"]]) for r in amount)
    # 10 distinct digits, "shared", "  " strict, None, and "7.5" through the early binding
    assert len(amount) == 14
    assert json.dumps([["7.5"], {}]) in inputs
    assert json.dumps([[None], {}]) in inputs
    raised = [r for r in amount if not r["ok"]]
    assert raised == [
        {
            "args": ["  "],
            "exc_stem": "empty amount",
            "exc_type": "ValueError",
            "fn": "shop.pricing:parse_amount",
            "id": raised[0]["id"],
            "kwargs": {"strict": True},
            "ok": False,
        }
    ]


def test_methods_staticmethods_classmethods_and_async(plain: Path) -> None:
    (total,) = ledger_rows(plain, "total")
    assert total["args"][0] == {"$dataclass": ["shop.cart:Cart", {"items": [1, 2]}]}
    assert total["kwargs"] == {"extra": 3} and total["result"] == 6
    (clean,) = ledger_rows(plain, "clean")
    assert clean["args"] == ["  Hi "] and clean["result"] == "hi"
    (scaled,) = ledger_rows(plain, "scaled")
    assert scaled["args"] == [4] and scaled["result"] == [8]  # cls is implied, not recorded
    fetch = sorted(ledger_rows(plain, "fetch"), key=lambda r: str(r["ok"]))
    assert [r["ok"] for r in fetch] == [False, True]
    assert fetch[0]["exc_type"] == "KeyError" and fetch[1]["result"] == {"price": 2, "sku": "ab"}


def test_xdist_workers_write_the_same_ledger(plain: Path, tmp_path: Path) -> None:
    root = make_project(tmp_path)
    result = pytest_in(root, "-q", "-n", "2", *record_args(), xdist=True)
    assert result.code == 0, result.output
    for name in ALL:
        path = f"lockstep/{name}.ledger.jsonl"
        assert (root / path).read_bytes() == (plain / path).read_bytes(), name
    leftovers = [p.name for p in (root / "lockstep").iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_every_row_is_a_pytest_item_and_a_rewrite_goes_red(plain: Path, tmp_path: Path) -> None:
    root = copy_project(plain, tmp_path)
    green = pytest_in(root, "-q", "--lockstep", "lockstep")
    assert green.code == 0, green.output
    assert "19 passed" in green.stdout

    write_files(
        root,
        {
            "shop/pricing.py": PRICING.replace(
                'return (Decimal(raw), "USD")', 'return [Decimal(raw), "USD"]'
            )
        },
    )
    red = pytest_in(root, "-q", "--lockstep", "lockstep/amount.ledger.jsonl")
    assert red.code == 1, red.output
    assert "11 failed, 3 passed" in red.stdout
    assert "parse_amount('7.5')" in red.stdout
    assert "expected returned (Decimal('7.5'), 'USD')" in red.stdout
    assert "got returned [Decimal('7.5'), 'USD']" in red.stdout


def test_plain_record_refuses_an_existing_ledger(plain: Path, tmp_path: Path) -> None:
    copy_project(plain, tmp_path)
    before = snapshot_tree(tmp_path)
    result = pytest_in(tmp_path, "-q", "--lockstep-record=amount")
    assert result.code == 4, result.output
    assert (
        "lockstep/amount.ledger.jsonl already exists; say what you want: --lockstep-new-only "
        "(add rows for new inputs), --lockstep-refresh (re-record the rows this run saw) or "
        "--lockstep-trim (drop rows no call made)"
    ) in result.stderr
    assert snapshot_tree(tmp_path) == before
    # every ledger of the configuration: the message says it is not the one named alone
    every = pytest_in(tmp_path, "-q", "--lockstep-record")
    assert every.code == 4, every.output
    assert "ledgers exist already, such as lockstep/" in every.stderr, every.stderr
    assert snapshot_tree(tmp_path) == before
    again = pytest_in(tmp_path, "-q", "--lockstep-record=amount", "--lockstep-new-only")
    assert again.code == 0, again.output
    assert snapshot_tree(tmp_path) == before
    # the old spelling still works
    old = pytest_in(tmp_path, "-q", "--lockstep-record=amount", "--lockstep-record-mode=new-only")
    assert old.code == 0, old.output
    assert snapshot_tree(tmp_path) == before


def test_two_record_modes_are_a_usage_error(plain: Path, tmp_path: Path) -> None:
    for rel, data in snapshot_tree(plain).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    before = snapshot_tree(tmp_path)
    result = pytest_in(
        tmp_path, "-q", "--lockstep-record=amount", "--lockstep-new-only", "--lockstep-trim"
    )
    assert result.code == 4, result.output
    assert "one record mode, not --lockstep-new-only and --lockstep-trim" in result.stderr
    assert snapshot_tree(tmp_path) == before


def test_unknown_record_target_is_a_usage_error(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    result = pytest_in(root, "-q", "--lockstep-record=shop.pricing:nope")
    assert result.code == 4
    assert "--lockstep-record=shop.pricing:nope: no [[ledger]] in lockstep.toml" in result.stderr
    assert not (root / "lockstep").exists()


def test_a_mode_over_a_missing_ledger_is_a_usage_error(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    result = pytest_in(root, "-q", "--lockstep-record=amount", "--lockstep-trim")
    assert result.code == 4, result.output
    assert (
        "lockstep: lockstep/amount.ledger.jsonl does not exist yet; "
        "run 'pytest --lockstep-record=amount' without a mode first"
    ) in result.stderr
    assert not (root / "lockstep").exists()
