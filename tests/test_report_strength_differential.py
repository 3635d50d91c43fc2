"""``lockstep report --strength [--mutants]`` draws the strength findings on the source, and the
page shows the last ``replay --against`` run: both through the real CLI, in a real git repo."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import GitRepo, invoke_cli, write_files

FEES = """
def fee(amount, tier):
    if tier == "gold":
        return 0
    if amount > 100:
        return round(amount * 0.01, 2)
    return 1
"""

DRIVER = """
from shop.fees import fee


def main():
    for amount in (5, 50, 500):
        fee(amount, "std")
"""

CONFIG = """
[lockstep]
dir = "lockstep"

[[ledger]]
name = "fee"
target = "shop.fees:fee"
driver = "shop.drive:main"
"""


def _project(root: Path) -> GitRepo:
    write_files(
        root,
        {
            "lockstep.toml": CONFIG,
            "shop/__init__.py": "",
            "shop/fees.py": FEES,
            "shop/drive.py": DRIVER,
        },
    )
    repo = GitRepo(root)
    assert invoke_cli("record", cwd=root).code == 0
    repo.commit("freeze fee")
    return repo


def test_the_report_draws_unreached_lines_and_survivors_on_the_source(tmp_path: Path) -> None:
    repo = _project(tmp_path / "shop")
    result = invoke_cli(
        "report", "--strength", "--mutants", "--time-limit", "60s", "--out", "r.html", cwd=repo.root
    )
    assert result.code == 0, result.output
    page = (repo.root / "r.html").read_text(encoding="utf-8")
    strength = page[page.index('id="strength"') :]
    assert "shop/fees.py" in strength
    gold = re.search(
        r'<tr class="([\w ]*)"><td class="no">3</td><td class="code">\s*return 0', strength
    )
    assert gold is not None and gold.group(1) == "mutant uncovered"  # no recorded call is gold
    assert 'class="mutant">' in strength  # the "gold" string mutant survives on a reached line
    assert "mutants" in strength and "killed" in strength


def test_the_report_shows_the_last_differential_run(tmp_path: Path) -> None:
    repo = _project(tmp_path / "shop")
    assert 'id="differential"' not in _page(repo)
    (repo.root / "shop" / "fees.py").write_text(FEES.replace("    return 1\n", "    return 1.0\n"))
    repo.commit("fees as floats")
    against = invoke_cli("replay", "--against", "HEAD~1", "--generate", "20", cwd=repo.root)
    assert against.code == 1, against.output
    section = _page(repo)[_page(repo).index('id="differential"') :]
    assert 'class="fail"' in section and "the versions differ" in section


def test_mutants_without_strength_is_a_usage_error(tmp_path: Path) -> None:
    repo = _project(tmp_path / "shop")
    result = invoke_cli("report", "--mutants", cwd=repo.root)
    assert result.code == 2
    assert "--mutants: add --strength" in result.stderr


def _page(repo: GitRepo) -> str:
    assert invoke_cli("report", "--out", "r.html", cwd=repo.root).code == 0
    return (repo.root / "r.html").read_text(encoding="utf-8")
