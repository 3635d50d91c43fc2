"""A dict argument is replayed in the order it was passed.

Legacy row code often walks a dict's keys (``",".join(row)``, a CSV header from the
first row).  The canonical form sorts keys (equal dicts, equal bytes: the row's id), so
a row thawed from it used to reach the target in sorted order; the fresh interpreter
then got another result and record refused the row.  The ledger line now keeps each
dict argument in its order, while ids and comparisons still ignore key order.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run_cli, write_files

ROWS = """\
def export_line(row, *, sep=","):
    \"\"\"A legacy CSV writer: the header is the row's keys, in the row's order.\"\"\"
    header = sep.join(row)
    values = sep.join(str(v) for v in row.values())
    return f"{header}\\n{values}"


def stamp(row):
    \"\"\"Mutates its argument: marks the row as exported, and says in what order it went.\"\"\"
    row["exported"] = True
    return list(row)
"""

DRIVER = """\
from billing.rows import export_line


def main():
    export_line({"invoice": 7, "amount": "9.50", "currency": "EUR"})
    export_line({"zone": "B", "area": 2}, sep=";")
    export_line({"a": 1, "b": 2})  # already sorted
"""


def test_a_dict_argument_keeps_its_order_through_record_and_replay(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "billing/__init__.py": "",
            "billing/rows.py": ROWS,
            "drive.py": DRIVER,
            "lockstep.toml": (
                '[[ledger]]\nname = "export"\ntarget = "billing.rows:export_line"\n'
                'driver = "drive:main"\n'
            ),
        },
    )
    recorded = run_cli("record", "export", cwd=tmp_path)
    assert recorded.code == 0, recorded.output
    assert "refused" not in recorded.stdout
    assert "verified 3 of 3" in recorded.stdout or "all reproduce" in recorded.stdout
    lines = (tmp_path / "lockstep/export.ledger.jsonl").read_text().splitlines()[1:]
    args = [json.loads(line)["args"][0] for line in lines]
    assert {"invoice": 7, "amount": "9.50", "currency": "EUR"} in args
    first = next(a for a in args if "invoice" in a)
    assert list(first) == ["invoice", "amount", "currency"]  # as passed, not sorted
    assert any(list(a) == ["zone", "area"] for a in args)

    assert run_cli("replay", "export", cwd=tmp_path).code == 0

    # a refactor that sorts the header changes the output: red
    (tmp_path / "billing/rows.py").write_text(
        ROWS.replace("sep.join(row)", "sep.join(sorted(row))")
    )
    drifted = run_cli("replay", "export", cwd=tmp_path)
    assert drifted.code == 1, drifted.output
    assert drifted.stdout.count("DRIFT export::") == 2  # the sorted row is unaffected


def test_a_mutated_dict_argument_in_its_order_replays_green(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "billing/__init__.py": "",
            "billing/rows.py": ROWS,
            "drive.py": (
                "from billing.rows import stamp\n\n\n"
                "def main():\n"
                "    stamp({'zone': 'B', 'area': 2})\n"
                "    stamp({'invoice': 7, 'amount': '9.50'})\n"
            ),
            "lockstep.toml": (
                '[[ledger]]\nname = "stamp"\ntarget = "billing.rows:stamp"\ndriver = "drive:main"\n'
            ),
        },
    )
    recorded = run_cli("record", "stamp", cwd=tmp_path)
    assert recorded.code == 0, recorded.output
    rows = [
        json.loads(line)
        for line in (tmp_path / "lockstep/stamp.ledger.jsonl").read_text().splitlines()[1:]
    ]
    assert sorted(row["result"] for row in rows) == [
        ["invoice", "amount", "exported"],
        ["zone", "area", "exported"],
    ]
    assert all(row["mutated"]["0"]["exported"] is True for row in rows)
    assert run_cli("replay", "stamp", cwd=tmp_path).code == 0
    (tmp_path / "billing/rows.py").write_text(ROWS.replace('row["exported"] = True', "pass"))
    assert run_cli("replay", "stamp", cwd=tmp_path).code == 1
