"""A change is judged by the base revision's settings, never by the ones it brings: a commit
that loosens ``[gates]`` or adds a ``[[rule]]`` hiding a difference does not pass under its
own looser settings, and the settings change is named like an oracle change."""

from __future__ import annotations

from gates_project import edit, frozen_shop, md_rows, row
from helpers import GitRepo, invoke_cli

OLD_TOTAL = """
def total(rows, rate=0.2):
    subtotal = 0
    for r in rows:
        subtotal = subtotal + r["price"] * r.get("qty", 1)
    return round(subtotal * (1 + rate), 2)
"""
EXTRACTED = """
def total(rows, rate=0.2):
    return round(_subtotal(rows) * (1 + rate), 2)


def _subtotal(rows):
    subtotal = 0
    for r in rows:
        subtotal = subtotal + r["price"] * r.get("qty", 1)
    return subtotal
"""


def _append(repo: GitRepo, text: str) -> None:
    with (repo.root / "lockstep.toml").open("a", encoding="utf-8") as fh:
        fh.write(text)


def _review(repo: GitRepo, rng: str) -> tuple[int, dict[str, tuple[str, str]]]:
    result = invoke_cli("review", rng, "--format", "md", cwd=repo.root)
    assert result.code in (0, 1), result.output
    return result.code, md_rows(result.stdout)


def test_a_loosened_budget_is_judged_by_the_budget_it_had(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    _append(repo, "\n[gates]\nbudget = [[1, 2]]\nseam_limit = 5\n")
    repo.commit("tight budget")
    text = (repo.root / "lockstep.toml").read_text()
    (repo.root / "lockstep.toml").write_text(text.replace("[[1, 2]]", "[[1, 100]]"))
    repo.commit("looser budget")
    edit(repo, "shop/prices.py", OLD_TOTAL, EXTRACTED)
    repo.commit("extract _subtotal")

    code, rows = _review(repo, "HEAD~2..HEAD")
    assert code == 1
    verdict, evidence = row(rows, "within budget")
    assert verdict == "fail", evidence
    assert "2 allowed: over budget" in evidence
    # the settings change is named, alone in its commit
    assert "oracle files changed alone in commit" in row(rows, "oracle files")[1]
    budget = invoke_cli("budget", "--base", "HEAD~2", cwd=repo.root)
    assert budget.code == 1, budget.output
    # judged from where the looser budget already holds, the extraction passes
    code, rows = _review(repo, "HEAD~1..HEAD")
    assert row(rows, "within budget")[0] == "pass"


def test_production_globs_emptied_first_still_see_the_code(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    base = repo.git("rev-parse", "HEAD")
    _append(repo, '\n[gates]\nproduction = ["nothing/**"]\n')
    repo.commit("no production code any more")
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    assert invoke_cli("record", "prices", "--force", cwd=repo.root).code == 0
    repo.commit("new totals, re-recorded with them")

    guard = invoke_cli("guard", "--base", base, cwd=repo.root)
    assert guard.code == 1, guard.output
    assert "production side:\n    shop/prices.py" in guard.stdout
    code, rows = _review(repo, f"{base}..HEAD")
    assert code == 1
    verdict, evidence = row(rows, "oracle files")
    assert verdict == "fail" and "shop/prices.py" in evidence


def test_a_rule_that_hides_a_difference_does_not_make_head_green(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    text = (repo.root / "lockstep.toml").read_text()
    text = text.replace(
        'render = "shop.render:render"', 'render = "shop.render:render"\nrules = ["totals"]'
    )
    text += (
        '\n[[rule]]\nname = "totals"\npattern = \'"total": *[0-9.]+\'\nreplace = \'"total": <T>\'\n'
    )
    (repo.root / "lockstep.toml").write_text(text)
    recorded = invoke_cli("record", "prices", "--force", cwd=repo.root)
    assert recorded.code == 0, recorded.output
    repo.commit("normalize the totals")
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    repo.commit("new totals")
    assert invoke_cli("replay", cwd=repo.root).code == 0  # the change's own rule hides it

    code, rows = _review(repo, "HEAD~2..HEAD")
    assert code == 1
    verdict, evidence = row(rows, "every oracle")
    assert verdict == "fail" and "prices (corpus)" in evidence
    # the settings commit is an oracle-side change: alone, it is allowed, and named
    assert "oracle files changed alone in commit" in row(rows, "oracle files")[1]
