"""Text from data (paths, case ids, refusals, advice quoting ``[[secret]]``) is printed as
it is: rich never reads it as markup or emoji codes."""

from __future__ import annotations

from pathlib import Path

from helpers import GitRepo, run_cli
from secret_vectors import vectors

CONFIG = """\
[[corpus]]
name = "notes"
fixtures = "fixtures/**/*.json"
render = "render:render"
"""

RENDER = """\
def render(path):
    return path.read_text(encoding="utf-8").upper(){extra}
"""


def test_accept_prints_a_refusal_with_brackets_and_secret_advice(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "p")
    repo.commit(
        "legacy",
        {
            "lockstep.toml": CONFIG,
            "render.py": RENDER.format(extra=""),
            "fixtures/a[/x]/one.json": '{"note": "plain :smile: [b]"}\n',
        },
    )
    recorded = run_cli("record", cwd=repo.root)
    assert recorded.code == 0, recorded.output
    assert "[/x]" in recorded.output and ":smile:" not in recorded.output  # upper-cased
    repo.commit("record")
    secret = vectors()["aws"][0]
    repo.commit("leak", {"render.py": RENDER.format(extra=f' + " key={secret}"')})
    replayed = run_cli("replay", "--keep-pending", cwd=repo.root)
    assert replayed.code == 1, replayed.output
    assert "a[/x]/one.json" in replayed.output

    accepted = run_cli("accept", "--all", "--why", "Notes carry a key now.", cwd=repo.root)
    assert accepted.code == 1, accepted.output
    assert "Traceback" not in accepted.output
    refusal = next(line for line in accepted.stdout.splitlines() if "secret refused" in line)
    assert "a[/x]/one.json" in refusal
    assert "[[secret]]" in refusal
    assert secret not in accepted.output


def test_status_prints_paths_and_case_ids_with_markup_as_they_are(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "p")
    repo.commit(
        "legacy",
        {
            "lockstep.toml": CONFIG.replace('dir = "lockstep"', "")
            + '\n[lockstep]\ndir = "oracles[/b]:smile:"\n',
            "render.py": RENDER.format(extra=""),
            "fixtures/x.json": "{}\n",
        },
    )
    assert run_cli("record", cwd=repo.root).code == 0
    status = run_cli("status", cwd=repo.root)
    assert status.code == 0, status.output
    assert "oracles[/b]:smile:/notes.lock.json" in status.stdout
