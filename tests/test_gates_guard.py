"""``lockstep guard``: oracle files and production code never change together."""

from __future__ import annotations

from gates_project import edit, frozen_shop
from helpers import GitRepo, run_cli


def rerecord(repo: GitRepo) -> None:
    """Change behaviour and re-record the oracle to fit (the cheat the guard exists for)."""
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    result = run_cli("record", "prices", "--force", cwd=repo.root)
    assert result.code == 0, result.output


def test_code_only_change_passes(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "subtotal = subtotal + ", "subtotal += ")
    result = run_cli("guard", cwd=repo.root)
    assert result.code == 0, result.output
    assert "guard: ok" in result.stdout
    assert "1 production file(s), 0 oracle file(s)" in result.stdout


def test_oracle_rerecorded_with_code_fails_naming_both_sides(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    rerecord(repo)
    result = run_cli("guard", cwd=repo.root)
    assert result.code == 1, result.output
    assert "changes oracle files and production code together" in result.stdout
    assert "lockstep/prices.lock.json  (oracle file)" in result.stdout
    assert "lockstep/blobs/" in result.stdout  # the re-rendered document's blob
    assert "production side:\n    shop/prices.py" in result.stdout


def test_staged_checks_only_the_index(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    rerecord(repo)
    repo.git("add", "shop/prices.py")
    only_code = run_cli("guard", "--staged", cwd=repo.root)
    assert only_code.code == 0, only_code.output
    repo.git("add", "lockstep")
    both = run_cli("guard", "--staged", cwd=repo.root)
    assert both.code == 1, both.output
    assert "staged changes changes oracle files" in both.stdout


def test_base_checks_each_commit(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    base = repo.git("rev-parse", "HEAD")
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    repo.commit("change the total")
    run_cli("record", "prices", "--force", cwd=repo.root)
    repo.commit("re-record prices on its own")
    separate = run_cli("guard", "--base", base, cwd=repo.root)
    assert separate.code == 0, separate.output

    edit(repo, "shop/prices.py", "(1 + rate) + 1, 2)", "(1 + rate) + 2, 2)")
    run_cli("record", "prices", "--force", cwd=repo.root)
    bad = repo.commit("tweak the total and refresh the oracle")
    together = run_cli("guard", "--base", base, cwd=repo.root)
    assert together.code == 1, together.output
    assert f"commit {bad[:10]} changes oracle files and production code together" in (
        together.stdout
    )


def test_rules_and_fixtures_are_oracle_side(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "subtotal = subtotal + ", "subtotal += ")
    with (repo.root / "lockstep.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[[rule]]\nname = "cents"\npattern = "[0-9]+"\nreplace = "N"\n')
    rule = run_cli("guard", cwd=repo.root)
    assert rule.code == 1, rule.output
    assert "lockstep.toml  (config tables [[rule]])" in rule.stdout

    repo.git("checkout", "--", "lockstep.toml")
    (repo.root / "fixtures/two.json").write_text('[{"price": 6}]\n', encoding="utf-8")
    fixture = run_cli("guard", cwd=repo.root)
    assert fixture.code == 1, fixture.output
    assert "fixtures/two.json  (fixtures of corpus 'prices')" in fixture.stdout


def test_gates_settings_and_tests_are_not_oracle_side(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "subtotal = subtotal + ", "subtotal += ")
    with (repo.root / "lockstep.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[gates]\nseam_limit = 2\n")
    (repo.root / "tests/test_prices.py").write_text("import shop.prices\n", encoding="utf-8")
    result = run_cli("guard", cwd=repo.root)
    assert result.code == 0, result.output


def test_staged_and_base_are_exclusive(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    result = run_cli("guard", "--staged", "--base", "HEAD", cwd=repo.root)
    assert result.code == 2
    assert "exclusive" in result.stderr
