"""A package surface is read from the package's files as they are now, every time.

Its parsed modules are kept in the process (a recording's verifying interpreter loads the
configuration once per ledger fork), but a file is parsed again as soon as its bytes
differ: a member added, removed or renamed is seen on the next expansion.
"""

from __future__ import annotations

from pathlib import Path

from lockstep import surface as surfaces


def _targets(root: Path) -> list[str]:
    return sorted(m.target for m in surfaces.surface("shop", root, where="test"))


def test_a_changed_module_is_read_again(tmp_path: Path) -> None:
    pkg = tmp_path / "shop"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from shop.prices import total\n")
    prices = pkg / "prices.py"
    prices.write_text("def total(x):\n    return x\n")
    assert _targets(tmp_path) == ["shop.prices:total"]
    assert _targets(tmp_path) == ["shop.prices:total"]  # the same bytes: the kept tree

    prices.write_text("def total(x):\n    return x\n\n\ndef tax(x):\n    return x\n")
    assert _targets(tmp_path) == ["shop.prices:tax", "shop.prices:total"]

    prices.write_text("def _total(x):\n    return x\n")
    assert _targets(tmp_path) == []
    tested = surfaces.tested_members("shop", tmp_path, where="test")
    assert "shop.prices:_total" in [m.target for m in tested]


def test_a_surface_handed_out_twice_is_two_lists(tmp_path: Path) -> None:
    pkg = tmp_path / "shop"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("def total(x):\n    return x\n")
    first = surfaces.surface("shop", tmp_path, where="test")
    first.clear()  # a caller's own list
    assert _targets(tmp_path) == ["shop:total"]
