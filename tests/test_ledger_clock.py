"""Rows recorded under a frozen clock (freezegun, time-machine) keep their instant and replay there.

An example project whose function reads ``date.today()`` (like humanize's ``naturalday``),
tested under ``freeze_time``: recording keeps the rows with their clock, replay is green
on the real clock, a one-line change is red, a ticking clock's rows are refused with that
reason, and a hand-edited clock is a one-line error.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import GitRepo, pytest_in, rows_of, run_cli, write_files
from lockstep.oracles.ledger.clock import Clock, _spelled, as_json, travelling
from lockstep.oracles.ledger.format import ROW_DECODER, input_key, row_id

DAYS = """
import datetime as dt


def naturalday(value):
    delta = value - dt.date.today()
    if delta.days == 0:
        return "today"
    if delta.days == 1:
        return "tomorrow"
    if delta.days == -1:
        return "yesterday"
    return value.strftime("%b %d")
"""

FROZEN = """
import datetime as dt

from freezegun import freeze_time

from days.words import naturalday

TODAY = dt.date(2020, 2, 2)


@freeze_time("2020-02-02")
def test_frozen():
    assert naturalday(dt.date(2020, 2, 2)) == "today"
    assert naturalday(dt.date(2020, 2, 3)) == "tomorrow"
    assert naturalday(dt.date(2020, 2, 1)) == "yesterday"
    assert naturalday(dt.date(2020, 3, 1)) == "Mar 01"


@freeze_time("2021-06-01 23:30:15.25", tz_offset=3)
def test_local_date_is_ahead():
    # 23:30 UTC is already June 2nd at UTC+3: date.today() says so under freezegun
    assert naturalday(dt.date(2021, 6, 2)) == "today"


def test_outside():
    assert naturalday(dt.date(1999, 7, 4)) == "Jul 04"
"""

TICKING = """
import datetime as dt

from freezegun import freeze_time

from days.words import naturalday


@freeze_time("2020-02-02", tick=True)
def test_ticking():
    assert naturalday(dt.date(2020, 2, 1)) == "yesterday"
"""

TIME_MACHINE = """
import datetime as dt

import time_machine

from days.words import naturalday

NOON = dt.datetime(2019, 5, 5, 12, tzinfo=dt.timezone.utc)


def test_standing_still():
    with time_machine.travel(NOON, tick=False):
        assert naturalday(dt.date(2019, 5, 6)) == "tomorrow"


def test_ticking():
    with time_machine.travel(NOON):
        assert naturalday(dt.date(2019, 5, 4)) == "yesterday"
"""

CONFIG = '[[ledger]]\nname = "days"\ntarget = "days.words:naturalday"\n'
LEDGER = "lockstep/days.ledger.jsonl"


def project(root: Path, tests: dict[str, str]) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": CONFIG,
            "days/__init__.py": "",
            "days/words.py": DAYS,
            ".gitignore": "__pycache__/\n",
            **tests,
        },
    )
    return root


def record(root: Path) -> str:
    result = pytest_in(root, "-q", "--lockstep-record=days")
    assert result.code == 0, result.output
    return result.output


def by_day(root: Path) -> dict[str, dict[str, object]]:
    """The ledger's rows by the date passed (``2020-02-03``)."""
    lines = (root / LEDGER).read_text(encoding="utf-8").splitlines()
    return {row["args"][0]["$date"]: row for row in map(json.loads, lines[1:])}


@pytest.fixture(scope="module")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = project(tmp_path_factory.mktemp("frozen"), {"tests/test_days.py": FROZEN})
    output = record(root)
    assert "refused 0" in output, output
    return root


def test_rows_keep_the_frozen_instant_and_the_ledger_says_version_3(frozen: Path) -> None:
    rows = by_day(frozen)
    assert {day: row["result"] for day, row in rows.items()} == {
        "2020-02-02": "today",
        "2020-02-03": "tomorrow",
        "2020-02-01": "yesterday",
        "2020-03-01": "Mar 01",
        "2021-06-02": "today",
        "1999-07-04": "Jul 04",
    }
    assert rows["2020-02-03"]["clock"] == {"at": "2020-02-02T00:00:00Z", "tz_offset": 0}
    assert rows["2021-06-02"]["clock"] == {"at": "2021-06-01T23:30:15.250000Z", "tz_offset": 10800}
    assert "clock" not in rows["1999-07-04"]  # called on the real clock
    header = json.loads((frozen / LEDGER).read_text(encoding="utf-8").splitlines()[0])
    assert header["lockstep_ledger"] == 3
    # the clock is part of the input its id digests: the same call on another day is another row
    for row in rows_of(frozen / LEDGER):
        assert row.id == row_id(input_key(row.args, row.kwargs, row.clock))


def test_replay_is_green_on_the_real_clock_under_any_hash_seed(frozen: Path) -> None:
    for seed in ("0", "1"):
        result = run_cli("replay", cwd=frozen, env={"PYTHONHASHSEED": seed})
        assert result.code == 0, result.output
        assert "6 passed" in result.output


def test_a_one_line_change_in_the_function_is_red(frozen: Path, tmp_path: Path) -> None:
    root = project(tmp_path, {"tests/test_days.py": FROZEN})
    (root / "lockstep").mkdir()
    (root / LEDGER).write_bytes((frozen / LEDGER).read_bytes())
    words = root / "days/words.py"
    words.write_text(words.read_text().replace("delta.days == 1:", "delta.days == 2:"))
    result = run_cli("replay", cwd=root)
    assert result.code == 1, result.output
    assert "naturalday(date('2020-02-03')) at 2020-02-02T00:00:00Z" in result.output
    assert "expected returned 'tomorrow'" in result.output
    assert "got returned 'Feb 03'" in result.output


def test_a_clock_with_a_tz_offset_replays_at_that_local_date(frozen: Path, tmp_path: Path) -> None:
    """Under freezegun's tz_offset, ``date.today()`` is UTC plus the offset: replay sets the
    same local time zone, so the row replays whatever zone the machine has."""
    for zone in ("UTC", "America/Los_Angeles"):
        result = run_cli("replay", cwd=frozen, env={"TZ": zone})
        assert result.code == 0, (zone, result.output)


def test_a_ticking_clock_is_refused_with_that_reason(tmp_path: Path) -> None:
    root = project(tmp_path, {"tests/test_ticking.py": TICKING})
    output = record(root)
    assert "ticking clock (freezegun freeze_time(..., tick=True))" in output
    assert "only a clock that stands still is replayed" in output
    assert "refused 1 row(s) from tests/test_ticking.py::test_ticking" in output
    assert rows_of(root / LEDGER) == []


def test_time_machine_travel_standing_still_is_kept_and_ticking_refused(tmp_path: Path) -> None:
    root = project(tmp_path, {"tests/test_travel.py": TIME_MACHINE})
    output = record(root)
    rows = by_day(root)
    assert set(rows) == {"2019-05-06"}
    # the local offset the call saw at that instant (the machine's zone): replay sets it
    offset = time.localtime(dt.datetime(2019, 5, 5, 12, tzinfo=dt.UTC).timestamp()).tm_gmtoff
    assert rows["2019-05-06"]["clock"] == {"at": "2019-05-05T12:00:00Z", "tz_offset": offset}
    assert "ticking clock (time_machine.travel(...) without tick=False)" in output
    assert "mock.patch active on uuid" not in output  # time-machine's own patches are no cause
    for zone in (
        "UTC",
        "Pacific/Kiritimati",
    ):  # replayed at that offset, whatever the machine's zone
        assert run_cli("replay", cwd=root, env={"TZ": zone}).code == 0


@pytest.mark.parametrize(
    ("clock", "error"),
    [
        ('{"at":"yesterday"}', "clock `at` must be a UTC instant"),
        ('{"at":"2020-02-30T00:00:00Z"}', "is not a date and time"),
        ('{"at":"2020-02-02T00:00:00.000000Z"}', "is not written as lockstep writes it"),
        ('{"at":"2020-02-02T00:00:00Z","tz_offset":86400}', "not within a day of UTC"),
        ('{"at":"2020-02-02T00:00:00Z","tz_offset":"+01:00"}', "Expected `int`"),
        ('{"at":"2020-02-02T00:00:00Z","tick":true}', "unknown field `tick`"),
        ('"2020-02-02"', "Expected `object`"),
    ],
)
def test_a_hostile_clock_is_a_one_line_error_naming_file_and_line(
    frozen: Path, tmp_path: Path, clock: str, error: str
) -> None:
    root = project(tmp_path, {})
    (root / "lockstep").mkdir()
    lines = (frozen / LEDGER).read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if '"clock"' in line)
    row = json.loads(lines[at])
    lines[at] = lines[at].replace(json.dumps(row["clock"], separators=(",", ":")), clock)
    assert lines[at] != json.dumps(row, separators=(",", ":"))
    (root / LEDGER).write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = (root / LEDGER).read_bytes()
    result = run_cli("replay", cwd=root)
    assert result.code == 2, result.output
    message = result.stderr.strip()
    assert "\n" not in message, message
    assert f"{LEDGER}:{at + 1}" in message and error in message, message
    assert (root / LEDGER).read_bytes() == before


def test_a_clock_moved_by_hand_no_longer_matches_the_rows_id(frozen: Path, tmp_path: Path) -> None:
    root = project(tmp_path, {})
    (root / "lockstep").mkdir()
    text = (frozen / LEDGER).read_text(encoding="utf-8")
    (root / LEDGER).write_text(text.replace("2020-02-02T00:00:00Z", "2020-02-03T00:00:00Z"))
    result = run_cli("replay", cwd=root)
    assert result.code == 2, result.output
    assert "does not match its input" in result.stderr


def test_replay_against_a_revision_compares_recorded_rows_at_their_instant(
    tmp_path: Path,
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.commit("days", {"lockstep.toml": CONFIG, "days/__init__.py": "", "days/words.py": DAYS})
    write_files(repo.root, {"tests/test_days.py": FROZEN})
    record(repo.root)
    repo.commit("freeze days")
    same = run_cli("replay", "--against", "HEAD", "--generate", "0", cwd=repo.root)
    assert same.code == 0, same.output
    assert "6 input(s) compared" in same.output and "no difference" in same.output
    words = repo.root / "days/words.py"
    words.write_text(words.read_text().replace("delta.days == -1:", "delta.days == -2:"))
    changed = run_cli("replay", "--against", "HEAD", "--generate", "0", cwd=repo.root)
    assert changed.code == 1, changed.output
    assert "naturalday(date('2020-02-01')) at 2020-02-02T00:00:00Z" in changed.output


def test_a_ledger_without_a_clock_stays_format_version_2(tmp_path: Path) -> None:
    root = project(tmp_path, {"tests/test_days.py": FROZEN.split("@freeze_time")[0] + OUTSIDE})
    record(root)
    header = json.loads((root / LEDGER).read_text(encoding="utf-8").splitlines()[0])
    assert header["lockstep_ledger"] == 2
    assert all(row.clock is msgspec.UNSET for row in rows_of(root / LEDGER))


OUTSIDE = """
def test_outside():
    assert naturalday(dt.date(1999, 7, 4)) == "Jul 04"
"""

instants = st.datetimes(
    min_value=dt.datetime(1971, 1, 1),
    max_value=dt.datetime(2199, 12, 31),
    timezones=st.just(dt.UTC),
)


@given(instants, st.integers(-86399, 86399))
def test_a_clock_spells_each_instant_one_way_and_reads_it_back(
    instant: dt.datetime, offset: int
) -> None:
    clock = Clock(at=_spelled(instant), tz_offset=offset)
    assert clock.instant() == instant
    row = msgspec.json.encode(
        {
            "args": [],
            "clock": as_json(clock),
            "fn": "m:f",
            "id": "0",
            "kwargs": {},
            "ok": True,
            "result": None,
        }
    )
    assert ROW_DECODER.decode(row).clock == clock


@given(instants)
def test_travelling_sets_every_reader_of_the_clock_and_puts_it_back(instant: dt.datetime) -> None:
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    with travelling(Clock(at=_spelled(instant))):
        since = (instant - epoch) // dt.timedelta(microseconds=1)
        assert abs(time.time_ns() - since * 1000) < 1000  # time-machine travels by a float
        assert abs(dt.datetime.now(dt.UTC) - instant) <= dt.timedelta(microseconds=10)
        assert time.gmtime()[:3] == instant.timetuple()[:3]
    assert dt.datetime.now(dt.UTC).year >= 2024


JOB = """
import datetime as dt

from freezegun import freeze_time

from lockstep import record_io


@record_io
def due(day):
    return "late" if day < dt.date.today() else "on time"


if __name__ == "__main__":
    with freeze_time("2030-01-10"):
        due(dt.date(2030, 1, 9))
        due(dt.date(2030, 1, 11))
"""


def test_record_io_under_freeze_time_keeps_the_clock_and_verifies_there(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = tmp_path / "proj"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\nname = "due"\ntarget = "jobs.run:due"\n',
            "jobs/__init__.py": "",
            "jobs/run.py": JOB,
        },
    )
    proc = subprocess.run(
        [sys.executable, "jobs/run.py"], cwd=root, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    rows = rows_of(root / "lockstep/due.ledger.jsonl")
    # "late" for 2030-01-09 holds only while the clock says 2030-01-10: verified at that instant
    assert sorted(str(row.result) for row in rows) == ["late", "on time"]
    assert {row.clock for row in rows} == {Clock(at="2030-01-10T00:00:00Z", tz_offset=0)}
    assert "not reproduce" not in proc.stderr
    result = run_cli("replay", "due", cwd=root)
    assert result.code == 0, result.output


def test_mine_runs_the_recorded_rows_at_their_instant(frozen: Path, tmp_path: Path) -> None:
    """The recorded rows reach every branch only at their frozen dates: mining starts there."""
    root = project(tmp_path, {})
    (root / "lockstep").mkdir()
    (root / LEDGER).write_bytes((frozen / LEDGER).read_bytes())
    result = run_cli("mine", "days", "--time-limit", "20s", "--no-mutants", cwd=root)
    assert result.code == 0, result.output
    assert "coverage before: 8/8 lines" in result.output, result.output
    assert run_cli("replay", cwd=root).code == 0


AGES = """
import datetime as dt


def age(born):
    return dt.date.today().year - born
"""

AGES_TEST = """
from freezegun import freeze_time

from days.ages import age


@freeze_time("2020-02-02")
def test_age():
    assert age(2000) == 20
    assert age(1990) == 30
"""


def test_scalar_arguments_and_result_under_a_frozen_clock_keep_the_clock(tmp_path: Path) -> None:
    """A call of scalars returning an int takes the recorder's shortest path: under a
    frozen clock it is keyed by its clock too, so it replays at that instant."""
    root = project(tmp_path, {"days/ages.py": AGES, "tests/test_ages.py": AGES_TEST})
    (root / "lockstep.toml").write_text(
        '[[ledger]]\nname = "days"\ntarget = "days.ages:age"\n', encoding="utf-8"
    )
    output = record(root)
    assert "refused 0" in output, output
    rows = rows_of(root / LEDGER)
    assert sorted((row.args[0], row.result) for row in rows) == [(1990, 30), (2000, 20)]
    assert all(isinstance(row.clock, Clock) for row in rows)
    assert run_cli("replay", "-q", cwd=root).code == 0
    source = root / "days/ages.py"
    source.write_text(AGES.replace("- born", "- born + 1"), encoding="utf-8")
    assert run_cli("replay", "-q", cwd=root).code == 1


def test_a_replay_at_a_frozen_instant_leaves_pytest_unimported(tmp_path: Path) -> None:
    """time-machine would import pytest for its own plugin: a replay outside pytest
    travels without it (the replayed code sees no test runner), and pytest imports
    normally afterwards."""
    script = tmp_path / "travel.py"
    script.write_text(
        textwrap.dedent(
            """
            import datetime, sys
            import msgspec
            from lockstep.oracles.ledger.clock import Clock, travelling

            clock = msgspec.convert({"at": "2024-02-29T12:00:00Z", "tz_offset": 0}, Clock)
            with travelling(clock):
                today = datetime.date.today().isoformat()
                during = "pytest" in sys.modules
            import pytest
            print(today, during, "pytest" in sys.modules, sys.modules["time_machine"].HAVE_PYTEST)
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.split() == ["2024-02-29", "False", "True", "False"], done.stderr
