"""What a recording froze for the garbage collector stays frozen only when the process ends.

``pytest --lockstep-record`` freezes what configure built (:mod:`lockstep.oracles.ledger.
session_gc`).  Where pytest is the program, giving it back at the end only made the
interpreter's last collection walk it all again on the way out, so it stays frozen; where
pytest was called by another program, that program gets its collector back as it left it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import run_pytest, write_files

PROJECT = {
    "shop/__init__.py": "",
    "shop/calc.py": "def double(x):\n    return x * 2\n",
    "tests/test_calc.py": "from shop.calc import double\n\n\ndef test_double():\n"
    "    assert double(2) == 4\n",
    "lockstep.toml": '[[ledger]]\nname = "double"\ntarget = "shop.calc:double"\n',
    # counts what is frozen before lockstep's configure, and once the process ends
    "conftest.py": """
        import atexit
        import gc
        from pathlib import Path

        import pytest

        @pytest.hookimpl(tryfirst=True)
        def pytest_configure(config):
            Path("frozen-before.txt").write_text(str(gc.get_freeze_count()))
            atexit.register(lambda: Path("frozen-at-exit.txt").write_text(str(gc.get_freeze_count())))
        """,
}


def _counts(root: Path) -> tuple[int, int]:
    return (
        int((root / "frozen-before.txt").read_text()),
        int((root / "frozen-at-exit.txt").read_text()),
    )


def test_under_python_m_pytest_the_frozen_objects_stay_frozen_to_the_end(tmp_path: Path) -> None:
    write_files(tmp_path, PROJECT)
    result = run_pytest(
        "-q", "tests", "--lockstep-record", cwd=tmp_path, plugins=("lockstep.pytest.plugin",)
    )
    assert result.code == 0, result.output
    assert (tmp_path / "lockstep/double.ledger.jsonl").is_file()
    before, at_exit = _counts(tmp_path)
    if before:  # an interpreter that starts with objects frozen (3.12): left alone
        assert at_exit == before
    else:
        assert at_exit > 1000  # configure's objects: never walked again, not even at exit


def test_pytest_main_called_by_a_program_gives_its_collector_back(tmp_path: Path) -> None:
    write_files(tmp_path, PROJECT)
    write_files(
        tmp_path,
        {
            "run.py": """
                import gc
                import sys

                import pytest

                before = gc.get_freeze_count()
                code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "lockstep.pytest.plugin",
                                    "tests", "--lockstep-record"])
                print("FROZEN", before, gc.get_freeze_count())
                sys.exit(code)
                """
        },
    )
    env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "run.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("FROZEN"))
    _, before, after = line.split()
    assert after == before  # what the recording froze was given back
    assert (tmp_path / "lockstep/double.ledger.jsonl").is_file()
