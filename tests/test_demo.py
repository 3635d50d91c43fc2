"""``lockstep demo`` end to end, as a new user runs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import invoke_cli, run_cli, write_files

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


def test_the_demo_tells_its_whole_story_and_leaves_a_working_project(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    result = run_cli("demo", "--dir", str(folder), cwd=tmp_path, timeout=600)
    assert result.code == 0, result.output[-3000:]
    out = result.stdout
    # corpus: recorded, a safe refactor green, banker's rounding red with the document diff
    assert "added 6: basic.json" in out
    assert "DRIFT transform::half_cent.json" in out
    assert '-    "subtotal": "0.13",' in out and '+    "subtotal": "0.12",' in out
    # the later chapters each show their red
    assert "expected returned (Decimal('20.00'), 'USD')" in out
    assert "got returned [Decimal('20.00'), 'USD']" in out
    assert "19 more failing cases of parse_amount not shown" in out
    assert "exit_code: expected 0" in out
    assert "rates.rate('EUR') called 1 time, expected 2" in out
    assert "review: ok" in out and "FAILS" in out
    # and it says where the project is and what to try next
    assert f"The demo project is in {folder}" in out
    assert "lockstep replay" in out.split("what next")[-1]
    assert "demo stopped" not in out
    # the folder is a real project: its oracles replay from there
    assert (folder / "lockstep.toml").is_file()
    assert (folder / "lockstep" / "transform.lock.json").is_file()
    replay = run_cli("replay", "-q", cwd=folder, timeout=300)
    assert replay.code == 0, replay.output
    assert "passed" in replay.stdout
    # it ends on the red review of its last commit, and says so
    verdicts = [line.strip() for line in out.splitlines() if line.strip().startswith("→")]
    commands = [line for line in out.splitlines() if line.startswith("$ ")]
    assert commands[-1] == "$ lockstep review 'HEAD~1..HEAD'"
    assert verdicts[-1] == "→ red (exit 1), as expected"
    review = run_cli("review", "HEAD~1..HEAD", cwd=folder, timeout=300)
    assert review.code == 1, review.output
    assert "review: rejected" in review.stdout
    # every code change it printed is a cp of a file the demo folder holds
    copies = [line[2:].split() for line in out.splitlines() if line.startswith("$ cp ")]
    assert len(copies) == 13
    for _, source, dest in copies:
        assert source.startswith(".variants/") and (folder / source).is_file(), source
        assert (folder / dest).is_file(), dest
    assert "<" not in "".join(line for line in out.splitlines() if line.startswith("$ cp"))


def test_the_demo_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    write_files(tmp_path, {"busy/keep.txt": "mine"})
    result = invoke_cli("demo", "--dir", str(tmp_path / "busy"), cwd=tmp_path)
    assert result.code == 2
    assert "not empty" in result.stderr
    assert (tmp_path / "busy" / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in (tmp_path / "busy").iterdir()) == ["keep.txt"]


def test_without_git_the_demo_skips_only_what_needs_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lockstep.demo import runner
    from lockstep.demo.chapters import corpus, review
    from lockstep.demo.steps import Run, Say

    monkeypatch.setattr(runner, "have_git", lambda: False)
    story = runner.prepare(tmp_path / "demo", [corpus.CHAPTER, review.CHAPTER])
    events = list(runner.run_story(tmp_path / "demo", story))
    assert not (tmp_path / "demo" / ".git").exists()
    assert not any(e.unexpected for e in events)
    assert [e.exit_code for e in events if isinstance(e.step, Run)] == [0, 0, 0, 0, 0, 1, 1, 0, 0]
    last = events[-1].step
    assert isinstance(last, Say) and "needs git" in last.text


def test_a_step_of_the_demo_can_be_repeated_by_hand(tmp_path: Path) -> None:
    """The variants ship in the demo folder (ignored by git): the printed cp works as is."""
    from lockstep.demo import runner
    from lockstep.demo.chapters import corpus

    folder = tmp_path / "demo"
    runner.prepare(folder, [corpus.CHAPTER])
    assert (folder / ".variants" / "rows_tidy_rounding.py").is_file()
    assert run_cli("record", "transform", cwd=folder, timeout=300).code == 0
    if runner.have_git():
        status = runner._git(folder, "status", "--porcelain").stdout
        assert ".variants" not in status  # ignored: no gate counts the variants as a change
    (folder / "transform" / "rows.py").write_bytes(
        (folder / ".variants" / "rows_tidy_rounding.py").read_bytes()
    )
    red = run_cli("replay", "transform", cwd=folder, timeout=300)
    assert red.code == 1, red.output
    assert "DRIFT transform::half_cent.json" in red.stdout
    (folder / "transform" / "rows.py").write_bytes(
        (folder / ".variants" / "rows_extract_helper.py").read_bytes()
    )
    assert run_cli("replay", "transform", cwd=folder, timeout=300).code == 0
