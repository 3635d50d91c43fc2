"""A recording keeps the garbage collector off what it builds before the tests, and gives
it back at the end.

What ``pytest --lockstep-record`` imports and builds at configure (its modules, the wrapped
surface, pytest's own objects) lives until the session ends; left in the collector's sight,
every full collection during the tests walked it again (about a third of the wall time a
recording added to a sub-second suite).  It is frozen (``gc.freeze``) once the targets are
wrapped, and unfrozen when pytest unconfigures, so a program that runs pytest in its own
process finds the collector as it left it.  A plain run freezes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import write_files

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "tally"\n',
    "tally/__init__.py": (
        "def total(items):\n"
        "    return sum(items)\n\n\n"
        "class Ring:\n"
        "    def __init__(self):\n"
        "        self.me = self  # a cycle only the collector frees\n"
    ),
    "tests/test_tally.py": (
        "import gc, json, os\n"
        "from tally import total\n\n\n"
        "def test_total():\n"
        "    assert total([1, 2, 3]) == 6\n"
        "    with open(os.environ['FROZEN_DURING'], 'w') as f:\n"
        "        json.dump(gc.get_freeze_count(), f)\n"
    ),
}

IN_PROCESS = """
import gc, json, sys, weakref
import pytest
import tally

ring = tally.Ring()
gone = weakref.ref(ring)
del ring  # cyclic garbage made before the session: frozen with everything else
before = gc.get_freeze_count()  # Python 3.12 starts with some frozen: then none is added
code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "lockstep.pytest.plugin", *sys.argv[1:]])
gc.collect()
after = gc.get_freeze_count()
print(json.dumps({"code": int(code), "before": before, "after": after, "freed": gone() is None}))
"""


def _run(root: Path, *args: str) -> tuple[dict[str, object], int]:
    during = root / "during.json"
    proc = subprocess.run(
        [sys.executable, "-c", IN_PROCESS, "tests", *args],
        cwd=root,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST")},
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONPATH": str(root),
            "FROZEN_DURING": str(during),
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), json.loads(during.read_text())


def test_recording_freezes_for_the_tests_and_unfreezes_at_the_end(tmp_path: Path) -> None:
    write_files(tmp_path, FILES)
    result, frozen_during = _run(tmp_path, "--lockstep-record")
    assert result["code"] == 0
    if result["before"] == 0:
        assert frozen_during > 1000  # pytest's and lockstep's objects, out of every collection
    else:  # frozen by someone else first (Python 3.12's own start): left alone
        assert frozen_during == result["before"]
    assert result["after"] == result["before"]  # the caller's collector as it was
    assert result["freed"] is True  # garbage frozen with them is collected once unfrozen
    assert (tmp_path / "lockstep" / "tally.total.ledger.jsonl").is_file()


def test_a_plain_run_freezes_nothing(tmp_path: Path) -> None:
    write_files(tmp_path, FILES)
    result, frozen_during = _run(tmp_path)
    assert result["code"] == 0 and result["freed"] is True
    assert frozen_during == result["after"] == result["before"]
