"""``[lockstep] object_calls`` and ``object_bytes``: a suite that grows one object call by
call (furl's tests add to one query thousands of times) freezes the whole object on every
call; past either limit, calls with objects not met before run unrecorded and the summary
counts them as skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import recorded, rows_of, run_cli

STACK = """
class Stack:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)
        return len(self.items)
"""

TEST = (
    "from stacks import Stack\n\n\n"
    "def test_grow():\n"
    "    s = Stack()\n"
    "    for i in range(40):\n"
    "        assert s.push(i) == i + 1\n"
)


def _files(setting: str) -> dict[str, str]:
    return {
        "lockstep.toml": f'[lockstep]\n{setting}\n\n[[ledger]]\npackage = "stacks"\n',
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        "src/stacks/__init__.py": STACK,
        "tests/test_stack.py": TEST,
    }


def test_past_the_limit_calls_with_new_objects_are_counted_not_frozen(tmp_path: Path) -> None:
    root = tmp_path / "limited"
    run = recorded(root, _files("object_calls = 5"))
    rows = rows_of(root / "lockstep/stacks.Stack.push.ledger.jsonl")
    assert len(rows) == 5
    assert "35 call(s): past the first 5 calls whose input holds objects" in run.output, run.output
    assert "[lockstep] object_calls" in run.output
    assert run_cli("replay", cwd=root).code == 0


def test_no_limit_records_every_call(tmp_path: Path) -> None:
    root = tmp_path / "unlimited"
    recorded(root, _files("object_calls = 0"))
    assert len(rows_of(root / "lockstep/stacks.Stack.push.ledger.jsonl")) == 40


def test_past_the_byte_limit_calls_with_objects_are_counted_not_frozen(tmp_path: Path) -> None:
    """``[lockstep] object_bytes``: the stack grows by a number a call, so each call's
    row is longer than the last; past 1,000 bytes of them, no more is frozen."""
    root = tmp_path / "bytes"
    run = recorded(root, _files("object_bytes = 1000"))
    rows = rows_of(root / "lockstep/stacks.Stack.push.ledger.jsonl")
    assert 5 < len(rows) < 40, len(rows)
    skipped = 40 - len(rows)
    assert f"{skipped} call(s): past the first 1,000 bytes frozen for calls" in run.output, (
        run.output
    )
    assert "[lockstep] object_bytes" in run.output
    assert run_cli("replay", cwd=root).code == 0
    unlimited = tmp_path / "no-byte-limit"
    recorded(unlimited, _files("object_bytes = 0"))
    assert len(rows_of(unlimited / "lockstep/stacks.Stack.push.ledger.jsonl")) == 40


@pytest.mark.parametrize(
    ("setting", "most"),
    [("object_calls = -1", "1000000000"), ("object_bytes = -1", "1099511627776")],
)
def test_a_limit_out_of_range_is_a_one_line_error(tmp_path: Path, setting: str, most: str) -> None:
    root = tmp_path / "bad"
    root.mkdir()
    (root / "lockstep.toml").write_text(f"[lockstep]\n{setting}\n")
    result = run_cli("replay", cwd=root)
    assert result.code == 2
    key = setting.split(" ")[0]
    assert result.stderr.strip().splitlines() == [
        f"lockstep: error: lockstep.toml: lockstep.{key}: must be between 0 (no limit) and {most}"
    ]
