"""``lockstep strength`` judges what the cases execute, on a legacy-style example project.

The ledger freezes ``parse_offset``; it calls ``minutes`` in another module. Strength
must measure and mutate that helper module too, never mutate code that cannot run
(a type alias, an ``if TYPE_CHECKING:`` block), keep its "no case enters" note in
agreement with the survivors, and name the public functions the cases call that no
ledger freezes (the unfrozen surface).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import invoke_cli, run_cli, write_files

OFFSETS = '''
from typing import TYPE_CHECKING, TypeVar, Union

if TYPE_CHECKING:
    from decimal import Decimal
    LIMIT = "only a type checker reads this"

Number = Union[int, "Decimal"]
T = TypeVar("T", bound="Number")


def minutes(sign, hours, mins):
    """Signed minutes of an offset."""
    total = int(hours) * 60 + int(mins)
    if sign == "-":
        total = -total
    return total


def _unused_private(x):
    return x + 1
'''

PARSE = """
from tzlib.offsets import minutes


def parse_offset(text):
    text = text.strip()
    if text == "Z":
        return 0
    sign, rest = text[0], text[1:]
    hours, _, mins = rest.partition(":")
    return minutes(sign, hours, mins or "0")


def render(value, sep=":" + "", width=2 * 1):
    sign = "-" if value < 0 else "+"
    return f"{sign}{abs(value) // 60:0{width}d}{sep}{abs(value) % 60:02d}"
"""

DRIVER = """
from tzlib.parse import parse_offset

for text in ["Z", "+01:00", "-05:30", "+0200"]:
    parse_offset(text)
"""

CONFIG = """
[[ledger]]
name = "parse_offset"
target = "tzlib.parse:parse_offset"
driver = "drive.py"
"""


@pytest.fixture
def tzlib(tmp_path: Path) -> Path:
    write_files(
        tmp_path,
        {
            "tzlib/__init__.py": "",
            "tzlib/offsets.py": OFFSETS,
            "tzlib/parse.py": PARSE,
            "drive.py": DRIVER,
            "lockstep.toml": CONFIG,
        },
    )
    recorded = invoke_cli("record", cwd=tmp_path)
    assert recorded.code == 0, recorded.output
    return tmp_path


def _json(*args: str, cwd: Path) -> dict[str, Any]:
    result = run_cli("strength", *args, "--json", cwd=cwd)
    assert result.code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _line(root: Path, rel: str, text: str) -> int:
    lines = (root / rel).read_text().splitlines()
    return next(n for n, line in enumerate(lines, start=1) if text in line)


def test_the_helper_module_the_cases_run_is_measured_and_its_mutants_judged(tzlib: Path) -> None:
    report = _json("--mutants", "--no-cache", cwd=tzlib)
    assert {f["file"] for f in report["files"]} == {"tzlib/parse.py", "tzlib/offsets.py"}
    negate = _line(tzlib, "tzlib/offsets.py", "total = -total")
    offsets = [r for r in report["mutants"]["results"] if r["file"] == "tzlib/offsets.py"]
    assert offsets, "the helper module gets mutants"
    killed = {r["line"] for r in offsets if r["verdict"] == "killed"}
    assert negate in killed  # '-05:30' is a recorded case: dropping the minus is caught
    assert {r["function"] for r in offsets} == {"minutes"}  # the private helper never runs


def test_no_mutants_in_type_only_code_and_it_is_not_a_gap(tzlib: Path) -> None:
    report = _json("--mutants", "--no-cache", cwd=tzlib)
    type_only = {
        _line(tzlib, "tzlib/offsets.py", text)
        for text in ("from decimal", "LIMIT =", "Number =", "T = TypeVar")
    }
    offsets = [r for r in report["mutants"]["results"] if r["file"] == "tzlib/offsets.py"]
    assert not {r["line"] for r in offsets} & type_only
    (cov,) = [f for f in report["files"] if f["file"] == "tzlib/offsets.py"]
    assert not {u["line"] for u in cov["unreached"]} & type_only
    gaps = [g for g in report["next_cases"] if g["file"] == "tzlib/offsets.py"]
    assert [g["function"] for g in gaps] == ["_unused_private"]  # a real gap, nothing type-only


def test_the_no_case_enters_note_and_the_survivors_agree(tzlib: Path) -> None:
    report = _json("--mutants", "--no-cache", cwd=tzlib)
    notes = report["mutants"]["notes"]
    assert any("no case enters" in n and "tzlib/parse.py:render" in n for n in notes), notes
    header = _line(tzlib, "tzlib/parse.py", "def render(")
    body_end = header + 2
    in_render = [
        r
        for r in report["mutants"]["results"]
        if r["file"] == "tzlib/parse.py" and header <= r["line"] <= body_end
    ]
    assert in_render == []  # not even its default values ("sep", "width")
    text = run_cli("strength", "--mutants", cwd=tzlib)
    assert text.code == 0, text.output
    assert "in render:" not in text.stdout


def test_the_unfrozen_surface_names_the_public_helpers_the_cases_call(tzlib: Path) -> None:
    report = _json(cwd=tzlib)
    (only,) = report["unfrozen_surface"]
    assert only["target"] == "tzlib.offsets:minutes"
    assert only["cases"] == 3  # every case but "Z"
    assert "parse_offset(" in only["example_input"]
    text = run_cli("strength", cwd=tzlib)
    assert "unfrozen surface: 1 public function(s)" in text.stdout
    assert "tzlib.offsets:minutes (tzlib/offsets.py:" in text.stdout
    assert "3 call(s) from 3 case(s)" in text.stdout
    assert only["calls"] == 3

    # once a ledger freezes it, it is no longer listed
    config = tzlib / "lockstep.toml"
    config.write_text(
        config.read_text()
        + '\n[[ledger]]\nname = "minutes"\ntarget = "tzlib.offsets:minutes"\n'
        + 'driver = "drive.py"\n'
    )
    assert invoke_cli("record", "minutes", cwd=tzlib).code == 0
    assert _json("parse_offset", cwd=tzlib)["unfrozen_surface"] == []


def test_help_states_the_true_jobs_default() -> None:
    shown = run_cli("strength", "--help", cwd=Path.cwd())
    assert shown.code == 0
    flat = " ".join(shown.stdout.split())
    assert "default: one per core" in flat
    assert "[default: (one per core)]" in flat
    assert "default: 1]" not in flat


def test_code_in_a_virtual_environment_under_the_root_is_not_the_projects(
    tmp_path: Path,
) -> None:
    write_files(
        tmp_path,
        {
            ".venv/lib/site-packages/padlib.py": """
                def pad(text):
                    return text.rjust(6)
            """,
            "shop/__init__.py": "",
            "shop/labels.py": """
                import sys
                from pathlib import Path

                sys.path.insert(0, str(Path(__file__).parents[1] / ".venv/lib/site-packages"))
                from padlib import pad  # an installed library, not the project's code


                def label(name):
                    return pad(name.title())
            """,
            "drive.py": "from shop.labels import label\nlabel('tea')\nlabel('milk')\n",
            "lockstep.toml": """
                [[ledger]]
                name = "label"
                target = "shop.labels:label"
                driver = "drive.py"
            """,
        },
    )
    assert invoke_cli("record", cwd=tmp_path).code == 0
    report = _json("--mutants", "--no-cache", cwd=tmp_path)
    assert [f["file"] for f in report["files"]] == ["shop/labels.py"]
    assert {r["file"] for r in report["mutants"]["results"]} == {"shop/labels.py"}
    assert report["unfrozen_surface"] == []


def test_the_unfrozen_surface_is_ranked_by_calls_then_by_cases(tmp_path: Path) -> None:
    """``digits`` runs in one case but ten times; ``sign_of`` once in each of three cases:
    the most called comes first, whatever the number of cases."""
    write_files(
        tmp_path,
        {
            "numlib/__init__.py": "",
            "numlib/helpers.py": """
                def digit(ch):
                    return "0123456789".index(ch)


                def sign_of(text):
                    return -1 if text.startswith("-") else 1
            """,
            "numlib/parse.py": """
                from numlib.helpers import digit, sign_of


                def parse(text):
                    sign = sign_of(text)
                    total = 0
                    for ch in text.lstrip("+-"):
                        total = total * 10 + digit(ch)
                    return sign * total
            """,
            "drive.py": (
                "from numlib.parse import parse\nparse('-7')\nparse('')\nparse('1234567890')\n"
            ),
            "lockstep.toml": """
                [[ledger]]
                name = "parse"
                target = "numlib.parse:parse"
                driver = "drive.py"
            """,
        },
    )
    assert invoke_cli("record", cwd=tmp_path).code == 0
    found = _json(cwd=tmp_path)["unfrozen_surface"]
    assert [(u["target"], u["calls"], u["cases"]) for u in found] == [
        ("numlib.helpers:digit", 11, 2),
        ("numlib.helpers:sign_of", 3, 3),
    ]
    text = run_cli("strength", cwd=tmp_path)
    assert "numlib.helpers:digit (numlib/helpers.py:1) — 11 call(s) from 2 case(s)" in text.stdout
