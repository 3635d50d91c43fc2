"""A refactor that renames what a recorded value names is the change's failure, not a bad file.

A ledger row can name a function of the package (``{"$fn": "billing.rules:round_half"}``
handed to a target as a key) or a class of it (``{"$obj": ["billing.cart:Basket", ...]}``).
A refactor that renamed the function, the class or its module made the row unreadable,
and ``lockstep replay`` ended the whole run with exit 2 and one line, as for a forged
file, with no word on the other ledgers.  A name of the targets' own package that today's
code no longer defines is now reported on each row that names it (an error, exit 1), with
the rest of the replay; a name outside the package is refused as before (exit 2).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import recorded, run_cli

FILES = {
    "lockstep.toml": """
        [lockstep]
        dir = "lockstep"

        [[ledger]]
        name = "apply"
        target = "billing.rules:apply"

        [[ledger]]
        name = "total"
        target = "billing.cart:total"

        [[ledger]]
        name = "vat"
        target = "billing.rules:vat"
    """,
    "billing/__init__.py": "",
    "billing/rounding.py": """
        def round_half(value):
            return int(value * 2 + 0.5) / 2
    """,
    "billing/rules.py": """
        import os

        from billing.rounding import round_half


        def apply(rule, amount):
            return rule(amount) + 1


        def vat(amount):
            return round_half(amount * 1.2)


        def make_rule(rate):
            def rule(amount):
                return amount * rate

            return rule
    """,
    "billing/cart.py": """
        class Basket:
            def __init__(self, prices):
                self.prices = list(prices)
                self.priced = self.net  # a bound method kept: {"$method": [basket, "net"]}

            def net(self, price):
                return price


        def total(basket):
            return sum(basket.prices)
    """,
    "tests/test_billing.py": """
        from billing.cart import Basket, total
        from billing.rounding import round_half
        from billing.rules import apply, make_rule, vat


        def test_apply():
            assert apply(round_half, 2.3) == 3.5
            assert apply(make_rule(2), 3) == 7


        def test_total():
            assert total(Basket([3, 4])) == 7


        def test_vat():
            assert vat(10) == 12.0
    """,
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("renamed") / "project"
    recorded(root, FILES)
    apply_rows = (root / "lockstep/apply.ledger.jsonl").read_text()
    assert '{"$fn":"billing.rounding:round_half"}' in apply_rows
    assert '{"$closure":["billing.rules:make_rule","rule",0,{"rate":2}]}' in apply_rows
    assert '"billing.cart:Basket"' in (root / "lockstep/total.ledger.jsonl").read_text()
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output
    return root


def _copy(project: Path, tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(project, root)
    return root


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))


def test_a_renamed_function_is_an_error_on_its_rows(project: Path, tmp_path: Path) -> None:
    root = _copy(project, tmp_path)
    _edit(root, "billing/rounding.py", "def round_half(", "def round_to_half(")
    _edit(root, "billing/rules.py", "import round_half", "import round_to_half as round_half")
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "ERROR apply::" in red.stdout
    assert "billing.rounding no longer defines 'round_half'" in red.stdout
    table = {line.split()[0]: line.split()[1:] for line in red.stdout.splitlines() if line}
    assert table["total"][0] == "1" and table["vat"][0] == "1"  # the others replayed, green


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("def rule(amount):", "def scaled(amount):", "make_rule no longer holds"),
        ("return amount * rate", "return amount * rate * unit", "closes over ['rate', 'unit']"),
        ("def make_rule(rate):", "def rule_of(rate):", "no longer defines 'make_rule'"),
    ],
)
def test_a_changed_closure_is_an_error_on_its_rows(
    project: Path, tmp_path: Path, old: str, new: str, said: str
) -> None:
    root = _copy(project, tmp_path)
    _edit(root, "billing/rules.py", old, new)
    if "unit" in new:
        _edit(root, "billing/rules.py", "def make_rule(rate):", "def make_rule(rate, unit=1):")
    red = run_cli("replay", "apply", cwd=root)
    assert red.code == 1, red.output
    assert said in red.stdout, red.stdout


def test_a_renamed_class_is_an_error_on_its_rows(project: Path, tmp_path: Path) -> None:
    root = _copy(project, tmp_path)
    _edit(root, "billing/cart.py", "class Basket:", "class Cart:")
    red = run_cli("replay", "total", cwd=root)
    assert red.code == 1, red.output
    assert "billing.cart no longer defines 'Basket'" in red.stdout


def test_a_renamed_method_a_value_keeps_bound_is_an_error_on_its_rows(
    project: Path, tmp_path: Path
) -> None:
    root = _copy(project, tmp_path)
    _edit(root, "billing/cart.py", "def net(self, price):", "def net_of(self, price):")
    _edit(root, "billing/cart.py", "self.priced = self.net ", "self.priced = self.net_of ")
    red = run_cli("replay", "total", cwd=root)
    assert red.code == 1, red.output
    assert "$method names 'net', which today's Basket no longer holds" in red.stdout


def test_a_removed_module_is_an_error_on_its_rows(project: Path, tmp_path: Path) -> None:
    root = _copy(project, tmp_path)
    moved = (root / "billing/rounding.py").read_text()
    (root / "billing/rounding.py").unlink()
    (root / "billing/money.py").write_text(moved)
    _edit(root, "billing/rules.py", "from billing.rounding", "from billing.money")
    red = run_cli("replay", "apply", cwd=root)
    assert red.code == 1, red.output
    assert "its module 'billing.rounding' no longer exists" in red.stdout


@pytest.mark.parametrize(
    "name",
    [
        "os:system",  # another package's
        "billing.rules:os",  # the package's module holds it, but it is no function of it
        "billing.planted:run",  # a module of the package nothing imports
    ],
)
def test_a_name_outside_the_package_is_still_refused_whole(
    project: Path, tmp_path: Path, name: str
) -> None:
    import hashlib

    root = _copy(project, tmp_path)
    (root / "billing/planted.py").write_text(
        "import pathlib\npathlib.Path('RAN').write_text('x')\ndef run(a):\n    return a\n"
    )
    path = root / "lockstep/apply.ledger.jsonl"
    header, *rows = (json.loads(line) for line in path.read_text().splitlines())
    rows[0]["args"][0] = {"$fn": name}
    key = json.dumps([rows[0]["args"], rows[0]["kwargs"]], sort_keys=True, separators=(",", ":"))
    rows[0]["id"] = hashlib.sha256(key.encode()).hexdigest()[:16]
    body = [json.dumps(r, sort_keys=True, separators=(",", ":")) for r in rows]
    header["digest"] = hashlib.sha256("".join(b + "\n" for b in body).encode()).hexdigest()
    path.write_text("\n".join([json.dumps(header, sort_keys=True), *body]) + "\n")
    refused = run_cli("replay", cwd=root)
    assert refused.code == 2, refused.output
    assert name in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert not (root / "RAN").exists()
