"""Bad input to the gates: one clear line and exit 2, or a reported row — never a traceback."""

from __future__ import annotations

from pathlib import Path

from gates_project import FILES, frozen_shop, md_rows, row
from helpers import GitRepo, invoke_cli, write_files


def test_not_a_git_repository(tmp_path: Path) -> None:
    write_files(tmp_path, FILES)
    for args in (("guard",), ("budget",), ("review", "HEAD~1..HEAD"), ("step",)):
        result = invoke_cli(*args, cwd=tmp_path)
        assert result.code == 2, (args, result.output)
        assert "not a git repository" in result.stderr
        assert "Traceback" not in result.stderr


def test_base_that_does_not_exist(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    review = invoke_cli("review", "no-such-branch..HEAD", cwd=repo.root)
    assert review.code == 2
    assert "unknown revision 'no-such-branch'" in review.stderr
    guard = invoke_cli("guard", "--base", "v9.9", cwd=repo.root)
    assert guard.code == 2
    assert "unknown revision 'v9.9'" in guard.stderr


def test_shallow_clone_without_base(git_repo: GitRepo, tmp_path: Path) -> None:
    repo = frozen_shop(git_repo)
    first = repo.git("rev-list", "--max-parents=0", "HEAD")
    repo.commit("one more", {"shop/extra.py": "X = 1\n"})
    clone = tmp_path / "shallow"
    repo.git("clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone))
    for args in (("review", f"{first}..HEAD"), ("guard", "--base", "HEAD~1")):
        result = invoke_cli(*args, cwd=clone)
        assert result.code == 2, (args, result.output)
        assert "not in this shallow clone" in result.stderr
        assert "git fetch --unshallow" in result.stderr


def test_detached_head_needs_an_explicit_range(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    repo.git("checkout", "-q", "--detach", "HEAD")
    implicit = invoke_cli("review", cwd=repo.root)
    assert implicit.code == 2
    assert "HEAD is detached" in implicit.stderr
    assert "lockstep review BASE..HEAD" in implicit.stderr
    explicit = invoke_cli("review", "HEAD~1..HEAD", "--format", "md", cwd=repo.root)
    assert explicit.code == 0, explicit.output


def test_branch_without_upstream_needs_an_explicit_range(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    result = invoke_cli("review", cwd=repo.root)
    assert result.code == 2
    assert "branch 'main' has no upstream" in result.stderr


def test_no_commits_yet(git_repo: GitRepo) -> None:
    write_files(git_repo.root, FILES)
    result = invoke_cli("guard", cwd=git_repo.root)
    assert result.code == 2
    assert "no commits yet" in result.stderr


def test_file_that_does_not_parse_is_reported_not_crashed_on(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    repo.commit("half-written helper", {"shop/helper.py": "def helper(:\n    return 1\n"})
    result = invoke_cli("review", "HEAD~1..HEAD", "--format", "md", cwd=repo.root)
    assert result.code == 1, result.output
    assert "Traceback" not in result.stderr
    rows = md_rows(result.stdout)
    verdict, evidence = row(rows, "public signatures")
    assert verdict == "fail"
    assert "shop/helper.py:1: does not parse at" in evidence
    assert row(rows, "no new reads")[0] == "fail"
    assert "cannot build the import graph" in row(rows, "within budget")[1]


def test_review_of_an_empty_range_is_refused_not_passed(git_repo: GitRepo) -> None:
    git_repo.commit("start", {"lockstep.toml": "", "app.py": "def f():\n    return 1\n"})
    result = invoke_cli("review", "HEAD..HEAD", cwd=git_repo.root)
    assert result.code == 2
    assert "holds no commits" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
