"""A zone's own methods are called with a time in that very zone (``dt.tzinfo is self``):
replayed so, dateutil's ``fromutc``, which checks it, is recorded and guarded instead of
every row being refused for "dt.tzinfo is not self"."""

from __future__ import annotations

from pathlib import Path

from helpers import recorded, red_after_change, rows_of, run_cli

ZONES = """
import datetime as dt


class Fixed(dt.tzinfo):
    def __init__(self, hours, name):
        self._offset = dt.timedelta(hours=hours)
        self._name = name

    def utcoffset(self, d):
        return self._offset

    def dst(self, d):
        return dt.timedelta(0)

    def tzname(self, d):
        return self._name

    def fromutc(self, d):
        if d.tzinfo is not self:
            raise ValueError("fromutc: dt.tzinfo is not self")
        return d + self._offset
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "zones"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/zones/__init__.py": ZONES,
    "tests/test_zones.py": (
        "import datetime as dt\n\nfrom zones import Fixed\n\n\n"
        "def test_convert():\n"
        "    zone = Fixed(5, 'PLUS5')\n"
        "    noon = dt.datetime(2020, 1, 1, 12, tzinfo=dt.timezone.utc)\n"
        "    assert noon.astimezone(zone).hour == 17\n"
        "    assert zone.fromutc(dt.datetime(2020, 1, 1, 12, tzinfo=zone)).hour == 17\n"
        "    assert zone.tzname(dt.datetime(2020, 1, 1, tzinfo=zone)) == 'PLUS5'\n"
    ),
}


def test_a_zones_fromutc_is_recorded_replayed_and_guarded(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "dt.tzinfo is not self" not in run.output, run.output
    rows = rows_of(root / "lockstep/zones.Fixed.fromutc.ledger.jsonl")
    assert len(rows) == 1 and rows[0].ok  # both calls: one input
    assert rows_of(root / "lockstep/zones.Fixed.tzname.ledger.jsonl")
    assert run_cli("replay", cwd=root).code == 0

    red = red_after_change(
        root, "src/zones/__init__.py", "return d + self._offset", "return d - self._offset"
    )
    assert "DRIFT zones.Fixed.fromutc" in red.stdout, red.stdout


def test_a_time_in_an_equal_but_other_zone_keeps_its_own(tmp_path: Path) -> None:
    """Only the call's own zone is given back: a time in another zone object whose state
    is equal still raises in fromutc, as it did when recorded."""
    files = dict(FILES)
    files["tests/test_zones.py"] = (
        "import datetime as dt\n\nimport pytest\n\nfrom zones import Fixed\n\n\n"
        "def test_other_zone():\n"
        "    zone, twin = Fixed(5, 'PLUS5'), Fixed(6, 'PLUS6')\n"
        "    with pytest.raises(ValueError):\n"
        "        zone.fromutc(dt.datetime(2020, 1, 1, 12, tzinfo=twin))\n"
    )
    root = tmp_path / "project"
    recorded(root, files)
    rows = rows_of(root / "lockstep/zones.Fixed.fromutc.ledger.jsonl")
    assert [row.ok for row in rows] == [False]
    assert run_cli("replay", cwd=root).code == 0
