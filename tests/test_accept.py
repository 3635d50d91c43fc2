"""Reviewing drifts: ``replay --keep-pending`` keeps them, ``lockstep accept`` decides each.

The demo's project is the example: its banker's-rounding refactor is the red run a
reviewer looks at case by case, in a real git repository.
"""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path

import pytest

from helpers import GitRepo, invoke_cli, run_cli, run_pytest, snapshot_tree, write_files

VARIANTS = Path(str(resources.files("lockstep.demo") / "variants"))
WHY = "Banker's rounding is the billing team's rule from now on."


def _demo(root: Path) -> GitRepo:
    """The demo project, its corpus and ledger recorded and committed (the trusted state)."""
    from lockstep.demo.runner import prepare

    prepare(root)
    repo = GitRepo(root)  # git init again is harmless: it only sets the committer
    result = invoke_cli("record", "transform", "parse_amount", cwd=root)
    assert result.code == 0, result.output
    repo.commit("Freeze the transformer and parse_amount")
    return repo


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _demo(tmp_path_factory.mktemp("demo") / "project").root


@pytest.fixture
def demo(demo_template: Path, tmp_path: Path) -> GitRepo:
    root = tmp_path / "project"
    shutil.copytree(demo_template, root, symlinks=True)
    return GitRepo(root)


def _refactor(repo: GitRepo, variant: str, dest: str, *, commit: bool = True) -> None:
    shutil.copyfile(VARIANTS / variant, repo.root / dest)
    if commit:
        repo.commit(f"Refactor {dest}")


def _pending(root: Path, oracle: str) -> list[dict[str, object]]:
    path = root / "lockstep" / ".pending" / f"{oracle}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def _history(root: Path, oracle: str) -> list[dict[str, object]]:
    path = root / "lockstep" / f"{oracle}.history.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_replay_keeps_the_drifts_beside_the_oracle_and_never_touches_it(demo: GitRepo) -> None:
    root = demo.root
    _refactor(demo, "rows_tidy_rounding.py", "transform/rows.py")
    lock_before = (root / "lockstep" / "transform.lock.json").read_bytes()
    result = invoke_cli("replay", "transform", "--keep-pending", cwd=root)
    assert result.code == 1
    assert (
        "1 drifted case(s) of transform kept for review in lockstep/.pending/transform.jsonl"
        in (result.stdout)
    )
    [entry] = _pending(root, "transform")
    assert entry["case"] == "half_cent.json"
    assert len(str(entry["replaces"])) == 64 and len(str(entry["now"])) == 64
    [drift] = entry["drifts"]  # type: ignore[misc]
    assert '+    "subtotal": "0.12",' in drift["diff"]
    assert (root / "lockstep" / "transform.lock.json").read_bytes() == lock_before
    # pending drifts are working notes: git does not see them
    assert demo.git("status", "--porcelain") == ""
    # a replay without the flag leaves them alone; one that passes again clears them
    invoke_cli("replay", "transform", cwd=root)
    assert len(_pending(root, "transform")) == 1
    _refactor(demo, "rows_extract_helper.py", "transform/rows.py")
    assert invoke_cli("replay", "transform", "--keep-pending", cwd=root).code == 0
    assert _pending(root, "transform") == []
    assert not (root / "lockstep" / ".pending" / "transform.jsonl").exists()


def test_the_demos_red_run_reviewed_case_by_case_and_accepted_with_a_reason(
    demo: GitRepo,
) -> None:
    root = demo.root
    _refactor(demo, "rows_tidy_rounding.py", "transform/rows.py")
    assert invoke_cli("replay", "--keep-pending", "transform", cwd=root).code == 1
    # d shows the whole diff, then a accepts
    result = invoke_cli("accept", "--why", WHY, cwd=root, input=b"d\na\n")
    assert result.code == 0, result.output
    out = result.stdout
    assert "[1/1] DRIFT transform::half_cent.json" in out
    assert out.count('-    "subtotal": "0.13",') == 2  # shown, then shown whole on d
    assert (
        "accepted transform::half_cent.json (why kept in lockstep/transform.history.jsonl)" in out
    )
    assert "1 accepted, 0 rejected, 0 skipped; 0 still pending" in out
    [line] = _history(root, "transform")
    assert line["case"] == "half_cent.json" and line["why"] == WHY
    assert line["aspects"] == ["output"]
    # the oracle now holds the new behaviour: green, and the change is an oracle-only commit
    assert invoke_cli("replay", "transform", cwd=root).code == 0
    demo.commit("Accept banker's rounding")
    assert invoke_cli("guard", "--base", "HEAD~2", cwd=root).code == 0


def test_interactive_review_rejects_skips_and_quits(demo: GitRepo) -> None:
    root = demo.root
    _refactor(demo, "messy_list.py", "refs/messy.py")
    assert invoke_cli("replay", "--keep-pending", "parse_amount", cwd=root).code == 1
    pending = [str(e["case"]) for e in _pending(root, "parse_amount")]
    assert len(pending) > 3
    ledger_before = (root / "lockstep" / "parse_amount.ledger.jsonl").read_bytes()
    result = invoke_cli("accept", "--why", WHY, cwd=root, input=b"r\ns\nx\nq\n")
    assert result.code == 0, result.output
    out = result.stdout
    assert f"rejected parse_amount::{pending[0]} (the oracle keeps its case)" in out
    assert "unknown answer 'x'" in out
    assert (
        f"0 accepted, 1 rejected, {len(pending) - 1} skipped; {len(pending) - 1} still pending"
        in out
    )
    assert [e["case"] for e in _pending(root, "parse_amount")] == pending[1:]
    assert (root / "lockstep" / "parse_amount.ledger.jsonl").read_bytes() == ledger_before
    assert not (root / "lockstep" / "parse_amount.history.jsonl").exists()


def test_scriptable_accept_of_one_case_then_reject_the_rest(demo: GitRepo) -> None:
    root = demo.root
    _refactor(demo, "messy_list.py", "refs/messy.py")
    invoke_cli("replay", "--keep-pending", cwd=root)
    pending = [str(e["case"]) for e in _pending(root, "parse_amount")]
    chosen = pending[2]
    result = invoke_cli(
        "accept", "--oracle", "parse_amount", "--case", chosen, "--why", WHY, cwd=root
    )
    assert result.code == 0, result.output
    assert f"accepted parse_amount::{chosen}" in result.stdout
    assert [e["case"] for e in _pending(root, "parse_amount")] == [
        c for c in pending if c != chosen
    ]
    assert [h["case"] for h in _history(root, "parse_amount")] == [chosen]
    # only that row moved: it replays green, the others still drift
    assert invoke_cli("diff", "parse_amount", chosen, cwd=root).code == 0
    assert invoke_cli("diff", "parse_amount", pending[0], cwd=root).code == 1
    rejected = invoke_cli("accept", "--reject", "--all", "--oracle", "parse_amount", cwd=root)
    assert rejected.code == 0
    assert _pending(root, "parse_amount") == []
    assert [h["case"] for h in _history(root, "parse_amount")] == [chosen]


def test_accept_is_refused_while_production_code_is_changed(demo: GitRepo) -> None:
    root = demo.root
    _refactor(demo, "rows_tidy_rounding.py", "transform/rows.py", commit=False)
    invoke_cli("replay", "--keep-pending", "transform", cwd=root)
    before = snapshot_tree(root / "lockstep")
    result = invoke_cli("accept", "--all", "--why", WHY, cwd=root)
    assert result.code == 1
    assert "refused: the working tree changes production code (transform/rows.py)" in (
        result.stderr
    )
    assert "commit the code change first" in result.stderr
    assert snapshot_tree(root / "lockstep") == before
    # once the code is committed on its own, the same accept goes through
    demo.commit("Tidy rounding")
    assert invoke_cli("accept", "--all", "--why", WHY, cwd=root).code == 0


def test_a_pending_case_whose_code_changed_again_is_stale(demo: GitRepo) -> None:
    root = demo.root
    _refactor(demo, "rows_tidy_rounding.py", "transform/rows.py")
    invoke_cli("replay", "--keep-pending", "transform", cwd=root)
    lock_before = (root / "lockstep" / "transform.lock.json").read_bytes()
    # the code moves again: the same case now renders something the reviewer never saw
    rows = (root / "transform" / "rows.py").read_text()
    write_files(root, {"transform/rows.py": rows.replace("round(amount, 2)", "round(amount, 1)")})
    demo.commit("Another change")
    result = invoke_cli("accept", "--all", "--why", WHY, cwd=root)
    assert result.code == 1
    assert (
        "STALE transform::half_cent.json: the code gives another outcome now than the one "
        "kept for review; not accepted"
    ) in result.stdout
    assert (root / "lockstep" / "transform.lock.json").read_bytes() == lock_before
    assert len(_pending(root, "transform")) == 1
    # back to the trusted code: the case replays green, nothing to accept
    _refactor(demo, "rows_extract_helper.py", "transform/rows.py")
    result = invoke_cli("accept", "--all", "--why", WHY, cwd=root)
    assert result.code == 0
    assert "transform::half_cent.json replays green now: nothing to accept, entry dropped" in (
        result.stdout
    )
    assert _pending(root, "transform") == []


def test_a_pending_case_whose_oracle_entry_was_rerecorded_is_stale(demo: GitRepo) -> None:
    root = demo.root
    original = (root / "transform" / "rows.py").read_text()
    _refactor(demo, "rows_tidy_rounding.py", "transform/rows.py")
    invoke_cli("replay", "--keep-pending", "transform", cwd=root)
    # someone re-records under other code, then the tidy version comes back
    write_files(root, {"transform/rows.py": original.replace('"0.01"', '"0.1"')})
    assert invoke_cli("record", "transform", "--force", cwd=root).code == 0
    _refactor(demo, "rows_tidy_rounding.py", "transform/rows.py")
    result = invoke_cli("accept", "--all", "--why", WHY, cwd=root)
    assert result.code == 1
    assert "the oracle entry changed since the drift was kept (re-recorded?)" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--all",), "--why is required"),
        (("--all", "--why", "  "), "--why: say in one sentence"),
        (("--all", "--why", "one\ntwo"), "one sentence on one line"),
        (("--case", "nope.json", "--why", WHY), "--case nope.json: no pending drift with that id"),
        (("--oracle", "nope", "--why", WHY), "nope"),
        (("--reject",), "--reject needs --all or --case ID"),
    ],
)
def test_bad_accept_arguments_are_exit_2_and_change_nothing(
    demo: GitRepo, args: tuple[str, ...], message: str
) -> None:
    root = demo.root
    _refactor(demo, "rows_tidy_rounding.py", "transform/rows.py")
    invoke_cli("replay", "--keep-pending", "transform", cwd=root)
    before = snapshot_tree(root)
    result = invoke_cli("accept", *args, cwd=root)
    assert result.code == 2, result.output
    assert message in result.stderr
    assert snapshot_tree(root) == before


def test_nothing_pending_says_how_to_keep_drifts(demo: GitRepo) -> None:
    result = invoke_cli("accept", "--all", "--why", WHY, cwd=demo.root)
    assert result.code == 0
    assert "nothing pending: 'lockstep replay --keep-pending' keeps drifts" in result.stdout


PINS_TOML = """\
[lockstep]
dir = "lockstep"

[[pins]]
name = "greet"
command = ["python", "greet.py"]
cases = "cases.toml"
"""
CASES = '[[case]]\nid = "ann"\nargv = ["Ann"]\n\n[[case]]\nid = "bob"\nargv = ["Bob"]\n'


def test_pins_cases_are_accepted_one_by_one(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "p")
    files: dict[str, str | bytes] = {
        "lockstep.toml": PINS_TOML,
        "cases.toml": CASES,
        "greet.py": "import sys\nprint('Hello, ' + sys.argv[1])\n",
    }
    repo.commit("legacy", files)
    assert run_cli("record", cwd=repo.root).code == 0
    repo.commit("record")
    repo.commit("louder", {"greet.py": "import sys\nprint('HELLO, ' + sys.argv[1] + '!')\n"})
    assert run_cli("replay", "--keep-pending", cwd=repo.root).code == 1
    assert [e["case"] for e in _pending(repo.root, "greet")] == ["ann", "bob"]
    result = run_cli("accept", "--case", "bob", "--why", "Greetings are loud now.", cwd=repo.root)
    assert result.code == 0, result.output
    assert "accepted greet::bob" in result.stdout
    replay = run_cli("replay", cwd=repo.root)
    assert "DRIFT greet::ann" in replay.stdout and "greet::bob" not in replay.stdout


TAPE_TOML = """\
[lockstep]
dir = "lockstep"

[[tape]]
name = "total"
driver = "drive:drive"
"""
DRIVE = """\
import total


def drive(tape):
    with tape.patch("rates.rate"):
        return total.total()
"""
TOTAL = """\
import rates


def total():
    return rates.rate("EUR") + rates.rate("EUR")
"""


def test_a_tape_drift_is_accepted_through_the_pending_review_too(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "p")
    files: dict[str, str | bytes] = {
        "lockstep.toml": TAPE_TOML,
        "drive.py": DRIVE,
        "total.py": TOTAL,
        "rates.py": "def rate(currency):\n    return 2\n",
    }
    repo.commit("legacy", files)
    assert run_cli("record", cwd=repo.root).code == 0, "record"
    repo.commit("record")
    repo.commit("cheaper", {"total.py": TOTAL.replace('rates.rate("EUR") + rates', "2 * rates")})
    assert run_cli("replay", "--keep-pending", cwd=repo.root).code == 1
    assert [e["case"] for e in _pending(repo.root, "total")] == ["total"]
    result = run_cli("accept", "--all", "--why", "One lookup is enough.", cwd=repo.root)
    assert result.code == 0, result.output
    assert run_cli("replay", cwd=repo.root).code == 0


def test_the_pytest_plugin_keeps_pending_drifts(demo: GitRepo) -> None:
    root = demo.root
    _refactor(demo, "messy_list.py", "refs/messy.py")
    result = run_pytest(
        "--lockstep",
        "--lockstep-keep-pending",
        "-q",
        "lockstep/parse_amount.ledger.jsonl",
        cwd=root,
        plugins=("lockstep.pytest.plugin",),
    )
    assert result.code == 1, result.output
    cli = invoke_cli("replay", "parse_amount", "-q", cwd=root)
    drifted = sorted(
        line.split("::")[1] for line in cli.stdout.splitlines() if line.startswith("DRIFT ")
    )
    assert [e["case"] for e in _pending(root, "parse_amount")] == drifted
    assert invoke_cli("accept", "--all", "--why", WHY, cwd=root).code == 0
    assert invoke_cli("replay", "parse_amount", cwd=root).code == 0


SLUGS = """\
import re


def slug(text, sep="-"):
    text = re.sub(r"[^a-z0-9]+", sep, text.lower())
    return text.strip(sep)
"""
SLUG_TESTS = """\
from slugs import slug


def test_words():
    assert slug("Donald E. Knuth") == "donald-e-knuth"


def test_trailing():
    assert slug("Trailing!!", "_") == "trailing"
"""


def test_a_ledger_recorded_from_pytest_accepts_by_calling_its_rows_again(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "p")
    files: dict[str, str | bytes] = {
        "lockstep.toml": '[lockstep]\ndir = "lockstep"\n\n[[ledger]]\nname = "slug"\n'
        'target = "slugs:slug"\n',
        "slugs.py": SLUGS,
        "tests/test_slugs.py": SLUG_TESTS,
    }
    repo.commit("legacy", files)
    recorded = run_pytest("-q", "--lockstep-record=slug", "tests", cwd=repo.root)
    assert recorded.code == 0, recorded.output
    repo.commit("record")
    repo.commit("keep trailing", {"slugs.py": SLUGS.replace("text.strip(sep)", "text.lstrip(sep)")})
    assert invoke_cli("replay", "--keep-pending", cwd=repo.root).code == 1
    [entry] = _pending(repo.root, "slug")
    result = invoke_cli("accept", "--all", "--why", "Trailing separators stay.", cwd=repo.root)
    assert result.code == 0, result.output
    assert f"accepted slug::{entry['case']}" in result.stdout
    assert invoke_cli("replay", cwd=repo.root).code == 0


def test_a_reason_quoting_a_token_is_kept_masked_in_the_history(demo: GitRepo) -> None:
    from secret_vectors import vectors

    token = vectors()["github"][0]
    root = demo.root
    _refactor(demo, "rows_tidy_rounding.py", "transform/rows.py")
    assert invoke_cli("replay", "--keep-pending", "transform", cwd=root).code == 1
    why = f"rounding changed; old CI token {token} rotated"
    result = invoke_cli("accept", "--why", why, "--all", cwd=root)
    assert result.code == 0, result.output
    [line] = _history(root, "transform")
    assert line["why"] == "rounding changed; old CI token <secret: GitHub Token> rotated"
    assert token not in (root / "lockstep/transform.history.jsonl").read_text()
