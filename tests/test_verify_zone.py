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
