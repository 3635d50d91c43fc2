"""``lockstep mine`` and ``replay --against REV`` for corpus oracles, through the real CLI.

The example is a render whose recorded fixtures never reach two branches: a field
value handled specially (``"n/a"``) and a key only some documents have
(``"discount"``).  Replay of the recorded fixtures is blind to a change on either;
``mine`` writes fixture variants that reach them, and ``replay --against HEAD~1``
names a shrunk fixture with the diff of both renderings, while a
behaviour-preserving rewrite stays green in both.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import GitRepo, invoke_cli, run_cli

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


HARNESS = """
import json


def render(path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    lines = [f"item: {doc['name']}"]
    price = doc["price"]
    if price == "n/a":
        lines.append("price: unknown")
    else:
        lines.append(f"price: {float(price):.2f}")
    if "discount" in doc:
        lines.append(f"discount: {doc['discount']}%")
    return "\\n".join(lines) + "\\n"
"""

REWRITE = """
import json

UNKNOWN = "n/a"


def _price(value):
    return "price: unknown" if value == UNKNOWN else "price: %.2f" % float(value)


def render(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    out = ["item: " + str(doc["name"]), _price(doc["price"])]
    if "discount" in doc:
        out.append("discount: %s%%" % (doc["discount"],))
    return "".join(line + "\\n" for line in out)
"""

CONFIG = """
[[corpus]]
name = "items"
fixtures = "fixtures/*.json"
render = "harness:render"
"""

FIXTURES = {
    "fixtures/apple.json": '{"name": "apple", "price": "1.5"}\n',
    "fixtures/pear.json": '{"name": "pear", "price": "2"}\n',
}

CHANGES = {
    "sentinel": ('"price: unknown"', '"price: n/a"', "+price: n/a"),
    "optional key": ("{doc['discount']}%", "{doc['discount']} %", "+discount: "),
}
"""Each change: the text replaced, its replacement, a line of the diff of both renderings."""


def _project(repo: GitRepo, config: str = CONFIG) -> None:
    repo.commit(
        "legacy item render",
        {
            "lockstep.toml": config,
            "harness.py": HARNESS,
            ".gitignore": "__pycache__/\n",
            **FIXTURES,
        },
    )


def _edit(root: Path, old: str, new: str) -> None:
    path = root / "harness.py"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _at(repo: GitRepo, sha: str) -> None:
    repo.git("reset", "-q", "--hard", sha)
    repo.git("clean", "-qfdx")


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, str, str, str]:
    """The corpus recorded (``recorded``), then mined (``mined``); and what mine printed."""
    repo = GitRepo(tmp_path_factory.mktemp("mine-corpus") / "repo")
    _project(repo)
    assert run_cli("record", "items", cwd=repo.root).code == 0
    recorded = repo.commit("freeze items")
    result = run_cli("mine", "items", "--seed", "1", cwd=repo.root)
    assert result.code == 0, result.output
    mined = repo.commit("mine items")
    return repo, recorded, mined, result.stdout


def test_mine_writes_fixture_variants_that_reach_every_branch(
    mined: tuple[GitRepo, str, str, str],
) -> None:
    repo, _, _, out = mined
    assert "coverage before: 7/9 lines" in out
    assert "coverage after:  9/9 lines" in out
    assert "fixture(s)" in out and "stopped: saturated" in out
    assert "all reproduce" in out  # recorded through the kind's record path, verified
    written = sorted((repo.root / "fixtures").glob("mined-*.json"))
    assert written
    documents = [json.loads(p.read_text(encoding="utf-8")) for p in written]
    assert any(isinstance(d, dict) and d.get("price") == "n/a" for d in documents)
    assert any(isinstance(d, dict) and "discount" in d for d in documents)
    lock = json.loads((repo.root / "lockstep/items.lock.json").read_text(encoding="utf-8"))
    ids = {entry["id"] for entry in lock["entries"]}
    assert {p.name for p in written} | {"apple.json", "pear.json"} == ids


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_each_unreached_branch_is_caught_after_mining(
    mined: tuple[GitRepo, str, str, str], change: str
) -> None:
    repo, recorded, mined_sha, _ = mined
    old, new, diff_line = CHANGES[change]

    _at(repo, recorded)  # the recorded fixtures alone are blind to the change
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
    assert "generated input, shrunk: fixture mined-" in against.stdout
    assert "output: at HEAD~1:" in against.stdout and "now:" in against.stdout
    assert "(old code)" in against.stdout and "(new code)" in against.stdout
    assert diff_line in against.stdout
    assert len(repo.git("worktree", "list").splitlines()) == 1  # the checkout is gone
    _at(repo, mined_sha)


def test_against_catches_a_change_on_recorded_fixtures_without_generating(
    mined: tuple[GitRepo, str, str, str],
) -> None:
    repo, _, mined_sha, _ = mined
    _at(repo, mined_sha)
    _edit(repo.root, "item: ", "Item: ")
    repo.commit("capitalize")
    against = run_cli("replay", "--against", "HEAD~1", "--generate", "0", cwd=repo.root)
    assert against.code == 1, against.output
    assert "0 generated" in against.stdout
    assert "recorded input: fixture pear.json" in against.stdout
    assert "+Item: pear" in against.stdout
    _at(repo, mined_sha)


def test_a_behaviour_preserving_rewrite_stays_green_in_both(
    mined: tuple[GitRepo, str, str, str],
) -> None:
    repo, _, mined_sha, _ = mined
    _at(repo, mined_sha)
    repo.commit("rewrite the render", {"harness.py": REWRITE})
    assert run_cli("replay", cwd=repo.root).code == 0
    against = run_cli("replay", "--against", "HEAD~1", "--generate", "300", cwd=repo.root)
    assert against.code == 0, against.output
    assert "no difference" in against.stdout
    recorded = len(list((repo.root / "fixtures").glob("*.json")))
    assert f"({recorded} recorded, 300 generated)" in against.stdout

    review = run_cli("review", "HEAD~1..HEAD", cwd=repo.root)
    assert "differential (replay --against)" in review.stdout
    assert f"differential: {recorded + 300} inputs, no difference" in review.stdout
    _at(repo, mined_sha)


def test_mine_is_deterministic_with_a_seed(tmp_path: Path) -> None:
    locks = []
    for name in ("one", "two"):
        repo = GitRepo(tmp_path / name)
        _project(repo)
        assert run_cli("record", "items", cwd=repo.root).code == 0
        result = run_cli("mine", "items", "--seed", "5", "--time-limit", "30s", cwd=repo.root)
        assert result.code == 0, result.output
        locks.append((repo.root / "lockstep/items.lock.json").read_bytes())
    assert locks[0] == locks[1]


def test_mine_refuses_a_glob_that_would_not_match_mined_fixtures(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    _project(repo, CONFIG.replace("fixtures/*.json", "fixtures/[ap]*.json"))
    assert run_cli("record", "items", cwd=repo.root).code == 0
    result = invoke_cli("mine", "items", "--time-limit", "5s", cwd=repo.root)
    assert result.code == 2
    assert "would not match mined fixtures" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in (repo.root / "fixtures").iterdir()) == [
        "apple.json",
        "pear.json",
    ]


def test_fixtures_that_are_not_json_are_compared_but_not_varied(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit(
        "a text render",
        {
            "lockstep.toml": CONFIG.replace("*.json", "*.txt"),
            "harness.py": "def render(path):\n    return path.read_text().upper()\n",
            "fixtures/one.txt": "hello\n",
        },
    )
    assert run_cli("record", "items", cwd=repo.root).code == 0
    repo.commit("freeze")
    not_json = invoke_cli("mine", "items", cwd=repo.root)
    assert not_json.code == 2 and "is not JSON" in not_json.stderr
    repo.commit("lower", {"harness.py": "def render(path):\n    return path.read_text()\n"})
    against = run_cli("replay", "--against", "HEAD~1", cwd=repo.root)
    assert against.code == 1, against.output
    assert "items: no input generated" in against.stdout
    assert "recorded input: fixture one.txt: hello" in against.stdout
    assert "-HELLO" in against.stdout and "+hello" in against.stdout


def test_mine_refuses_pins_with_the_reason(tmp_path: Path) -> None:
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
    for argv in (("mine", "hello"), ("replay", "hello", "--against", "HEAD")):
        result = invoke_cli(*argv, cwd=repo.root)
        assert result.code == 2, result.output
        assert "is a pins oracle" in result.stderr and "corpus" in result.stderr
        assert "argv/stdin" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
