"""What replay prints in a terminal and in a pipe: -q, intra-line highlights, folded long
diffs, progress bars only on a terminal, and every --jobs help stating its default."""

from __future__ import annotations

import io
from pathlib import Path

import click
import pytest
from rich.console import Console

import lockstep.cli.progress as progress_module
from helpers import invoke_cli, write_files
from lockstep.cli import main
from lockstep.cli.progress import progress
from lockstep.model import Drift, Outcome, Status
from lockstep.report.terminal import FOLD_HINT, outcome_text
from report_projects import hostile_red_project

STAMPED = """
[[corpus]]
name = "stamped"
fixtures = "fixtures/*.json"
render = "legacy:render"
rules = ["iso-timestamp"]
"""


def _stamped_project(root: Path) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": STAMPED,
            "legacy.py": (
                "import json\n"
                "def render(path):\n"
                "    doc = json.loads(path.read_text())\n"
                "    return f\"at 2024-01-02T03:04:05Z total {doc['total']}\\n\"\n"
            ),
            "fixtures/a.json": '{"total": "0.13"}',
            "fixtures/b.json": '{"total": "1.00"}',
        },
    )
    assert invoke_cli("record", cwd=root).code == 0
    legacy = root / "legacy.py"
    legacy.write_text(legacy.read_text().replace("{doc['total']}", "{doc['total']}!"))
    return root


def test_quiet_replay_lists_only_the_failing_ids_and_the_summary(tmp_path: Path) -> None:
    root = _stamped_project(tmp_path / "p")
    quiet = invoke_cli("replay", "-q", cwd=root)
    assert quiet.code == 1
    assert quiet.stdout.splitlines() == [
        "DRIFT stamped::a.json",
        "DRIFT stamped::b.json",
        "DRIFT: 2 cases: 0 passed, 2 drifted",
    ]
    loud = invoke_cli("replay", cwd=root)
    assert "rules fired in stamped: iso-timestamp×2" in loud.stdout


def _drift(lines: int = 3) -> Outcome:
    body = "".join(f" line {i}\n" for i in range(lines))
    diff = f"--- out (recorded)\n+++ out (now)\n@@ -1,{lines} +1,{lines} @@\n-total 0.13\n+total 0.12\n{body}"
    return Outcome("rows", "half_cent.json", Status.DRIFT, (Drift("output", "a", "b", diff),))


def test_changed_characters_are_highlighted_within_the_line() -> None:
    text = outcome_text(_drift())
    plain = text.plain
    highlighted = [
        plain[span.start : span.end] for span in text.spans if "reverse" in str(span.style)
    ]
    assert highlighted == ["3", "2"]
    console = Console(file=io.StringIO(), force_terminal=True, color_system="standard", width=120)
    console.print(text, end="")
    coloured = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b[7;31m3" in coloured or "\x1b[31;7m3" in coloured


def test_a_diff_longer_than_the_screen_is_folded_with_a_count() -> None:
    outcome = _drift(lines=60)
    full = outcome_text(outcome).plain
    folded = outcome_text(outcome, max_diff_lines=10).plain
    total = len(outcome.drifts[0].diff.splitlines())
    assert f"    … {total - 10} more lines ({FOLD_HINT})\n" in folded
    assert " line 59" in full and " line 59" not in folded


def test_in_a_pipe_the_whole_diff_is_printed_and_no_bar_is_drawn(tmp_path: Path) -> None:
    root = hostile_red_project(tmp_path / "p")
    result = invoke_cli("replay", cwd=root)
    assert result.code == 1
    assert "more lines (--full-diff" not in result.stdout
    assert "\x1b[" not in result.stdout and "replay ledger_lines" not in result.stdout


def test_progress_draws_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    pipe = Console(file=io.StringIO(), width=80)
    with progress(pipe, "replay rows", total=3) as tick:
        for _ in range(3):
            tick()
    assert pipe.file.getvalue() == ""  # type: ignore[attr-defined]
    terminal = Console(file=io.StringIO(), force_terminal=True, width=80)
    with progress(terminal, "replay rows", total=3) as tick:
        for _ in range(3):
            tick()
    assert "replay rows" in terminal.file.getvalue()  # type: ignore[attr-defined]


def test_every_jobs_option_shows_its_default() -> None:
    ctx = click.Context(main)
    seen = []
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        assert command is not None
        for param in command.params:
            if "--jobs" in getattr(param, "opts", ()):
                seen.append(name)
                assert isinstance(param, click.Option) and param.show_default, name
                help_text = command.get_help(click.Context(command, info_name=name))
                assert "[default:" in help_text.replace("\n", " "), name
    assert {"replay", "probe", "report", "review", "step"} <= set(seen)


def test_two_long_one_line_sides_show_where_they_first_differ() -> None:
    """furl's objects print as one 900-character line each, differing in ``_port=9000``
    against ``_port='9000'`` near the end: without colour nothing pointed at it."""
    head = "furl(_path=Path(segments=['lol'], strict=False), " * 12
    expected = head + "_host='yep.biz', _port=99, _scheme='sup')"
    actual = head + "_host='yep.biz', _port='99', _scheme='sup')"
    outcome = Outcome("furl.set", "abc", Status.DRIFT, drifts=[Drift("result", expected, actual)])
    text = outcome_text(outcome).plain
    at = len(head) + len("_host='yep.biz', _port=") + 1
    assert f"first difference at character {at}:" in text
    assert "expected …" in text and "_port=99, _scheme='sup')\n" in text
    assert "_port='99', _scheme='sup')\n" in text
    short = Outcome("f", "x", Status.DRIFT, drifts=[Drift("result", "1", "2")])
    assert "first difference" not in outcome_text(short).plain
    parted = Outcome("f", "x", Status.DRIFT, drifts=[Drift("result", "no " + head, head)])
    assert "first difference" not in outcome_text(parted).plain  # they part at the start


def test_replay_prints_the_replayed_codes_warnings_only_with_verbose(tmp_path: Path) -> None:
    """furl's and packaging's warnings filled a green replay's stderr, each shown as raised
    at lockstep's own line that called the target."""
    from helpers import pytest_in, run_cli

    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\nname = "halve"\ntarget = "calc:halve"\n',
            "calc.py": (
                "import warnings\n\n\ndef halve(n):\n"
                "    warnings.warn('halving is lossy', UserWarning)\n    return n // 2\n"
            ),
            "tests/test_calc.py": "from calc import halve\n\n\ndef test_x():\n    assert halve(4) == 2\n",
        },
    )
    assert pytest_in(tmp_path, "--lockstep-record", "-q", "tests").code == 0
    quiet = run_cli("replay", cwd=tmp_path)
    assert quiet.code == 0 and "halving is lossy" not in quiet.stderr, quiet.stderr
    loud = run_cli("replay", "-v", cwd=tmp_path)
    assert loud.code == 0 and "halving is lossy" in loud.stderr, loud.stderr


def test_a_drift_side_is_shown_around_its_first_difference_not_whole() -> None:
    """arrow's zones print their whole transition tables: nine drifts made 88 KB of lines
    up to 20,030 characters; a terminal line shows 2,000 of each side, around where they
    part."""
    table = "".join(f"({i}, 3600), " for i in range(1500))
    expected = f"tzfile(transitions=[{table}], name='America/Chicago', fold=0)"
    actual = f"tzfile(transitions=[{table}], name='America/Chicago', fold=1)"
    outcome = Outcome(
        "arrow.Arrow.__le__", "x", Status.DRIFT, drifts=[Drift("result", expected, actual)]
    )
    lines = outcome_text(outcome).plain.splitlines()
    sides = [line for line in lines if "expected …" in line or "got …" in line]
    assert len(sides) == 4, lines  # the two sides, then the two stretches where they part
    assert all(len(line) < 2_100 for line in lines), max(len(line) for line in lines)
    assert "fold=0)" in sides[0] and "fold=1)" in sides[1]
