"""One grammar for every command: the options they all take, one revision syntax, JSON
documents, the pending list, the start-up that loads no command, and the old spellings that
still work with a one-line note."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import click
import msgspec
import pytest

from gates_project import edit, frozen_shop
from helpers import GitRepo, invoke_cli, run_cli
from lockstep import __version__
from lockstep.cli.app import COMMANDS, JOBS_HELP, REPLAY_JOBS_DEFAULT, main
from lockstep.report.documents import PendingDoc, ReplayDoc, StatusDoc

VARIANTS = Path(str(resources.files("lockstep.demo") / "variants"))
WHY = "Banker's rounding is the billing team's rule from now on."


def _command(name: str) -> click.Command:
    command = main.get_command(click.Context(main), name)
    assert command is not None, name
    return command


def _help(*args: str) -> str:
    result = invoke_cli(*args, "--help", cwd=Path.cwd())
    assert result.code == 0, result.output
    return " ".join(result.stdout.split())


# ------------------------------------------------------------------ the root command


def test_bare_lockstep_prints_the_help_and_exits_0(tmp_path: Path) -> None:
    result = run_cli(cwd=tmp_path)
    assert result.code == 0, result.output
    assert result.stdout.startswith("Usage: python -m lockstep [OPTIONS] COMMAND [ARGS]...")
    assert "replay" in result.stdout and "pending" in result.stdout
    assert result.stdout == run_cli("--help", cwd=tmp_path).stdout


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_long_and_short(flag: str, tmp_path: Path) -> None:
    result = run_cli(flag, cwd=tmp_path)
    assert result.code == 0
    assert result.stdout == f"lockstep, version {__version__}\n"


def test_help_imports_no_command_and_nothing_heavy(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "sys.argv = ['lockstep', '--help']\n"
        "from lockstep.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    loaded = set(proc.stderr.split("MODULES ", 1)[1].split())
    heavy = {"hypothesis", "coverage", "jinja2", "rich", "msgspec", "lockstep.config"}
    assert not heavy & loaded
    assert not {c.module for c in COMMANDS.values()} & loaded
    for name in COMMANDS:  # every command is listed with its summary all the same
        assert f"  {name} " in proc.stdout


def test_every_command_is_listed_with_its_own_summary() -> None:
    for name, entry in COMMANDS.items():
        command = _command(name)
        stand_in = click.Command(name, help=entry.summary)
        for limit in (45, 70, 1000):
            assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), name


# ------------------------------------------------------------------ options every command takes


def test_every_command_takes_quiet_verbose_and_no_color() -> None:
    for name in COMMANDS:
        opts = {opt for p in _command(name).params for opt in getattr(p, "opts", ())}
        assert {"-q", "--quiet", "-v", "--verbose", "--no-color"} <= opts, name


def test_every_jobs_option_says_the_same_and_shows_its_true_default() -> None:
    for name in COMMANDS:
        for param in _command(name).params:
            if "--jobs" in getattr(param, "opts", ()):
                assert isinstance(param, click.Option)
                assert param.help == JOBS_HELP, name
    for name in ("replay", "report", "review", "step"):  # the commands that replay oracles
        [jobs] = [p for p in _command(name).params if "--jobs" in getattr(p, "opts", ())]
        assert isinstance(jobs, click.Option)
        assert jobs.show_default == REPLAY_JOBS_DEFAULT and jobs.default is None, name
    strength = _help("strength")
    assert "(0 = one per core). [default: (one per core)]" in strength
    assert "[default: 1]" not in strength.split("--shard")[0].split("--jobs")[1]


def test_a_time_limit_is_not_called_a_budget() -> None:
    for name in ("mine", "report", "strength"):
        text = _help(name)
        assert "--time-limit DURATION" in text, name
        assert "--budget" not in text, name  # the old spelling works, hidden
    assert "changed lines" in _help("budget")


def test_the_old_time_limit_spelling_still_works_with_a_note(tmp_path: Path) -> None:
    # Both spellings reach the same parser: a bad duration names the new option either way.
    for flag in ("--time-limit", "--budget"):
        result = run_cli("strength", flag, "soon", cwd=tmp_path)
        assert result.code == 2, result.output
        assert "--time-limit" in result.stderr
    old = run_cli("strength", "--budget", "soon", cwd=tmp_path)
    assert "--budget DURATION is deprecated; use --time-limit DURATION" in old.stderr


# ------------------------------------------------------------------ a demo project


def _demo(root: Path) -> GitRepo:
    from lockstep.demo.runner import prepare

    prepare(root)
    repo = GitRepo(root)
    result = invoke_cli("record", "transform", "parse_amount", cwd=root)
    assert result.code == 0, result.output
    repo.commit("Freeze the transformer and parse_amount")
    return repo


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _demo(tmp_path_factory.mktemp("demo") / "project").root


@pytest.fixture
def demo(demo_template: Path, tmp_path: Path) -> GitRepo:
    root = tmp_path / "project"
    shutil.copytree(demo_template, root, symlinks=True)
    return GitRepo(root)


def _red(repo: GitRepo) -> None:
    shutil.copyfile(VARIANTS / "rows_tidy_rounding.py", repo.root / "transform/rows.py")
    repo.commit("Refactor transform/rows.py")


def test_no_color_and_NO_COLOR_turn_styles_off_on_a_terminal(demo: GitRepo) -> None:
    colour = {"NO_COLOR": "", "FORCE_COLOR": "1"}
    styled = run_cli("status", cwd=demo.root, env=colour)
    assert styled.code == 0 and "\x1b[" in styled.stdout
    flag = run_cli("status", "--no-color", cwd=demo.root, env=colour)
    env = run_cli("status", cwd=demo.root, env={"NO_COLOR": "1", "FORCE_COLOR": "1"})
    for plain in (flag, env):
        assert plain.code == 0 and "\x1b[" not in plain.stdout
        assert "transform" in plain.stdout


def test_verbose_ends_with_the_configuration_and_time(demo: GitRepo) -> None:
    result = invoke_cli("status", "-v", cwd=demo.root)
    assert result.code == 0, result.output
    assert "lockstep: configuration " in result.stderr and "lockstep.toml" in result.stderr


def test_status_json_is_a_documented_document(demo: GitRepo) -> None:
    result = invoke_cli("status", "--json", cwd=demo.root)
    assert result.code == 0, result.output
    doc = msgspec.json.decode(result.stdout, type=StatusDoc)
    assert (doc.schema, doc.command, doc.config) == (1, "status", "lockstep.toml")
    transform = next(o for o in doc.oracles if o.name == "transform")
    assert (transform.kind, transform.present, transform.readable) == ("corpus", True, True)
    assert transform.cases > 0 and transform.pending == 0
    assert transform.path == "lockstep/transform.lock.json"
    assert list(json.loads(result.stdout)) == ["schema", "command", "config", "oracles"]


def test_replay_json_green_red_and_verbose(demo: GitRepo) -> None:
    green = invoke_cli("replay", "transform", "--json", cwd=demo.root)
    assert green.code == 0, green.output
    doc = msgspec.json.decode(green.stdout, type=ReplayDoc)
    assert (doc.schema, doc.command, doc.verdict, doc.green, doc.cases) == (
        1,
        "replay",
        "green",
        True,
        [],
    )
    [oracle] = doc.oracles
    assert oracle.name == "transform" and oracle.counts["drift"] == 0 and oracle.counts["pass"]
    everything = msgspec.json.decode(
        invoke_cli("replay", "transform", "--json", "-v", cwd=demo.root).stdout, type=ReplayDoc
    )
    assert len(everything.cases) == oracle.counts["pass"]
    assert {c.status for c in everything.cases} == {"pass"}

    _red(demo)
    red = invoke_cli("replay", "transform", "--json", cwd=demo.root)
    assert red.code == 1, red.output
    doc = msgspec.json.decode(red.stdout, type=ReplayDoc)
    assert (doc.verdict, doc.green) == ("DRIFT", False)
    [case] = doc.cases
    assert (case.oracle, case.case, case.status) == ("transform", "half_cent.json", "drift")
    assert case.drifts and case.drifts[0].diff


def test_replay_quiet_prints_one_line_per_failing_case(demo: GitRepo) -> None:
    _red(demo)
    result = invoke_cli("replay", "transform", "-q", cwd=demo.root)
    assert result.code == 1
    assert result.stdout.splitlines()[0].startswith("DRIFT")
    assert "half_cent.json" in result.stdout.splitlines()[0]
    assert "@@" not in result.stdout


def test_pending_lists_the_kept_drifts_per_oracle(demo: GitRepo) -> None:
    nothing = invoke_cli("pending", cwd=demo.root)
    assert nothing.code == 0
    assert nothing.stdout.startswith("nothing pending")
    _red(demo)
    invoke_cli("replay", "transform", "--keep-pending", cwd=demo.root)
    listed = invoke_cli("pending", cwd=demo.root)
    assert listed.code == 0, listed.output
    assert listed.stdout.splitlines()[:2] == [
        "transform: 1 pending drift(s) in lockstep/.pending/transform.jsonl",
        "  half_cent.json  output",
    ]
    doc = msgspec.json.decode(
        invoke_cli("pending", "--json", cwd=demo.root).stdout, type=PendingDoc
    )
    assert (doc.schema, doc.command, doc.total) == (1, "pending", 1)
    assert doc.oracles[0].name == "transform"
    assert doc.oracles[0].cases[0].case == "half_cent.json"
    status = msgspec.json.decode(
        invoke_cli("status", "--json", cwd=demo.root).stdout, type=StatusDoc
    )
    assert next(o for o in status.oracles if o.name == "transform").pending == 1


def test_reject_needs_no_why_and_accept_still_does(demo: GitRepo) -> None:
    _red(demo)
    invoke_cli("replay", "transform", "--keep-pending", cwd=demo.root)
    unexplained = invoke_cli("accept", "transform", "--case", "half_cent.json", cwd=demo.root)
    assert unexplained.code == 2
    assert "--why is required to accept" in unexplained.stderr
    rejected = invoke_cli(
        "accept", "transform", "--case", "half_cent.json", "--reject", cwd=demo.root
    )
    assert rejected.code == 0, rejected.output
    assert "rejected transform::half_cent.json" in rejected.stdout
    assert invoke_cli("pending", cwd=demo.root).stdout.startswith("nothing pending")


def test_an_interactive_review_asks_why_only_when_it_accepts(demo: GitRepo) -> None:
    _red(demo)
    invoke_cli("replay", "transform", "--keep-pending", cwd=demo.root)
    rejected = invoke_cli("accept", cwd=demo.root, input=b"r\n")
    assert rejected.code == 0, rejected.output
    assert "0 accepted, 1 rejected" in rejected.stdout
    invoke_cli("replay", "transform", "--keep-pending", cwd=demo.root)
    accepted = invoke_cli("accept", cwd=demo.root, input=f"a\n{WHY}\n".encode())
    assert accepted.code == 0, accepted.output
    assert "accepted transform::half_cent.json" in accepted.stdout
    history = (demo.root / "lockstep/transform.history.jsonl").read_text()
    assert WHY in history


# ------------------------------------------------------------------ one revision syntax


def test_every_revision_takes_one_syntax() -> None:
    for args, metavar in (
        (("review",), "[RANGE]"),
        (("guard",), "[RANGE]"),
        (("budget",), "[RANGE]"),
    ):
        assert f"lockstep {args[0]} [OPTIONS] {metavar}" in _help(*args)
    assert "--review RANGE" in _help("report")
    assert "--against REV" in _help("replay")


def test_a_range_where_one_revision_is_asked_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("replay", "--against", "main..HEAD", cwd=tmp_path)
    assert result.code == 2
    assert "'main..HEAD' is a range; name one revision (REV)" in result.stderr
    empty_base = run_cli("guard", "..HEAD", cwd=tmp_path)
    assert empty_base.code == 2 and "name the base, as in BASE..HEAD" in empty_base.stderr


def test_guard_takes_a_range_and_its_old_base_option(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    base = repo.git("rev-parse", "HEAD")
    edit(repo, "shop/prices.py", "subtotal = subtotal + ", "subtotal += ")
    repo.commit("tidy the loop")
    new = invoke_cli("guard", f"{base}..HEAD", cwd=repo.root)
    short = invoke_cli("guard", base, cwd=repo.root)
    old = invoke_cli("guard", "--base", base, cwd=repo.root)
    assert new.code == short.code == old.code == 0, new.output
    assert old.stdout == short.stdout
    assert "guard --base REV is deprecated; use guard REV" in old.stderr
    assert new.stderr == short.stderr == ""


def test_budget_takes_a_range_a_target_option_and_its_old_spellings(git_repo: GitRepo) -> None:
    repo = frozen_shop(git_repo)
    edit(repo, "shop/prices.py", "subtotal = subtotal + ", "subtotal += ")
    repo.commit("tidy the loop")
    ranged = invoke_cli("budget", "HEAD~1..HEAD", cwd=repo.root)
    assert ranged.code == 0, ranged.output
    assert "HEAD~1..HEAD" in ranged.stdout
    target = invoke_cli("budget", "--target", "shop/prices.py", cwd=repo.root)
    positional = invoke_cli("budget", "shop/prices.py", cwd=repo.root)
    assert target.code == positional.code == 0, positional.output
    assert target.stdout == positional.stdout
    assert "budget MODULE is deprecated; use budget --target MODULE" in positional.stderr
    old_base = invoke_cli("budget", "--base", "HEAD~1", cwd=repo.root)
    assert old_base.code == 0, old_base.output
    assert "budget --base REV is deprecated" in old_base.stderr
    quiet = invoke_cli("budget", "shop/prices.py", "-q", cwd=repo.root)
    assert quiet.stderr == ""  # -q leaves the deprecation note out
