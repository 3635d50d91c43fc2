"""Configuration: found by walking up, typed, closed, and errors that name the file and key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import invoke_cli, write_files
from lockstep.config import load_project
from lockstep.errors import ConfigError

CORPUS = """
[[corpus]]
name = "rows"
fixtures = "fixtures/*.json"
render = "harness:render"
"""


def test_found_by_walking_up_and_paths_resolve_against_the_root(tmp_path: Path) -> None:
    write_files(tmp_path, {"lockstep.toml": CORPUS, "deep/er/x.txt": ""})
    project = load_project(tmp_path / "deep" / "er")
    assert project.root == tmp_path.resolve()
    assert project.oracle_dir == tmp_path.resolve() / "lockstep"
    assert [s.name for s in project.oracles()] == ["rows"]


def test_pyproject_tool_table(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "pyproject.toml": """
            [project]
            name = "legacy"
            [tool.lockstep]
            dir = "frozen"
            [[tool.lockstep.corpus]]
            name = "rows"
            fixtures = "f/*.json"
            render = "h:r"
            """
        },
    )
    project = load_project(tmp_path)
    assert project.oracle_dir.name == "frozen"
    assert project.config.corpus[0].render == "h:r"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (CORPUS + 'fixture = "x"\n', "lockstep.toml: corpus[0].fixture: unknown key"),
        ('[lockstep]\ndirectory = "x"\n', "lockstep.toml: lockstep.directory: unknown key"),
        (
            '[[corpus]]\nname = "rows"\nrender = "h:r"\n',
            "corpus[0].fixtures: required key is missing",
        ),
        (
            '[lockstep]\nstem_length = "long"\n',
            "lockstep.toml: lockstep.stem_length: Expected `int`",
        ),
        (
            '[[rule]]\nname = "r"\npattern = "(unclosed"\nreplace = ""\n',
            "rule[0].pattern: does not compile",
        ),
        (CORPUS + CORPUS, "corpus[1].name: oracle name 'rows' is already used by corpus[0]"),
        ("[lockstep\n", "lockstep.toml: not valid TOML"),
        (
            '[[pins]]\nname = "p"\ncommand = ["x"]\ncases = "c.toml"\nruns = 1\n',
            "pins[0].runs: must be at least 2",
        ),
        (
            '[[corpus]]\nname = "a b"\nfixtures = "f"\nrender = "h:r"\n',
            "is not a valid oracle name",
        ),
    ],
)
def test_bad_config_names_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    write_files(tmp_path, {"lockstep.toml": text})
    with pytest.raises(ConfigError) as info:
        load_project(tmp_path)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_pyproject_errors_name_the_tool_table(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": "[tool.lockstep]\nbogus = 1\n"})
    with pytest.raises(ConfigError, match=r"pyproject.toml: tool\.lockstep\.bogus: unknown key"):
        load_project(tmp_path)


def test_no_config_anywhere_is_a_clear_usage_error(tmp_path: Path) -> None:
    result = invoke_cli("status", cwd=tmp_path)
    assert result.code == 2
    assert "no lockstep.toml" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_unknown_key_through_the_cli_is_exit_2_with_one_line(tmp_path: Path) -> None:
    write_files(tmp_path, {"lockstep.toml": CORPUS + "colour = 1\n"})
    result = invoke_cli("replay", cwd=tmp_path)
    assert result.code == 2
    assert result.stderr.strip() == "lockstep: error: lockstep.toml: corpus[0].colour: unknown key"


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("[lockstep]\nstem_length = 100001\n", "lockstep.stem_length"),
        ("[lockstep]\njobs = -1\n", "lockstep.jobs"),
        (
            '[[ledger]]\nname = "a"\ntarget = "m:f"\nfloat_tolerance = nan\n',
            "ledger[0].float_tolerance",
        ),
        (
            '[[ledger]]\nname = "a"\ntarget = "m:f"\nfloat_tolerance = -1.0\n',
            "ledger[0].float_tolerance",
        ),
        ("[gates]\nbudget = [[3, -1]]\n", "gates.budget[0]"),
        ("[gates]\nbudget = [[3]]\n", "gates.budget[0]"),
        ("[gates]\nseam_limit = -2\n", "gates.seam_limit"),
    ],
)
def test_numbers_out_of_range_name_their_key(tmp_path: Path, toml: str, key: str) -> None:
    (tmp_path / "lockstep.toml").write_text(toml)
    with pytest.raises(ConfigError, match=re.escape(f"lockstep.toml: {key}: ")):
        load_project(tmp_path)
