"""The review's reach row: a change to code no recorded case runs fails it, though every
oracle replays green (nothing looked at that code)."""

from __future__ import annotations

from gates_project import edit, frozen_shop, md_rows, row
from helpers import GitRepo, invoke_cli

CHECK = "the changed code is run by recorded cases"


def review_rows(repo: GitRepo, rng: str = "HEAD~1..HEAD") -> tuple[int, dict[str, tuple[str, str]]]:
    result = invoke_cli("review", rng, "--format", "md", cwd=repo.root)
    assert result.code in (0, 1), result.output
    return result.code, md_rows(result.stdout)


def test_a_change_to_a_function_no_case_calls_fails_though_replay_is_green(
    git_repo: GitRepo,
) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "datetime.now().isoformat()", "datetime.now().isoformat(' ')")
    repo.commit("a space between date and time")
    code, rows = review_rows(repo)
    assert code == 1
    assert row(rows, "every oracle replays green")[0] == "pass"
    verdict, evidence = row(rows, CHECK)
    assert verdict == "fail"
    assert (
        "shop/prices.py:13: return datetime.now().isoformat() (in stamp): "
        "no recorded case runs it at BASE"
    ) in evidence


def test_a_changed_default_of_a_method_no_case_calls_names_the_method(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "strict=False", "strict=True")
    repo.commit("strict by default")
    _, rows = review_rows(repo)
    verdict, evidence = row(rows, CHECK)
    assert verdict == "fail"
    assert (
        "shop/prices.py:17: def add(self, row, *, strict=False): "
        "no recorded case calls Ledger.add at BASE"
    ) in evidence


def test_a_line_in_a_branch_no_case_takes_fails_and_one_every_case_runs_passes(
    git_repo: GitRepo,
) -> None:
    repo = frozen_shop(git_repo)
    edit(
        repo,
        "shop/prices.py",
        "    for r in rows:\n",
        "    for r in rows:\n        if r.get('free'):\n            continue\n",
    )
    repo.commit("free rows cost nothing")  # no fixture has a free row: replay stays green
    edit(repo, "shop/prices.py", "            continue\n", "            subtotal += 0\n")
    repo.commit("a free row adds nothing")
    _, rows = review_rows(repo)
    verdict, evidence = row(rows, CHECK)
    assert verdict == "fail"
    assert "shop/prices.py:9: continue (in total): no recorded case runs it at BASE" in evidence

    edit(
        repo,
        "shop/prices.py",
        "    return round(",
        "    subtotal = subtotal + 0\n    return round(",
    )
    repo.commit("inside total, on every case's path")
    _, rows = review_rows(repo)
    verdict, evidence = row(rows, CHECK)
    assert verdict == "pass", evidence
    assert (
        "1 changed statement(s) or function(s) at BASE, each run by one of 2 recorded cases"
        in evidence
    )


def test_comments_and_module_level_additions_need_no_case(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "def stamp():\n", "def stamp():\n    # the local time\n")
    edit(repo, "shop/prices.py", "\n\nclass Ledger:", "\nEPOCH = 0\n\n\nclass Ledger:")
    repo.commit("a comment, a constant")
    _, rows = review_rows(repo)
    assert row(rows, CHECK) == ("pass", "no changed statement at BASE needs a case")


def test_a_module_no_case_imports_is_unreached(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    repo.commit("an unused module", {"shop/unused.py": "def half(x):\n    return x / 2\n"})
    edit(repo, "shop/unused.py", "x / 2", "x // 2")
    repo.commit("floor it")
    _, rows = review_rows(repo)
    verdict, evidence = row(rows, CHECK)
    assert verdict == "fail"
    assert "shop/unused.py:2: return x / 2 (in half): no recorded case runs it at BASE" in evidence


def test_the_base_can_switch_the_row_off_and_the_change_cannot(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "isoformat()", "isoformat(' ')")
    edit(repo, "lockstep.toml", "[[corpus]]", "[gates]\nreach = false\n\n[[corpus]]")
    repo.commit("switch the row off together with the change")
    _, rows = review_rows(repo)
    assert row(rows, CHECK)[0] == "fail"  # judged by BASE's settings

    repo.commit("nothing")  # BASE now has reach = false
    edit(repo, "shop/prices.py", "isoformat(' ')", "isoformat('_')")
    repo.commit("another separator")
    _, rows = review_rows(repo)
    assert row(rows, CHECK) == ("pass", "not asked: [gates] reach = false at BASE")


def test_a_line_whose_comment_or_spacing_alone_changed_needs_no_case(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(
        repo,
        "shop/prices.py",
        "    return datetime.now().isoformat()",
        "    return datetime.now( ).isoformat()  # local time",
    )
    repo.commit("a comment on a line no case runs")
    _, rows = review_rows(repo)
    assert row(rows, CHECK) == ("pass", "no line of production code at BASE changed")
