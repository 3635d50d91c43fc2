"""``lockstep init`` on real example projects: survey, ask or take flags, write a config that
``lockstep record`` runs as is, and never overwrite one."""

from __future__ import annotations

import ast
import shutil
import textwrap
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from helpers import invoke_cli, run_cli, run_pytest, snapshot_tree, write_files

DEMO = Path(str(resources.files("lockstep.demo") / "project"))


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _config(root: Path) -> dict[str, object]:
    return tomllib.loads((root / "lockstep.toml").read_text(encoding="utf-8"))


def test_init_yes_on_the_demo_project_records_and_replays_without_edits(demo: Path) -> None:
    result = run_cli("init", "--yes", cwd=demo)
    assert result.code == 0, result.output
    assert "wrote lockstep.toml: 0 package surface(s), 1 ledger(s), 1 corpus, 2 pins" in (
        result.stdout
    )
    commands = (
        "  lockstep record parse_amount transform export_invoices invoicing\n  lockstep replay\n"
    )
    assert result.stdout.endswith(commands)
    text = (demo / "lockstep.toml").read_text()
    assert "# refs.messy:parse_amount returns None, list, str, tuple" in text
    config = _config(demo)
    assert config["ledger"] == [
        {"name": "parse_amount", "target": "refs.messy:parse_amount", "driver": "refs/exercise.py"}
    ]
    assert config["corpus"] == [
        {
            "name": "transform",
            "fixtures": "fixtures/transform/*.json",
            "render": "transform.harness:render",
        }
    ]
    pins = {p["name"]: p for p in config["pins"]}  # type: ignore[attr-defined]
    # the export's header carries a timestamp and a run id: the probe found both
    assert sorted(pins["export_invoices"]["rules"]) == ["iso-timestamp", "run"]
    assert pins["export_invoices"]["env_keys"] == ["CURRENCY", "TAX_RATE"]
    assert pins["invoicing"]["command"] == ["python", "-m", "invoicing"]
    # a starter cases file, outside the package folder (it would ship with the package)
    assert pins["invoicing"]["cases"] == "lockstep-cases/invoicing.cases.toml"
    assert (demo / "lockstep-cases" / "invoicing.cases.toml").is_file()
    assert not (demo / "invoicing" / "cases.toml").exists()
    record = run_cli(
        "record", "parse_amount", "transform", "export_invoices", "invoicing", cwd=demo, timeout=300
    )
    assert record.code == 0, record.output
    replay = run_cli("replay", cwd=demo, timeout=300)
    assert replay.code == 0, replay.output
    assert "green" in replay.stdout


def test_init_never_overwrites_a_configuration(demo: Path) -> None:
    write_files(demo, {"lockstep.toml": "[lockstep]\n"})
    before = snapshot_tree(demo)
    result = invoke_cli("init", "--yes", cwd=demo)
    assert result.code == 2
    assert "a configuration already exists; lockstep init never overwrites one" in result.stderr
    assert snapshot_tree(demo) == before


def test_init_refuses_a_pyproject_that_configures_lockstep(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": "[tool.lockstep]\ndir = 'oracles'\n"})
    result = invoke_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 2
    assert "[tool.lockstep] already configures lockstep" in result.stderr
    assert not (tmp_path / "lockstep.toml").exists()


def test_init_asks_about_each_candidate(demo: Path) -> None:
    # ledger parse_amount: no; corpus transform: yes; the two scripts: no
    result = invoke_cli("init", cwd=demo, input=b"n\ny\nn\nn\n")
    assert result.code == 0, result.output
    assert "Freeze its calls?" in result.stdout and "Freeze its runs?" in result.stdout
    config = _config(demo)
    assert [c["name"] for c in config["corpus"]] == ["transform"]  # type: ignore[index]
    assert "ledger" not in config and "pins" not in config
    text = (demo / "lockstep.toml").read_text()
    assert "# Also found, not configured:" in text
    assert "#   ledger refs.messy:parse_amount" in text
    assert invoke_cli("record", cwd=demo).code == 0


def test_init_takes_the_oracles_from_flags(demo: Path) -> None:
    result = invoke_cli(
        "init",
        "--ledger",
        "refs.messy:parse_amount",
        "--corpus",
        "fixtures/transform/*.json",
        "--render",
        "transform.harness:render",
        cwd=demo,
    )
    assert result.code == 0, result.output
    config = _config(demo)
    assert [c["driver"] for c in config["ledger"]] == ["refs/exercise.py"]  # type: ignore[index]
    assert [c["render"] for c in config["corpus"]] == ["transform.harness:render"]  # type: ignore[index]
    assert "pins" not in config
    assert invoke_cli("record", cwd=demo).code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--corpus", "fixtures/*.json"), "--corpus and --render go in pairs"),
        (("--ledger", "refs.messy"), "--ledger refs.messy: expected pkg.mod:func"),
        (("--pins", "nope.py"), "--pins nope.py: no such file"),
    ],
)
def test_bad_init_flags_are_exit_2_and_write_nothing(
    demo: Path, args: tuple[str, ...], message: str
) -> None:
    before = snapshot_tree(demo)
    result = invoke_cli("init", *args, cwd=demo)
    assert result.code == 2
    assert message in result.stderr
    assert snapshot_tree(demo) == before


def test_a_mixed_returns_function_without_a_driver_is_written_to_record_from_tests(
    tmp_path: Path,
) -> None:
    write_files(
        tmp_path,
        {
            "billing/__init__.py": "",
            "billing/codes.py": (
                "def code(x):\n"
                "    if x is None:\n        return None\n"
                "    if x == 0:\n        return ''\n"
                "    return (x, str(x))\n"
            ),
            "billing/use.py": "from billing.codes import code\n",
            "billing/more.py": "import billing.codes\n",
        },
    )
    result = invoke_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    text = (tmp_path / "lockstep.toml").read_text()
    assert "#   ledger billing.codes:code: returns None, str, tuple; fan-in 2; no script" in text
    (tmp_path / "lockstep.toml").unlink()
    # named on the command line, it is written, runnable, with how to record it
    result = invoke_cli("init", "--ledger", "billing.codes:code", cwd=tmp_path)
    assert result.code == 0, result.output
    assert result.stdout.endswith("  pytest --lockstep-record\n  lockstep replay\n")
    text = (tmp_path / "lockstep.toml").read_text()
    assert "# billing.codes:code returns None, str, tuple; imported by 2 module(s)." in text
    assert "#   pytest --lockstep-record\n#   lockstep replay\n" in text
    assert _config(tmp_path)["ledger"] == [{"name": "code", "target": "billing.codes:code"}]
    (tmp_path / "lockstep.toml").unlink()
    # a function the survey did not propose: its module's fan-in is counted all the same
    result = invoke_cli("init", "--ledger", "billing.codes:other", cwd=tmp_path)
    assert result.code == 0, result.output
    text = (tmp_path / "lockstep.toml").read_text()
    assert "# billing.codes:other named on the command line; imported by 2 module(s)." in text


@pytest.mark.parametrize(
    ("body", "kinds"),
    [
        ("return None", ("None",)),
        ("if x:\n        return [x]\n    return {x: 1}", ("dict", "list")),
        ("if x:\n        return f'{x}'\n    return str(x)", ("str",)),
        ("def inner():\n        return 1\n    return (x,)", ("tuple",)),
        ("return x", ()),
    ],
)
def test_return_kinds_reads_only_the_functions_own_returns(
    body: str, kinds: tuple[str, ...]
) -> None:
    from lockstep.scaffold.survey import return_kinds

    func = ast.parse(f"def f(x):\n    {body}\n").body[0]
    assert isinstance(func, ast.FunctionDef)
    assert return_kinds(func) == kinds


def test_a_timestamp_that_did_not_vary_while_probing_still_gets_its_rule(tmp_path: Path) -> None:
    """Every probe run may fall within one second: the stamp then agrees across runs, yet
    tomorrow's replay would differ. init gives the built-in rule whenever the output has one."""
    write_files(
        tmp_path,
        {
            "stamp.py": (
                "import datetime\n\n"
                "if __name__ == '__main__':\n"
                "    print('exported at', datetime.date(2024, 5, 1).isoformat() + 'T09:30:00')\n"
            ),
        },
    )
    result = invoke_cli("init", "--pins", "stamp.py", cwd=tmp_path)
    assert result.code == 0, result.output
    pins = _config(tmp_path)["pins"]
    assert [p["rules"] for p in pins] == [["iso-timestamp"]]  # type: ignore[union-attr,index]


def test_a_script_that_fails_to_import_is_proposed_commented_out(tmp_path: Path) -> None:
    """vobject's ``icalendar.py`` run as a file stops at its relative import: every run
    exits 1 before anything of it ran.  Frozen, that crash would be the contract."""
    write_files(
        tmp_path,
        {
            "cal/__init__.py": "",
            "cal/tool.py": (
                "from .core import parse\n\nif __name__ == '__main__':\n    print(parse('x'))\n"
            ),
            "cal/core.py": "def parse(text):\n    return text.upper()\n",
        },
    )
    result = invoke_cli("init", "--pins", "cal/tool.py", cwd=tmp_path)
    assert result.code == 0, result.output
    text = (tmp_path / "lockstep.toml").read_text()
    assert "Every run ended before it ran (ImportError: attempted relative import" in text
    assert "# [[pins]]" in text and "lockstep record tool" not in text
    assert "pins" not in _config(tmp_path)


LIBRARY = {
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/units/__init__.py": "from units.convert import to_metres\n",
    "src/units/convert.py": """
        FACTORS = {"m": 1.0, "cm": 0.01, "km": 1000.0}


        def to_metres(text):
            value, unit = _split(text)
            return value * FACTORS[unit]


        def _split(text):
            number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
            return float(number), text[len(number):]


        class Length:
            def __init__(self, text):
                self.metres = to_metres(text)

            def plus(self, other):
                return Length(f"{self.metres + other.metres}m")

            @property
            def km(self):
                return self.metres / 1000
        """,
    "src/units/__main__.py": """
        import sys

        from units.convert import to_metres

        print(to_metres(sys.argv[1]) if len(sys.argv) > 1 else "usage: units LENGTH")
        """,
    "tools/refresh_factors.py": """
        from pathlib import Path

        if __name__ == "__main__":
            Path("RAN-refresh_factors").write_text("a maintenance script ran")
        """,
    "tests/test_units.py": """
        from units import to_metres
        from units.convert import Length


        def test_convert():
            assert to_metres("3km") == 3000.0
            assert to_metres("20cm") == 0.2


        def test_length():
            assert Length("1500m").plus(Length("500m")).km == 2.0
        """,
}


def test_init_yes_on_a_library_proposes_its_surface_and_its_commands_work_unedited(
    tmp_path: Path,
) -> None:
    write_files(tmp_path, LIBRARY)
    package_before = snapshot_tree(tmp_path / "src")
    result = run_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    assert "1 package surface(s), 0 ledger(s), 0 corpus, 1 pins" in result.stdout
    commands = [line.strip() for line in result.stdout.splitlines()[-3:]]
    assert commands == [
        "pytest --lockstep-record=units",
        "lockstep record units-2",
        "lockstep replay",
    ]
    config = _config(tmp_path)
    assert config["ledger"] == [{"package": "units"}]
    assert config["pins"][0]["cases"] == "lockstep-cases/units-2.cases.toml"  # type: ignore[index]
    assert snapshot_tree(tmp_path / "src") == package_before  # nothing written in the package
    # a loose script beside the package (a maintenance tool) is listed, never run
    assert not list(tmp_path.rglob("RAN-*"))
    text = (tmp_path / "lockstep.toml").read_text()
    assert "tools/refresh_factors.py" in text and "not run unless chosen" in text
    assert "\n# [[" not in text and "\n# package" not in text  # nothing left commented out

    recorded = run_pytest(commands[0].split()[1], cwd=tmp_path, plugins=("lockstep.pytest.plugin",))
    assert recorded.code == 0, recorded.output
    record = run_cli(*commands[1].split()[1:], cwd=tmp_path)
    assert record.code == 0, record.output
    replay = run_cli("replay", cwd=tmp_path)
    assert replay.code == 0, replay.output
    assert "units.convert.to_metres" in replay.stdout
    # the package under src/ is not installed: its starter run imports it from src/
    pinned = (tmp_path / "lockstep" / "units-2.pins.jsonl").read_text()
    assert "usage: units LENGTH" in pinned and "No module named" not in pinned, pinned
    assert config["pins"][0]["env_keys"] == ["PYTHONPATH"]  # type: ignore[index]

    convert = tmp_path / "src/units/convert.py"
    convert.write_text(convert.read_text().replace('"cm": 0.01', '"cm": 0.1'))
    red = run_cli("replay", cwd=tmp_path)
    assert red.code == 1, red.output


def test_init_ranks_the_surface_by_the_suites_calls_and_names_what_it_never_calls(
    tmp_path: Path,
) -> None:
    files = dict(LIBRARY)
    files["src/units/convert.py"] = textwrap.dedent(files["src/units/convert.py"]) + (
        "\n\ndef to_feet(text):\n    return to_metres(text) / 0.3048\n"
    )
    files["tests/test_more.py"] = """
        from units.convert import to_metres


        def test_many():
            for n in range(5):
                assert to_metres(f"{n}m") == n
        """
    write_files(tmp_path, files)
    package_before = snapshot_tree(tmp_path / "src")
    result = run_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    out = result.stdout
    assert "running the suite once (python -m pytest)" in out
    assert "units: the suite calls 3 of 4 public member(s) from outside the package" in out
    ranked = [line.split() for line in out.splitlines() if line.startswith("  ")][:3]
    # the tests call to_metres 7 times; Length's own calls of it are not recorded rows
    assert ranked[0] == ["7", "convert.to_metres"]
    assert {tuple(r) for r in ranked[1:]} == {
        ("1", "convert.Length.plus"),
        ("1", "convert.Length.km"),
    }
    assert (
        "never called by the suite (1; a ledger records nothing for them): convert.to_feet" in out
    )
    text = (tmp_path / "lockstep.toml").read_text()
    assert "the suite called 3 of 4 of them" in text
    assert "#         7  convert.to_metres" in text
    assert "# Never called by the suite (1)" in text and "#   convert.to_feet" in text
    # the suite's run wrote nothing into the package folder (no bytecode)
    assert snapshot_tree(tmp_path / "src") == package_before
    assert not (tmp_path / ".pytest_cache").exists()


def test_init_no_suite_skips_the_run(tmp_path: Path) -> None:
    files = dict(LIBRARY)
    files["tests/conftest.py"] = "open('RAN-suite', 'w').close()\n"
    write_files(tmp_path, files)
    result = run_cli("init", "--yes", "--no-suite", cwd=tmp_path)
    assert result.code == 0, result.output
    assert "running the suite" not in result.stdout
    assert not (tmp_path / "RAN-suite").exists()
    assert _config(tmp_path)["ledger"] == [{"package": "units"}]
    assert "the suite called" not in (tmp_path / "lockstep.toml").read_text()


# The broken conftest fails at once, but on a loaded machine the interpreter may take longer
# than 2 s to get there, so that case has a limit it can never meet; the sleeping one stops.
@pytest.mark.parametrize(
    ("conftest", "limit", "note"),
    [
        (
            "raise RuntimeError('broken conftest')\n",
            "120",
            "note: the suite could not run (exit 4",
        ),
        (
            "import time\n\ndef pytest_sessionstart(session):\n    time.sleep(60)\n",
            "2",
            "note: the suite did not finish within 2s (stopped): no ranking by calls",
        ),
    ],
)
def test_a_suite_that_cannot_run_is_a_note_and_the_surface_is_still_proposed(
    tmp_path: Path, conftest: str, limit: str, note: str
) -> None:
    files = dict(LIBRARY)
    files["tests/conftest.py"] = conftest
    write_files(tmp_path, files)
    result = run_cli("init", "--yes", "--suite-timeout", limit, cwd=tmp_path)
    assert result.code == 0, result.output
    assert note in result.stdout
    assert _config(tmp_path)["ledger"] == [{"package": "units"}]


def test_an_examples_package_beside_the_library_is_not_proposed(tmp_path: Path) -> None:
    """pyparsing's source tree keeps ``examples/`` as a package beside ``pyparsing/``."""
    files = dict(LIBRARY)
    files["examples/__init__.py"] = ""
    files["examples/roman.py"] = "def to_roman(n):\n    return 'I' * n\n"
    write_files(tmp_path, files)
    result = run_cli("init", "--yes", "--no-suite", cwd=tmp_path)
    assert result.code == 0, result.output
    assert _config(tmp_path)["ledger"] == [{"package": "units"}]
    alone = tmp_path / "alone"
    write_files(
        alone,
        {
            "examples/__init__.py": "def greet(name):\n    return name\n",
            "tests/test_greet.py": "from examples import greet\n\n\ndef test_greet():\n"
            "    assert greet('a') == 'a'\n",
        },
    )
    result = run_cli("init", "--yes", "--no-suite", cwd=alone)
    assert result.code == 0, result.output
    assert _config(alone)["ledger"] == [{"package": "examples"}]  # nothing else to propose


def test_a_suite_whose_options_pytest_rejects_is_a_note_naming_them(tmp_path: Path) -> None:
    """pytest's usage error ends with its ini file and rootdir; the note gives the error."""
    files = dict(LIBRARY)
    files["pytest.ini"] = "[pytest]\naddopts = --cov-no-such-plugin=units\n"
    write_files(tmp_path, files)
    result = run_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    assert "note: the suite could not run (exit 4: " in result.stdout, result.stdout
    assert "unrecognized arguments: --cov-no-such-plugin=units" in result.stdout, result.stdout
    assert _config(tmp_path)["ledger"] == [{"package": "units"}]


def test_failing_tests_still_rank_and_a_surface_the_suite_never_calls_is_left_out(
    tmp_path: Path,
) -> None:
    files = dict(LIBRARY)
    files["tests/test_units.py"] = """
        def test_nothing_of_the_package():
            assert 1 + 1 == 3
        """
    write_files(tmp_path, files)
    result = run_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    assert "note: the suite has failing tests (" in result.stdout
    assert "units: the suite calls 0 of 3 public member(s)" in result.stdout
    config = _config(tmp_path)
    assert "ledger" not in config
    text = (tmp_path / "lockstep.toml").read_text()
    assert "the suite calls none of them from outside the package" in text


def test_the_suite_is_counted_when_it_imports_the_package_from_another_folder(
    tmp_path: Path,
) -> None:
    """A suite that runs against an installed copy (tox, a wheel) still calls the
    package: calls are counted by module name, not only by the project's folder."""
    files = dict(LIBRARY)
    files["pyproject.toml"] = '[tool.pytest.ini_options]\npythonpath = ["build/lib"]\n'
    write_files(tmp_path, files)
    shutil.copytree(tmp_path / "src/units", tmp_path / "build/lib/units")
    result = run_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    assert "units: the suite calls 3 of 3 public member(s)" in result.stdout
    assert _config(tmp_path)["ledger"] == [{"package": "units"}]


def test_every_member_the_suite_calls_is_listed_where_init_says(tmp_path: Path) -> None:
    """``init`` prints the most called members and says the rest are in the file: they are,
    all of them (a surface of dozens, arrow's 96, was cut at 30 there too)."""
    functions = "".join(f"\n\ndef f{i:02d}(x):\n    return x + {i}\n" for i in range(45))
    calls = "".join(f"    assert f{i:02d}(0) == {i}\n" for i in range(45))
    write_files(
        tmp_path,
        {
            "src/many/__init__.py": functions,
            "tests/test_many.py": (
                f"from many import {', '.join(f'f{i:02d}' for i in range(45))}\n\n\n"
                f"def test_all():\n{calls}"
            ),
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        },
    )
    result = run_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    assert "many: the suite calls 45 of 45 public member(s)" in result.stdout
    assert "more (listed in lockstep.toml)" in result.stdout
    text = (tmp_path / "lockstep.toml").read_text()
    for i in range(45):
        assert f"#         1  f{i:02d}\n" in text
    assert "… " not in text


# A library whose suite ships inside the package (``links/test/``), as hyperlink's does,
# and whose class lives in a private module and is re-exported: its tests construct it
# directly, so what its constructor does is what they pin.
INSIDE = {
    "src/links/__init__.py": "from links._url import Link, parse\n\n__all__ = ['Link', 'parse']\n",
    "src/links/_url.py": """
        class Link:
            def __init__(self, path):
                self.path = path.strip("/").split("/") if path else []
                self.rooted = path.startswith("/")

            def child(self, name):
                return Link("/".join(["", *self.path, name]) if self.rooted else name)

            def _text(self):
                return ("/" if self.rooted else "") + "/".join(self.path)


        def parse(text):
            return Link(text)
        """,
    "src/links/test/__init__.py": "",
    "src/links/test/test_links.py": """
        from links import Link, parse


        def test_parse():
            assert parse("/a/b").child("c")._text() == "/a/b/c"


        def test_construct():
            assert Link("/x/").path == ["x"]
            assert Link("").rooted is False
        """,
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
}


def test_a_suite_inside_the_package_is_found_counted_and_records_its_constructor(
    tmp_path: Path,
) -> None:
    write_files(tmp_path, INSIDE)
    result = run_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    out = result.stdout
    assert "no tests folder" not in out
    # the tests inside the package call it as users do
    assert "links: the suite calls 2 of 2 public member(s) from outside the package" in out
    assert _config(tmp_path)["ledger"] == [{"package": "links"}]

    recorded = run_pytest("--lockstep-record", cwd=tmp_path, plugins=("lockstep.pytest.plugin",))
    assert recorded.code == 0, recorded.output
    ledgers = {p.name for p in (tmp_path / "lockstep").iterdir()}
    # the re-exported class's constructor and private method, called by the tests
    assert "links._url.Link.__init__.ledger.jsonl" in ledgers
    assert "links._url.Link._text.ledger.jsonl" in ledgers
    assert run_cli("replay", cwd=tmp_path).code == 0

    url = tmp_path / "src/links/_url.py"
    url.write_text(url.read_text().replace('path.strip("/")', 'path.rstrip("/")'))
    red = run_cli("replay", cwd=tmp_path)
    assert red.code == 1, red.output
    assert "links._url.Link.__init__" in red.stdout


def test_a_suite_of_star_test_modules_in_a_test_folder_is_found(tmp_path: Path) -> None:
    """pytest collects ``*_test.py`` as well as ``test_*.py``: intervaltree's suite is
    ``test/interval_test.py`` and the like."""
    files = {k: v for k, v in LIBRARY.items() if not k.startswith(("tests/", "src/units/__main__"))}
    files["test/units_test.py"] = LIBRARY["tests/test_units.py"]
    write_files(tmp_path, files)
    result = run_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    assert "no tests folder" not in result.stdout, result.stdout
    assert "the suite calls" in result.stdout, result.stdout
    recorded = run_pytest("--lockstep-record", cwd=tmp_path, plugins=("lockstep.pytest.plugin",))
    assert recorded.code == 0, recorded.output
    assert run_cli("replay", cwd=tmp_path).code == 0


_URL = INSIDE["src/links/_url.py"]
_TESTS = INSIDE["src/links/test/test_links.py"]

LAYOUTS = {
    # astral: the package under src/ and its suite in src/test/
    "src-test": {
        "src/links/__init__.py": INSIDE["src/links/__init__.py"],
        "src/links/_url.py": _URL,
        "src/test/test_links.py": _TESTS,
        "pyproject.toml": INSIDE["pyproject.toml"],
    },
    # schema: one module and its test module side by side at the root, no tests folder
    "root-modules": {
        "links.py": _URL,
        "test_links.py": _TESTS,
        "helpers_for_docs.py": "import os\n\ndef unrelated():\n    return os.sep\n",
    },
    # edtf: Django's tests.py modules inside the package, collected through python_files
    "django": {
        "src/links/__init__.py": INSIDE["src/links/__init__.py"],
        "src/links/_url.py": _URL,
        "src/links/tests.py": _TESTS,
        "pyproject.toml": (
            '[tool.pytest.ini_options]\npythonpath = ["src"]\npython_files = ["tests.py"]\n'
        ),
    },
    # parsedatetime: tests/Test*.py, collected through python_files in pytest.ini
    "capitalised": {
        "src/links/__init__.py": INSIDE["src/links/__init__.py"],
        "src/links/_url.py": _URL,
        "tests/TestLinks.py": _TESTS,
        "pytest.ini": "[pytest]\npythonpath = src\npython_files = Test*.py\n",
    },
    # jsonpatch: tests.py beside the one module, collected through python_files in setup.cfg
    "root-tests-py": {
        "links.py": _URL,
        "tests.py": _TESTS,
        "setup.cfg": "[metadata]\nname = links\n\n[tool:pytest]\npython_files = tests.py\n",
    },
    # iso8601: the test module among the package's own modules
    "in-package": {
        "links/__init__.py": INSIDE["src/links/__init__.py"],
        "links/_url.py": _URL,
        "links/test_links.py": _TESTS,
    },
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_suite_laid_out_as_real_libraries_lay_it_out_is_found(
    tmp_path: Path, layout: str
) -> None:
    """init said "no tests folder to record its calls from" and proposed nothing for each
    of these layouts (astral 3.2, schema 0.7.7, edtf 5.0.0, iso8601 2.1.0, parsedatetime
    2.6, jsonpatch 1.33)."""
    write_files(tmp_path, LAYOUTS[layout])
    result = run_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    assert "no tests folder" not in result.stdout, result.stdout
    assert "links: the suite calls 2 of 2 public member(s)" in result.stdout, result.stdout
    assert _config(tmp_path)["ledger"] == [{"package": "links"}]
    recorded = run_pytest("--lockstep-record", cwd=tmp_path, plugins=("lockstep.pytest.plugin",))
    assert recorded.code == 0, recorded.output
    ledgers = [p.name for p in (tmp_path / "lockstep").iterdir()]
    assert any(name.startswith("links.") and ".parse." in name for name in ledgers), ledgers
    assert not any("test_links" in name for name in ledgers), ledgers
    assert run_cli("replay", cwd=tmp_path).code == 0
    source = next(tmp_path.glob("**/_url.py"), None) or tmp_path / "links.py"
    source.write_text(source.read_text().replace('path.strip("/")', 'path.rstrip("/")'))
    assert run_cli("replay", cwd=tmp_path).code == 1


def test_a_src_layout_not_installed_is_ranked_with_src_on_the_path(tmp_path: Path) -> None:
    """humanize's sdist: a src layout whose suite finds the package only once installed.
    Replay and recording put ``src`` on the path themselves; init's run of the suite did
    not, so it failed on the import and ranked nothing."""
    files = dict(LIBRARY)
    files["pyproject.toml"] = '[tool.pytest.ini_options]\naddopts = "--color=yes"\n'
    write_files(tmp_path, files)
    result = run_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    assert "could not run" not in result.stdout, result.stdout
    text = (tmp_path / "lockstep.toml").read_text()
    assert "the suite called" in text and "convert.to_metres" in text, text


def test_a_coloured_suites_failure_is_a_note_without_terminal_codes(tmp_path: Path) -> None:
    files = dict(LIBRARY)
    files["pyproject.toml"] = '[tool.pytest.ini_options]\naddopts = "--color=yes"\n'
    files["tests/test_broken.py"] = "import units_missing_module\n"
    write_files(tmp_path, files)
    result = run_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    assert "note: the suite could not run (exit " in result.stdout, result.stdout
    assert "units_missing_module" in result.stdout, result.stdout
    assert "\x1b" not in result.stdout


def test_members_running_one_wrapper_s_code_are_not_credited_its_calls(tmp_path: Path) -> None:
    """PyPika's ``builder`` decorator keeps no ``__wrapped__``: every method it wraps runs
    the same ``_copy`` code, and init credited each of 102 members with all of their calls
    (51 of them recorded no row).  Such members are counted "?" now."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/qb/__init__.py": textwrap.dedent(
                """
                def builder(func):
                    def _copy(self, *args):
                        return func(self, *args)
                    return _copy


                class Query:
                    @builder
                    def where(self, x):
                        return x

                    @builder
                    def limit(self, n):
                        return n

                    def sql(self):
                        return "SELECT"
                """
            ),
            "tests/test_qb.py": textwrap.dedent(
                """
                from qb import Query


                def test_where():
                    for n in range(3):
                        assert Query().where(n) == n
                    assert Query().sql() == "SELECT"
                """
            ),
        },
    )
    result = run_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    ranked = {tuple(line.split()) for line in result.stdout.splitlines() if line.startswith("  ")}
    assert ("1", "Query.sql") in ranked, result.stdout
    assert ("?", "Query.where") in ranked and ("?", "Query.limit") in ranked, result.stdout
    text = (tmp_path / "lockstep.toml").read_text()
    assert "decorator without functools.wraps" in text, text


def test_init_s_run_of_a_hypothesis_suite_keeps_no_example_and_no_deadline(
    tmp_path: Path,
) -> None:
    """Under init's profiler each example runs many times slower: hyperlink's property
    tests failed their deadline there, Hypothesis saved the failing examples in
    ``.hypothesis/``, and the suite's later runs failed on them."""
    write_files(
        tmp_path,
        {
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/sq/__init__.py": "def square(x):\n    return x * x\n",
            "tests/test_sq.py": textwrap.dedent(
                """
                import time

                from hypothesis import given, settings, strategies as st

                from sq import square


                @settings(max_examples=3)
                @given(st.integers(0, 5))
                def test_square(x):
                    time.sleep(0.25)  # past the default 200 ms deadline
                    assert square(x) == x * x
                """
            ),
        },
    )
    result = run_cli("init", "--yes", cwd=tmp_path)
    assert result.code == 0, result.output
    assert "the suite has failing tests" not in result.stdout, result.stdout
    assert "square" in result.stdout
    assert not (tmp_path / ".hypothesis").exists()
