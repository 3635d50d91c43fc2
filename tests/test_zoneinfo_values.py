"""``zoneinfo`` zones passed and kept as values: ``{"$zoneinfo": key}``.

Modern date code passes the zone itself (astral's ``sun(observer, tzinfo=ZoneInfo(...))``)
and keeps it on its objects.  A ``ZoneInfo`` keeps its state in C fields, so before, each
such call was skipped ("cannot freeze a zoneinfo:ZoneInfo"): on astral 3.2's suite a third
of ``sun()``'s calls.  Here a small sun-times module of that shape is recorded under its
suite, replays green unchanged and goes red for a one-line change seen only through the
zone; every key round-trips to the object the zone cache hands out, and the decoder refuses
what names no zone.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import recorded, red_after_change, refused_in_one_line, rows_of, run_cli
from lockstep import canon
from lockstep.canon.text import value_text
from lockstep.errors import CanonError

SUNTIMES = """
import dataclasses
import datetime
from zoneinfo import ZoneInfo


@dataclasses.dataclass
class Place:
    name: str
    zone: ZoneInfo


def noon(day, tzinfo=ZoneInfo("UTC")):
    \"\"\"Solar noon, roughly: 12:00 UTC shown in ``tzinfo``.\"\"\"
    utc = datetime.datetime(day.year, day.month, day.day, 12, tzinfo=datetime.timezone.utc)
    return utc.astimezone(tzinfo)


def place(name, key):
    return Place(name, ZoneInfo(key))


def zone_of(p):
    return p.zone
"""

TESTS = """
import datetime
from zoneinfo import ZoneInfo

from suntimes import noon, place, zone_of

DAY = datetime.date(2024, 7, 1)


def test_noon():
    assert noon(DAY, tzinfo=ZoneInfo("Europe/London")).hour == 13
    assert noon(DAY, ZoneInfo("Asia/Kolkata")).minute == 30
    assert noon(DAY).hour == 12


def test_place():
    london = place("London", "Europe/London")
    assert zone_of(london).key == "Europe/London"
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "suntimes"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/suntimes/__init__.py": SUNTIMES,
    "tests/test_suntimes.py": TESTS,
}


def test_a_module_passing_its_zones_is_recorded_and_guarded(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "no call skipped" in run.output and "cannot freeze" not in run.output, run.output
    noons = rows_of(root / "lockstep/suntimes.noon.ledger.jsonl")
    frozen = [msgspec.json.encode(row.kwargs or row.args).decode() for row in noons]
    assert any('{"$zoneinfo":"Europe/London"}' in f for f in frozen), frozen
    zones = rows_of(root / "lockstep/suntimes.zone_of.ledger.jsonl")
    assert [row.result for row in zones] == [{"$zoneinfo": "Europe/London"}]
    assert run_cli("replay", cwd=root).code == 0

    # the same instant, kept in another zone: only the zone tells the two apart
    red = red_after_change(
        root,
        "src/suntimes/__init__.py",
        "Place(name, ZoneInfo(key))",
        'Place(name, ZoneInfo("UTC"))',
    )
    assert "DRIFT suntimes.place" in red.stdout, red.stdout
    assert "ZoneInfo('Europe/London')" in red.stdout, red.stdout


@given(key=st.sampled_from(sorted(zoneinfo.available_timezones())))
def test_every_key_thaws_to_the_zone_the_cache_hands_out(key: str) -> None:
    zone = zoneinfo.ZoneInfo(key)
    assert canon.encode(zone) == {"$zoneinfo": key}
    assert canon.decode(canon.encode(zone)) is zone
    moment = dt.datetime(2024, 3, 31, 1, 30, tzinfo=zone)
    assert canon.decode(canon.encode([zone, moment])) == [zone, moment]
    assert value_text(canon.encode(zone)) == f"ZoneInfo({key!r})"


def test_a_zone_read_from_a_file_has_no_key_and_is_refused(tmp_path: Path) -> None:
    source = Path(zoneinfo.TZPATH[0]) / "Europe/London" if zoneinfo.TZPATH else None
    if source is None or not source.is_file():
        import tzdata  # the zones' data when the machine has none

        source = Path(tzdata.__file__).parent / "zoneinfo/Europe/London"
    with source.open("rb") as data:
        zone = zoneinfo.ZoneInfo.from_file(data)
    with pytest.raises(CanonError, match="read from a file: it has no key"):
        canon.encode({"zone": zone})


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ({"$zoneinfo": "Nowhere/Atlantis"}, "not a zone known here"),
        ({"$zoneinfo": "../../etc/passwd"}, "not a zone known here"),
        ({"$zoneinfo": ["Europe/London"]}, "malformed $zoneinfo value"),
        ({"$zoneinfo": None}, "malformed $zoneinfo value"),
    ],
)
def test_a_hostile_zone_is_a_one_line_error(document: Any, says: str) -> None:
    message = refused_in_one_line(document)
    assert says in message, message
