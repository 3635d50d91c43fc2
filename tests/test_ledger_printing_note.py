"""A target that prints is said to: what a call prints is no part of its row.

A billing export that prints its lines and returns their count recorded a row of the
count alone, and a change to the printed text replayed green with nothing said; the
recording now names each such target and what guards printed output instead."""

from __future__ import annotations

from pathlib import Path

from helpers import recorded, run_cli

FILES = {
    "lockstep.toml": (
        '[[ledger]]\nname = "export"\ntarget = "billing:export"\n\n'
        '[[ledger]]\nname = "total"\ntarget = "billing:total"\n'
    ),
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
    "billing.py": (
        "import sys\n\n\n"
        "def export(rows):\n"
        "    for name, cents in rows:\n"
        "        print(f'{name},{cents / 100:.2f}')\n"
        "    return len(rows)\n\n\n"
        "def total(rows):\n"
        "    return sum(cents for _, cents in rows)\n"
    ),
    "tests/test_billing.py": (
        "import billing\n\n\n"
        "def test_export(capsys):\n"
        "    assert billing.export([('a', 150), ('b', 99)]) == 2\n"
        "    assert capsys.readouterr().out == 'a,1.50\\nb,0.99\\n'\n"
        "    assert billing.total([('a', 150)]) == 150\n"
    ),
}


def test_a_target_that_prints_is_named_and_one_that_does_not_is_not(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "billing:export prints (print() in its code)" in run.output, run.output
    assert "[[pins]]" in run.output
    assert "billing:total prints" not in run.output
    assert run_cli("replay", cwd=root).code == 0
