"""A recorded value of a class from a module the target never imports still thaws.

The suite hands a target values of the package's own classes from anywhere in it
(dateutil's ``relativedelta`` is given datetimes in ``dateutil.tz`` zones, a module
``relativedelta`` never imports).  Each ledger is verified and replayed alone, in a
fresh interpreter, where that module was not loaded: the rows were refused ("not a class
of the project already imported"), and the changes they would have caught escaped.
A configured target's module (one replay imports for its own ledger anyway) is imported
when a value names it; nothing else is: not a module planted in the package that no
configured target is in, not another package's module, not a test module.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import pytest_in, rows_of, run_cli, write_files
from lockstep.oracles.ledger.file import body_digest
from lockstep.oracles.ledger.format import input_key, row_id

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "shapes"\n',
    "shapes/__init__.py": "",
    "shapes/core.py": """
        def area(shape):
            return shape.side * shape.side
    """,
    "shapes/kinds.py": """
        class Square:
            def __init__(self, side):
                self.side = side

            def perimeter(self):
                return 4 * self.side
    """,
    "shapes/planted.py": """
        import pathlib

        pathlib.Path("imported-planted").write_text("x")


        class Mark:
            side = 2
    """,
    "shapes/tests/__init__.py": "",
    "shapes/tests/test_marks.py": """
        import pathlib

        pathlib.Path("imported-test-module").write_text("x")


        class Mark:
            side = 2
    """,
    "elsewhere.py": """
        import pathlib

        pathlib.Path("imported-elsewhere").write_text("x")


        class Mark:
            side = 2
    """,
    "tests/test_area.py": """
        from shapes.core import area
        from shapes.kinds import Square


        def test_area():
            assert area(Square(3)) == 9
    """,
}


def test_a_class_of_a_module_the_target_never_imports_thaws(tmp_path: Path) -> None:
    write_files(tmp_path, FILES)
    recorded = pytest_in(tmp_path, "tests", "-q", "--lockstep-record")
    assert recorded.code == 0, recorded.output
    (row,) = rows_of(tmp_path / "lockstep/shapes.core.area.ledger.jsonl")
    assert row.args == [{"$obj": ["shapes.kinds:Square", {"state": {"side": 3}}]}]
    green = run_cli("replay", cwd=tmp_path)
    assert green.code == 0, green.output
    # the module's code changes: the row catches it
    kinds = tmp_path / "shapes/kinds.py"
    kinds.write_text(kinds.read_text().replace("self.side = side", "self.side = side + 0"))
    (tmp_path / "shapes/core.py").write_text("def area(shape):\n    return shape.side * 2\n")
    red = run_cli("replay", cwd=tmp_path)
    assert red.code == 1, red.output


def test_a_value_naming_a_test_module_or_another_package_imports_nothing(
    tmp_path: Path,
) -> None:
    write_files(tmp_path, FILES)
    recorded = pytest_in(tmp_path, "tests", "-q", "--lockstep-record")
    assert recorded.code == 0, recorded.output
    ledger = tmp_path / "lockstep/shapes.core.area.ledger.jsonl"
    header, line = ledger.read_text().splitlines()
    hostile = (
        "shapes.planted:Mark",
        "shapes.tests.test_marks:Mark",
        "elsewhere:Mark",
        "no.kinds:X",
    )
    for name in hostile:
        row = json.loads(line.replace("shapes.kinds:Square", name))
        row["id"] = row_id(input_key(row["args"], row["kwargs"]))  # a consistent forgery
        body = json.dumps(row, separators=(",", ":")).encode()
        stated = json.loads(header)
        stated["digest"] = body_digest([body])[1]
        ledger.write_bytes(json.dumps(stated).encode() + b"\n" + body + b"\n")
        replayed = run_cli("replay", cwd=tmp_path)
        assert replayed.code == 2, replayed.output
        assert f"$obj names '{name}'" in replayed.stderr, replayed.stderr
        assert "already imported" in replayed.stderr, replayed.stderr
    assert not (tmp_path / "imported-planted").exists()
    assert not (tmp_path / "imported-test-module").exists()
    assert not (tmp_path / "imported-elsewhere").exists()


def test_a_change_that_breaks_a_module_s_import_is_red_not_a_corrupt_ledger(
    tmp_path: Path,
) -> None:
    """parsimonious builds its own grammar at import: a one-line change to its matching
    broke ``parsimonious.grammar``'s import, and the first row of another ledger naming one
    of its classes ended ``lockstep replay`` with exit 2, as if the ledger were corrupt.
    Today's code failed: each row that cannot rebuild its values is an ERROR naming the
    import's failure, and the run is red (exit 1)."""
    write_files(tmp_path, FILES)
    recorded = pytest_in(tmp_path, "tests", "-q", "--lockstep-record")
    assert recorded.code == 0, recorded.output
    kinds = tmp_path / "shapes/kinds.py"
    kinds.write_text(kinds.read_text() + "\nSIDES = {}['square']  # a module-level slip\n")
    red = run_cli("replay", cwd=tmp_path)
    assert red.code == 1, red.output
    assert "ERROR shapes.core.area::" in red.stdout
    assert "its module 'shapes.kinds' no longer imports: KeyError: 'square'" in red.stdout
