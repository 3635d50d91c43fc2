"""A small legacy shop in a real git repository, frozen by a corpus oracle, for the gates."""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
from pathlib import Path

from helpers import GitRepo, invoke_cli

CONFIG = """
[[corpus]]
name = "prices"
fixtures = "fixtures/*.json"
render = "shop.render:render"
"""

PRICES = '''
"""Prices of order rows; legacy."""
from datetime import datetime


def total(rows, rate=0.2):
    subtotal = 0
    for r in rows:
        subtotal = subtotal + r["price"] * r.get("qty", 1)
    return round(subtotal * (1 + rate), 2)


def stamp():
    return datetime.now().isoformat()


class Ledger:
    def add(self, row, *, strict=False):
        return row
'''

RENDER = """
import json

from shop.prices import total


def render(path):
    return {"total": total(json.loads(path.read_text(encoding="utf-8")))}
"""

FILES: dict[str, str | bytes] = {
    "lockstep.toml": CONFIG,
    "shop/__init__.py": "",
    "shop/prices.py": PRICES,
    "shop/render.py": RENDER,
    "fixtures/one.json": '[{"price": 2, "qty": 3}]\n',
    "fixtures/two.json": '[{"price": 5}]\n',
    "tests/test_prices.py": "from shop.prices import total\n",
    ".gitignore": "__pycache__/\n",
}


_TEMPLATE: list[Path] = []
"""The frozen shop, built once per test process and copied into each test's repository."""


def _template() -> Path:
    if not _TEMPLATE:
        folder = Path(tempfile.mkdtemp(prefix="gates-shop-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        repo = GitRepo(folder / "repo")
        repo.commit("legacy shop", FILES)
        result = invoke_cli("record", "prices", cwd=repo.root)
        assert result.code == 0, result.output
        repo.commit("freeze prices")
        _TEMPLATE.append(repo.root)
    return _TEMPLATE[0]


def frozen_shop(repo: GitRepo) -> GitRepo:
    """The legacy code committed, then its oracle recorded and committed on its own.

    Recording is the slow part, so the repository is made once and copied
    (history, index and all) into ``repo``'s fresh folder.
    """
    shutil.rmtree(repo.root)
    shutil.copytree(_template(), repo.root, symlinks=True)
    return repo


def edit(repo: GitRepo, rel: str, old: str, new: str) -> None:
    path = repo.root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def md_rows(markdown: str) -> dict[str, tuple[str, str]]:
    """``--format md`` output → {check: (pass|fail, evidence)}."""
    rows: dict[str, tuple[str, str]] = {}
    for line in markdown.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 3 and cells[0] not in ("check", "---"):
            verdict = "pass" if "pass" in cells[1] else "fail"
            rows[cells[0]] = (verdict, cells[2])
    return rows


def row(rows: dict[str, tuple[str, str]], start: str) -> tuple[str, str]:
    """The one row whose check starts with ``start``."""
    found = [v for k, v in rows.items() if k.startswith(start)]
    assert len(found) == 1, (start, list(rows))
    return found[0]
