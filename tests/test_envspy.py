"""Env discovery names the keys the *program* reads, not the interpreter's own library."""

from __future__ import annotations

import textwrap
from pathlib import Path

from lockstep.probe.envspy import discover
from lockstep.process import build_env

PROGRAM = """
import os
import tempfile
import zoneinfo

tempfile.gettempdir()                      # the library reads TMPDIR, TEMP, TMP
zoneinfo.available_timezones()             # and PYTHONTZPATH
print(os.environ.get("CURRENCY"), os.getenv("TAX_RATE"), "REGION" in os.environ)
print(os.environ["HOME"] if "HOME" in os.environ else "-")
"""


def test_reads_by_the_program_are_found_and_the_librarys_are_not(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROGRAM))
    found = discover(
        ["python", "prog.py"],
        env=build_env({"CURRENCY": "EUR"}),
        stdin=b"",
        cwd=tmp_path,
        timeout=30,
        declared=["CURRENCY", "TAX_RATE"],
    )
    assert found is not None
    assert set(found.read) == {"CURRENCY", "TAX_RATE", "REGION", "HOME"}
    assert set(found.undeclared) == {"REGION", "HOME"}
