"""``lockstep mine`` kills the mutants the recorded rows miss, on a legacy-style example.

The recorded calls take every branch of ``parse_percent`` and ``abbreviate``, so
"keep an input when it takes a new arc" has nothing to find; the changes a refactor
could make there are value-level: whether a space before ``%`` is accepted, whether
surrounding whitespace is stripped, ``casefold`` against ``lower`` on non-ASCII
text.  Before mining each changed version replays green (the ledgers cannot see it);
after ``lockstep mine`` each one replays red, and the unchanged code stays green.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import invoke_cli, run_cli, write_files

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


TEXT = '''
def clean(text):
    """Callers pass what users typed."""
    return text.strip()


def fold(name):
    return name.casefold()
'''

PARSE = '''
from units.text import clean, fold

STREETS = {"strasse": "Str.", "road": "Rd."}


def parse_percent(text):
    """'12%' -> 12; old callers also send '12 %'."""
    text = clean(text)
    if text.endswith("%"):
        number = text[:-1].rstrip()
        if not number.isdigit():
            raise ValueError(f"not a percentage: {text!r}")
        return int(number)
    return None


def abbreviate(word):
    key = fold(word)
    return STREETS.get(key, key)
'''

DRIVER = """
from units.parse import abbreviate, parse_percent

for text in ["12%", "50%", "7", "x%"]:
    try:
        parse_percent(text)
    except ValueError:
        pass
for word in ["Strasse", "ROAD", "Lane"]:
    abbreviate(word)
"""

CONFIG = """
[[ledger]]
name = "parse_percent"
target = "units.parse:parse_percent"
driver = "drive.py"

[[ledger]]
name = "abbreviate"
target = "units.parse:abbreviate"
driver = "drive.py"
"""

HANDLE = """

def handle(word):
    import threading

    if word.startswith("lock"):
        return threading.Semaphore()
    return word.upper()
"""

CHANGES = {
    "a space before % is refused": (
        "units/parse.py",
        "number = text[:-1].rstrip()",
        "number = text[:-1]",
    ),
    "surrounding whitespace is kept": ("units/text.py", "return text.strip()", "return text"),
    "non-ASCII case folding is lost": ("units/text.py", "name.casefold()", "name.lower()"),
}


@pytest.fixture
def units(tmp_path: Path) -> Path:
    write_files(
        tmp_path,
        {
            "units/__init__.py": "",
            "units/text.py": TEXT,
            "units/parse.py": PARSE,
            "drive.py": DRIVER,
            "lockstep.toml": CONFIG,
        },
    )
    recorded = invoke_cli("record", cwd=tmp_path)
    assert recorded.code == 0, recorded.output
    return tmp_path


def _replay_with(root: Path, change: tuple[str, str, str]) -> int:
    """Exit code of ``lockstep replay`` with ``change`` written into the source, then undone."""
    rel, old, new = change
    path = root / rel
    original = path.read_text()
    assert old in original
    path.write_text(original.replace(old, new))
    try:
        return run_cli("replay", cwd=root).code
    finally:
        path.write_text(original)


def test_mined_rows_catch_the_value_level_changes_the_recorded_rows_miss(units: Path) -> None:
    assert run_cli("replay", cwd=units).code == 0
    for why, change in CHANGES.items():
        assert _replay_with(units, change) == 0, f"the recorded rows already see: {why}"

    for name in ("parse_percent", "abbreviate"):
        mined = run_cli("mine", name, "--time-limit", "60s", cwd=units, timeout=300)
        assert mined.code == 0, mined.output
        assert "mutants:" in mined.stdout
        assert "0 survive" in mined.stdout, mined.stdout

    assert run_cli("replay", cwd=units).code == 0
    for why, change in CHANGES.items():
        assert _replay_with(units, change) == 1, f"the mined rows miss: {why}"


def test_the_report_counts_the_mutants_and_what_could_not_be_kept(units: Path) -> None:
    mined = run_cli("mine", "parse_percent", "--time-limit", "60s", cwd=units, timeout=300)
    assert mined.code == 0, mined.output
    # coverage counts the helper clean() runs in too, not only parse_percent's 7 body lines
    before = re.search(r"coverage before: (\d+)/(\d+) lines", mined.stdout)
    assert before is not None and int(before.group(2)) == 7 + 1, mined.stdout
    (line,) = [s for s in mined.stdout.splitlines() if s.strip().startswith("mutants:")]
    # the helper module's mutants count: clean() runs inside every call
    assert "the recorded inputs kill" in line
    assert "the mined inputs 2 of the 2 they miss" in line
    assert "killed no mutant" in mined.stdout or "budget" in mined.stdout

    off = run_cli(
        "mine", "abbreviate", "--no-mutants", "--time-limit", "60s", cwd=units, timeout=300
    )
    assert off.code == 0, off.output
    assert "mutants:" not in off.stdout

    # a branch whose outcome no row can hold: its inputs are counted, not silently dropped
    with (units / "units/parse.py").open("a") as f:
        f.write(HANDLE)
    with (units / "lockstep.toml").open("a") as f:
        f.write('\n[[ledger]]\nname = "handle"\ntarget = "units.parse:handle"\n')
        f.write('driver = "drive_handle.py"\n')
    (units / "drive_handle.py").write_text(
        "from units.parse import handle\nhandle('a')\nhandle('b')\n"
    )
    assert invoke_cli("record", "handle", cwd=units).code == 0
    mined = run_cli("mine", "handle", "--time-limit", "60s", cwd=units, timeout=300)
    assert mined.code == 0, mined.output
    assert (
        "generated input(s) whose outcome could not be frozen or that did not return:"
        in mined.stdout
    )
    (reason,) = [s for s in mined.stdout.splitlines() if "Unfreezable" in s]
    assert "(e.g. ('lock" in reason
