"""Verdicts that are the same for every kind (issue: gates that are right on real repositories).

* A configured oracle that was never recorded: the other oracles still replay,
  the unrecorded one is named with the command that records it, the run is red.
* A target that no longer imports after a change is the change's failure: ERROR
  outcomes for that oracle's cases with the exception, exit 1 (not a config error).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import invoke_cli, write_files

CONFIG = """
[[corpus]]
name = "rows"
fixtures = "fixtures/*.json"
render = "harness:render"

[[ledger]]
name = "parse"
target = "money:parse_amount"
driver = "drive:main"

[[tape]]
name = "total"
driver = "drive:tape_drive"
"""

FILES = {
    "lockstep.toml": CONFIG,
    "harness.py": "import json\n\n\ndef render(path):\n    return json.loads(path.read_text())\n",
    "fixtures/a.json": '{"a": 1}',
    "money.py": "def parse_amount(raw):\n    return round(float(raw.replace(',', '.')), 2)\n",
    "drive.py": (
        "from money import parse_amount\n\n\ndef main():\n"
        "    for raw in ['1,5', '2', '3.25']:\n        parse_amount(raw)\n\n\n"
        "def tape_drive(tape):\n"
        "    parse = tape.spy('parse', parse_amount)\n"
        "    return parse('4,5')\n"
    ),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write_files(root, FILES)
    return root


@pytest.mark.parametrize("unrecorded", ["rows", "parse", "total"])
def test_an_unrecorded_oracle_is_named_and_the_others_still_replay(
    project: Path, unrecorded: str
) -> None:
    for name in ("rows", "parse", "total"):
        if name != unrecorded:
            assert invoke_cli("record", name, cwd=project).code == 0
    result = invoke_cli("replay", cwd=project)
    assert result.code == 1, result.output
    assert f"ERROR {unrecorded}::(not recorded)" in result.stdout
    assert f"run 'lockstep record {unrecorded}' on the trusted commit" in result.stdout
    table = result.stdout.splitlines()
    for name in ("rows", "parse", "total"):
        if name != unrecorded:
            row = next(line for line in table if line.startswith(name + " "))
            assert row.split()[1] != "·", row  # its cases replayed and passed


def test_a_target_that_no_longer_imports_is_an_error_of_the_change(project: Path) -> None:
    for name in ("rows", "parse", "total"):
        assert invoke_cli("record", name, cwd=project).code == 0
    (project / "money.py").write_text(
        "import decimal\nRATE = decimal.Decimal('1') / 0\n\n\ndef parse_amount(raw):\n"
        "    return 0\n"
    )
    result = invoke_cli("replay", "parse", cwd=project)
    assert result.code == 1, result.output
    assert result.stdout.count("ERROR parse::") == 3
    assert "cannot import module 'money': DivisionByZero" in result.stdout
    assert "lockstep: error" not in result.stderr

    (project / "harness.py").write_text("import json\n\n\ndef renamed(path):\n    return 1\n")
    rows = invoke_cli("replay", "rows", cwd=project)
    assert rows.code == 1, rows.output
    assert "ERROR rows::a.json" in rows.stdout
    assert "has no attribute 'render'" in rows.stdout


def test_cases_left_after_a_mid_replay_failure_are_found_by_counting() -> None:
    """Replay keeps a count, not every id (a million-case replay stays flat): the cases
    left are the listing's after the count, when the last one replayed is where the
    count says; otherwise they cannot be told apart and the oracle gets one ERROR."""
    from lockstep.model import ReplayOptions, Shard
    from lockstep.oracles import _not_replayed

    ids = [f"c{i}" for i in range(10)]
    every = ReplayOptions()
    assert _not_replayed(iter(ids), every, 0, "") == ids
    assert _not_replayed(iter(ids), every, 4, "c3") == ids[4:]
    assert _not_replayed(iter(ids), every, 10, "c9") == []
    assert _not_replayed(iter(ids), every, 4, "c7") is None  # another order
    shard = ReplayOptions(shard=Shard(1, 2))
    selected = [c for c in ids if shard.selects(c)]
    assert _not_replayed(iter(ids), shard, 1, selected[0]) == selected[1:]
