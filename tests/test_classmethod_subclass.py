"""A classmethod called on a subclass of the class that defines it.

coloraide's suite calls ``ColorAll.blackbody(...)``, a classmethod ``Color`` defines: its
``cls`` is ``ColorAll``, so it builds a ``ColorAll``.  The row was recorded on ``Color``
alone, so the fresh interpreter built a ``Color`` and refused it: 7,640 of its rows.  Such
a row now keeps the subclass (``on``), and replay calls the defining class's function with
that class, as the recorded call ran -- also when the subclass overrides the method and
reaches the target through ``super()``.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import recorded, red_after_change, rows_of, run_cli
from lockstep.oracles.ledger.file import body_digest
from lockstep.oracles.ledger.format import input_key, row_id

SHAPES = """
class Shape:
    sides = 0

    def __init__(self, size, edge):
        self.size = size
        self.edge = edge

    @classmethod
    def unit(cls, size=1):
        if size < 0:
            raise ValueError(f"no {cls.__name__} of size {size}")
        return cls(size, cls.sides * size)


class Square(Shape):
    sides = 4


class Triangle(Shape):
    sides = 3

    @classmethod
    def unit(cls, size=1):
        shape = super().unit(size * 2)
        shape.size = size
        return shape


class Loose:
    sides = 9
"""

TESTS = """
import pytest

from shapes import Shape, Square, Triangle


def test_units():
    assert Shape.unit(2).edge == 0
    square = Square.unit(2)
    assert type(square) is Square and square.edge == 8
    triangle = Triangle.unit(1)
    assert type(triangle) is Triangle and (triangle.size, triangle.edge) == (1, 6)
    with pytest.raises(ValueError, match="no Square of size -1"):
        Square.unit(-1)
"""

FILES = {
    "lockstep.toml": '[[ledger]]\nname = "unit"\ntarget = "shapes:Shape.unit"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/shapes/__init__.py": SHAPES,
    "tests/test_shapes.py": TESTS,
}


def _ledger(root: Path) -> Path:
    return root / "lockstep/unit.ledger.jsonl"


def test_a_classmethod_on_a_subclass_records_its_class_and_replays_on_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "refused 0" in run.output and "skipped" not in run.output, run.output
    header = json.loads(_ledger(root).read_text().splitlines()[0])
    assert header["lockstep_ledger"] == 4
    rows = {json.dumps([row.on if row.on else None, row.ok]): row for row in rows_of(_ledger(root))}
    square, triangle = '{"$fn": "shapes:Square"}', '{"$fn": "shapes:Triangle"}'
    assert set(rows) == {
        f"[{on}, {ok}]"
        for on, ok in [("null", "true"), (square, "true"), (triangle, "true"), (square, "false")]
    }
    assert rows[f"[{square}, false]"].exc_stem == "no Square of size -1"
    assert rows[f"[{square}, true]"].result["$obj"][0] == "shapes:Square"
    # Triangle's own unit() reached Shape's through super(): recorded with size 2, on Triangle
    assert rows[f"[{triangle}, true]"].args == [2]
    assert run_cli("replay", cwd=root).code == 0  # not Triangle.unit again (it would halve)

    red = red_after_change(root, "src/shapes/__init__.py", "    sides = 4\n", "    sides = 5\n")
    assert "Square.unit(2)" in red.stdout, red.stdout


def _forge_on(path: Path, name: str) -> None:
    """The ledger at ``path`` with its Square row's class replaced by ``name``, its id and
    digest made to agree (a consistent forgery)."""
    header, *rows = path.read_text().splitlines()
    body = []
    for line in rows:
        row = json.loads(line)
        if row.get("on") == {"$fn": "shapes:Square"}:
            row["on"] = {"$fn": name}
            row["id"] = row_id(input_key(row["args"], row["kwargs"], on=row["on"]))
        body.append(json.dumps(row, separators=(",", ":")).encode())
    body.sort(key=lambda line: json.loads(line)["id"])
    stated = json.loads(header)
    stated["rows"], stated["digest"] = body_digest(body)
    path.write_bytes(json.dumps(stated).encode() + b"\n" + b"".join(b + b"\n" for b in body))


def test_a_row_on_a_class_that_is_no_subclass_is_an_error_and_calls_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    recorded(root, FILES)
    _forge_on(_ledger(root), "shapes:Loose")
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "is not a subclass of Shape today" in red.stdout, red.stdout


def test_a_row_on_a_class_no_ledger_may_name_is_bad_data(tmp_path: Path) -> None:
    root = tmp_path / "project"
    recorded(root, FILES)
    _forge_on(_ledger(root), "os:system")
    bad = run_cli("replay", cwd=root)
    assert bad.code == 2, bad.output
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "unit.ledger.jsonl" in bad.stderr and "os:system" in bad.stderr, bad.stderr
