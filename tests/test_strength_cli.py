"""``lockstep strength`` through the real CLI, on legacy-style example projects.

The promise: strength names the code no recorded case reaches, the mutants that
survive there, and the case to add; once that case is recorded the score rises.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import invoke_cli, run_cli, run_pytest, write_files

FEES = '''
from decimal import Decimal, ROUND_HALF_UP

RATES = {"std": Decimal("0.20"), "reduced": Decimal("0.05")}
LIMIT = 100


def fee(amount, kind="std", member=False):
    """Legacy fee rule: members pay half (no recorded call is a member's)."""
    rate = RATES[kind]
    value = Decimal(amount) * rate
    if member:
        value = value / 2
    if Decimal(amount) > LIMIT:
        value = value + 1
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def countdown(n):
    steps = 0
    while n > 0:
        n -= 1
        steps += 1
    return steps
'''

DRIVER = """
from shop.fees import fee, countdown

for amount in ["10", "99.99", "150"]:
    for kind in ["std", "reduced"]:
        fee(amount, kind)
countdown(3)
"""

CONFIG = """
[[ledger]]
name = "fee"
target = "shop.fees:fee"
driver = "shop/drive.py"

[[ledger]]
name = "countdown"
target = "shop.fees:countdown"
driver = "shop/drive.py"
"""


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    write_files(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/fees.py": FEES,
            "shop/drive.py": DRIVER,
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


def _line(root: Path, text: str) -> int:
    lines = (root / "shop/fees.py").read_text().splitlines()
    return next(n for n, line in enumerate(lines, start=1) if text in line)


def test_names_the_unreached_branch_its_survivors_and_the_score_rises_after_the_case(
    shop: Path,
) -> None:
    member_line = _line(shop, "if member:")
    halves = _line(shop, "value = value / 2")

    before = _json("fee", "--mutants", "--jobs", "2", cwd=shop)
    (fees,) = before["files"]
    assert {"line": member_line, "to": halves, "text": "    if member:"} in fees["missing_branches"]
    assert halves in [u["line"] for u in fees["unreached"]]
    on_branch = [s for s in before["mutants"]["survivors"] if s["line"] == halves]
    assert on_branch, "the mutants of the unreached line survive"
    assert all(not s["reached_by"] for s in on_branch)
    assert all(s["nearest_case"].startswith("fee::") for s in on_branch)
    first = before["next_cases"][0]
    assert (first["first"], first["function"], first["survivors"]) == (halves, "fee", 3)
    assert "no case enters 1 function(s)" in before["mutants"]["notes"][0]

    text = run_cli("strength", "fee", "--mutants", cwd=shop)
    assert text.code == 0, text.output
    assert f"no case reaches lines {halves}" in text.stdout
    assert f"shop/fees.py:{halves} in fee" in text.stdout
    assert "next cases to add" in text.stdout

    # the suggested case: a member's fee
    driver = shop / "shop/drive.py"
    driver.write_text(driver.read_text() + 'fee("10", "std", member=True)\n')
    added = invoke_cli("record", "fee", "--new-only", cwd=shop)
    assert added.code == 0, added.output

    after = _json("fee", "--mutants", "--jobs", "2", cwd=shop)
    assert after["mutants"]["score"] > before["mutants"]["score"]
    assert halves not in [u["line"] for u in after["files"][0]["unreached"]]
    assert not [s for s in after["mutants"]["survivors"] if s["line"] == halves]


def test_module_level_tables_and_defaults_are_mutated_and_judged(shop: Path) -> None:
    data = _json("fee", "--mutants", "--no-cache", cwd=shop)
    by_line: dict[int, list[dict[str, Any]]] = {}
    for result in data["mutants"]["results"]:
        by_line.setdefault(result["line"], []).append(result)
    rates = by_line[_line(shop, "RATES = ")]
    assert any(r["verdict"] == "killed" for r in rates)
    limit = by_line[_line(shop, "LIMIT = ")]
    assert {r["after"] for r in limit} == {"LIMIT = 101", "LIMIT = 99"}
    # LIMIT = 99 changes the fee of 99.99; no case sits between 100 and 101
    assert {r["after"]: r["verdict"] for r in limit} == {
        "LIMIT = 99": "killed",
        "LIMIT = 101": "survived",
    }
    default = [r for r in by_line[_line(shop, "def fee(")] if "member=True" in r["after"]]
    assert [r["verdict"] for r in default] == ["killed"]  # no call passes member


def test_a_looping_mutant_times_out_and_the_worker_is_replaced(shop: Path) -> None:
    data = _json("countdown", "--mutants", "--no-cache", "--jobs", "1", cwd=shop)
    verdicts = {(r["line"], r["after"].strip()): r["verdict"] for r in data["mutants"]["results"]}
    assert verdicts[(_line(shop, "n -= 1"), "n += 1")] == "timeout"
    assert verdicts[(_line(shop, "n -= 1"), "pass")] == "timeout"
    # the replacement worker went on judging the mutants after them
    assert verdicts[(_line(shop, "steps += 1"), "steps -= 1")] == "killed"


def test_a_second_run_reuses_verdicts_and_reruns_only_the_edited_function(shop: Path) -> None:
    first = _json("--mutants", cwd=shop)
    assert first["mutants"]["evaluated"] > 0
    second = _json("--mutants", cwd=shop)
    assert all(r["cached"] for r in second["mutants"]["results"] if r["reached_by"])
    assert second["mutants"]["counts"] == first["mutants"]["counts"]
    assert (shop / ".lockstep-cache/.gitignore").read_text().strip().endswith("*")

    fees = shop / "shop/fees.py"
    fees.write_text(fees.read_text().replace("steps += 1", "steps = steps + 1"))
    third = _json("--mutants", cwd=shop)
    rerun = {
        r["function"] for r in third["mutants"]["results"] if r["reached_by"] and not r["cached"]
    }
    assert "countdown" in rerun
    assert "fee" not in rerun


def test_shards_split_the_mutants_and_a_budget_stops_cleanly(shop: Path) -> None:
    whole = _json("fee", "--mutants", "--no-cache", cwd=shop)["mutants"]["total"]
    one = _json("fee", "--mutants", "--no-cache", "--shard", "1/2", cwd=shop)["mutants"]
    two = _json("fee", "--mutants", "--no-cache", "--shard", "2/2", cwd=shop)["mutants"]
    assert one["total"] + two["total"] == whole
    assert one["total"] and two["total"]

    partial = _json(
        "countdown", "--mutants", "--no-cache", "--jobs", "1", "--time-limit", "1s", cwd=shop
    )
    mutants = partial["mutants"]
    assert mutants["budget_hit"]
    assert mutants["counts"]["not run"] > 0
    assert mutants["judged"] == sum(mutants["counts"][v] for v in ("killed", "survived", "timeout"))


def test_coverage_per_line_names_the_cases(shop: Path) -> None:
    result = run_cli("strength", "fee", "--lines", cwd=shop)
    assert result.code == 0, result.output
    assert "cases reaching each line" in result.stdout
    data = _json("fee", cwd=shop)
    assert "mutants" not in data
    (fees,) = data["files"]
    assert len(fees["lines"][str(_line(shop, "rate = RATES"))]) == 6
    assert len(fees["lines"][str(_line(shop, "value = value + 1"))]) == 2


def test_pins_are_measured_in_their_own_processes(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/fees.py": FEES,
            "report.py": """
                import sys
                from shop.fees import fee

                if len(sys.argv) > 1 and sys.argv[1] == "--member":
                    print(fee(sys.argv[2], member=True))
                else:
                    print(fee(sys.argv[1]))
            """,
            "cases/report.toml": '[[case]]\nid = "plain"\nargv = ["150"]\n',
            "lockstep.toml": """
                [[pins]]
                name = "report"
                command = ["python", "report.py"]
                cases = "cases/report.toml"
            """,
        },
    )
    assert run_cli("record", cwd=tmp_path).code == 0
    data = _json("report", "--mutants", "--jobs", "2", cwd=tmp_path)
    files = {f["file"]: f for f in data["files"]}
    assert set(files) == {"report.py", "shop/fees.py"}
    assert 5 in [u["line"] for u in files["report.py"]["unreached"]]
    plus_one = _line(tmp_path, "value = value + 1")
    assert files["shop/fees.py"]["lines"][str(plus_one)] == ["report::plain"]
    killed = [r for r in data["mutants"]["results"] if r["verdict"] == "killed"]
    assert any(r["line"] == plus_one and r["killed_by"] == "report::plain" for r in killed)


def test_pytest_prints_the_strength_summary_at_the_end(shop: Path) -> None:
    write_files(
        shop,
        {
            "tests/test_fees.py": (
                "from decimal import Decimal\n\nfrom shop.fees import fee\n\n\n"
                "def test_member_pays_half():\n"
                "    assert fee('10', member=True) == Decimal('1.00')\n"
            )
        },
    )
    result = run_pytest(
        "--lockstep-strength", "-q", "tests", cwd=shop, plugins=("lockstep.pytest.plugin",)
    )
    assert result.code == 0, result.output
    assert "lockstep strength" in result.stdout
    assert "next cases to add" in result.stdout
    assert "score" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--time-limit", "soon"), "--time-limit"),
        (("nosuch",), "no oracle named 'nosuch'"),
        (("--shard", "3/2"), "--shard"),
    ],
)
def test_bad_input_is_a_usage_error(shop: Path, args: tuple[str, ...], message: str) -> None:
    result = invoke_cli("strength", *args, cwd=shop)
    assert result.code == 2
    assert message in result.stderr


def test_an_oracle_not_recorded_yet_is_a_usage_error(tmp_path: Path) -> None:
    write_files(tmp_path, {"shop/__init__.py": "", "shop/fees.py": FEES, "lockstep.toml": CONFIG})
    result = invoke_cli("strength", "fee", cwd=tmp_path)
    assert result.code == 2
    assert "lockstep record fee" in result.stderr


def test_corpus_and_tape_measure_the_code_their_harness_runs(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/fees.py": FEES,
            "shop/harness.py": """
                import json
                from shop.fees import fee

                def render(path):
                    data = json.loads(path.read_text())
                    return str(fee(data["amount"], data["kind"]))
            """,
            "shop/drivers.py": """
                from shop.fees import fee

                def drive(tape):
                    log = tape.spy("log", print)
                    log(str(fee("150")))
            """,
            "fixtures/a.json": '{"amount": "10", "kind": "std"}',
            "fixtures/b.json": '{"amount": "150", "kind": "reduced"}',
            "lockstep.toml": """
                [[corpus]]
                name = "fees"
                fixtures = "fixtures/*.json"
                render = "shop.harness:render"

                [[tape]]
                name = "drive"
                driver = "shop.drivers:drive"
            """,
        },
    )
    recorded = invoke_cli("record", cwd=tmp_path)
    assert recorded.code == 0, recorded.output
    corpus = _json("fees", "--mutants", cwd=tmp_path)
    assert {f["file"] for f in corpus["files"]} == {"shop/harness.py", "shop/fees.py"}
    assert corpus["mutants"]["counts"]["killed"] > 0
    tape = _json("drive", cwd=tmp_path)
    (fees,) = tape["files"]
    assert fees["file"] == "shop/fees.py"
    assert fees["lines"][str(_line(tmp_path, "value = value + 1"))] == ["drive::drive"]
