"""A large recording spills its rows to disk; the ledger and the report stay exactly the same.

``LOCKSTEP_SPILL_AT`` makes the recorder write its table out every few rows, so a small
driver exercises every path a million-row recording takes: runs merged on disk, an input
whose outcome changes between two spill windows refused, the secret scan, the
verification candidate and the final write streamed from a row file.  Each project is
recorded twice, once spilling and once in memory, and must give the same bytes.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import run_cli, write_files
from lockstep.model import RecordMode, RecordReport
from lockstep.oracles.ledger.file import outcome_of
from lockstep.oracles.ledger.format import LedgerRow, input_key, row_id
from lockstep.oracles.ledger.spool import RowFile
from lockstep.oracles.lifecycle import merge, merged

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


TARGET = """\
import os

CALLS = {"n": 0}


def price(qty, unit, *, code=""):
    \"\"\"A legacy pricing rule; after 300 calls its 'cache' starts answering differently.\"\"\"
    CALLS["n"] += 1
    if qty < 0:
        raise ValueError(f"negative quantity {qty}")
    if code == "drift" and CALLS["n"] > 300:
        return -1
    if isinstance(unit, list):
        unit.append(qty)
        return sum(unit)
    total = qty * unit + (1 if os.environ.get("SHOP_BONUS") else 0)
    return f"{code}{total}" if code else total
"""

DRIVER = """\
import os

from shop.prices import price


def call(*args, **kwargs):
    try:
        price(*args, **kwargs)
    except ValueError:
        pass


def main():
    call(7, 3, code="drift")           # seen first in the first window ...
    for i in range(240):
        call(i, i % 5, code="A" if i % 2 else "")
        call(i % 9, 2)                  # repeats
        call(-i - 1, 1)                 # exceptions
        call(i, [i, 1])                 # mutated
    call(7, 3, code="drift")           # ... and again, many windows later, answering -1
    os.environ["SHOP_BONUS"] = "1"     # rows that do not reproduce in a fresh interpreter
    for i in (31, 5, 977, 402, 64):
        call(i, 11)
    del os.environ["SHOP_BONUS"]
"""


def _project(root: Path) -> None:
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/prices.py": TARGET,
            "drive.py": DRIVER,
            "lockstep.toml": (
                '[[ledger]]\nname = "price"\ntarget = "shop.prices:price"\ndriver = "drive:main"\n'
            ),
        },
    )


def _record(root: Path, scratch: Path, spill_at: str | None, *args: str) -> tuple[int, str]:
    env = {"TMPDIR": str(scratch)}
    if spill_at is not None:
        env["LOCKSTEP_SPILL_AT"] = spill_at
    result = run_cli("record", "price", *args, cwd=root, env=env, timeout=300)
    return result.code, result.stdout


def test_spilled_recording_writes_the_same_ledger_and_report(tmp_path: Path) -> None:
    spilled, whole = tmp_path / "spilled", tmp_path / "whole"
    scratch = tmp_path / "scratch"
    for root in (spilled, whole, scratch):
        root.mkdir()
        if root is not scratch:
            _project(root)

    code, out = _record(spilled, scratch, "7")
    code_whole, out_whole = _record(whole, scratch, None)

    assert code == code_whole == 1, out  # the drifting input is refused: a finding
    assert out == out_whole
    assert "refused" in out and "price(7, 3, code='drift')" in out
    for i in (31, 5, 977, 402, 64):  # each found by the fresh interpreter, none missed
        assert f"price({i}, 11) [" in out and "SHOP_BONUS" in out
    ledger = "lockstep/price.ledger.jsonl"
    assert (spilled / ledger).read_bytes() == (whole / ledger).read_bytes()
    assert b'"drift"' not in (spilled / ledger).read_bytes()
    assert len((spilled / ledger).read_bytes().splitlines()) > 700
    assert list(scratch.glob("lockstep-*")) == []  # every run and row file removed

    replay = run_cli("replay", "price", cwd=spilled)
    assert replay.code == 0, replay.output


def test_spilled_rerecord_in_every_mode_matches_the_in_memory_one(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    base = tmp_path / "base"
    _project(base)
    assert _record(base, scratch, None)[0] == 1
    # the code changes: one branch answers differently, so --force replaces rows
    changed = TARGET.replace("return sum(unit)", "return sum(unit) + 1")
    for mode in ("--force", "--new-only", "--trim"):
        outputs = []
        for spill_at in ("5", None):
            root = tmp_path / f"{mode.strip('-')}-{spill_at}"
            shutil.copytree(base, root)
            (root / "shop/prices.py").write_text(changed)
            outputs.append((*_record(root, scratch, spill_at, mode), root))
        (code_a, out_a, a), (code_b, out_b, b) = outputs
        assert (code_a, out_a) == (code_b, out_b), mode
        ledger = "lockstep/price.ledger.jsonl"
        assert (a / ledger).read_bytes() == (b / ledger).read_bytes(), mode
    assert list(scratch.glob("lockstep-*")) == []


# --------------------------------------------------------------------------- properties


def _row(a: int, result: int) -> LedgerRow:
    args = [a]
    rid = row_id(input_key(args, {}))
    return LedgerRow(id=rid, fn="m:f", args=args, kwargs={}, ok=True, result=result)


_ROWS = st.dictionaries(st.integers(0, 40), st.integers(0, 2), max_size=25).map(
    lambda d: {r.id: r for r in (_row(a, v) for a, v in d.items())}
)


def _report(mode: RecordMode) -> RecordReport:
    return RecordReport("price", Path("x"), mode)


def _same(a: LedgerRow, b: LedgerRow) -> bool:
    return (a.ok, a.result) == (b.ok, b.result)


def _kept(rid: str, _old: LedgerRow, row: LedgerRow) -> str:
    from lockstep.oracles.ledger.file import _kept_note

    return _kept_note(rid, _old, row)


@settings(max_examples=150, deadline=None)
@given(
    old=_ROWS,
    fresh=_ROWS,
    mode=st.sampled_from(list(RecordMode)),
    spilled=st.booleans(),
)
def test_streamed_merge_is_the_shared_merge(
    old: dict[str, LedgerRow], fresh: dict[str, LedgerRow], mode: RecordMode, spilled: bool
) -> None:
    """The one merge, streamed over the ledger's rows (a row file or a mapping), gives the
    rows and report the in-memory merge gives."""
    if mode is RecordMode.CREATE:
        old = {}
    expected_report = _report(mode)
    expected = merge(expected_report, old, fresh, fresh.keys(), same=_same, kept=_kept)
    given_fresh: Mapping[str, LedgerRow] = RowFile.from_rows(fresh.values()) if spilled else fresh
    report = _report(mode)
    rows = list(
        merged(
            report,
            (old[k] for k in sorted(old)),
            given_fresh,
            given_fresh,
            key=lambda row: row.id,
            same=lambda a, b: outcome_of(a) == outcome_of(b),
            kept=_kept,
        )
    )
    assert [r.id for r in rows] == list(expected)
    assert rows == list(expected.values())
    assert report == expected_report


@settings(max_examples=150, deadline=None)
@given(rows=_ROWS, probes=st.lists(st.integers(0, 60), max_size=10))
def test_row_file_is_a_sorted_mapping(rows: dict[str, LedgerRow], probes: list[int]) -> None:
    """Any order in, id order out; lookups by bisection agree with a dict."""
    shuffled = sorted(rows.values(), key=lambda r: r.result or 0)
    spooled = RowFile.from_rows(shuffled)
    assert list(spooled) == sorted(rows)
    assert dict(spooled.items()) == rows
    assert len(spooled) == len(rows)
    for a in probes:
        rid = _row(a, 0).id
        assert (rid in spooled) == (rid in rows)
        if rid in rows:
            assert spooled[rid] == rows[rid]
    dropped = set(list(rows)[:3])
    assert dict(spooled.without(dropped).items()) == {
        k: v for k, v in rows.items() if k not in dropped
    }


def test_a_spill_that_cannot_be_written_keeps_the_rows_in_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A full disk: the recorder never fails the user's call; the rows written so far stay
    on disk, the rest stay in memory, spilling stops and the report says why."""
    from lockstep.oracles.ledger import recorder as recorder_module
    from lockstep.oracles.ledger.merging import merge_parts

    def record(rec: recorder_module.TargetRecorder, values: range) -> None:
        for i in values:
            rec.returned(rec.before((i, 2), {}), i * 2)

    monkeypatch.setenv("LOCKSTEP_SPILL_AT", "5")
    whole = recorder_module.TargetRecorder("m:f")
    record(whole, range(30))
    expected = merge_parts("m:f", [whole.part(release=True)])

    rec = recorder_module.TargetRecorder("m:f")
    rec.spill = True
    record(rec, range(12))  # two runs written
    real_write_run = recorder_module.write_run

    def full_disk(records: list[tuple[str, int, bytes, bytes]]) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(recorder_module, "write_run", full_disk)
    record(rec, range(12, 30))
    assert not rec.spill
    part = rec.part(release=True)
    monkeypatch.setattr(recorder_module, "write_run", real_write_run)
    assert len(part.runs) == 2 and part.entries
    recording = merge_parts("m:f", [part])
    assert isinstance(recording.rows, RowFile)
    assert dict(recording.rows.items()) == dict(expected.rows.items())
    assert recording.late_rows == expected.late_rows
    assert any("No space left on device" in note for note in recording.notes())


# --------------------------------------------------------------------------- under pytest

UNITS = """\
import os


def label(qty):
    return f"{qty}{os.environ.get('UNIT', '')}"
"""

UNIT_TESTS = """\
import pytest

from shop.units import label


@pytest.mark.parametrize("n", range(60))
def test_many(n):
    assert label(n).startswith(str(n))
    assert label(n + 1000) == str(n + 1000)


def test_unit(monkeypatch):
    monkeypatch.setenv("UNIT", "kg")
    assert label(5000) == "5000kg"
"""


def _pytest_project(root: Path) -> None:
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/units.py": UNITS,
            "tests/test_units.py": UNIT_TESTS,
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "lockstep.toml": '[[ledger]]\nname = "label"\ntarget = "shop.units:label"\n',
        },
    )


def test_pytest_recording_spills_under_xdist_and_names_refused_tests(tmp_path: Path) -> None:
    from helpers import run_pytest

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    outputs = []
    for spill_at in ("7", None):
        root = tmp_path / f"suite-{spill_at}"
        _pytest_project(root)
        env = {"TMPDIR": str(scratch), **({"LOCKSTEP_SPILL_AT": spill_at} if spill_at else {})}
        result = run_pytest(
            "-q",
            "-n",
            "2",
            "--lockstep-record=label",
            cwd=root,
            env=env,
            plugins=("lockstep.pytest.plugin", "xdist.plugin"),
        )
        assert result.code == 0, result.output
        refused = [line for line in result.stdout.splitlines() if "refused 1 row(s) from" in line]
        assert refused == [
            "  refused 1 row(s) from tests/test_units.py::test_unit "
            f"(cause: environment variable(s) changed: UNIT): {refused[0].rsplit(': ', 1)[1]}"
        ], result.stdout
        outputs.append((root / "lockstep/label.ledger.jsonl").read_bytes())
        assert run_cli("replay", "label", cwd=root).code == 0
    assert outputs[0] == outputs[1]
    assert len(outputs[0].splitlines()) == 121  # header and 120 rows; label(5000) refused
    assert list(scratch.glob("lockstep-*")) == []


def test_a_serial_pytest_recording_spilled_or_not_writes_the_same_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    """Without workers the run's own part goes to the writer in memory (no spool): spilled
    or not, the same ledger and refusal; and a failing run, which writes nothing, still
    removes the scratch files of its spilled rows."""
    from helpers import run_pytest

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    outputs = []
    for spill_at in ("7", None):
        root = tmp_path / f"suite-{spill_at}"
        _pytest_project(root)
        env = {"TMPDIR": str(scratch), **({"LOCKSTEP_SPILL_AT": spill_at} if spill_at else {})}
        result = run_pytest(
            "-q", "--lockstep-record=label", cwd=root, env=env, plugins=("lockstep.pytest.plugin",)
        )
        assert result.code == 0, result.output
        assert "refused 1 row(s) from tests/test_units.py::test_unit" in result.stdout
        outputs.append((root / "lockstep/label.ledger.jsonl").read_bytes())
        assert sorted(p.name for p in (root / "lockstep").iterdir()) == ["label.ledger.jsonl"]
        assert list(scratch.glob("lockstep-*")) == []
    assert outputs[0] == outputs[1]
    assert len(outputs[0].splitlines()) == 121

    root = tmp_path / "failing"
    _pytest_project(root)
    (root / "tests/test_broken.py").write_text("def test_broken():\n    assert False\n")
    result = run_pytest(
        "-q",
        "--lockstep-record=label",
        cwd=root,
        env={"TMPDIR": str(scratch), "LOCKSTEP_SPILL_AT": "7"},
        plugins=("lockstep.pytest.plugin",),
    )
    assert result.code == 1, result.output
    assert "nothing recorded: 1 test(s) failed or errored" in result.stdout
    assert not (root / "lockstep/label.ledger.jsonl").exists()
    assert list(scratch.glob("lockstep-*")) == []


def test_a_bad_spill_threshold_is_said_once_and_the_default_used(tmp_path: Path) -> None:
    _project(tmp_path)
    result = run_cli("record", "price", cwd=tmp_path, env={"LOCKSTEP_SPILL_AT": "lots"})
    assert result.code == 1, result.output  # the drifting input, refused as always
    assert "LOCKSTEP_SPILL_AT='lots' is not a whole number of rows" in result.stderr
    assert (tmp_path / "lockstep/price.ledger.jsonl").exists()
