"""New cases are verified on a clock years ahead of the recording's.

A case whose outcome depends on today's date replays green all day and red on a later
one, with no code changed: an age computed from ``date.today()``, an object that keeps
the year it was made in.  It does not vary from one call to the next, so only a
verifying interpreter on another date refuses it, named as the date's; a case that does
not read the clock is written as before.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import pytest_in, rows_of, run_cli, write_files

DATES = """
import datetime
import time


def age(born):
    return datetime.date.today().year - born


def double(x):
    return 2 * x


class Info:
    '''Like dateutil's parserinfo: keeps the year it was made in.'''

    def __init__(self):
        self._year = time.localtime().tm_year

    def century(self, year):
        return year + self._year // 100 * 100 if year < 100 else year
"""

TESTS = """
import dates


def test_dates():
    assert dates.age(1990) > 30
    assert dates.double(2) == 4
    assert dates.Info().century(5) == 2005
"""

FROZEN = """
import time_machine

import dates


@time_machine.travel("2020-02-02 12:00:00+00:00", tick=False)
def test_frozen():
    assert dates.age(1990) == 30
"""


def test_a_case_that_depends_on_today_s_date_is_refused_and_named(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\npackage = "dates"\n',
            "dates.py": DATES,
            "tests/test_dates.py": TESTS,
        },
    )
    recorded = pytest_in(tmp_path, "tests", "-q", "--lockstep-record")
    assert recorded.code == 0, recorded.output
    refused = [line for line in recorded.output.splitlines() if line.startswith("  refused (")]
    for call in ("age(1990)", "Info.__init__("):
        line = next(line for line in refused if call in line)
        assert "cause: today's date" in line, line
    assert rows_of(tmp_path / "lockstep/dates.age.ledger.jsonl") == []
    assert rows_of(tmp_path / "lockstep/dates.Info.__init__.ledger.jsonl") == []
    # what does not read the clock is kept: century's self holds the year it was made in
    assert len(rows_of(tmp_path / "lockstep/dates.double.ledger.jsonl")) == 1
    assert len(rows_of(tmp_path / "lockstep/dates.Info.century.ledger.jsonl")) == 1
    green = run_cli("replay", "dates.double", "dates.Info.century", cwd=tmp_path)
    assert green.code == 0, green.output


def test_a_row_under_a_clock_the_test_froze_is_kept_at_that_instant(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\nname = "age"\ntarget = "dates:age"\n',
            "dates.py": DATES,
            "tests/test_frozen.py": FROZEN,
        },
    )
    recorded = pytest_in(tmp_path, "tests", "-q", "--lockstep-record")
    assert recorded.code == 0, recorded.output
    (row,) = rows_of(tmp_path / "lockstep/age.ledger.jsonl")
    assert row.result == 30
    green = run_cli("replay", cwd=tmp_path)
    assert green.code == 0, green.output


def test_the_shifted_clock_ticks_and_the_real_one_is_back_inside_real_clock() -> None:
    code = (
        "import datetime, time\n"
        "from lockstep.oracles import verify_clock\n"
        "real = time.time()\n"
        "assert verify_clock.shift() and verify_clock.shift()\n"
        "ahead = time.time() - real\n"
        "with verify_clock.real_clock():\n"
        "    inside = time.time() - real\n"
        "later = time.time()\n"
        "time.sleep(0.05)\n"
        "print(round(ahead / 86400), round(inside), time.time() > later)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["1213", "0", "True"]
