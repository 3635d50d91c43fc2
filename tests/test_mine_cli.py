"""``lockstep mine`` and ``lockstep replay --against REV`` through the real command line.

The example is the shape every miss on a real library had: a cell parser whose
recorded driver never reaches three branches -- a suffix check against a string
constant, membership in a set of sentinel words, a Unicode case-folding
difference.  Replay of the recorded rows is blind to a change in each of them;
after ``mine`` it is not, and ``replay --against HEAD~1`` names a shrunk input
for each change while a behaviour-preserving rewrite stays green in both.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from helpers import GitRepo, invoke_cli, run_cli

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


CELLS = """
SENTINELS = {"n/a", "-", "none"}


def parse_cell(raw):
    text = raw.strip()
    if text.lower() in SENTINELS:
        return None
    if text.endswith("%"):
        return float(text[:-1]) / 100
    if text.casefold() != text.lower():
        return "folded:" + text.casefold()
    return text.upper()
"""

DRIVER = """
from refs.cells import parse_cell


def main():
    for raw in ["abc", " x ", "Hello", "12"]:
        parse_cell(raw)
"""

CONFIG = """
[[ledger]]
name = "cells"
target = "refs.cells:parse_cell"
driver = "refs.drive:main"
"""

CHANGES = {
    "suffix": ("/ 100", "/ 1000", "parse_cell('1%')"),
    "sentinel": ('"n/a", "-", "none"', '"n/a", "none"', "parse_cell('-')"),
    "casefold": ('"folded:" + text.casefold()', '"folded:" + text.lower()', "folded:"),
}
"""Each change: the text replaced, its replacement, what the counterexample shows."""

REWRITE = """
SENTINELS = frozenset(["n/a", "-", "none"])


def _percent(text):
    return float(text[: len(text) - 1]) / 100


def parse_cell(raw):
    text = raw.strip()
    folded = text.casefold()
    lowered = text.lower()
    if lowered in SENTINELS:
        return None
    if text[-1:] == "%":
        return _percent(text)
    return "folded:" + folded if folded != lowered else text.upper()
"""


def _project(repo: GitRepo) -> None:
    repo.commit(
        "legacy cell parser",
        {
            "lockstep.toml": CONFIG,
            "refs/__init__.py": "",
            "refs/cells.py": CELLS,
            "refs/drive.py": DRIVER,
            ".gitignore": "__pycache__/\n",
        },
    )


def _edit(root: Path, old: str, new: str) -> None:
    path = root / "refs/cells.py"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, str, str, str]:
    """The project recorded from its driver (``recorded``), then mined (``mined``);
    and what mine printed."""
    repo = GitRepo(tmp_path_factory.mktemp("mine") / "repo")
    _project(repo)
    assert run_cli("record", "cells", cwd=repo.root).code == 0
    recorded = repo.commit("freeze cells")
    result = run_cli("mine", "cells", "--seed", "3", cwd=repo.root)
    assert result.code == 0, result.output
    assert not (repo.root / ".hypothesis").exists()  # Hypothesis' files stay in lockstep's cache
    mined = repo.commit("mine cells")
    assert ".lockstep-cache" not in repo.git("show", "--stat", "HEAD")
    return repo, recorded, mined, result.stdout


def _at(repo: GitRepo, sha: str) -> None:
    repo.git("reset", "-q", "--hard", sha)
    repo.git("clean", "-qfdx")


def test_mine_reports_coverage_rows_and_saturation(mined: tuple[GitRepo, str, str, str]) -> None:
    repo, _, _, out = mined
    assert "coverage before: 5/8 lines" in out
    assert "coverage after:  8/8 lines" in out
    assert "stopped: saturated" in out
    assert "saturation curve" in out
    assert "verified" in out and "all reproduce" in out
    rows = (repo.root / "lockstep/cells.ledger.jsonl").read_text(encoding="utf-8").splitlines()
    inputs = {json.loads(line)["args"][0] for line in rows[1:]}
    assert {"n/a", "-", "none"} <= inputs  # every sentinel word is a row of its own
    assert any(i.endswith("%") and i[:-1].strip("0") for i in inputs)


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_each_unreached_branch_is_caught_after_mining(
    mined: tuple[GitRepo, str, str, str], change: str
) -> None:
    repo, recorded, mined_sha, _ = mined
    old, new, shown = CHANGES[change]

    _at(repo, recorded)  # the driver's rows alone are blind to the change
    _edit(repo.root, old, new)
    assert run_cli("replay", cwd=repo.root).code == 0

    _at(repo, mined_sha)
    _edit(repo.root, old, new)
    repo.commit(f"change the {change} branch")
    replay = run_cli("replay", cwd=repo.root)
    assert replay.code == 1, replay.output

    against = run_cli("replay", "--against", "HEAD~1", cwd=repo.root)
    assert against.code == 1, against.output
    assert "the versions differ" in against.stdout
    assert "generated input, shrunk: parse_cell(" in against.stdout
    assert shown in against.stdout
    assert "at HEAD~1:" in against.stdout and "now:" in against.stdout
    worktrees = repo.git("worktree", "list").splitlines()
    assert len(worktrees) == 1  # the temporary checkout is gone
    _at(repo, mined_sha)


def test_a_behaviour_preserving_rewrite_stays_green_in_both(
    mined: tuple[GitRepo, str, str, str],
) -> None:
    repo, _, mined_sha, _ = mined
    _at(repo, mined_sha)
    repo.commit("rewrite parse_cell", {"refs/cells.py": REWRITE})
    assert run_cli("replay", cwd=repo.root).code == 0
    against = run_cli("replay", "--against", "HEAD~1", "--generate", "300", cwd=repo.root)
    assert against.code == 0, against.output
    assert "no difference" in against.stdout

    review = run_cli("review", "HEAD~1..HEAD", cwd=repo.root)
    assert "differential (replay --against)" in review.stdout
    assert "inputs, no difference" in review.stdout
    assert not (repo.root / ".lockstep-cache").exists() or repo.git("status", "--short") == ""
    _at(repo, mined_sha)


def test_mine_is_deterministic_with_a_seed(tmp_path: Path) -> None:
    ledgers = []
    for name in ("one", "two"):
        repo = GitRepo(tmp_path / name)
        _project(repo)
        assert run_cli("record", "cells", cwd=repo.root).code == 0
        result = run_cli("mine", "cells", "--seed", "11", "--time-limit", "30s", cwd=repo.root)
        assert result.code == 0, result.output
        ledgers.append((repo.root / "lockstep/cells.ledger.jsonl").read_bytes())
    assert ledgers[0] == ledgers[1]


def test_mine_and_against_refuse_bad_input_with_one_line(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    _project(repo)
    not_yet = invoke_cli("mine", "cells", cwd=repo.root)
    assert not_yet.code == 2
    assert "not recorded yet" in not_yet.stderr and "lockstep record cells" in not_yet.stderr
    bad_budget = invoke_cli("mine", "cells", "--time-limit", "soon", cwd=repo.root)
    assert bad_budget.code == 2 and "--time-limit" in bad_budget.stderr
    unknown = invoke_cli("mine", "nope", cwd=repo.root)
    assert unknown.code == 2 and "no oracle named 'nope'" in unknown.stderr
    assert run_cli("record", "cells", cwd=repo.root).code == 0
    bad_rev = run_cli("replay", "--against", "no-such-rev", cwd=repo.root)
    assert bad_rev.code == 2 and "no-such-rev" in bad_rev.stderr


def test_mine_refuses_a_kind_it_cannot_call(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit(
        "a program",
        {
            "lockstep.toml": '[[pins]]\nname = "hello"\ncommand = ["python", "hello.py"]\n'
            'cases = "cases.toml"\n',
            "hello.py": "print('hi')\n",
            "cases.toml": '[[case]]\nid = "one"\n',
        },
    )
    result = invoke_cli("mine", "hello", cwd=repo.root)
    assert result.code == 2
    assert "is a pins oracle" in result.stderr and "ledger" in result.stderr


def test_against_a_revision_whose_target_does_not_import(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    _project(repo)
    assert run_cli("record", "cells", cwd=repo.root).code == 0
    repo.commit("freeze")
    repo.commit("break it", {"refs/cells.py": "raise ImportError('gone')\n"})
    subprocess.run(["git", "checkout", "-q", "HEAD~1", "--", "refs/cells.py"], cwd=repo.root)
    repo.commit("restore")
    result = run_cli("replay", "--against", "HEAD~1", cwd=repo.root)
    assert result.code == 2
    assert "at HEAD~1: cannot run the target" in result.stderr
