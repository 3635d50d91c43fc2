"""A ledger replaced by a link to nothing is a link, wherever lockstep looks at it.

``lockstep replay`` said so (exit 2) while ``lockstep status`` called it "not recorded yet"
(exit 0) and ``pytest --lockstep`` asked to record it: ``path.exists()`` follows the link."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import pytest_in, run_cli, write_files

FILES = {
    "lockstep.toml": '[[ledger]]\nname = "cents"\ntarget = "money:cents"\n',
    "money.py": "def cents(amount):\n    return round(amount * 100)\n",
    "tests/test_money.py": (
        "from money import cents\n\n\ndef test_cents():\n    assert cents(1.25) == 125\n"
    ),
}


def test_a_ledger_linked_to_nothing_is_a_link_to_status_and_pytest(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_files(root, FILES)
    assert pytest_in(root, "--lockstep-record", "-q", "tests").code == 0
    ledger = root / "lockstep" / "cents.ledger.jsonl"
    ledger.unlink()
    ledger.symlink_to(tmp_path / "nowhere.jsonl")

    status = run_cli("status", cwd=root)
    assert status.code == 2, status.output
    assert "symbolic link" in status.output and "not recorded yet" not in status.output
    as_json = run_cli("status", "--json", cwd=root)
    assert as_json.code == 2, as_json.output
    (row,) = json.loads(as_json.stdout)["oracles"]
    assert row["present"] and not row["readable"]

    items = pytest_in(root, "--lockstep", "-q", "-p", "no:randomly")
    assert items.code != 0, items.output
    assert "symbolic link" in items.output and "is not recorded" not in items.output
    # the oracle folder named: the link is still a ledger of it (followed, it was left out,
    # and the run passed)
    named = pytest_in(root, "--lockstep", "-q", "-p", "no:randomly", "lockstep")
    assert named.code != 0, named.output
    assert "symbolic link" in named.output
    assert not (tmp_path / "nowhere.jsonl").exists()  # nothing written through it
