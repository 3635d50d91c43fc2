"""``pytest --lockstep-record`` controls: keeping tests out of the recording, refusing a failing
run, what each record mode (``--lockstep-refresh``, ``--lockstep-trim``) does to the rows a run did not see, and the summary.

Every test is a real pytest run (plain or under xdist) in an example project."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers import Result, copy_project, pytest_in, snapshot_tree, write_files

PRICING = """
import os

RATE = {"USD": 1}


def price(raw, currency="USD"):
    return int(raw) * RATE[currency]


def tier(n):
    if n == 7 and os.environ.get("PYTEST_XDIST_WORKER") == "gw1":
        return 14  # the second xdist worker sees another outcome for this one input
    return n
"""

TESTS = """
import pytest

import shop.pricing
from shop.pricing import price, tier


@pytest.mark.parametrize("n", range(5))
def test_price(n):
    assert price(str(n)) == n


@pytest.mark.lockstep_skip
def test_patched(monkeypatch):
    assert price("6") == 6
    monkeypatch.setitem(shop.pricing.RATE, "USD", 3)
    assert price("1") == 3


def test_freeze_clock():
    assert price("8") == 8


def test_tier():
    assert tier(3) == 3
    assert tier(7) in (7, 14)
"""

I18N = """
import shop.pricing
from shop.pricing import price


def test_eur(monkeypatch):
    monkeypatch.setitem(shop.pricing.RATE, "USD", 2)
    assert price("2") == 4
"""

FAILING = """
import pytest

from shop.pricing import price


@pytest.fixture
def broken():
    raise RuntimeError("no database")


def test_bad():
    assert price("3") == 4


def test_needs_the_database(broken):
    assert price("5") == 5
"""

CONFTEST = """
def pytest_terminal_summary(terminalreporter, config):
    plugin = config.pluginmanager.get_plugin("lockstep-ledger-recording")
    if plugin is None:
        return
    for name, first in sorted(plugin.first_tests.items()):
        for row_id, nodeid in sorted(first.items()):
            terminalreporter.write_line(f"FIRST {name} {row_id} {nodeid}")
"""

CONFIG = """
[lockstep]
record_exclude = ["tests/test_i18n.py", "*freeze*", "tests/nowhere.py"]

[[ledger]]
name = "price"
target = "shop.pricing:price"

[[ledger]]
name = "tier"
target = "shop.pricing:tier"
"""

RECORD = ("--lockstep-record=price", "--lockstep-record=tier")
SUBSET = ("-k", "test_price[0] or test_price[1]")


def make_project(root: Path) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": CONFIG,
            "conftest.py": CONFTEST,
            "shop/__init__.py": "",
            "shop/pricing.py": PRICING,
            "tests/test_shop.py": TESTS,
            "tests/test_i18n.py": I18N,
        },
    )
    return root


def rows(root: Path, name: str) -> dict[str, dict[str, object]]:
    """The ledger's rows by their call's first argument."""
    lines = (root / f"lockstep/{name}.ledger.jsonl").read_text(encoding="utf-8").splitlines()
    found = [json.loads(line) for line in lines[1:]]
    return {str(row["args"][0]): row for row in found}


def leftovers(root: Path) -> list[str]:
    folder = root / "lockstep"
    return (
        sorted(p.name for p in folder.iterdir() if p.name.startswith("."))
        if folder.exists()
        else []
    )


def first_tests(output: str) -> set[str]:
    return {line for line in output.splitlines() if line.startswith("FIRST ")}


def summary(output: str) -> str:
    return output.split("lockstep ledger recording", 1)[1]


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    root = make_project(tmp_path_factory.mktemp("plain"))
    result = pytest_in(root, "-q", *RECORD)
    assert result.code == 0, result.output
    return root, result


def test_a_marked_test_is_kept_out_of_the_recording(plain: tuple[Path, Result]) -> None:
    root, result = plain
    price = rows(root, "price")
    assert sorted(price) == ["0", "1", "2", "3", "4"]  # no "6", and "1" is not refused
    assert price["1"]["result"] == 1
    text = summary(result.stdout)
    assert "refused (behaviour varies" not in text and "refused 0," in text
    assert "tests/test_shop.py::test_patched (2)" in text


def test_record_exclude_keeps_files_and_patterns_out(plain: tuple[Path, Result]) -> None:
    root, result = plain
    assert "8" not in rows(root, "price") and "2" in rows(root, "price")
    text = summary(result.stdout)
    assert "tests/test_i18n.py::test_eur (1)" in text
    assert "tests/test_shop.py::test_freeze_clock (1)" in text
    assert (
        "counts: added 5, replaced 0, kept 0, trimmed 0, refused 0, "
        "left out 4 call(s) of 3 excluded test(s)" in text
    )
    assert "record_exclude entries that named no test of this run: tests/nowhere.py" in text
    # the other target was not called by the kept-out tests: 0 calls, still listed
    assert "left out 0 call(s) of 3 excluded test(s)" in text


def test_each_row_names_the_test_that_first_produced_it(plain: tuple[Path, Result]) -> None:
    root, result = plain
    first = first_tests(result.stdout)
    price = rows(root, "price")
    for n in range(5):
        assert f"FIRST price {price[str(n)]['id']} tests/test_shop.py::test_price[{n}]" in first
    tier = rows(root, "tier")
    assert {f"FIRST tier {tier[n]['id']} tests/test_shop.py::test_tier" for n in ("3", "7")} == {
        line for line in first if line.startswith("FIRST tier")
    }


def test_under_xdist_the_same_tests_are_kept_out_and_named(
    plain: tuple[Path, Result], tmp_path: Path
) -> None:
    source, recorded = plain
    root = make_project(tmp_path)
    # (not tier: its outcome depends on the worker that runs test_tier)
    result = pytest_in(root, "-q", "-n", "2", "--lockstep-record=price", xdist=True)
    assert result.code == 0, result.output
    path = "lockstep/price.ledger.jsonl"
    assert (root / path).read_bytes() == (source / path).read_bytes()
    price = {line for line in first_tests(recorded.stdout) if line.startswith("FIRST price")}
    assert first_tests(result.stdout) == price
    text = summary(result.stdout)
    for kept_out in ("test_shop.py::test_patched (2)", "test_i18n.py::test_eur (1)"):
        assert kept_out in text
    assert "left out 4 call(s) of 3 excluded test(s)" in text
    assert leftovers(root) == []


def test_a_refused_row_names_its_test(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    # every worker runs every test; the second one sees tier(7) return 14
    result = pytest_in(
        root, "-q", "-n", "2", "--dist", "each", "--lockstep-record=tier", xdist=True
    )
    assert result.code == 0, result.output
    text = summary(result.stdout)
    assert re.search(
        r"refused \(behaviour varies between calls, not frozen\) 1: tier\(7\) \[[0-9a-f]{16}\] "
        r"\(test: tests/test_shop.py::test_tier\)",
        text,
    ), text
    assert "row(s) from tests/test_shop.py::test_tier" in text
    assert sorted(rows(root, "tier")) == ["3"]


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ('[""]', "lockstep.record_exclude[0]: Expected `str` of length >= 1"),
        ('"tests/test_i18n.py"', "lockstep.record_exclude: Expected `array`, got `str`"),
    ],
)
def test_record_exclude_is_validated(tmp_path: Path, setting: str, message: str) -> None:
    root = make_project(tmp_path)
    write_files(
        root,
        {
            "lockstep.toml": CONFIG.replace(
                'record_exclude = ["tests/test_i18n.py", "*freeze*", "tests/nowhere.py"]',
                f"record_exclude = {setting}",
            )
        },
    )
    result = pytest_in(root, "-q", *RECORD)
    assert result.code == 4, result.output
    assert message in result.stderr
    assert not (root / "lockstep").exists()


REFUSED_LINE = (
    "lockstep: nothing recorded: 2 test(s) failed or errored (tests/test_fail.py::test_bad, "
    "tests/test_fail.py::test_needs_the_database); rows from a failing run are suspect: "
    "fix or deselect them, or pass --lockstep-record-allow-failures (one that passes "
    "unrecorded meets a recorded member's wrapper, a frame it counts, or a module the "
    "recording imported to wrap and the suite never imports, whose import registers "
    "something: leave that member or module out with the ledger's exclude)"
)


@pytest.mark.parametrize("xdist", [False, True], ids=["plain", "xdist"])
def test_a_failing_run_writes_nothing_unless_allowed(tmp_path: Path, xdist: bool) -> None:
    root = make_project(tmp_path)
    write_files(root, {"tests/test_fail.py": FAILING})
    workers = ("-n", "2") if xdist else ()
    refused = pytest_in(root, "-q", *workers, *RECORD, xdist=xdist)
    assert refused.code == 1, refused.output
    (line,) = [x for x in refused.stdout.splitlines() if x.startswith("lockstep: nothing")]
    failed = ("tests/test_fail.py::test_bad", "tests/test_fail.py::test_needs_the_database")
    # under xdist the failures arrive in the order the workers report them
    assert line in (REFUSED_LINE, REFUSED_LINE.replace(", ".join(failed), ", ".join(failed[::-1])))
    assert "1 failed, 9 passed, 1 error" in refused.stdout
    assert not (root / "lockstep/price.ledger.jsonl").exists()
    assert leftovers(root) == []

    allowed = pytest_in(
        root, "-q", *workers, *RECORD, "--lockstep-record-allow-failures", xdist=xdist
    )
    assert allowed.code == 1, allowed.output
    assert "lockstep: written although 2 test(s) failed or errored" in allowed.stdout
    assert sorted(rows(root, "price")) == ["0", "1", "2", "3", "4"]
    assert leftovers(root) == []


def test_a_failing_run_leaves_an_existing_ledger_as_it_was(
    plain: tuple[Path, Result], tmp_path: Path
) -> None:
    root = copy_project(plain[0], tmp_path)
    write_files(root, {"tests/test_fail.py": FAILING})
    before = snapshot_tree(root / "lockstep")
    result = pytest_in(root, "-q", *RECORD, "--lockstep-refresh")
    assert result.code == 1, result.output
    assert "lockstep: nothing recorded: 2 test(s) failed or errored" in result.stdout
    assert snapshot_tree(root / "lockstep") == before


ZERO_AS_FLOAT = PRICING.replace(
    "    return int(raw) * RATE[currency]",
    "    value = int(raw) * RATE[currency]\n    return float(value) if value == 0 else value",
)


def test_force_on_a_subset_keeps_the_rows_the_run_did_not_see(
    plain: tuple[Path, Result], tmp_path: Path
) -> None:
    root = copy_project(plain[0], tmp_path)
    write_files(root, {"shop/pricing.py": ZERO_AS_FLOAT})  # price("0") now returns 0.0
    result = pytest_in(
        root, "-q", *SUBSET, "--lockstep-record=price", "--lockstep-record-mode=force"
    )
    assert result.code == 0, result.output
    text = summary(result.stdout)
    assert (
        "counts: added 0, replaced 1, kept 4 (3 not seen by this run), trimmed 0, refused 0" in text
    )
    assert "kept 3 row(s) this run did not see; --lockstep-trim drops them" in text
    price = rows(root, "price")
    assert sorted(price) == ["0", "1", "2", "3", "4"]
    assert price["0"]["result"] == 0.0 and isinstance(price["0"]["result"], float)
    assert price["3"] == rows(plain[0], "price")["3"]

    trimmed = pytest_in(root, "-q", *SUBSET, "--lockstep-record=price", "--lockstep-trim")
    assert trimmed.code == 0, trimmed.output
    assert "counts: added 0, replaced 0, kept 2, trimmed 3, refused 0" in summary(trimmed.stdout)
    assert sorted(rows(root, "price")) == ["0", "1"]


def test_force_replaces_a_ledger_of_another_signature_whole(
    plain: tuple[Path, Result], tmp_path: Path
) -> None:
    root = copy_project(plain[0], tmp_path)
    write_files(
        root,
        {
            "shop/pricing.py": PRICING.replace(
                'def price(raw, currency="USD"):', 'def price(raw, currency="USD", rounding=None):'
            )
        },
    )
    result = pytest_in(
        root, "-q", *SUBSET, "--lockstep-record=price", "--lockstep-record-mode=force"
    )
    assert result.code == 0, result.output
    text = summary(result.stdout)
    assert "counts: added 0, replaced 0, kept 2, trimmed 3, refused 0" in text
    assert (
        "force replaced the whole ledger (it was recorded against another signature): the rows "
        "this run did not see could not be kept and are listed as trimmed"
    ) in text
    assert sorted(rows(root, "price")) == ["0", "1"]


def test_an_input_refused_within_one_process_names_the_test_where_it_changed(
    tmp_path: Path,
) -> None:
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\nname = "bump"\ntarget = "tally:bump"\n',
            "tally.py": "_seen = []\n\n\ndef bump(x):\n    _seen.append(x)\n    return len(_seen)\n",
            "tests/test_tally.py": (
                "from tally import bump\n\n\ndef test_first():\n    assert bump('a') == 1\n\n\n"
                "def test_second():\n    assert bump('a') == 2\n"
            ),
        },
    )
    result = pytest_in(root, "-q", "--lockstep-record=bump")
    assert result.code == 0, result.output
    text = summary(result.stdout)
    assert re.search(
        r"bump\('a'\) \[[0-9a-f]{16}\] \(cause: module global tally._seen changed \(1 items, 0 "
        r"at the start\)\) \(test: tests/test_tally.py::test_second\)",
        text,
    ), text
    assert "row(s) from tests/test_tally.py::test_second" in text


def test_the_tests_of_refused_rows_are_listed_up_to_eight_unless_verbose(
    tmp_path: Path,
) -> None:
    tests = "\n".join(
        f"def test_rate_{i}(monkeypatch):\n"
        f"    monkeypatch.setitem(pricing.RATE, 'USD', 3)\n"
        f"    assert pricing.price({i}) == {3 * i}\n"
        for i in range(1, 11)
    )
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\nname = "price"\ntarget = "shop.pricing:price"\n',
            "src/shop/__init__.py": "",
            "src/shop/pricing.py": PRICING,
            "tests/test_rates.py": "from shop import pricing\n\n\n" + tests,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        },
    )
    quiet = pytest_in(tmp_path, "-q", "tests", "--lockstep-record")
    named = [line for line in quiet.stdout.splitlines() if "row(s) from tests/" in line]
    assert len(named) == 8, quiet.output
    assert "… and 2 more refused row(s) from 2 other test(s) (pytest -v names each)" in quiet.stdout
    (tmp_path / "lockstep/price.ledger.jsonl").unlink(missing_ok=True)
    verbose = pytest_in(tmp_path, "-v", "tests", "--lockstep-record")
    named = [line for line in verbose.stdout.splitlines() if "row(s) from tests/" in line]
    assert len(named) == 10, verbose.output
    assert "more refused row(s)" not in verbose.stdout
