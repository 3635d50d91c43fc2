"""``lockstep step [--revert]`` and ``lockstep brief``: the loop and the assistant's constraints."""

from __future__ import annotations

import re
import subprocess

from gates_project import PRICES, edit, frozen_shop
from helpers import GitRepo, invoke_cli, run_cli, snapshot_tree


def test_green_step(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "subtotal = subtotal + ", "subtotal += ")
    result = invoke_cli("step", cwd=repo.root)
    assert result.code == 0, result.output
    assert "probe:  ok — 1 case(s) probed, 2 runs each" in result.stdout  # the corpus, twice
    assert "prices (corpus): 2/2 cases replay green" in result.stdout
    assert "verdict: green" in result.stdout


def test_red_step_without_revert_touches_nothing(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    before = snapshot_tree(repo.root)
    result = invoke_cli("step", cwd=repo.root)
    assert result.code == 1
    assert "replay: RED" in result.stdout
    assert "verdict: red" in result.stdout
    assert snapshot_tree(repo.root) == before


def test_red_step_with_revert_saves_the_patch_then_restores_head(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    (repo.root / "shop/new_helper.py").write_text("def helper():\n    return 2\n")
    (repo.root / "shop/newpkg").mkdir()
    (repo.root / "shop/newpkg/__init__.py").write_text("X = 1\n")
    changed = snapshot_tree(repo.root)
    result = invoke_cli("step", "--revert", cwd=repo.root)
    assert result.code == 1, result.output
    match = re.search(r"the change is saved in (\S+\.patch)", result.stdout)
    assert match, result.stdout
    patch = match.group(1)
    assert "/.git/lockstep/step-" in patch
    assert (repo.root / "shop/prices.py").read_text() == PRICES.lstrip("\n")
    assert not (repo.root / "shop/new_helper.py").exists()
    assert not (repo.root / "shop/newpkg").exists()  # the folder the change made goes too
    assert repo.git("status", "--porcelain") == ""
    subprocess.run(["git", "apply", patch], cwd=repo.root, check=True)
    assert snapshot_tree(repo.root) == changed  # nothing was lost


def test_over_budget_step_is_red(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    with (repo.root / "lockstep.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[gates]\nbudget = [[5, 1]]\n")
    repo.commit("tight budget")
    edit(repo, "shop/prices.py", "    subtotal = 0\n", "    subtotal = 0\n    a = 1\n    b = 2\n")
    result = invoke_cli("step", cwd=repo.root)
    assert result.code == 1
    assert "budget: EXCEEDED — 2 changed lines, 1 allowed" in result.stdout


def test_brief_states_the_constraints(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    head = repo.git("rev-parse", "HEAD")
    result = invoke_cli(
        "brief", "extract the subtotal loop of shop.prices into a helper", cwd=repo.root
    )
    assert result.code == 0, result.output
    text = result.stdout
    assert "Seam (the ONE change to make): extract the subtotal loop" in text
    assert "Target module: shop.prices (shop/prices.py)" in text
    for forbidden in (
        "lockstep/ (oracle files",
        "fixtures/*.json (fixtures of corpus 'prices')",
        "lockstep.toml",
    ):
        assert forbidden in text
    assert "  - def total(rows, rate=0.2)" in text
    assert "  - Ledger.add: def add(self, row, *, strict=False)" in text
    assert "at most 20 changed lines" in text
    assert "Add at most one new function, class or module." in text
    assert "  lockstep replay\n" in text
    assert f"  lockstep review {head[:12]}..HEAD" in text
    assert "return NO diff" in text


def test_brief_refuses_two_changes_in_one_sentence(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    result = invoke_cli(
        "brief",
        "extract the subtotal loop and rename total",
        "--target",
        "shop.prices",
        cwd=repo.root,
    )
    assert result.code == 2
    assert "asks for two changes: 'extract the subtotal loop' and 'rename total'" in result.stderr


def test_brief_needs_a_target_it_can_find(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    result = invoke_cli("brief", "make it nicer", cwd=repo.root)
    assert result.code == 2
    assert "--target" in result.stderr


def test_step_probes_pinned_cases(git_repo: GitRepo) -> None:
    repo = git_repo
    repo.commit(
        "legacy script",
        {
            "lockstep.toml": (
                '[[pins]]\nname = "hello"\ncommand = ["python", "hello.py"]\ncases = "cases.toml"\n'
            ),
            "cases.toml": '[[case]]\nid = "one"\nargv = ["x"]\n',
            "hello.py": "import sys\nprint('hi', sys.argv[1:])\n",
        },
    )
    assert run_cli("record", "hello", cwd=repo.root).code == 0
    repo.commit("freeze hello")
    green = run_cli("step", cwd=repo.root)
    assert green.code == 0, green.output
    assert "probe:  ok — 1 case(s) probed, 2 runs each" in green.stdout
    (repo.root / "hello.py").write_text(
        "import random, sys\nprint('hi', sys.argv[1:], random.random())\n"
    )
    red = run_cli("step", cwd=repo.root)
    assert red.code == 1
    assert "probe:  NONDETERMINISTIC" in red.stdout
    assert "hello/one: 2 distinct outputs" in red.stdout


def test_brief_follows_the_configured_seam_limit(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    with (repo.root / "lockstep.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[gates]\nseam_limit = 3\n")
    result = invoke_cli("brief", "split the totals", "--target", "shop/prices.py", cwd=repo.root)
    assert result.code == 0, result.output
    assert "Add at most 3 new functions, classes or modules." in result.stdout
