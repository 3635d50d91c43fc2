"""Classes a module binds under another name than their own, and builtin exception classes
passed as arguments.

aniso8601 9.0.1 returns ``TimezoneTuple = namedtuple("Timezone", ...)`` and its kin: the
recording froze them as ``aniso8601.builders:Timezone``, a name that finds nothing, so the
fresh interpreter could not thaw them and 321 of its rows were refused.  Its tests also
pass ``ValueError`` itself to a builder ("cannot freeze builtins:ValueError").  A class is
now named by the name its module binds it under when its own finds nothing, and a builtin
exception class freezes by name like ``len``.
"""

from __future__ import annotations

import collections
import enum
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import recorded, red_after_change, rows_of, run_cli
from lockstep import canon

CLOCKS = """
import collections
import enum

TimezoneTuple = collections.namedtuple("Timezone", ["negative", "hh", "mm"])
Color = enum.Enum("Colour", "RED GREEN")


def parse_zone(text):
    return TimezoneTuple(text[0] == "-", text[1:3], text[4:6] or None)


def shade(zone):
    return Color.RED if zone.negative else Color.GREEN


def checked(value, error):
    \"\"\"``value`` as an int, or ``error`` made from its text.\"\"\"
    try:
        return int(value)
    except ValueError:
        return error(f"not a number: {value}")
"""

TESTS = """
from clocks import checked, parse_zone, shade


def test_zone():
    zone = parse_zone("-05:30")
    assert (zone.hh, zone.mm) == ("05", "30")
    assert shade(zone).name == "RED"
    assert shade(parse_zone("+01")).name == "GREEN"


def test_checked():
    assert checked("12", ValueError) == 12
    assert str(checked("x", KeyError)) == "'not a number: x'"
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "clocks"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/clocks/__init__.py": CLOCKS,
    "tests/test_clocks.py": TESTS,
}


def test_aliased_classes_and_exception_classes_record_and_replay(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "no call skipped" in run.output and "refused 0;" in run.output, run.output
    zones = rows_of(root / "lockstep/clocks.parse_zone.ledger.jsonl")
    assert {row.result["$namedtuple"][0] for row in zones} == {"clocks:TimezoneTuple"}
    shades = rows_of(root / "lockstep/clocks.shade.ledger.jsonl")
    assert {row.result["$enum"][0] for row in shades} == {"clocks:Color"}
    checks = rows_of(root / "lockstep/clocks.checked.ledger.jsonl")
    assert {"$fn": "builtins:KeyError"} in [row.args[1] for row in checks]
    assert run_cli("replay", cwd=root).code == 0

    source = "src/clocks/__init__.py"
    red = red_after_change(root, source, "text[4:6] or None", "text[4:6]")
    assert "DRIFT clocks.parse_zone" in red.stdout, red.stdout
    (root / source).write_text(CLOCKS)
    red = red_after_change(root, source, 'error(f"not a number: {value}")', "error(value)")
    assert "DRIFT clocks.checked" in red.stdout, red.stdout


@pytest.fixture
def aliasing_module() -> Iterator[types.ModuleType]:
    module = types.ModuleType("aliasing_module")
    sys.modules[module.__name__] = module
    name = module.__name__
    module.ZoneTuple = collections.namedtuple("Zone", ["hh"], module=name)  # type: ignore[attr-defined]
    module.B_alias = module.A_alias = enum.Enum("Shade", "DARK", module=name)  # type: ignore[attr-defined]
    canon.allow_classes_matching("aliasing_module.*")
    yield module
    del sys.modules[module.__name__]


def test_the_alias_is_the_first_in_sorted_order_and_thaws_to_the_class(
    aliasing_module: types.ModuleType,
) -> None:
    zone = aliasing_module.ZoneTuple("05")
    assert canon.encode(zone) == {"$namedtuple": ["aliasing_module:ZoneTuple", ["05"]]}
    assert type(canon.decode(canon.encode(zone))) is type(zone)
    dark = aliasing_module.A_alias.DARK
    assert canon.encode(dark) == {"$enum": ["aliasing_module:A_alias", "DARK"]}
    assert canon.decode(canon.encode(dark)) is dark


def test_a_name_the_module_does_not_bind_is_not_found(aliasing_module: types.ModuleType) -> None:
    from lockstep.errors import CanonError

    with pytest.raises(CanonError, match="not a NamedTuple class"):
        canon.decode({"$namedtuple": ["aliasing_module:Zone", ["05"]]})
    with pytest.raises(CanonError, match="not a NamedTuple class"):
        canon.decode({"$namedtuple": ["aliasing_module:B_alias", ["05"]]})
