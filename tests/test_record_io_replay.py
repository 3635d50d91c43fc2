"""``@record_io`` end to end: record with the decorator, configure the ``[[ledger]]``, replay.

The function stays decorated while lockstep replays it; replay (the CLI and the pytest
plugin) must not record its own calls into the ledger it replays."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import run_cli, run_pytest, snapshot_tree, write_files

MODULE = """
from lockstep import record_io

@record_io
def price(qty, unit=2):
    return (qty * unit, "EUR") if qty else None

if __name__ == "__main__":
    for q in (0, 1, 3, 1):
        price(q)
"""


def recorded(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\nname = "price"\ntarget = "shop.job:price"\n',
            "shop/__init__.py": "",
            "shop/job.py": MODULE,
        },
    )
    proc = subprocess.run(
        [sys.executable, "shop/job.py"], cwd=root, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert (root / "lockstep/price.ledger.jsonl").is_file()
    return root


def untouched(root: Path) -> tuple[dict[str, bytes], tuple[int, int]]:
    """The oracle folder's bytes, and the ledger's inode and mtime: a rewrite with the same
    bytes (the decorator's merge at exit) changes the latter."""
    stat = (root / "lockstep/price.ledger.jsonl").stat()
    return snapshot_tree(root / "lockstep"), (stat.st_ino, stat.st_mtime_ns)


def test_replaying_a_decorated_function_leaves_its_ledger_byte_identical(tmp_path: Path) -> None:
    root = recorded(tmp_path)
    before = untouched(root)
    for _ in range(2):
        result = run_cli("replay", "price", cwd=root)
        assert result.code == 0, result.output
        assert "3 cases: 3 passed" in result.stdout
        assert "call(s)" not in result.stderr  # the recorder's note when it writes
        assert untouched(root) == before


def test_pytest_lockstep_replays_a_decorated_function_without_recording(tmp_path: Path) -> None:
    root = recorded(tmp_path)
    before = untouched(root)
    for _ in range(2):
        result = run_pytest("-q", "--lockstep", cwd=root, plugins=("lockstep",))
        assert result.code == 0, result.output
        assert "3 passed" in result.stdout
        assert "call(s)" not in result.output
        assert untouched(root) == before


def test_a_decorated_function_still_records_outside_lockstep(tmp_path: Path) -> None:
    # Switching recording off is scoped to lockstep's own runs: the script records again.
    root = recorded(tmp_path)
    (root / "shop/job.py").write_text(MODULE.replace("(0, 1, 3, 1)", "(0, 1, 3, 5)"))
    subprocess.run([sys.executable, "shop/job.py"], cwd=root, check=True)
    rows = (root / "lockstep/price.ledger.jsonl").read_text().splitlines()
    assert any('[10,"EUR"]' in row.replace(" ", "") for row in rows), rows


def test_the_switch_has_one_name() -> None:
    from lockstep.cli.app import RECORD_IO_OFF as CLI
    from lockstep.oracles.ledger.decorator import RECORD_IO_OFF
    from lockstep.pytest.plugin import RECORD_IO_OFF as PLUGIN
    from lockstep.switches import RECORD_IO_OFF as ONE

    assert CLI == PLUGIN == RECORD_IO_OFF == ONE
