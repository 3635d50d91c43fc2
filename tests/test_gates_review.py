"""``lockstep review``: the decision table, row by row, on commits that should pass and fail."""

from __future__ import annotations

from pathlib import Path

from gates_project import edit, frozen_shop, md_rows, row
from helpers import GitRepo, Result, invoke_cli, pytest_in, snapshot_tree

SAFE_EXTRACT = """
def total(rows, rate=0.2):
    return round(_subtotal(rows) * (1 + rate), 2)


def _subtotal(rows):
    subtotal = 0
    for r in rows:
        subtotal = subtotal + r["price"] * r.get("qty", 1)
    return subtotal
"""

OLD_TOTAL = """
def total(rows, rate=0.2):
    subtotal = 0
    for r in rows:
        subtotal = subtotal + r["price"] * r.get("qty", 1)
    return round(subtotal * (1 + rate), 2)
"""


def review_md(
    repo: GitRepo, rng: str = "HEAD~1..HEAD"
) -> tuple[Result, dict[str, tuple[str, str]]]:
    result = invoke_cli("review", rng, "--format", "md", cwd=repo.root)
    assert result.code in (0, 1), result.output
    return result, md_rows(result.stdout)


def test_safe_extraction_passes_every_row(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", OLD_TOTAL, SAFE_EXTRACT)
    repo.commit("extract _subtotal")
    result, rows = review_md(repo)
    assert result.code == 0, result.output
    assert len(rows) == 8
    assert all(verdict == "pass" for verdict, _ in rows.values()), rows
    assert "prices (corpus): 2/2 cases replay green" in row(rows, "every oracle")[1]
    assert "at BASE, each run by one of 2 recorded cases" in row(rows, "the changed code")[1]
    assert "new definition _subtotal" in row(rows, "one seam")[1]
    assert "### lockstep review `HEAD~1..HEAD`: passes" in result.stdout


def test_signature_change_fails(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(
        repo,
        "shop/prices.py",
        "def total(rows, rate=0.2):",
        "def total(rows, rate=0.2, *, cap=None):",
    )
    edit(
        repo,
        "shop/prices.py",
        "def add(self, row, *, strict=False):",
        "def add(self, row, strict=False):",
    )
    repo.commit("add a cap")
    result, rows = review_md(repo)
    assert result.code == 1
    verdict, evidence = row(rows, "public signatures")
    assert verdict == "fail"
    assert "def total(rows, rate=0.2) → def total(rows, rate=0.2, *, cap=None)" in evidence
    assert "Ledger.add" not in evidence  # the text shows the method itself
    assert "def add(self, row, *, strict=False) → def add(self, row, strict=False)" in evidence
    assert row(rows, "every oracle")[0] == "pass"  # replay cannot see this; the review can


def test_clock_read_through_an_alias_fails(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(
        repo,
        "shop/prices.py",
        '"""Prices of order rows; legacy."""\n',
        '"""Prices of order rows; legacy."""\n'
        "from datetime import datetime as dt\n"
        "import os as o\n",
    )
    edit(
        repo,
        "shop/prices.py",
        "    subtotal = 0\n",
        "    subtotal = 0\n    _today = dt.now()\n    _mode = o.getenv('SHOP_MODE')\n",
    )
    repo.commit("log when totals run")
    result, rows = review_md(repo)
    assert result.code == 1
    verdict, evidence = row(rows, "no new reads")
    assert verdict == "fail"
    assert "shop/prices.py:9: datetime.datetime.now (clock): _today = dt.now()" in evidence
    assert "os.getenv (environment)" in evidence
    assert "datetime.now().isoformat()" not in evidence  # stamp() read the clock already


def test_moving_an_existing_read_is_not_new(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(
        repo,
        "shop/prices.py",
        "    return datetime.now().isoformat()\n",
        "    return _now().isoformat()\n\n\ndef _now():\n    return datetime.now()\n",
    )
    repo.commit("extract _now")
    _, rows = review_md(repo)
    assert row(rows, "no new reads")[0] == "pass"
    assert row(rows, "one seam")[0] == "pass"


def test_added_print_fails_and_a_renamed_variable_does_not(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(
        repo,
        "shop/prices.py",
        "        return row\n",
        "        print('adding', row)\n        return row\n",
    )
    repo.commit("debug print")
    result, rows = review_md(repo)
    assert result.code == 1
    verdict, evidence = row(rows, "logging and printing")
    assert verdict == "fail"
    assert "shop/prices.py:18: added: print('adding', row)" in evidence

    edit(
        repo,
        "shop/prices.py",
        "        print('adding', row)\n        return row\n",
        "        print('adding', item)\n        return item\n",
    )
    edit(repo, "shop/prices.py", "def add(self, row, *,", "def add(self, item, *,")
    repo.commit("rename row to item")
    _, rows = review_md(repo)
    assert row(rows, "logging and printing")[0] == "pass"


def test_oracle_rerecorded_with_the_code_fails(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    assert invoke_cli("record", "prices", "--force", cwd=repo.root).code == 0
    sha = repo.commit("new totals, oracle refreshed")
    result, rows = review_md(repo)
    assert result.code == 1
    assert row(rows, "every oracle")[0] == "pass"  # green, because the judge was changed
    verdict, evidence = row(rows, "oracle files")
    assert verdict == "fail"
    assert f"commit {sha[:10]} changes oracle files" in evidence
    assert "lockstep/prices.lock.json" in evidence
    assert "production code (shop/prices.py)" in evidence


def test_behaviour_change_without_rerecord_is_red_at_head(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    repo.commit("new totals")
    result, rows = review_md(repo)
    assert result.code == 1
    verdict, evidence = row(rows, "every oracle")
    assert verdict == "fail"
    assert "2 of 2 cases red" in evidence


def test_two_new_functions_exceed_one_seam(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    (repo.root / "shop/extra.py").write_text("def helper():\n    return 1\n", encoding="utf-8")
    edit(
        repo, "shop/prices.py", "class Ledger:\n", "def _one():\n    return 1\n\n\nclass Ledger:\n"
    )
    repo.commit("two seams")
    result, rows = review_md(repo)
    assert result.code == 1
    verdict, evidence = row(rows, "one seam")
    assert verdict == "fail"
    assert "2 new definitions, limit 1" in evidence
    assert "shop/extra.py: new module" in evidence


def test_over_budget_fails(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    with (repo.root / "lockstep.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[gates]\nbudget = [[1, 2]]\nseam_limit = 5\n")
    repo.commit("tight budget")
    edit(repo, "shop/prices.py", OLD_TOTAL, SAFE_EXTRACT)
    repo.commit("extract _subtotal")
    result, rows = review_md(repo)
    assert result.code == 1
    verdict, evidence = row(rows, "within budget")
    assert verdict == "fail"
    assert "changed lines, 2 allowed: over budget (fan-in of shop.prices is 0)" in evidence


def test_reviewing_an_older_range_leaves_the_working_tree_alone(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", OLD_TOTAL, SAFE_EXTRACT)
    repo.commit("extract _subtotal")
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    repo.commit("new totals")
    (repo.root / "notes.txt").write_text("work in progress\n", encoding="utf-8")
    before = snapshot_tree(repo.root)
    result, rows = review_md(repo, "HEAD~2..HEAD~1")
    assert result.code == 0, result.output
    assert row(rows, "every oracle")[0] == "pass"
    assert snapshot_tree(repo.root) == before
    assert repo.git("worktree", "list").count("\n") == 0  # the temporary worktree is gone


def test_no_oracles_configured_fails_closed(git_repo: GitRepo) -> None:
    git_repo.commit("start", {"lockstep.toml": "[gates]\n", "app.py": "X = 1\n"})
    git_repo.commit("change", {"app.py": "X = 2\n"})
    result, rows = review_md(git_repo)
    assert result.code == 1
    verdict, evidence = row(rows, "every oracle")
    assert verdict == "fail"
    assert "no oracles configured" in evidence


def test_terminal_table_names_every_row(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(
        repo,
        "shop/prices.py",
        "    return round(subtotal",
        "    print(subtotal)\n    return round(subtotal",
    )
    repo.commit("print")
    result = invoke_cli("review", "HEAD~1", cwd=repo.root)
    assert result.code == 1
    assert "lockstep review HEAD~1..HEAD (1 commit(s))" in result.stdout
    assert "review: rejected — 1 row(s) failed: logging and printing unchanged" in result.stdout


def test_default_range_is_the_branch_against_its_upstream(
    git_repo: GitRepo, tmp_path: Path
) -> None:
    repo = frozen_shop(git_repo)
    clone = tmp_path / "clone"
    repo.git("clone", "-q", str(repo.root), str(clone))
    work = GitRepo.__new__(GitRepo)
    work.root = clone
    work.git("config", "user.email", "dev@example.invalid")
    work.git("config", "user.name", "Dev")
    edit(work, "shop/prices.py", OLD_TOTAL, SAFE_EXTRACT)
    work.commit("extract _subtotal")
    result = invoke_cli("review", "--format", "md", cwd=clone)
    assert result.code == 0, result.output
    assert "1 commit(s)" in result.stdout


def test_three_dot_range_reviews_from_the_merge_base(git_repo: GitRepo) -> None:
    """``BASE...HEAD`` (the README's CI form) reviews only the branch's own commits."""
    repo = frozen_shop(git_repo)
    repo.git("checkout", "-q", "-b", "feature")
    edit(repo, "shop/prices.py", OLD_TOTAL, SAFE_EXTRACT)
    repo.commit("extract _subtotal")
    repo.git("checkout", "-q", "main")
    edit(repo, "shop/prices.py", "        return row\n", "        print(row)\n        return row\n")
    repo.commit("main moves on: a print")
    repo.git("checkout", "-q", "feature")
    three, rows = review_md(repo, "main...HEAD")
    assert three.code == 0, three.output
    assert "1 commit(s)" in three.stdout
    two, rows = review_md(repo, "main..HEAD")
    assert two.code == 1  # against main's tip, main's print looks removed by the branch
    assert "removed (line at BASE): print(row)" in row(rows, "logging and printing")[1]


def test_markdown_keeps_html_from_printed_text_inert(git_repo: GitRepo) -> None:
    """A new ``print`` of HTML stays text in the pull request: an ``<img>`` is not drawn and
    ``<!--`` does not hide the rest of the table."""
    repo = frozen_shop(git_repo)
    edit(
        repo,
        "shop/prices.py",
        "        return row\n",
        "        print('<img src=x onerror=alert(1)> <!-- \\x1b[2J')\n        return row\n",
    )
    repo.commit("hostile print")
    result, rows = review_md(repo)
    assert result.code == 1
    assert "<img" not in result.stdout and "<!--" not in result.stdout
    assert "&lt;img src=x onerror=alert(1)&gt; &lt;!--" in result.stdout
    assert row(rows, "logging and printing")[0] == "fail"
    assert len(rows) >= 5  # the rows after the print are still in the table


def test_the_red_oracle_is_named_first_among_many(git_repo: GitRepo) -> None:
    """A dozen evidence lines are shown: the red oracle, fourteenth in the configuration,
    was hidden under "… and N more" behind twelve green ones."""
    repo = git_repo
    source = "".join(f"def f{i:02d}(x):\n    return x + {i}\n\n\n" for i in range(1, 15))
    tests = "from pkg import core\n" + "".join(
        f"\n\ndef test_f{i:02d}():\n    assert core.f{i:02d}(1) == {i + 1}\n" for i in range(1, 15)
    )
    repo.commit(
        "pkg",
        {
            "pkg/__init__.py": "",
            "pkg/core.py": source,
            "tests/test_core.py": tests,
            "lockstep.toml": '[[ledger]]\npackage = "pkg"\n',
        },
    )
    recorded = pytest_in(repo.root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    repo.commit("oracles")
    edit(repo, "pkg/core.py", "return x + 14", "return x + 15")
    repo.commit("change f14")
    result, rows = review_md(repo)
    assert result.code == 1
    verdict, evidence = row(rows, "every oracle")
    assert verdict == "fail"
    assert evidence.startswith("pkg.core.f14 (ledger): 1 of 1 cases red"), evidence
    assert "13 other oracle(s) replay green" in evidence


def test_a_generated_module_git_ignores_is_there_when_review_replays_a_commit(
    git_repo: GitRepo,
) -> None:
    """A package importing its build-written ``_version.py`` (setuptools-scm, hatch-vcs)
    replayed red in the worktree review makes of HEAD once any tracked file was edited."""
    repo = git_repo
    repo.commit(
        "pkg",
        {
            ".gitignore": "_version.py\n__pycache__/\n",
            "src/pkg/__init__.py": "from pkg._version import __version__\n",
            "src/pkg/core.py": "def double(x):\n    return 2 * x\n",
            "src/pkg/_version.py": '__version__ = "1.0"\n',
            "tests/test_core.py": "from pkg.core import double\n\n\ndef test_double():\n"
            "    assert double(2) == 4\n",
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "README.md": "readme\n",
            "lockstep.toml": '[[ledger]]\npackage = "pkg"\n',
        },
    )
    assert "_version.py" not in repo.git("ls-files")
    recorded = pytest_in(repo.root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    repo.commit("oracles")
    edit(repo, "src/pkg/core.py", "return 2 * x", "return x * 2")
    repo.commit("same behaviour")
    (repo.root / "README.md").write_text("readme, edited\n")  # the tree is not HEAD now
    _, rows = review_md(repo)
    verdict, evidence = row(rows, "every oracle")
    assert verdict == "pass", evidence
    assert (repo.root / "README.md").read_text() == "readme, edited\n"
