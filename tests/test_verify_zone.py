"""New cases are verified in another local time zone than the recording's.

A case whose outcome depends on the machine's zone replays green where it was recorded
and red on a CI runner in UTC or a colleague's machine elsewhere.  The verifying
interpreter runs in a zone the recording is not in, so such a case is refused at record,
named as the zone's; a case that does not depend on the zone is written as before, and
the next replay is green in any zone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import pytest_in, rows_of, run_cli, write_files

CLOCKS = """
from datetime import datetime, timezone


def local_hour(ts):
    return datetime.fromtimestamp(ts).hour


def utc_hour(ts):
    return datetime.fromtimestamp(ts, timezone.utc).hour
"""

TESTS = """
from clocks import local_hour, utc_hour


def test_hours():
    assert 0 <= local_hour(0) < 24
    assert utc_hour(3600) == 1
"""

CONFIG = """
[[ledger]]
name = "local_hour"
target = "clocks:local_hour"

[[ledger]]
name = "utc_hour"
target = "clocks:utc_hour"
"""


def test_a_case_that_depends_on_the_local_zone_is_refused_and_named(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {"lockstep.toml": CONFIG, "clocks.py": CLOCKS, "tests/test_clocks.py": TESTS},
    )
    for zone in ("UTC", "Europe/Paris"):  # a CI runner; a machine east of it
        for ledger in (tmp_path / "lockstep").glob("*.ledger.jsonl"):
            ledger.unlink()
        recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests", env={"TZ": zone})
        assert recorded.code == 0, recorded.output
        assert "cause: the machine's local time zone" in recorded.output, recorded.output
        assert rows_of(tmp_path / "lockstep/local_hour.ledger.jsonl") == []
        assert len(rows_of(tmp_path / "lockstep/utc_hour.ledger.jsonl")) == 1
        # (an empty ledger is an error of its own at replay: only the kept one is replayed)
        for elsewhere in ("America/New_York", "Asia/Tokyo", "UTC"):
            green = run_cli("replay", "utc_hour", cwd=tmp_path, env={"TZ": elsewhere})
            assert green.code == 0, (zone, elsewhere, green.output)


def _in_zone(tz: str | None, code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "TZ"}
    if tz is not None:
        env["TZ"] = tz
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_verifying_zone_is_never_the_recording_s() -> None:
    code = "from lockstep.oracles.verify_zone import verifying_zone; print(verifying_zone())"
    assert _in_zone("UTC", code) in ("America/St_Johns", "NST+3:30NDT,M3.2.0,M11.1.0")
    assert _in_zone("America/St_Johns", code) in ("Asia/Kathmandu", "<+0545>-5:45")
    # a zone with summer time is verified in one without, and the other way round: New
    # York's summer time falls on St John's dates, so a row asking "is it summer time?"
    # would agree there on every date
    assert _in_zone("America/New_York", code) in ("Asia/Kathmandu", "<+0545>-5:45")
    assert _in_zone("Asia/Kathmandu", code) in ("America/St_Johns", "NST+3:30NDT,M3.2.0,M11.1.0")


def test_the_recording_s_zone_is_restored_and_left() -> None:
    code = (
        "import os, time\n"
        "from lockstep.oracles.verify_zone import recording_zone, verifying_env\n"
        "os.environ.update(verifying_env())\n"
        "os.environ['TZ'] = 'Asia/Tokyo'; time.tzset()\n"
        "with recording_zone():\n"
        "    inside = (os.environ.get('TZ'), time.timezone)\n"
        "print(inside, os.environ['TZ'], time.timezone)\n"
    )
    assert _in_zone("Europe/Paris", code) == "('Europe/Paris', -3600) Asia/Tokyo -32400"
    assert _in_zone(None, code) == "(None, 0) Asia/Tokyo -32400"


LOOKS = """
import time

WORDS = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"}


def stamp():
    return time.time()


def joined():
    return ",".join(WORDS)
"""


def test_a_case_that_varies_by_call_is_not_named_as_the_hash_seed_s(tmp_path: Path) -> None:
    """Replayed twice in the fresh interpreter, a clock read differs each time: its cause
    is that it varies, where set order (the same twice under one seed) is the seed's."""
    write_files(
        tmp_path,
        {
            "lockstep.toml": (
                '[[ledger]]\nname = "stamp"\ntarget = "looks:stamp"\n'
                '[[ledger]]\nname = "joined"\ntarget = "looks:joined"\n'
            ),
            "looks.py": LOOKS,
            "tests/test_looks.py": (
                "from looks import joined, stamp\n\n\n"
                "def test_looks():\n    assert stamp() > 0\n    assert joined()\n"
            ),
        },
    )
    # a pinned seed: the set's order under it is not the verifying seed's (checked below)
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests", env={"PYTHONHASHSEED": "7"})
    assert recorded.code == 0, recorded.output
    lines = recorded.output.splitlines()
    stamp = next(line for line in lines if line.startswith("  refused") and "stamp()" in line)
    joined = next(line for line in lines if line.startswith("  refused") and "joined()" in line)
    assert "cause: it varies from one call to the next" in stamp, stamp
    assert "hash-seed" not in stamp
    assert "cause: hash-seed dependence" in joined, joined


LOCAL_ZONE = """
import datetime
import time


def is_dst(dt):
    return bool(time.localtime(time.mktime(dt.timetuple())).tm_isdst)


def weekday(dt):
    return dt.weekday()


class LocalZone(datetime.tzinfo):
    '''Like dateutil's tzlocal: its offsets are read from the machine's zone at init.'''

    def __init__(self):
        self._std = datetime.timedelta(seconds=-time.timezone)
        self._dst = datetime.timedelta(seconds=-time.altzone) if time.daylight else self._std

    def utcoffset(self, dt):
        return self._dst if is_dst(dt.replace(tzinfo=None)) else self._std

    def dst(self, dt):
        return self.utcoffset(dt) - self._std

    def tzname(self, dt):
        return None
"""

SYDNEY_TESTS = """
import datetime
import time

import pytest

import zones


@pytest.fixture
def sydney(monkeypatch):
    monkeypatch.setenv("TZ", "Australia/Sydney")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_is_dst(sydney):
    # 1 April 2012, 1:30: still summer time in Sydney -- and in St John's
    assert zones.is_dst(datetime.datetime(2012, 4, 1, 1, 30)) is True
    assert zones.weekday(datetime.datetime(2012, 4, 1, 1, 30)) == 6


def test_zone_offset(sydney):
    tz = zones.LocalZone()
    dt = datetime.datetime(2012, 4, 1, 1, 30, tzinfo=tz)
    assert tz.utcoffset(dt) == datetime.timedelta(hours=11)
"""


def test_rows_a_test_recorded_in_a_zone_of_its_own_are_verified_in_two(tmp_path: Path) -> None:
    """A test that sets ``TZ`` records rows that may agree with the verifying zone only by
    coincidence (both in summer time on that date): they were written, and the next replay
    in the suite's own zone was red, or stopped on a row whose zone gave another offset."""
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\npackage = "zones"\n',
            "zones.py": LOCAL_ZONE,
            "tests/test_sydney.py": SYDNEY_TESTS,
        },
    )
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests", env={"TZ": "UTC"})
    assert recorded.code == 0, recorded.output
    refused = [line for line in recorded.output.splitlines() if line.startswith("  refused (")]
    for call in ("is_dst(", "LocalZone.utcoffset("):
        line = next(line for line in refused if call in line)
        assert "cause: local time zone changed (TZ UTC -> Australia/Sydney)" in line, line
        assert "in a second zone (" in line, line
    assert rows_of(tmp_path / "lockstep/zones.is_dst.ledger.jsonl") == []
    assert len(rows_of(tmp_path / "lockstep/zones.weekday.ledger.jsonl")) == 1  # zone-free: kept
    for zone in ("UTC", "Australia/Sydney", "America/St_Johns", "Asia/Tokyo"):
        replayed = run_cli("replay", "zones.weekday", cwd=tmp_path, env={"TZ": zone})
        assert replayed.code == 0, (zone, replayed.output)


def test_a_recorded_clock_whose_zone_moved_is_one_row_s_error_not_a_corrupt_file(
    tmp_path: Path,
) -> None:
    """Recorded in Sydney in its winter and verified where the zone agreed, a row holding a
    datetime in the machine's own zone gets another UTC offset in New York's summer: that
    row is an ERROR that says so, and the other rows and ledgers replay (it was exit 2, as
    for a corrupt file)."""
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\npackage = "zones"\n',
            "zones.py": LOCAL_ZONE,
            "tests/test_here.py": """
                import datetime

                import zones


                def test_here():
                    tz = zones.LocalZone()
                    dt = datetime.datetime(2012, 7, 1, 1, 30, tzinfo=tz)
                    assert tz.utcoffset(dt) == datetime.timedelta(hours=10)
                    assert zones.weekday(dt) == 6
            """,
        },
    )
    recorded = pytest_in(
        tmp_path, "--lockstep-record", "-q", "tests", env={"TZ": "Australia/Sydney"}
    )
    assert recorded.code == 0, recorded.output
    assert rows_of(tmp_path / "lockstep/zones.LocalZone.utcoffset.ledger.jsonl")
    replayed = run_cli("replay", cwd=tmp_path, env={"TZ": "America/New_York"})
    assert replayed.code == 1, replayed.output
    assert "its zone (zones:LocalZone) gives it the UTC offset +11:00 here" in replayed.output
    # a zone of the project's runs its code: a change there moves the offset too
    assert "the zone's code changed since, or the zone depends on where" in replayed.output
    assert "lockstep: error" not in replayed.output
    assert "error" in replayed.output.lower()
