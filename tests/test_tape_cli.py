"""The tape oracle through the real command line: record, replay, accept, on a legacy billing module.

Each of the four drift families (count, order, missing call, eager-to-lazy
timing) is a cleanup that keeps the output and is caught by the tape alone.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import invoke_cli, run_cli, snapshot_tree, write_files

CONFIG = """
[[tape]]
name = "summary"
driver = "billing.drive:drive"
"""

RATES = """
from decimal import Decimal

_TABLE = {"EUR": Decimal("1"), "USD": Decimal("0.92"), "GBP": Decimal("1.17")}


class RateUnavailable(Exception):
    pass


def rate(currency):
    if currency not in _TABLE:
        raise RateUnavailable("no rate for " + currency)
    return _TABLE[currency]
"""

FEES = """
from decimal import Decimal


def late_fee(total, days_late):
    return max((total * Decimal("0.015")).quantize(Decimal("0.01")), Decimal("5.00"))
"""

AUDIT = """
def note(message):
    pass
"""

SUMMARY = """
from decimal import Decimal

from billing import audit, fees, rates


def convert(lines):
    try:
        return [Decimal(line["amount"]) * rates.rate(line["currency"]) for line in lines]
    except rates.RateUnavailable:
        audit.note("rates unavailable; summary skipped")
        return []


def summarize(lines, days_late=0):
    total = sum(convert(lines), Decimal("0"))
    if days_late:
        total += fees.late_fee(total, days_late)
    return str(total)
"""

DRIVE = """
from billing import summary

LINES = [
    {"amount": "120.00", "currency": "EUR"},
    {"amount": "80.50", "currency": "USD"},
    {"amount": "42.10", "currency": "EUR"},
    {"amount": "15.00", "currency": "GBP"},
]
BROKEN = [{"amount": "1.00", "currency": "EUR"}, {"amount": "2.00", "currency": "XXX"}]


def drive(tape):
    with (
        tape.patch("billing.rates.rate"),
        tape.patch("billing.fees.late_fee"),
        tape.patch("billing.audit.note"),
        tape.patch("billing.summary.convert"),
        tape.patch("billing.summary.summarize"),
    ):
        return [summary.summarize(LINES, days_late=40), summary.summarize(BROKEN)]
"""

# Count: the rate is memoized per currency. Same totals.
MEMOIZED = SUMMARY.replace(
    """        return [Decimal(line["amount"]) * rates.rate(line["currency"]) for line in lines]""",
    """        known = {}
        for line in lines:
            if line["currency"] not in known:
                known[line["currency"]] = rates.rate(line["currency"])
        return [Decimal(line["amount"]) * known[line["currency"]] for line in lines]""",
)

# Order: the late fee is priced... after sorting the lines by currency. Same totals.
SORTED = SUMMARY.replace(
    "for line in lines]", 'for line in sorted(lines, key=lambda l: l["currency"])]'
)

# Missing call: the "dead" audit note is dropped in a cleanup. Same totals.
NO_AUDIT = SUMMARY.replace('        audit.note("rates unavailable; summary skipped")\n', "")

# Timing: the eager list becomes a generator; the failing lookup now happens in sum(),
# outside convert's try/except, so the exception escapes the boundary it was handled at.
LAZY = SUMMARY.replace(
    """        return [Decimal(line["amount"]) * rates.rate(line["currency"]) for line in lines]""",
    """        return (Decimal(line["amount"]) * rates.rate(line["currency"]) for line in lines)""",
).replace(
    "    return str(total)",
    "    return str(total)\n\n\ndef _unused():\n    pass",
)
LAZY_DRIVE = DRIVE.replace(
    "        return [summary.summarize(LINES, days_late=40), summary.summarize(BROKEN)]",
    """        first = summary.summarize(LINES, days_late=40)
        try:
            second = summary.summarize(BROKEN)
        except Exception:
            second = "0"
        return [first, second]""",
)


def make_project(root: Path, *, config: str = CONFIG, summary: str = SUMMARY) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": config,
            "billing/__init__.py": "",
            "billing/rates.py": RATES,
            "billing/fees.py": FEES,
            "billing/audit.py": AUDIT,
            "billing/summary.py": summary,
            "billing/drive.py": DRIVE,
        },
    )
    return root


def tape_doc(root: Path, name: str = "summary") -> dict[str, object]:
    return json.loads((root / "lockstep" / f"{name}.tape.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def recorded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, recorded once per test process; each test works on a copy of it."""
    root = make_project(tmp_path_factory.mktemp("recorded") / "proj")
    result = invoke_cli("record", "summary", cwd=root)
    assert result.code == 0, result.output
    return root


@pytest.fixture
def recorded(recorded_template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(recorded_template, root)
    return root


def test_record_freezes_calls_in_order_with_outcomes_and_output(recorded: Path) -> None:
    doc = tape_doc(recorded)
    assert doc["version"] == 1 and doc["name"] == "summary" and doc["mode"] == "ordered"
    events = doc["events"]
    assert isinstance(events, list)
    names = [e["collaborator"] for e in events]
    assert names == [
        "summary.summarize",
        "summary.convert",
        "rates.rate",
        "rates.rate",
        "rates.rate",
        "rates.rate",
        "fees.late_fee",
        "summary.summarize",
        "summary.convert",
        "rates.rate",
        "rates.rate",
        "audit.note",
    ]
    assert events[2] == {
        "collaborator": "rates.rate",
        "args": ["EUR"],
        "returned": {"$decimal": "1"},
        "within": "summary.convert",
    }
    assert events[10]["raised"] == {
        "exc_type": "billing.rates.RateUnavailable",
        "exc_stem": "no rate for XXX",
    }
    assert doc["output"] == {"returned": ["258.7100", "0"]}
    assert invoke_cli("replay", "summary", cwd=recorded).code == 0


def test_a_plain_record_refuses_to_overwrite_and_names_the_modes(recorded: Path) -> None:
    before = snapshot_tree(recorded)
    result = invoke_cli("record", "summary", cwd=recorded)
    assert result.code == 2
    assert "--new-only" in result.stderr and "--force" in result.stderr
    assert snapshot_tree(recorded) == before
    assert invoke_cli("record", "summary", "--new-only", cwd=recorded).code == 0
    assert snapshot_tree(recorded) == before


def _replay_after(root: Path, summary: str, drive: str | None = None) -> str:
    write_files(root, {"billing/summary.py": summary})
    if drive is not None:
        write_files(root, {"billing/drive.py": drive})
    result = invoke_cli("replay", "summary", cwd=root)
    assert result.code == 1, result.output
    assert "output" not in [line.strip().split(":")[0] for line in result.stdout.splitlines()]
    return result.stdout


def test_count_drift_a_memoized_lookup_is_caught(recorded: Path) -> None:
    out = _replay_after(recorded, MEMOIZED)
    assert "rates.rate('EUR') called 2 times, expected 3" in out


def test_order_drift_sorted_lookups_are_caught(recorded: Path) -> None:
    out = _replay_after(recorded, SORTED)
    assert "call 4: expected rates.rate('USD'), got rates.rate('EUR')" in out


def test_missing_call_drift_a_dropped_audit_note_is_caught(recorded: Path) -> None:
    out = _replay_after(recorded, NO_AUDIT)
    assert "call 12: expected audit.note('rates unavailable; summary skipped'), missing" in out


def test_eager_to_lazy_timing_drift_the_exception_escapes_its_boundary(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    write_files(root, {"billing/drive.py": LAZY_DRIVE})
    assert invoke_cli("record", "summary", cwd=root).code == 0
    write_files(root, {"billing/summary.py": LAZY})
    result = invoke_cli("replay", "summary", cwd=root)
    assert result.code == 1, result.output
    out = result.stdout
    # convert now hands back a generator instead of the converted amounts ...
    assert (
        "call 2: summary.convert(" in out
        and "-> <generator>, expected -> [Decimal('120.00')" in out
    )
    # ... so the lookups run later, inside summarize (in sum()), outside convert's try ...
    assert (
        "call 3: rates.rate('EUR') was made inside summary.summarize, expected inside summary.convert"
        in out
    )
    # ... and the failing lookup escapes the boundary that handled it: summarize raises.
    assert "raised billing.rates.RateUnavailable: no rate for XXX, expected -> '0'" in out
    assert "call 12: expected audit.note('rates unavailable; summary skipped'), missing" in out


def test_an_unordered_by_design_driver_passes_in_multiset_mode(tmp_path: Path) -> None:
    config = CONFIG.replace(
        'driver = "billing.drive:drive"', 'driver = "billing.drive:prefetch"\nmode = "multiset"'
    )
    root = make_project(tmp_path / "proj", config=config)
    write_files(
        root,
        {
            "billing/drive.py": DRIVE
            + '''

def prefetch(tape):
    """Warm the cache for every currency of the month: a set, so no order by design."""
    rate = tape.spy("rates.rate", __import__("billing.rates").rates.rate)
    currencies = {line["currency"] + suffix for line in LINES for suffix in ("", "")}
    return sorted(str(rate(c)) for c in currencies)
'''
        },
    )
    assert run_cli("record", "summary", cwd=root, env={"PYTHONHASHSEED": "1"}).code == 0
    recorded = [e["args"] for e in tape_doc(root)["events"]]  # type: ignore[attr-defined]
    for seed in ("2", "3", "4", "5"):
        result = run_cli("replay", "summary", cwd=root, env={"PYTHONHASHSEED": seed})
        assert result.code == 0, result.output
    assert sorted(recorded) == [["EUR"], ["GBP"], ["USD"]]


def test_accept_prints_the_three_signals_and_records_why(recorded: Path) -> None:
    write_files(
        recorded,
        {"billing/summary.py": MEMOIZED, "tests/test_rates_once.py": "def test_x():\n    pass\n"},
    )
    why = "Rates are looked up once per currency instead of once per line."
    result = invoke_cli(
        "accept", "summary", "--why", why, "--test", "tests/test_rates_once.py", cwd=recorded
    )
    assert result.code == 0, result.output
    out = result.stdout
    assert "1. outputs identical: yes" in out
    assert f"2. why: {why}" in out
    assert "3. intentional test: tests/test_rates_once.py" in out
    assert "rates.rate('EUR') called 2 times, expected 3" in out
    history = tape_doc(recorded)["history"]
    assert history == [
        {
            "why": why,
            "test": "tests/test_rates_once.py",
            "outputs_identical": True,
            "changes": history[0]["changes"],  # type: ignore[index]
        }
    ]
    assert invoke_cli("replay", "summary", cwd=recorded).code == 0
    assert (
        "the tape already matches"
        in invoke_cli(
            "accept", "summary", "--why", why, "--test", "tests/test_rates_once.py", cwd=recorded
        ).stdout
    )


def test_accept_refuses_when_the_output_changed(recorded: Path) -> None:
    changed = MEMOIZED.replace("return str(total)", "return str(total + 1)")
    write_files(
        recorded, {"billing/summary.py": changed, "tests/test_new.py": "def test_x():\n    pass\n"}
    )
    before = snapshot_tree(recorded)
    result = invoke_cli(
        "accept", "summary", "--why", "Memoize.", "--test", "tests/test_new.py", cwd=recorded
    )
    assert result.code == 1
    assert "1. outputs identical: NO" in result.stdout and "refused" in result.stdout
    assert snapshot_tree(recorded) == before


def test_accept_goes_through_record_so_a_tape_that_does_not_reproduce_is_refused(
    recorded: Path,
) -> None:
    """The reviewed accept re-records through the kind's record path: the tape is checked in
    a fresh interpreter like every record, so calls that owe their arguments to this
    process (its pid) are refused, and the tape stays as recorded."""
    by_process = MEMOIZED.replace(
        "def summarize(lines, days_late=0):\n",
        "def summarize(lines, days_late=0):\n    audit.note(f'in process {os.getpid()}')\n",
    ).replace("from decimal import Decimal\n", "import os\nfrom decimal import Decimal\n", 1)
    write_files(
        recorded,
        {"billing/summary.py": by_process, "tests/test_once.py": "def test_x():\n    pass\n"},
    )
    before = tape_doc(recorded)
    result = invoke_cli(
        "accept", "summary", "--why", "Memoize.", "--test", "tests/test_once.py", cwd=recorded
    )
    assert result.code == 1, result.output
    assert "1. outputs identical: yes" in result.stdout
    assert "summary: the tape cannot be accepted" in result.output
    assert tape_doc(recorded) == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--why", "", "--test", "billing/audit.py"), "--why: say in one sentence"),
        (("--why", "two\nlines", "--test", "billing/audit.py"), "one sentence on one line"),
        (("--why", "Memoize.", "--test", "tests/nope.py"), "tests/nope.py does not exist"),
    ],
)
def test_accept_needs_a_why_and_an_existing_test(
    recorded: Path, args: tuple[str, ...], message: str
) -> None:
    write_files(recorded, {"billing/summary.py": MEMOIZED})
    before = snapshot_tree(recorded)
    result = invoke_cli("accept", "summary", *args, cwd=recorded)
    assert result.code == 2 and message in result.stderr
    assert snapshot_tree(recorded) == before


BAD_TAPE_FILES = [
    ("{broken", "lockstep/summary.tape.json: not valid JSON"),
    (
        '{"version": 1, "name": "summary", "mode": "ordered", "rules": [], "events": [], "output": {}, "x": 1}',
        "unknown field `x`",
    ),
    (
        '{"version": 1, "name": "invoice", "mode": "ordered", "rules": [], "events": [], "output": {}}',
        "recorded by another oracle ('invoice')",
    ),
]


def test_replay_of_a_bad_tape_file_is_exit_2_and_changes_nothing(recorded: Path) -> None:
    for content, message in BAD_TAPE_FILES:
        write_files(recorded, {"lockstep/summary.tape.json": content})
        before = snapshot_tree(recorded)
        for args in (
            ("replay", "summary"),
            ("accept", "summary", "--why", "x.", "--test", "billing/audit.py"),
        ):
            result = invoke_cli(*args, cwd=recorded)
            assert result.code == 2, result.output
            assert message in result.stderr
            assert len(result.stderr.strip().splitlines()) == 1
        assert snapshot_tree(recorded) == before


def test_an_unfreezable_collaborator_argument_is_named_by_path_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path / "proj")
    write_files(
        root,
        {
            "billing/drive.py": DRIVE
            + """

def drive_socket(tape):
    import socket
    note = tape.spy("audit.note", lambda message, **extra: None)
    with socket.socket() as sock:
        try:
            note("sent", extra={"conn": sock})
        except Exception:
            pass  # legacy code swallows everything; the tape still refuses
    return "done"
"""
        },
    )
    write_files(
        root, {"lockstep.toml": CONFIG.replace("billing.drive:drive", "billing.drive:drive_socket")}
    )
    before = snapshot_tree(root)
    result = invoke_cli("record", "summary", cwd=root)
    assert result.code == 2
    assert 'audit.note kwargs["extra"]["conn"]: cannot freeze a socket.socket' in result.stderr
    assert snapshot_tree(root) == before


def test_a_driver_that_does_not_take_the_tape_is_a_config_error_not_frozen_behaviour(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path / "proj")
    write_files(
        root,
        {
            "billing/drive.py": DRIVE + "\n\ndef drive_alone():\n    return 'done'\n",
            "lockstep.toml": CONFIG.replace("billing.drive:drive", "billing.drive:drive_alone"),
        },
    )
    before = snapshot_tree(root)
    result = invoke_cli("record", "summary", cwd=root)
    assert result.code == 2, result.output
    assert result.stderr.strip() == (
        "lockstep: error: lockstep.toml: tape[0].driver: billing.drive:drive_alone must take "
        "the tape as its one argument, e.g. def drive(tape): (it is drive_alone())"
    )
    assert snapshot_tree(root) == before


def test_status_counts_the_calls(recorded: Path) -> None:
    result = invoke_cli("status", cwd=recorded)
    assert result.code == 0, result.output
    assert "12 calls, ordered mode" in result.stdout


def test_code_that_exits_the_process_is_red_not_a_silent_green(recorded: Path) -> None:
    """``sys.exit(0)`` in today's code ended ``lockstep replay`` with status 0 and no
    output: a green gate on a change that breaks every call.  A driver's run that exits
    is frozen as raising ``SystemExit``: red."""
    exiting = SUMMARY.replace(
        '    total = sum(convert(lines), Decimal("0"))',
        '    raise SystemExit(0)\n    total = sum(convert(lines), Decimal("0"))',
    )
    (recorded / "billing/summary.py").write_text(exiting)
    result = invoke_cli("replay", "summary", cwd=recorded)
    assert result.code == 1, result.output
    assert "SystemExit" in result.stdout, result.stdout
