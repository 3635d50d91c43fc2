"""A call that ends in ``SystemExit`` (argparse's usage error, docopt's ``DocoptExit``, a
``sys.exit(2)``) is recorded as what it raised: docopt's suite ended 51 of its 231
``docopt()`` calls so, none was recorded, and the summary said "no call skipped"."""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, red_after_change, rows_of, run_cli, write_files

TOOL = """
import argparse
import sys


class UsageExit(SystemExit):
    pass


def main(argv):
    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("--count", type=int, required=True)
    args = parser.parse_args(argv)
    if args.count < 0:
        raise UsageExit("count must be positive")
    return args.count * 2


def quit_now(code):
    sys.exit(code)
"""

TESTS = """
import pytest

from tool import main, quit_now


def test_main(capsys):
    assert main(["--count", "3"]) == 6
    with pytest.raises(SystemExit):
        main(["--count", "x"])
    with pytest.raises(SystemExit) as info:
        main(["--count", "-1"])
    assert "positive" in str(info.value)
    with pytest.raises(SystemExit):
        quit_now(3)
"""


def test_exits_are_recorded_replayed_and_compared(tmp_path: Path) -> None:
    root = tmp_path / "tool"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "tool"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/tool/__init__.py": TOOL,
            "tests/test_tool.py": TESTS,
        },
    )
    run = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert run.code == 0, run.output
    rows = rows_of(root / "lockstep/tool.main.ledger.jsonl")
    raised = sorted((r.exc_type, r.exc_stem) for r in rows if not r.ok)
    assert raised == [("SystemExit", "2"), ("tool.UsageExit", "count must be positive")]
    assert [
        (r.exc_type, r.exc_stem) for r in rows_of(root / "lockstep/tool.quit_now.ledger.jsonl")
    ] == [("SystemExit", "3")]
    assert run_cli("replay", cwd=root).code == 0
    red = red_after_change(root, "src/tool/__init__.py", "must be positive", "must be > 0")
    assert "got raised tool.UsageExit: count must be > 0" in red.stdout, red.stdout
    red = red_after_change(root, "src/tool/__init__.py", "sys.exit(code)", "sys.exit(code + 1)")
    assert "got raised SystemExit: 4" in red.stdout, red.stdout


def test_a_call_reading_the_command_line_replays_alike_under_any_of_lockstep_s(
    tmp_path: Path,
) -> None:
    """vobject's ``ics_diff.getOptions()`` parses ``sys.argv``: a test set it to a bad
    option and expected the usage error.  Verified under the verifying interpreter's
    command line, the row replayed under ``lockstep replay``'s own: red on unchanged code,
    green or red by replay's options.  Every row now replays under one ``sys.argv``."""
    root = tmp_path / "cli"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "cli"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/cli/__init__.py": (
                "import argparse\n\n\ndef main():\n"
                "    parser = argparse.ArgumentParser(prog='cli')\n"
                "    parser.add_argument('file')\n"
                "    return parser.parse_args().file\n"
            ),
            "tests/test_cli.py": (
                "import sys\n\nimport pytest\n\nimport cli\n\n\n"
                "def test_bad_option(monkeypatch):\n"
                "    monkeypatch.setattr(sys, 'argv', ['cli', '--bogus'])\n"
                "    with pytest.raises(SystemExit):\n"
                "        cli.main()\n"
            ),
        },
    )
    assert pytest_in(root, "--lockstep-record", "-q", "tests").code == 0
    for options in ([], ["-q"], ["cli.main", "-j", "1"]):
        replay = run_cli("replay", *options, cwd=root)
        assert replay.code == 0, (options, replay.output)
