"""A large recording is written byte for byte as before: sorted rows, the same header digest.

The recorder hands its table over row by row and the file is encoded in two passes
(digest, then write) instead of being held as lines; none of that may change a byte.
The expected digest is the file's as recorded by the earlier, whole-in-memory writer;
should the ledger format change on purpose, record this project again and update it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from helpers import run_cli, write_files
from lockstep.canon import JSON
from lockstep.oracles.ledger.format import LedgerRow, input_key, row_id
from lockstep.oracles.ledger.merging import merge_parts
from lockstep.oracles.ledger.part import PartEntry, RecordingPart

TARGET = """\
def label(a, b=0, *, tag=""):
    if isinstance(b, list):
        b.append(a)
        return len(b)
    if a % 97 == 0:
        raise ValueError(f"bad amount {a}")
    if isinstance(b, tuple):
        return [tag, a, *b]
    return f"{tag}{a + b}"
"""

DRIVER = """\
from shop.ops import label


def call(*args, **kwargs):
    try:
        label(*args, **kwargs)
    except ValueError:
        pass


def main():
    for i in range(16000):
        call(i, i % 3, tag="t" if i % 2 else "")
        call(i % 50, 1)  # a repeat, memoized after its first call
    for i in range(2000):
        call(i, [i, "x"])  # mutated
        call(i, (i, 1.5, None))
"""

EXPECTED_ROWS = 20050
EXPECTED_SHA256 = "b828d6e3059515e65819affea6d3ba2ec762106b53407639bb637bb903cf8ec1"


def test_twenty_thousand_rows_are_written_as_before(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/ops.py": TARGET,
            "drive.py": DRIVER,
            "lockstep.toml": (
                '[[ledger]]\nname = "label"\ntarget = "shop.ops:label"\ndriver = "drive:main"\n'
            ),
        },
    )
    result = run_cli("record", "label", cwd=tmp_path, timeout=600)
    assert result.code == 0, result.output
    path = tmp_path / "lockstep/label.ledger.jsonl"
    lines = path.read_bytes().splitlines()
    header = json.loads(lines[0])
    ids = [json.loads(line)["id"] for line in lines[1:]]
    assert header["rows"] == len(ids) == EXPECTED_ROWS
    assert ids == sorted(set(ids))
    assert header["digest"] == hashlib.sha256(b"".join(x + b"\n" for x in lines[1:])).hexdigest()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == EXPECTED_SHA256


def _entry(a: int, result: int, first_call: int) -> PartEntry:
    args: list[JSON] = [a]
    rid = row_id(input_key(args, {}))
    row = LedgerRow(id=rid, fn="m:f", args=args, kwargs={}, ok=True, result=result)
    return PartEntry(row=row, first_call=first_call)


def test_merging_parts_refuses_differing_outcomes_and_counts_late_rows() -> None:
    """Parts from several processes: an input whose outcome differs between them is
    refused; a row is late only when every part first saw it in its last fifth."""
    one = RecordingPart(
        fn="m:f", calls=10, entries=[_entry(1, 1, 1), _entry(2, 2, 9), _entry(3, 3, 9)]
    )
    two = RecordingPart(
        fn="m:f", calls=10, entries=[_entry(1, 5, 1), _entry(2, 2, 1), _entry(4, 4, 10)]
    )
    merged = merge_parts("m:f", [one, two])
    expected = sorted(_entry(a, a, 1).row.id for a in (2, 3, 4))
    assert list(merged.rows) == expected
    assert [r.id for r in merged.refused] == [_entry(1, 1, 1).row.id]
    assert merged.refused[0].outcomes == ["returned 1", "returned 5"]
    assert merged.late_rows == 2  # 3 and 4; 2 was early in the second part
    assert merged.calls == 20
