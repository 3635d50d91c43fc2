"""A constructor's ``self`` is frozen before it runs, when nothing is set yet: a class whose
own ``__getstate__`` reads what ``__init__`` sets (netaddr's ``IPAddress``) freezes that
object blank, so its constructor calls are rows instead of skipped calls."""

from __future__ import annotations

from pathlib import Path

import msgspec

from helpers import recorded, red_after_change, rows_of, run_cli

ADDR = """
class Addr:
    __slots__ = ("_value", "_bits")

    def __init__(self, text, bits=32):
        self._bits = bits  # set first: an address that raises leaves self half built
        parts = [int(p) for p in text.split(".")]
        if len(parts) != 4 or not all(0 <= p < 256 for p in parts):
            raise ValueError(f"not an address: {text!r}")
        self._value = (parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]

    def __getstate__(self):
        return self._value, self._bits

    def __setstate__(self, state):
        self._value, self._bits = state

    def __str__(self):
        v = self._value
        return ".".join(str((v >> shift) & 255) for shift in (24, 16, 8, 0))
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "netcalc"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/netcalc/__init__.py": "",
    "src/netcalc/addr.py": ADDR,
    "tests/test_addr.py": (
        "import pytest\n\nfrom netcalc.addr import Addr\n\n\n"
        "def test_parse():\n"
        "    assert str(Addr('10.0.0.1')) == '10.0.0.1'\n"
        "    assert str(Addr('192.168.1.254', bits=24)) == '192.168.1.254'\n\n\n"
        "def test_bad():\n"
        "    with pytest.raises(ValueError):\n"
        "        Addr('300.1.1.1')\n"
    ),
}


def test_a_constructor_whose_class_reads_its_own_state_is_recorded_and_guards_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "reading its state raised" not in run.output, run.output
    rows = rows_of(root / "lockstep/netcalc.addr.Addr.__init__.ledger.jsonl")
    blank = {"$obj": ["netcalc.addr:Addr", {}]}
    assert [row.args[0] for row in rows] == [blank] * 3  # nothing set before it runs
    # the one that raised too: its half-built self, which the caller never gets, cannot be
    # read after the call (netaddr's IPAddress("foo")), and is left out of the row
    assert sorted(row.ok for row in rows) == [False, True, True]
    assert all(row.mutated is msgspec.UNSET for row in rows if not row.ok)
    assert run_cli("replay", cwd=root).code == 0

    source, ctor = "src/netcalc/addr.py", "netcalc.addr.Addr.__init__"
    original = (root / source).read_text()
    red = red_after_change(root, source, "(parts[0] << 24)", "(parts[0] << 23)", ctor)
    assert "DRIFT netcalc.addr.Addr.__init__" in red.stdout

    (root / source).write_text(original)
    red = red_after_change(root, source, "p < 256", "p < 512", ctor)  # 300.1.1.1 accepted now
    assert "raised ValueError" in red.stdout


SCHEDULE = """
import time


class Schedule:
    def __init__(self, expr, start=None):
        self.start = time.time() if start is None else start  # read before the check
        fields = expr.split()
        if len(fields) != 5:
            raise ValueError(f"need 5 fields: {expr!r}")
        if any(f.startswith("#") for f in fields):
            raise ValueError(f"nth must be 1 to 5: {expr!r}")
        self.fields = fields

    def weekday(self):
        return self.fields[4]
"""

SCHEDULE_FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "cron"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/cron/__init__.py": "",
    "src/cron/schedule.py": SCHEDULE,
    "tests/test_schedule.py": (
        "import pytest\n\nfrom cron.schedule import Schedule\n\n\n"
        "def test_ok():\n"
        "    assert Schedule('0 0 * * 1', start=0).weekday() == '1'\n\n\n"
        "def test_bad():\n"
        "    with pytest.raises(ValueError):\n"
        "        Schedule('0 0 * *')\n"
        "    with pytest.raises(ValueError):\n"
        "        Schedule('0 0 * * #0')\n"
    ),
}


def test_a_constructor_that_raises_guards_its_error_whatever_self_held(tmp_path: Path) -> None:
    """croniter's ``croniter(expr)`` with no start time reads the clock into ``self``
    before it checks the expression: the half-built ``self`` held the recording's time, a
    fresh interpreter's differed, and every error row of the constructor was refused, so
    no check of a bad expression was guarded.  The caller never gets that object: its
    state is no part of the row, and the errors guard the checks."""
    root = tmp_path / "project"
    run = recorded(root, SCHEDULE_FILES)
    assert "refused" not in run.output.replace("refused 0", ""), run.output
    rows = rows_of(root / "lockstep/cron.schedule.Schedule.__init__.ledger.jsonl")
    assert sorted(row.ok for row in rows) == [False, False, True]
    assert all(row.mutated is msgspec.UNSET for row in rows if not row.ok)
    assert run_cli("replay", cwd=root).code == 0

    ctor = "cron.schedule.Schedule.__init__"
    red = red_after_change(
        root, "src/cron/schedule.py", 'f.startswith("#")', 'f.startswith("@")', ctor
    )
    assert "DRIFT cron.schedule.Schedule.__init__" in red.stdout
