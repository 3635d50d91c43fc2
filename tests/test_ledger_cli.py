"""The ledger oracle through the real CLI: record from a driver, replay, refuse bad input."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import Result, copy_project, invoke_cli, run_cli, snapshot_tree, write_files

PRICING = '''
from decimal import Decimal, InvalidOperation


def parse_amount(raw, strict=False):
    """Legacy: None, '', a string, a tuple or a list, or ValueError, depending on the path."""
    if raw is None:
        return None
    if isinstance(raw, bytes):
        raw = raw.decode("latin-1")
    raw = raw.strip()
    if not raw:
        if strict:
            raise ValueError("empty amount")
        return ""
    if "-" in raw[1:]:
        low, high = raw.split("-", 1)
        return [parse_amount(low), parse_amount(high)]
    try:
        return (Decimal(raw), "USD")
    except InvalidOperation:
        if strict:
            raise ValueError("bad amount: " + repr(raw))
        return raw


def ratio(a, b):
    return a / b


def tag_all(items, tag):
    items.append(tag)
    return len(items)


RATE = 3
'''

DRIVER = """
from shop.pricing import parse_amount, ratio, tag_all

for raw in [None, "", "9.99", b"9.99", "1-2", "abc", "  7 "]:
    for strict in (False, True):
        try:
            parse_amount(raw, strict=strict)
        except ValueError:
            pass
parse_amount("9.99", strict=True)
ratio(1.0, 3.0)
ratio(2, 0.5)
tag_all(["a"], "b")
"""

CONFIG = """
[[ledger]]
name = "parse_amount"
target = "shop.pricing:parse_amount"
driver = "shop/drive.py"

[[ledger]]
name = "ratio"
target = "shop.pricing:ratio"
driver = "shop/drive.py"
float_tolerance = 1e-9

[[ledger]]
name = "tag_all"
target = "shop.pricing:tag_all"
driver = "shop/drive.py"
"""

LEDGER = "lockstep/parse_amount.ledger.jsonl"


def make_project(root: Path, **overrides: str) -> Path:
    files = {
        "lockstep.toml": CONFIG,
        "shop/__init__.py": "",
        "shop/pricing.py": PRICING,
        "shop/drive.py": DRIVER,
    }
    files.update(overrides)
    write_files(root, files)  # type: ignore[arg-type]
    return root


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with all three ledgers recorded (shared read-only by the tests below)."""
    root = make_project(tmp_path_factory.mktemp("recorded"))
    result = invoke_cli("record", cwd=root)
    assert result.code == 0, result.output
    return root


def one_line_error(result: Result) -> str:
    assert result.code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def rows(path: Path) -> list[dict[str, object]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]


def test_record_from_driver_writes_distinct_sorted_rows(recorded: Path) -> None:
    path = recorded / LEDGER
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert header["fn"] == "shop.pricing:parse_amount"
    assert [p["name"] for p in header["signature"]] == ["raw", "strict"]
    got = rows(path)
    ids = [r["id"] for r in got]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    # 7 inputs x 2 strict values + the range's two inner calls ("1", "2") = 16 distinct inputs;
    # the repeated parse_amount("9.99", strict=True) is one row.
    assert len(got) == 16
    by_call = {(json.dumps(r["args"]), json.dumps(r["kwargs"])): r for r in got}
    tuple_row = by_call[('[{"$bytes": "OS45OQ=="}]', '{"strict": true}')]
    assert tuple_row["result"] == {"$tuple": [{"$decimal": "9.99"}, "USD"]}
    raised = by_call[('["abc"]', '{"strict": true}')]
    assert raised["ok"] is False and raised["exc_type"] == "ValueError"
    assert raised["exc_stem"] == "bad amount: 'abc'" and "result" not in raised
    assert set(raised) == {"id", "fn", "args", "kwargs", "ok", "exc_type", "exc_stem"}


def test_record_reports_saturation(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    result = invoke_cli("record", "parse_amount", cwd=root)
    assert result.code == 0, result.output
    assert "saw 19 call(s), kept 16 distinct row(s); the last 20% of calls added" in result.stdout


def test_replay_green_then_a_faithful_rewrite_stays_green(recorded: Path, tmp_path: Path) -> None:
    root = copy_project(recorded, tmp_path)
    assert invoke_cli("replay", cwd=root).code == 0
    rewrite = PRICING.replace(
        '        return (Decimal(raw), "USD")',
        '        value = Decimal(raw)\n        return value, "USD"',
    )
    write_files(root, {"shop/pricing.py": rewrite})
    result = invoke_cli("replay", "parse_amount", cwd=root)
    assert result.code == 0, result.output


def test_list_for_tuple_is_drift_with_the_call_written_as_python(
    recorded: Path, tmp_path: Path
) -> None:
    root = copy_project(recorded, tmp_path)
    write_files(
        root,
        {
            "shop/pricing.py": PRICING.replace(
                'return (Decimal(raw), "USD")', 'return [Decimal(raw), "USD"]'
            )
        },
    )
    result = invoke_cli("replay", "parse_amount", cwd=root)
    assert result.code == 1, result.output
    assert "parse_amount(b'9.99', strict=True)" in result.stdout
    assert "expected returned (Decimal('9.99'), 'USD')" in result.stdout
    assert "got returned [Decimal('9.99'), 'USD']" in result.stdout


def test_exception_stem_and_outcome_drift(recorded: Path, tmp_path: Path) -> None:
    root = copy_project(recorded, tmp_path)
    write_files(
        root,
        {"shop/pricing.py": PRICING.replace('raise ValueError("empty amount")', "return None")},
    )
    result = invoke_cli("replay", "parse_amount", cwd=root)
    assert result.code == 1
    assert "parse_amount('', strict=True)" in result.stdout
    assert "expected raised ValueError: empty amount" in result.stdout
    assert "got returned None" in result.stdout


def test_argument_mutation_is_behaviour(recorded: Path, tmp_path: Path) -> None:
    root = copy_project(recorded, tmp_path)
    row = rows(root / "lockstep/tag_all.ledger.jsonl")[0]
    assert row["mutated"] == {"0": ["a", "b"]}
    write_files(
        root,
        {
            "shop/pricing.py": PRICING.replace(
                "    items.append(tag)\n    return len(items)", "    return len(items) + 1"
            )
        },
    )
    result = invoke_cli("replay", "tag_all", cwd=root)
    assert result.code == 1, result.output
    assert "mutation: expected mutated args[0] -> ['a', 'b']" in result.stdout
    assert "got no argument mutated" in result.stdout


def test_float_tolerance_is_opt_in(recorded: Path, tmp_path: Path) -> None:
    root = copy_project(recorded, tmp_path)
    write_files(root, {"shop/pricing.py": PRICING.replace("return a / b", "return a * (1 / b)")})
    # 1.0 * (1/3.0) differs from 1.0/3.0 in the last bit or not at all; both are within 1e-9.
    assert invoke_cli("replay", "ratio", cwd=root).code == 0
    config = (root / "lockstep.toml").read_text().replace("float_tolerance = 1e-9\n", "")
    write_files(root, {"lockstep.toml": config})
    write_files(root, {"shop/pricing.py": PRICING.replace("return a / b", "return a / b + 1e-12")})
    result = invoke_cli("replay", "ratio", cwd=root)
    assert result.code == 1, result.output
    assert "ratio(1.0, 3.0)" in result.stdout


def test_loose_mode_accepts_a_list_for_a_tuple(recorded: Path, tmp_path: Path) -> None:
    root = copy_project(recorded, tmp_path)
    config = (
        (root / "lockstep.toml")
        .read_text()
        .replace('driver = "shop/drive.py"\n', 'driver = "shop/drive.py"\nloose = true\n', 1)
    )
    write_files(
        root,
        {
            "lockstep.toml": config,
            "shop/pricing.py": PRICING.replace(
                'return (Decimal(raw), "USD")', 'return [Decimal(raw), "USD"]'
            ),
        },
    )
    result = invoke_cli("replay", "parse_amount", cwd=root)
    assert result.code == 0, result.output


def test_changed_signature_is_refused_naming_the_parameters(recorded: Path, tmp_path: Path) -> None:
    root = copy_project(recorded, tmp_path)
    write_files(
        root,
        {
            "shop/pricing.py": PRICING.replace(
                "def parse_amount(raw, strict=False):",
                "def parse_amount(raw, *, strict=False, currency='USD'):",
            )
        },
    )
    before = snapshot_tree(root)
    result = invoke_cli("replay", cwd=root)
    assert result.code == 1, result.output  # a finding about the rewrite, not bad input
    assert not result.stderr.strip(), result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "DRIFT parse_amount::(signature)", result.stdout
    assert lines[1].startswith(f"  {LEDGER}:1: recorded against")
    assert "'strict' changed from positional-or-keyword to keyword-only" in lines[1]
    assert "'currency' was added" in lines[1]
    # the other ledgers still replay, and the table shows every one
    table = {
        ln.split()[0]: ln.split()[1:] for ln in lines if ln.startswith(("parse_amount ", "ratio "))
    }
    assert table["parse_amount"][:2] == ["·", "1"], result.stdout
    assert table["ratio"][1] == "·", result.stdout
    assert lines[-1].startswith("DRIFT: ") and "1 drifted" in lines[-1], result.stdout
    assert snapshot_tree(root) == before


def test_jobs_and_shards_cover_every_row_once(recorded: Path, tmp_path: Path) -> None:
    root = copy_project(recorded, tmp_path)
    write_files(
        root,
        {
            "shop/pricing.py": PRICING.replace(
                'return (Decimal(raw), "USD")', 'return [Decimal(raw), "USD"]'
            )
        },
    )
    serial = invoke_cli("replay", "parse_amount", cwd=root)
    parallel = run_cli("replay", "parse_amount", "--jobs", "2", cwd=root)  # real worker processes
    assert serial.code == parallel.code == 1
    assert serial.stdout == parallel.stdout
    drifted: list[str] = []
    for k in (1, 2, 3):
        shard = invoke_cli("replay", "parse_amount", "--shard", f"{k}/3", cwd=root)
        drifted += [ln for ln in shard.stdout.splitlines() if ln.startswith("DRIFT parse_amount::")]
    expected = [ln for ln in serial.stdout.splitlines() if ln.startswith("DRIFT parse_amount::")]
    assert sorted(drifted) == sorted(expected) and len(expected) == 10


def test_record_modes(recorded: Path, tmp_path: Path) -> None:
    root = copy_project(recorded, tmp_path)
    (root / "lockstep/ratio.ledger.jsonl").unlink()
    before = snapshot_tree(root)
    line = one_line_error(invoke_cli("record", "parse_amount", cwd=root))
    assert line == (
        f"lockstep: error: {LEDGER} already exists; say what you want: "
        "--new-only (add rows for new inputs), --force (re-record every row) "
        "or --trim (drop rows no call made)"
    )
    assert snapshot_tree(root) == before
    line = one_line_error(invoke_cli("record", "ratio", "--new-only", cwd=root))
    assert "ratio.ledger.jsonl does not exist yet; run 'lockstep record ratio' without" in line
    assert snapshot_tree(root) == before

    assert invoke_cli("record", "parse_amount", "--new-only", cwd=root).code == 0
    assert snapshot_tree(root) == before  # nothing new: not a byte changed

    drive = (
        "from shop.pricing import parse_amount as p\np('9.99', strict=True)\np('', strict=False)\n"
    )
    write_files(root, {"shop/drive.py": drive})
    result = invoke_cli("record", "parse_amount", "--trim", cwd=root)
    assert result.code == 0, result.output
    assert "trimmed 14" in result.stdout
    assert len(rows(root / LEDGER)) == 2

    write_files(
        root,
        {
            "shop/pricing.py": PRICING.replace('return ""', "return None"),
            "shop/drive.py": drive + "p('8')\n",
        },
    )
    result = invoke_cli("record", "parse_amount", "--force", cwd=root)
    assert result.code == 0, result.output
    assert "added 1" in result.stdout and "replaced 1" in result.stdout
    assert "unchanged 1" in result.stdout
    assert len(rows(root / LEDGER)) == 3


def test_status_counts_rows(recorded: Path) -> None:
    result = invoke_cli("status", cwd=recorded)
    assert result.code == 0, result.output
    assert "parse_amount" in result.stdout and "16" in result.stdout


def test_nondeterministic_input_is_refused_by_name(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        **{
            "shop/pricing.py": PRICING
            + "\n_seen = []\n\ndef counter(x):\n    _seen.append(x)\n    return len(_seen)\n",
            "shop/drive.py": (
                "from shop.pricing import counter\ncounter('a')\ncounter('a')\ncounter('b')\n"
            ),
            "lockstep.toml": (
                '[[ledger]]\nname = "counter"\ntarget = "shop.pricing:counter"\n'
                'driver = "shop/drive.py"\n'
            ),
        },
    )
    result = invoke_cli("record", "counter", cwd=root)
    assert result.code == 1, result.output  # the rest is written; the refusal is a finding
    assert "refused counter('a')" in result.stdout
    assert "returned 1 | returned 2" in result.stdout
    # counter('b') returned 3 only because of the calls before it: a fresh interpreter
    # gets 1, so verification refuses it too, and nothing stateful is written.
    assert "counter('b')" in result.stdout
    assert "recorded returned 3, fresh interpreter returned 1" in result.stdout
    assert "2 input(s) refused" in result.stdout
    assert rows(root / "lockstep/counter.ledger.jsonl") == []


def test_unfreezable_argument_is_reported_with_its_path_and_skipped(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        **{
            "shop/drive.py": (
                "import io\nfrom shop.pricing import tag_all\n"
                "tag_all([io.TextIOWrapper(io.BytesIO())], 'x')\ntag_all([], 'y')\n"
            ),
        },
    )
    result = invoke_cli("record", "tag_all", cwd=root)
    assert result.code == 0, result.output
    assert "skipped 1 call(s): args[0][0]: cannot freeze a _io.TextIOWrapper" in result.stdout
    # the hole in the oracle is said prominently, as a share, with where the calls come from
    assert "SKIPPED 1 of 2 call(s) (50%) whose values cannot be frozen" in result.stdout
    assert "(called from shop/drive.py:3)" in result.stdout
    assert "TextIOWrapper" not in (root / "lockstep/tag_all.ledger.jsonl").read_text()


# --------------------------------------------------------------------------- bad input


def test_target_that_does_not_import(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        **{"lockstep.toml": CONFIG.replace("shop.pricing:parse_amount", "shop.nope:parse_amount")},
    )
    before = snapshot_tree(root)
    line = one_line_error(invoke_cli("record", "parse_amount", cwd=root))
    assert "lockstep.toml: ledger[0].target: cannot import module 'shop.nope'" in line
    assert snapshot_tree(root) == before


def test_qualname_that_is_not_callable(tmp_path: Path) -> None:
    root = make_project(
        tmp_path,
        **{"lockstep.toml": CONFIG.replace("shop.pricing:parse_amount", "shop.pricing:RATE")},
    )
    before = snapshot_tree(root)
    line = one_line_error(invoke_cli("record", "parse_amount", cwd=root))
    assert "lockstep.toml: ledger[0].target" in line and "is a int, not a callable" in line
    assert snapshot_tree(root) == before


def test_driver_that_raises(tmp_path: Path) -> None:
    root = make_project(
        tmp_path, **{"shop/drive.py": DRIVER + "\nraise RuntimeError('driver broke')\n"}
    )
    before = snapshot_tree(root)
    line = one_line_error(invoke_cli("record", "parse_amount", cwd=root))
    lineno = (root / "shop/drive.py").read_text().splitlines().index(
        "raise RuntimeError('driver broke')"
    ) + 1
    assert (
        f"shop/drive.py:{lineno}: driver 'shop/drive.py' raised RuntimeError: driver broke" in line
    )
    assert snapshot_tree(root) == before


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        (
            '{"id":"x","fn":"shop.pricing:parse_amount","args":[],"kwargs":{}}',
            "misses required field `ok`",
        ),
        (
            '{"id":"x","fn":"shop.pricing:parse_amount","args":[],"kwargs":{},"ok":true,"result":1,"extra":1}',
            "has unknown field `extra`",
        ),
        (
            '{"id":"x","fn":"shop.pricing:parse_amount","args":[{"$wat":1}],"kwargs":{},"ok":true,"result":1}',
            "args[0]: unknown tag '$wat'",
        ),
        (
            '{"id":"x","fn":"shop.pricing:parse_amount","args":[],"kwargs":{},"ok":false,"result":1}',
            "a row with ok=false needs `exc_type` and `exc_stem`",
        ),
        (  # a corrupt recorded result is bad data, never shown as a drift
            '{"id":"x","fn":"shop.pricing:parse_amount","args":["7.77"],"kwargs":{},"ok":true,"result":{"$wat":1}}',
            "row x: result: unknown tag '$wat'",
        ),
        (
            '{"id":"x","fn":"shop.pricing:ratio","args":[],"kwargs":{},"ok":true,"result":1}',
            "row x is for 'shop.pricing:ratio', but the header names 'shop.pricing:parse_amount'",
        ),
    ],
)
def test_bad_ledger_line(recorded: Path, tmp_path: Path, line: str, message: str) -> None:
    """A bad row is named by FILE:LINE even when the header's count and digest were fixed up
    to match (a careful hand edit), so each check is reached on its own."""
    root = copy_project(recorded, tmp_path)
    path = root / LEDGER
    lines = path.read_text(encoding="utf-8").splitlines()
    header, rows = json.loads(lines[0]), lines[1:]
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        row = None
    if isinstance(row, dict) and "args" in row and "kwargs" in row:
        key = json.dumps([row["args"], row["kwargs"]], sort_keys=True, separators=(",", ":"))
        row["id"] = hashlib.sha256(key.encode()).hexdigest()[:16]
        message = message.replace("row x", f"row {row['id']}")
        line = json.dumps(row, sort_keys=True, separators=(",", ":"))
        rows = sorted([*rows, line], key=lambda r: json.loads(r)["id"])
    else:
        rows.insert(1, line)
    header["rows"] = len(rows)
    header["digest"] = hashlib.sha256("".join(r + "\n" for r in rows).encode()).hexdigest()
    path.write_text("\n".join([json.dumps(header), *rows]) + "\n", encoding="utf-8")
    lineno = 2 + rows.index(line)
    before = snapshot_tree(root)
    error = one_line_error(invoke_cli("replay", "parse_amount", cwd=root))
    assert error.startswith(f"lockstep: error: {LEDGER}:{lineno}: "), error
    assert message in error
    assert snapshot_tree(root) == before


def test_ledger_recorded_for_another_function(recorded: Path, tmp_path: Path) -> None:
    root = copy_project(recorded, tmp_path)
    (root / LEDGER).write_bytes((root / "lockstep/ratio.ledger.jsonl").read_bytes())
    before = snapshot_tree(root)
    error = one_line_error(invoke_cli("replay", "parse_amount", cwd=root))
    assert error == (
        f"lockstep: error: {LEDGER}:1: ledger was recorded for 'shop.pricing:ratio', "
        "but ledger 'parse_amount' targets 'shop.pricing:parse_amount'"
    )
    assert snapshot_tree(root) == before


def test_record_io_in_a_script_run_directly_replays_against_its_module(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\nname = "price"\ntarget = "shop.job:price"\n',
            "shop/__init__.py": "",
            "shop/job.py": """
            from lockstep import record_io

            @record_io
            def price(qty, unit=2):
                return (qty * unit, "EUR") if qty else None

            if __name__ == "__main__":
                for q in (0, 1, 3, 1):
                    price(q)
            """,
        },
    )
    proc = subprocess.run(
        [sys.executable, "shop/job.py"], cwd=root, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    first = (root / "lockstep/price.ledger.jsonl").read_text().splitlines()[0]
    assert '"fn":"shop.job:price"' in first
    result = run_cli("replay", "price", cwd=root)
    assert result.code == 0, result.output
    assert "3 cases: 3 passed" in result.stdout
