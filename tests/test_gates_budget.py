"""``lockstep budget``: fan-in from the real import graph, mapped to a number of changed lines."""

from __future__ import annotations

from helpers import GitRepo, invoke_cli

MONEY = """
def cents(amount):
    return int(round(amount * 100))


def fmt(amount):
    return f"{amount:.2f}"
"""

IMPORT_STYLES = (
    "from core import money\n",
    "import core.money\n",
    "import core.money as m\n",
    "from core.money import cents\n",
    "from . import money\n",
    "from .money import fmt\n",
)


def shop_with_fan_in(repo: GitRepo, fan_in: int, config: str = "") -> GitRepo:
    """A package where ``fan_in`` modules import ``core.money`` (in every spelling), plus
    modules that merely mention it in text or live in tests (neither counts)."""
    files: dict[str, str | bytes] = {
        "lockstep.toml": config or "[gates]\n",
        "core/__init__.py": "",
        "core/money.py": MONEY,
        "core/unrelated.py": "# money is mentioned here, but core.money is not imported\n",
        "tests/__init__.py": "",
        "tests/test_money.py": "from core import money\n",
    }
    for i in range(fan_in):
        files[f"core/user{i}.py"] = IMPORT_STYLES[i % len(IMPORT_STYLES)]
    repo.commit("legacy core", files)
    return repo


def change_lines(repo: GitRepo, n: int) -> None:
    """Touch ``n`` lines of core/money.py (each one edited, not added and removed twice)."""
    body = "".join(f"    total_{i} = {i}\n" for i in range(n))
    path = repo.root / "core/money.py"
    path.write_text(
        path.read_text(encoding="utf-8") + f"\n\ndef _added():\n{body}", encoding="utf-8"
    )


def test_fan_in_counts_real_importers_only(git_repo: GitRepo) -> None:
    repo = shop_with_fan_in(git_repo, 12)
    change_lines(repo, 2)  # def line + 2 body lines = 3 changed lines
    result = invoke_cli("budget", cwd=repo.root)
    assert result.code == 0, result.output
    assert "3 changed lines, 5 allowed: within budget (fan-in of core.money is 12)" in (
        result.stdout
    )
    assert "tests.test_money" not in result.stdout
    assert "core.unrelated" not in result.stdout


def test_over_budget_for_its_fan_in_fails_with_both_numbers(git_repo: GitRepo) -> None:
    repo = shop_with_fan_in(git_repo, 12)
    change_lines(repo, 7)
    result = invoke_cli("budget", cwd=repo.root)
    assert result.code == 1, result.output
    assert "budget: exceeded — 8 changed lines, 5 allowed: over budget" in result.stdout
    assert "fan-in of core.money is 12" in result.stdout


def test_low_fan_in_allows_more(git_repo: GitRepo) -> None:
    repo = shop_with_fan_in(git_repo, 2)
    change_lines(repo, 7)
    result = invoke_cli("budget", "core/money.py", cwd=repo.root)
    assert result.code == 0, result.output
    assert "8 changed lines, 20 allowed" in result.stdout


def test_beyond_the_last_row_asks_for_an_adapter_seam(git_repo: GitRepo) -> None:
    repo = shop_with_fan_in(git_repo, 26)
    change_lines(repo, 1)
    result = invoke_cli("budget", "core.money", cwd=repo.root)
    assert result.code == 1, result.output
    assert "0 allowed" in result.stdout
    assert "add an adapter seam first" in result.stdout


def test_rows_are_configurable_and_base_spans_commits(git_repo: GitRepo) -> None:
    repo = shop_with_fan_in(git_repo, 4, config="[gates]\nbudget = [[10, 2]]\n")
    base = repo.git("rev-parse", "HEAD")
    change_lines(repo, 1)
    repo.commit("first half")
    change_lines(repo, 1)
    since_head = invoke_cli("budget", cwd=repo.root)
    assert since_head.code == 0, since_head.output
    since_base = invoke_cli("budget", "--base", base, cwd=repo.root)
    assert since_base.code == 1, since_base.output
    assert "4 changed lines, 2 allowed" in since_base.stdout


def test_top_level_script_importers_count(git_repo: GitRepo) -> None:
    repo = shop_with_fan_in(git_repo, 3)
    repo.commit("script", {"export.py": "import core.money\n", "report.py": "import export\n"})
    change_lines(repo, 1)
    result = invoke_cli("budget", cwd=repo.root)
    assert "fan-in of core.money is 4" in result.stdout, result.output
    assert "core.user0, core.user1, core.user2, export" in result.stdout


def test_bad_budget_table_is_a_config_error(git_repo: GitRepo) -> None:
    repo = shop_with_fan_in(git_repo, 1, config="[gates]\nbudget = [[10, 5], [3, 20]]\n")
    change_lines(repo, 1)
    result = invoke_cli("budget", cwd=repo.root)
    assert result.code == 2
    assert "gates.budget[1]: fan-in limits must ascend" in result.stderr


def test_module_that_does_not_parse_is_reported(git_repo: GitRepo) -> None:
    repo = shop_with_fan_in(git_repo, 1)
    (repo.root / "core/money.py").write_text("def broken(:\n", encoding="utf-8")
    result = invoke_cli("budget", cwd=repo.root)
    assert result.code == 2
    assert "cannot build the import graph" in result.stderr
    assert "money.py, line 1" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_target_is_a_usage_error(git_repo: GitRepo) -> None:
    repo = shop_with_fan_in(git_repo, 1)
    result = invoke_cli("budget", "core.nothing", cwd=repo.root)
    assert result.code == 2
    assert "no module 'core.nothing' in the project" in result.stderr


def test_naming_a_little_used_target_does_not_lift_the_budget(git_repo: GitRepo) -> None:
    repo = shop_with_fan_in(git_repo, 12)
    change_lines(repo, 7)
    result = invoke_cli("budget", "core/user0.py", cwd=repo.root)
    assert result.code == 1, result.output
    assert "8 changed lines, 5 allowed: over budget (fan-in of core.money is 12)" in (result.stdout)
