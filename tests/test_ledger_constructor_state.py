"""A constructor's ``self`` is frozen before it runs, when nothing is set yet: a class whose
own ``__getstate__`` reads what ``__init__`` sets (netaddr's ``IPAddress``) freezes that
object blank, so its constructor calls are rows instead of skipped calls."""

from __future__ import annotations

from pathlib import Path

import msgspec

from helpers import pytest_in, rows_of, run_cli, write_files

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
    write_files(root, FILES)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert "reading its state raised" not in recorded.output, recorded.output
    rows = rows_of(root / "lockstep/netcalc.addr.Addr.__init__.ledger.jsonl")
    blank = {"$obj": ["netcalc.addr:Addr", {}]}
    assert [row.args[0] for row in rows] == [blank] * 3  # nothing set before it runs
    # the one that raised too: its half-built self, which the caller never gets, cannot be
    # read after the call (netaddr's IPAddress("foo")), and is left out of the row
    assert sorted(row.ok for row in rows) == [False, True, True]
    assert all(row.mutated is msgspec.UNSET for row in rows if not row.ok)
    assert run_cli("replay", cwd=root).code == 0

    source = root / "src/netcalc/addr.py"
    original = source.read_text()
    source.write_text(original.replace("(parts[0] << 24)", "(parts[0] << 23)"))
    red = run_cli("replay", "netcalc.addr.Addr.__init__", cwd=root)
    assert red.code == 1, red.output
    assert "DRIFT netcalc.addr.Addr.__init__" in red.stdout

    source.write_text(original.replace("p < 256", "p < 512"))  # 300.1.1.1 accepted now
    red = run_cli("replay", "netcalc.addr.Addr.__init__", cwd=root)
    assert red.code == 1, red.output
    assert "raised ValueError" in red.stdout
