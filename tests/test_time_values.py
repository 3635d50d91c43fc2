"""pytz's zones and the standard library's dated tuples (``struct_time``, ``IsoCalendarDate``).

Legacy date code localizes with pytz and returns ``timetuple()`` and ``isocalendar()``.
Before, each such value made its call a skipped one: a pytz zone's class is built at run
time and reachable by no name, and the two tuples had no encoder.  Here a billing module
of that era is recorded under its suite, replays green unchanged and goes red for a
one-line change seen only through those values; each form round-trips to the very zone
object pytz keeps, and the decoder refuses what names no zone.
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
import pytz
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import recorded, red_after_change, rows_of, run_cli
from lockstep import canon
from lockstep.canon.text import value_text
from lockstep.errors import CanonError

PARIS = pytz.timezone("Europe/Paris")

BILLING = """
import datetime
import time

import pytz

OFFICE = pytz.timezone("Europe/Paris")


def due_at(issued, days):
    \"\"\"The due moment: 17:00 in the office's zone, ``days`` calendar days on.\"\"\"
    local = issued.astimezone(OFFICE)
    day = local.date() + datetime.timedelta(days=days)
    return OFFICE.localize(datetime.datetime(day.year, day.month, day.day, 17, 0))


def billing_week(moment):
    return moment.isocalendar()


def stamp(moment):
    return moment.astimezone(pytz.utc).timetuple()


def in_zone(moment, zone):
    return zone.normalize(moment.astimezone(zone))
"""

TESTS = """
import datetime

import pytz

from billing import billing_week, due_at, in_zone, stamp

ISSUED = pytz.utc.localize(datetime.datetime(2024, 3, 29, 22, 30))


def test_due():
    assert due_at(ISSUED, 2).isoformat() == "2024-03-31T17:00:00+02:00"
    assert due_at(ISSUED, 0).isoformat() == "2024-03-29T17:00:00+01:00"


def test_week_and_stamp():
    assert billing_week(due_at(ISSUED, 2)).week == 13
    assert stamp(due_at(ISSUED, 2)).tm_hour == 15


def test_zones():
    ny = pytz.timezone("America/New_York")
    assert in_zone(ISSUED, ny).tzname() == "EDT"
    assert in_zone(ISSUED, pytz.FixedOffset(-330)).hour == 17
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "billing"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/billing/__init__.py": BILLING,
    "tests/test_billing.py": TESTS,
}


def test_a_billing_module_of_the_pytz_era_is_recorded_and_guarded(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "no call skipped" in run.output and "cannot freeze" not in run.output, run.output
    due = rows_of(root / "lockstep/billing.due_at.ledger.jsonl")
    frozen = [msgspec.json.encode(row.result).decode() for row in due]
    assert any('{"$pytz":["Europe/Paris",[7200,3600,"CEST"]]}' in f for f in frozen), frozen
    weeks = rows_of(root / "lockstep/billing.billing_week.ledger.jsonl")
    assert [row.result for row in weeks] == [{"$isocalendar": [2024, 13, 7]}]
    zones = rows_of(root / "lockstep/billing.in_zone.ledger.jsonl")
    assert any(row.args[1] == {"$pytz": [None, -330]} for row in zones)
    assert run_cli("replay", cwd=root).code == 0

    source = "src/billing/__init__.py"
    original = (root / source).read_text()
    # a datetime equal in UTC but in another zone: only the zone tells them apart
    red = red_after_change(
        root, source, "return zone.normalize(moment.astimezone(zone))", "return moment", "billing"
    )
    assert "DRIFT billing.in_zone" in red.stdout, red.stdout
    (root / source).write_text(original)
    red = red_after_change(root, source, "astimezone(pytz.utc)", "astimezone(OFFICE)", "billing")
    assert "DRIFT billing.stamp" in red.stdout and "tm_hour=15" in red.stdout, red.stdout


@pytest.mark.parametrize(
    ("value", "frozen"),
    [
        (pytz.utc, {"$pytz": ["UTC", None]}),
        (PARIS, {"$pytz": ["Europe/Paris", None]}),
        (pytz.timezone("EST"), {"$pytz": ["EST", None]}),
        (pytz.FixedOffset(-330), {"$pytz": [None, -330]}),
        (
            PARIS.localize(dt.datetime(2024, 7, 1)).tzinfo,
            {"$pytz": ["Europe/Paris", [7200, 3600, "CEST"]]},
        ),
    ],
)
def test_each_pytz_zone_thaws_to_the_object_pytz_keeps(value: Any, frozen: Any) -> None:
    assert canon.encode(value) == frozen
    assert canon.decode(frozen) is value


@settings(max_examples=150)
@given(
    zone=st.sampled_from(sorted(pytz.all_timezones_set)),
    moment=st.datetimes(min_value=dt.datetime(1900, 1, 2), max_value=dt.datetime(2100, 1, 1)),
    is_dst=st.booleans(),
)
def test_any_localized_datetime_round_trips_with_its_zone(
    zone: str, moment: dt.datetime, is_dst: bool
) -> None:
    tz = pytz.timezone(zone)
    local = tz.localize(moment, is_dst=is_dst)
    for value in (local, tz.normalize(local + dt.timedelta(hours=5)), moment.replace(tzinfo=tz)):
        back = canon.decode(canon.encode(value))
        assert back == value and back.isoformat() == value.isoformat()
        assert back.tzinfo is value.tzinfo
        assert canon.dumps(back) == canon.dumps(value)


@given(moment=st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)))
def test_dated_tuples_round_trip_with_their_class_and_fields(moment: dt.datetime) -> None:
    for value in (moment.timetuple(), moment.utctimetuple(), moment.isocalendar()):
        back = canon.decode(canon.encode(value))
        assert back == value and type(back) is type(value)
    stamp = time.gmtime(min(max(moment.timestamp(), -(10**10)), 10**10))
    back = canon.decode(canon.encode(stamp))
    assert (back.tm_zone, back.tm_gmtoff) == (stamp.tm_zone, stamp.tm_gmtoff)
    assert stamp.tm_gmtoff == 0 and stamp.tm_zone in ("UTC", "GMT")
    assert canon.decode(canon.encode(moment.isocalendar())).week == moment.isocalendar().week


def test_the_new_forms_read_in_a_drift_report() -> None:
    localized = PARIS.localize(dt.datetime(2024, 7, 1, 12))
    assert value_text(canon.encode(localized)) == (
        "datetime('2024-07-01T12:00:00+02:00', pytz.timezone('Europe/Paris') at CEST+2:00 DST)"
    )
    assert value_text(canon.encode(pytz.FixedOffset(-90))) == "pytz.FixedOffset(-90)"
    assert value_text(canon.encode(dt.date(2024, 1, 1).isocalendar())) == (
        "IsoCalendarDate(2024, 1, 1)"
    )
    assert f"tm_zone={time.gmtime(0).tm_zone!r}" in value_text(canon.encode(time.gmtime(0)))


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ({"$pytz": ["Nowhere/Atlantis", None]}, "not a zone pytz knows"),
        ({"$pytz": ["os:system", None]}, "not a zone pytz knows"),
        ({"$pytz": [3, None]}, "a zone name or null"),
        ({"$pytz": ["Europe/Paris", [1, 2, "X"]]}, "has no offset 1s, DST 2s, 'X'"),
        ({"$pytz": ["Europe/Paris", [540, 0, "LMT"]]}, "other than its first, written null"),
        ({"$pytz": ["Europe/Paris", [10**30, 0, "CET"]]}, "has no offset"),
        ({"$pytz": ["Europe/Paris", [3600, 0]]}, "[UTC offset, DST offset, name]"),
        ({"$pytz": ["UTC", [0, 0, "UTC"]]}, "has no offset"),
        ({"$pytz": [None, 1440]}, "whole minutes within ±1440"),
        ({"$pytz": [None, True]}, "whole minutes"),
        ({"$pytz": [None, None]}, "whole minutes"),
        ({"$pytz": "Europe/Paris"}, "malformed $pytz value"),
        ({"$isocalendar": [2024, 54, 1]}, "a week 1..53"),
        ({"$isocalendar": [0, 1, 1]}, "a year"),
        ({"$isocalendar": [2024, 1]}, "[year, week, weekday]"),
        ({"$struct_time": [2024] * 9}, "9 ints, then a zone and a UTC offset"),
        ({"$struct_time": [2024] * 8 + ["x", None, None]}, "9 ints"),
        ({"$struct_time": [1] * 9 + ["UTC", 10**9]}, "seconds east of UTC"),
        ({"$struct_time": [1] * 9 + [7, 0]}, "a zone name"),
    ],
)
def test_a_hostile_form_is_a_one_line_error(document: Any, says: str) -> None:
    with pytest.raises(CanonError) as caught:
        canon.decode({"v": document})
    message = str(caught.value)
    assert says in message and "\n" not in message, message
    assert message.startswith('value["v"]') or "v" in message, message


def test_a_datetime_in_a_zone_pytz_did_not_make_is_refused_not_guessed() -> None:
    """A DstTzInfo built by hand (not one of the zone's own objects) cannot be named."""
    stray = type(PARIS)(PARIS._transition_info[3], {})
    with pytest.raises(CanonError, match="not one of the zone's own localized objects"):
        canon.encode(dt.datetime(2024, 1, 1, tzinfo=stray))
