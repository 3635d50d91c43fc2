"""``lockstep guard``: oracle files and production code never change together."""

from __future__ import annotations

from pathlib import Path

from gates_project import edit, frozen_shop
from helpers import GitRepo, invoke_cli


def rerecord(repo: GitRepo) -> None:
    """Change behaviour and re-record the oracle to fit (the cheat the guard exists for)."""
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    result = invoke_cli("record", "prices", "--force", cwd=repo.root)
    assert result.code == 0, result.output


def test_code_only_change_passes(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "subtotal = subtotal + ", "subtotal += ")
    result = invoke_cli("guard", cwd=repo.root)
    assert result.code == 0, result.output
    assert "guard: ok" in result.stdout
    assert "1 production file(s), 0 oracle file(s)" in result.stdout


def test_oracle_rerecorded_with_code_fails_naming_both_sides(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    rerecord(repo)
    result = invoke_cli("guard", cwd=repo.root)
    assert result.code == 1, result.output
    assert "working tree: oracle files and production code change together" in result.stdout
    assert "    lockstep/prices.lock.json (oracle file)\n" in result.stdout
    # the re-rendered documents' blobs are counted, not listed hash by hash: two written,
    # and the two they replace removed (no lock refers to them any more)
    assert "    lockstep/blobs/ (4 blob file(s) of rendered output)\n" in result.stdout
    assert "production side:\n    shop/prices.py" in result.stdout


def test_staged_checks_only_the_index(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    rerecord(repo)
    repo.git("add", "shop/prices.py")
    only_code = invoke_cli("guard", "--staged", cwd=repo.root)
    assert only_code.code == 0, only_code.output
    repo.git("add", "lockstep")
    both = invoke_cli("guard", "--staged", cwd=repo.root)
    assert both.code == 1, both.output
    assert "guard: staged changes: oracle files and production code change together" in (
        both.stdout
    )


def test_base_checks_each_commit(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    base = repo.git("rev-parse", "HEAD")
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    repo.commit("change the total")
    invoke_cli("record", "prices", "--force", cwd=repo.root)
    repo.commit("re-record prices on its own")
    separate = invoke_cli("guard", "--base", base, cwd=repo.root)
    assert separate.code == 0, separate.output

    edit(repo, "shop/prices.py", "(1 + rate) + 1, 2)", "(1 + rate) + 2, 2)")
    invoke_cli("record", "prices", "--force", cwd=repo.root)
    bad = repo.commit("tweak the total and refresh the oracle")
    together = invoke_cli("guard", "--base", base, cwd=repo.root)
    assert together.code == 1, together.output
    assert f"commit {bad[:10]}: oracle files and production code change together" in (
        together.stdout
    )


def test_rules_and_fixtures_are_oracle_side(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "subtotal = subtotal + ", "subtotal += ")
    with (repo.root / "lockstep.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[[rule]]\nname = "cents"\npattern = "[0-9]+"\nreplace = "N"\n')
    rule = invoke_cli("guard", cwd=repo.root)
    assert rule.code == 1, rule.output
    assert "lockstep.toml (config tables [[rule]])" in rule.stdout

    repo.git("checkout", "--", "lockstep.toml")
    (repo.root / "fixtures/two.json").write_text('[{"price": 6}]\n', encoding="utf-8")
    fixture = invoke_cli("guard", cwd=repo.root)
    assert fixture.code == 1, fixture.output
    assert "fixtures/two.json (fixtures of corpus 'prices')" in fixture.stdout


def test_tests_are_not_oracle_side_and_gates_settings_are(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "subtotal = subtotal + ", "subtotal += ")
    (repo.root / "tests/test_prices.py").write_text("import shop.prices\n", encoding="utf-8")
    result = invoke_cli("guard", cwd=repo.root)
    assert result.code == 0, result.output
    # the judge's own settings: loosening them with the code is an oracle change too
    with (repo.root / "lockstep.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[gates]\nseam_limit = 2\n")
    result = invoke_cli("guard", cwd=repo.root)
    assert result.code == 1, result.output
    assert "lockstep.toml (config tables [gates])" in result.stdout


def test_staged_and_base_are_exclusive(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    result = invoke_cli("guard", "--staged", "--base", "HEAD", cwd=repo.root)
    assert result.code == 2
    assert "exclusive" in result.stderr


def test_merge_commit_of_a_clean_branch_passes(git_repo: GitRepo) -> None:
    """CI checks a pull request out as a merge commit whose diff is the whole branch; the
    branch's own commits are judged one by one, so oracle and code in separate commits pass."""
    repo = frozen_shop(git_repo)
    base = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    repo.commit("change the total")
    assert invoke_cli("record", "prices", "--force", cwd=repo.root).code == 0
    repo.commit("re-record prices on its own")
    repo.git("checkout", "-q", "main")
    repo.commit("unrelated work on main", {"README.txt": "shop\n"})
    repo.git("merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    result = invoke_cli("guard", "--base", base, cwd=repo.root)
    assert result.code == 0, result.output
    review = invoke_cli("review", f"{base}..HEAD", "--format", "md", cwd=repo.root)
    assert "oracle files changed alone in commit" in review.stdout, review.output


def test_pre_commit_hook_definition(git_repo: GitRepo) -> None:
    """The shipped hook has the fields the pre-commit framework requires, and its entry
    (run against the index, no file names) rejects a mixed commit."""
    manifest = (Path(__file__).parents[1] / ".pre-commit-hooks.yaml").read_text("utf-8")
    hooks = [
        dict(
            line.strip().lstrip("- ").split(": ", 1)
            for line in ("- " + block).splitlines()
            if line.startswith(("- ", "  ")) and ": " in line
        )
        for block in manifest.split("\n- ")[1:]
    ]
    assert [h["id"] for h in hooks] == ["lockstep-guard", "lockstep-scan"]
    assert hooks[1]["entry"] == "lockstep scan"
    assert hooks[1]["pass_filenames"] == "false"
    hook = hooks[0]
    assert hook["language"] == "python"
    assert hook["pass_filenames"] == "false"
    assert hook["always_run"] == "true"
    assert hook["stages"] == "[pre-commit, manual]"
    assert hook["minimum_pre_commit_version"].startswith("3.2.0")  # the stage names need it
    assert hook["name"]
    program, *args = hook["entry"].split()
    assert program == "lockstep"
    repo = frozen_shop(git_repo)
    rerecord(repo)
    repo.git("add", "-A")
    result = invoke_cli(*args, cwd=repo.root)
    assert result.code == 1, result.output
    assert "staged changes: oracle files and production code change together" in result.stdout
