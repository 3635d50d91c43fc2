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
