"""The replay summary's table, on a package surface of many members the suite mostly
never calls: PyPika's 481 ledgers printed 483 lines for a green replay, 239 of them an
empty ledger's row of dots."""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, run_cli, write_files


def test_past_forty_oracles_those_holding_no_case_are_counted_on_one_line(
    tmp_path: Path,
) -> None:
    functions = "\n\n".join(f"def f{n}(x):\n    return x + {n}" for n in range(45))
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\npackage = "many"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/many/__init__.py": functions + "\n",
            "tests/test_many.py": (
                "from many import f1, f2\n\n\ndef test_two():\n"
                "    assert f1(1) == 2 and f2(1) == 3\n"
            ),
        },
    )
    assert pytest_in(tmp_path, "--lockstep-record", "-q", "tests").code == 0
    replay = run_cli("replay", cwd=tmp_path)
    assert replay.code == 0, replay.output
    lines = replay.stdout.splitlines()
    assert any(line.startswith("many.f1 ") for line in lines), replay.stdout
    assert not any(line.startswith("many.f30 ") for line in lines), replay.stdout
    assert "… 43 more holding no case" in replay.stdout, replay.stdout
    assert len(lines) < 12, replay.stdout
