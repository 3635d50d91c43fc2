"""The gates on real repositories, as a new user meets them (issue 12).

Each test builds a real git repository and drives the command line: the
review of one range from two checkouts, an extract-method that moves a block,
fan-in that only production callers make, seam sentences, the diffs ``step``
shows, and a replay whose only news is new cases.
"""

from __future__ import annotations

import re
from pathlib import Path

from gates_project import edit, frozen_shop, md_rows, row
from helpers import GitRepo, invoke_cli, run_cli

# --------------------------------------------------------------------------- 1. one range, one verdict

CORE = '''
"""The much-imported core."""


def rate(kind):
    return {"std": 0.2, "low": 0.05}.get(kind, 0.0)
'''

FOURTEEN = "".join(f"    step_{i} = {i}\n" for i in range(13))
"""With ``def`` above, a function of 14 changed lines."""


def much_imported_core(repo: GitRepo) -> tuple[str, str]:
    """``app/core.py`` imported by five production modules, a corpus over it, frozen; then a
    commit adding 14 lines to the core.  Returns (frozen, changed) shas."""
    files: dict[str, str | bytes] = {
        "lockstep.toml": (
            '[[corpus]]\nname = "rates"\nfixtures = "fixtures/*.txt"\nrender = "harness:render"\n'
        ),
        "app/__init__.py": "",
        "app/core.py": CORE,
        "harness.py": (
            "from app import core\n\n\ndef render(path):\n"
            "    return core.rate(path.read_text().strip())\n"
        ),
        "fixtures/std.txt": "std\n",
        "fixtures/low.txt": "low\n",
        ".gitignore": "__pycache__/\n",
    }
    for i in range(5):
        files[f"app/user{i}.py"] = "from app import core\n"
    repo.commit("legacy app", files)
    assert run_cli("record", "rates", cwd=repo.root).code == 0
    frozen = repo.commit("freeze rates")
    with (repo.root / "app/core.py").open("a", encoding="utf-8") as fh:
        fh.write(f"\n\ndef _steps():\n{FOURTEEN}")
    changed = repo.commit("add _steps to the core")
    return frozen, changed


def budget_row(repo: GitRepo, rng: str) -> tuple[str, str]:
    result = run_cli("review", rng, "--format", "md", cwd=repo.root)
    assert result.code in (0, 1), result.output
    return row(md_rows(result.stdout), "within budget")


def test_a_range_gives_the_same_budget_from_any_checkout(git_repo: GitRepo) -> None:
    repo = git_repo
    frozen, changed = much_imported_core(repo)
    # later history: more importers of the core, a looser budget, a new top-level script
    later = {f"app/late{i}.py": "import app.core\n" for i in range(4)}
    later["tool.py"] = "from app.core import rate\n"
    later["lockstep.toml"] = (repo.root / "lockstep.toml").read_text() + (
        "\n[gates]\nbudget = [[50, 100]]\n"
    )
    repo.commit("later work", later)
    rng = f"{frozen}..{changed}"
    expected = (
        "fail",
        "14 changed lines, 10 allowed: over budget (fan-in of app.core is 5)",
    )

    from_tip = budget_row(repo, rng)  # HEAD elsewhere: the review replays in a worktree
    repo.git("checkout", "-q", "--detach", changed)
    at_head = budget_row(repo, rng)  # the reviewed HEAD is checked out
    repo.git("checkout", "-q", "--detach", frozen)
    at_base = budget_row(repo, rng)
    (repo.root / "app/untracked_user.py").write_text("from app import core\n")
    with_untracked = budget_row(repo, rng)  # files on disk that no commit holds

    assert from_tip == at_head == at_base == with_untracked == expected


# --------------------------------------------------------------------------- 2. moves count once

REPORT = '''
"""Order reports; legacy."""


def report(rows, title):
    header = title.upper()
    count = 0
    gross = 0
    tax = 0
    for row in rows:
        count += 1
        price = row["price"]
        qty = row.get("qty", 1)
        line = price * qty
        if row.get("exempt"):
            line_tax = 0
        else:
            line_tax = round(line * 0.2, 2)
        gross += line
        tax += line_tax
    footer = f"{count} rows"
    return f"{header}\\n{gross} {tax}\\n{footer}"
'''

BLOCK = REPORT[REPORT.index("    count = 0\n") : REPORT.index("    footer")]

REST = "".join(
    f"\n\ndef label_{i}(row):\n    name = row['name']\n    return f'{i}: {{name}}'\n"
    for i in range(6)
)
"""Other functions after ``report`` (18 lines): more than the block, so git's diff keeps
them in place and shows the extracted block as removed in one place, added in another."""

EXTRACTED = (
    REPORT.replace(BLOCK, "    count, gross, tax = _totals(rows)\n")
    + REST
    + "\n\ndef _totals(rows):\n"
    + BLOCK
    + "    return count, gross, tax\n"
)


def report_repo(repo: GitRepo) -> GitRepo:
    repo.commit(
        "legacy report",
        {"lockstep.toml": "[gates]\n", "shop/__init__.py": "", "shop/report.py": REPORT + REST},
    )
    return repo


def test_extract_method_counts_the_moved_block_once(git_repo: GitRepo) -> None:
    repo = report_repo(git_repo)
    assert BLOCK.count("\n") == 14
    (repo.root / "shop/report.py").write_text(EXTRACTED.lstrip("\n"), encoding="utf-8")
    result = invoke_cli("budget", cwd=repo.root)
    assert result.code == 0, result.output
    # 14 lines moved; edited: def _totals, its return, the call that replaced the block
    assert (
        "budget: ok — 17 changed lines (14 lines moved, 3 edited), 20 allowed: within budget"
    ) in result.stdout
    assert "shop/report.py: 17 changed line(s) (14 moved here, 3 edited)" in result.stdout

    repo.commit("extract _totals")
    review = invoke_cli("review", "HEAD~1..HEAD", "--format", "md", cwd=repo.root)
    verdict, evidence = row(md_rows(review.stdout), "within budget")
    assert verdict == "pass"
    assert evidence.startswith("17 changed lines (14 lines moved, 3 edited), 20 allowed")


def test_a_block_moved_into_a_new_untracked_module_and_dedented_is_a_move(
    git_repo: GitRepo,
) -> None:
    repo = report_repo(git_repo)
    loop = BLOCK[BLOCK.index("    for row") :]
    dedented = "".join(line[4:] + "\n" for line in loop.splitlines())
    (repo.root / "shop/totals.py").write_text(
        "count = gross = tax = 0\nrows = []\n" + dedented, encoding="utf-8"
    )
    edit(repo, "shop/report.py", loop, "    gross, tax = 0, 0\n")
    result = invoke_cli("budget", cwd=repo.root)
    assert result.code == 0, result.output
    # 11 loop lines moved (indentation aside); 2 new lines in the module, 1 in report
    assert "14 changed lines (11 lines moved, 3 edited)" in result.stdout
    assert "shop/totals.py: 13 changed line(s) (11 moved here, 2 edited)" in result.stdout


def test_an_edit_inside_the_moved_block_is_an_edit(git_repo: GitRepo) -> None:
    repo = report_repo(git_repo)
    changed = EXTRACTED.replace("line_tax = round(line * 0.2, 2)", "line_tax = line * 0.2")
    (repo.root / "shop/report.py").write_text(changed.lstrip("\n"), encoding="utf-8")
    result = invoke_cli("budget", cwd=repo.root)
    assert "17 changed lines (13 lines moved, 4 edited)" in result.stdout, result.output


def test_lines_that_are_only_similar_are_not_a_move(git_repo: GitRepo) -> None:
    repo = report_repo(git_repo)
    edit(repo, "shop/report.py", "    footer = f", "    return 0\n    footer = f")
    edit(repo, "shop/report.py", "        count += 1\n", "")
    result = invoke_cli("budget", cwd=repo.root)
    assert "2 changed lines, 20 allowed" in result.stdout, result.output
    assert "moved" not in result.stdout


# --------------------------------------------------------------------------- 3. production fan-in


def test_only_production_importers_count(git_repo: GitRepo) -> None:
    config = """
[[corpus]]
name = "render"
fixtures = "fixtures/*.txt"
render = "harness.render:render"

[[ledger]]
name = "rate"
target = "app.core:rate"
driver = "scripts/exercise.py"

[[tape]]
name = "calls"
driver = "drivers.tape:drive"

[gates]
exclude = ["tests/**", "tools/**"]
"""
    importer = "from app import core\n"
    git_repo.commit(
        "app",
        {
            "lockstep.toml": config,
            "app/__init__.py": "",
            "app/core.py": CORE,
            "app/billing.py": importer,
            "app/export.py": "import app.core as c\n",
            "harness/__init__.py": "",
            "harness/render.py": importer,
            "scripts/exercise.py": importer,
            "drivers/__init__.py": "",
            "drivers/tape.py": importer,
            "tests/__init__.py": "",
            "tests/test_core.py": importer,
            "tools/__init__.py": "",
            "tools/migrate.py": importer,
        },
    )
    with (git_repo.root / "app/core.py").open("a", encoding="utf-8") as fh:
        fh.write("\n\nLOW = 0.05\n")
    result = invoke_cli("budget", cwd=git_repo.root)
    assert result.code == 0, result.output
    assert "fan-in of app.core is 2" in result.stdout
    assert "app.billing, app.export" in result.stdout
    for not_production in ("harness", "exercise", "drivers", "tests", "tools"):
        assert not_production not in result.stdout


# --------------------------------------------------------------------------- 4. brief


def test_brief_judges_actions_not_the_word_and(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    for one_seam in (
        "Extract the search-and-replace loop into a helper",
        "Extract the pre and post replacement loop into one helper",
        "Extract the search and replace loop into a helper",
        "Extract the loop, the guard and the return into one helper",
    ):
        result = invoke_cli("brief", one_seam, "--target", "shop.prices", cwd=repo.root)
        assert result.code == 0, (one_seam, result.output)
        assert f"Seam (the ONE change to make): {one_seam}" in result.stdout

    refused = invoke_cli(
        "brief", "Extract the loop and rename the class", "--target", "shop.prices", cwd=repo.root
    )
    assert refused.code == 2
    assert (
        "the seam asks for two changes: 'Extract the loop' and 'rename the class'"
    ) in refused.stderr
    three = invoke_cli(
        "brief",
        "Extract the loop, then inline _tax; replace the Ledger with a dict",
        "--target",
        "shop.prices",
        cwd=repo.root,
    )
    assert three.code == 2
    assert (
        "asks for 3 changes: 'Extract the loop', 'inline _tax' and 'replace the Ledger with a dict'"
    ) in three.stderr


def test_brief_in_a_pyproject_forbids_only_the_lockstep_tables(git_repo: GitRepo) -> None:
    git_repo.commit(
        "app",
        {
            "pyproject.toml": (
                '[project]\nname = "app"\nversion = "1"\n\n'
                '[[tool.lockstep.corpus]]\nname = "rates"\nfixtures = "fixtures/*.txt"\n'
                'render = "harness:render"\n'
            ),
            "app/__init__.py": "",
            "app/core.py": CORE,
        },
    )
    result = invoke_cli(
        "brief", "Extract the rate table", "--target", "app.core", cwd=git_repo.root
    )
    assert result.code == 0, result.output
    assert (
        "  - the [tool.lockstep] tables of pyproject.toml (configuration: oracles, "
        "[[rule]] tables, [gates]); the rest of the file is not lockstep's"
    ) in result.stdout
    assert "  - pyproject.toml (" not in result.stdout


# --------------------------------------------------------------------------- 7. step shows diffs


def test_red_step_shows_the_first_diffs(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    for i in range(3, 6):
        (repo.root / f"fixtures/n{i}.json").write_text(f'[{{"price": {i}}}]\n')
    assert invoke_cli("record", "prices", "--new-only", cwd=repo.root).code == 0
    repo.commit("more fixtures")
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    result = invoke_cli("step", cwd=repo.root)
    assert result.code == 1
    out = result.stdout
    assert "replay: RED" in out
    assert "prices (corpus): 5 of 5 cases red" in out
    shown = re.findall(r"^DRIFT prices::(\S+)$", out, re.M)
    assert shown == ["n3.json", "n4.json", "n5.json"]  # the first three, in replay order
    assert "  output: expected" in out
    assert re.search(r'^    -  "total": 3\.6$', out, re.M), out  # the document diff
    assert re.search(r'^    \+  "total": 4\.6$', out, re.M), out
    assert "… 2 more failing case(s) of prices: 'lockstep replay prices' shows them" in out
    assert out.index("DRIFT prices::n3.json") < out.index("budget: ") < out.index("verdict: red")


# --------------------------------------------------------------------------- 8. new cases


def test_only_new_cases_are_not_green_and_say_how_to_add_them(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    (repo.root / "fixtures/three.json").write_text('[{"price": 7}]\n')
    result = invoke_cli("replay", cwd=repo.root)
    assert result.code == 1, result.output
    assert "NEW prices::three.json" in result.stdout
    assert "NOT GREEN: 3 cases: 2 passed, 1 new" in result.stdout
    assert "DRIFT" not in result.stdout
    assert (
        "1 new case(s) of prices not frozen yet: add them with 'lockstep record prices --new-only'"
    ) in result.stdout

    quiet = invoke_cli("replay", "-q", cwd=repo.root)
    assert quiet.code == 1
    assert quiet.stdout.splitlines()[0] == "NEW prices::three.json"
    assert "not in the lock" not in quiet.stdout  # the id only, no detail

    assert invoke_cli("record", "prices", "--new-only", cwd=repo.root).code == 0
    green = invoke_cli("replay", cwd=repo.root)
    assert green.code == 0, green.output
    assert "green: 3 cases: 3 passed" in green.stdout


def test_quiet_lists_every_failing_id_without_diffs(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "(1 + rate), 2)", "(1 + rate) + 1, 2)")
    (repo.root / "fixtures/one.json").unlink()
    quiet = invoke_cli("replay", "-q", cwd=repo.root)
    assert quiet.code == 1
    lines = quiet.stdout.splitlines()
    assert lines[:2] == ["MISSING prices::one.json", "DRIFT prices::two.json"]
    assert "expected" not in quiet.stdout
    assert "DRIFT: 2 cases: 0 passed, 1 drifted, 1 missing" in quiet.stdout
    assert "drop them with 'lockstep record prices --trim'" in quiet.stdout

    full = invoke_cli("replay", "--show", "1", cwd=repo.root)
    assert "… 1 more failing cases of prices not shown" in full.stdout


def test_new_pins_case_is_not_green_either(git_repo: GitRepo) -> None:
    repo = git_repo
    repo.commit(
        "script",
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
    with (repo.root / "cases.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[[case]]\nid = "two"\nargv = ["y"]\n')
    result = run_cli("replay", cwd=repo.root)
    assert result.code == 1, result.output
    assert "NOT GREEN: 2 cases: 1 passed, 1 new" in result.stdout
    assert "'lockstep record hello --new-only'" in result.stdout


def test_show_and_quiet_are_documented(tmp_path: Path) -> None:
    result = invoke_cli("replay", "--help", cwd=tmp_path)
    assert result.code == 0
    text = " ".join(result.stdout.split())
    assert "--show N" in text
    assert "Failing cases printed in full, with their diffs, per oracle; the rest are counted" in (
        text
    )
    assert "default: 10" in text
    assert "one line (its id, no diff)" in text
    assert "--new-only" in text
