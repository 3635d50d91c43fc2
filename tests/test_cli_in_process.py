"""``invoke_cli``, the in-process twin of ``run_cli``: the same outcome, and nothing of the
project left behind for the next call to see."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from helpers import invoke_cli, run_cli, write_files

FILES: dict[str, str | bytes] = {
    "lockstep.toml": '[[corpus]]\nname = "docs"\nfixtures = "f/*.txt"\nrender = "inproc_mod:render"\n',
    "inproc_mod.py": 'MODE = "v1"\n\ndef render(path):\n    return path.stem + " " + MODE + "\\n"\n',
    "f/a.txt": "",
    "f/b.txt": "",
}


def steps(root: Path, run: object) -> list[tuple[int, str, str]]:
    """The same session of commands, each result as (code, stdout, stderr)."""
    out = []
    for args, edit in [
        (("replay",), None),  # before record: exit 1, the oracle named as not recorded
        (("record", "docs"), None),
        (("record", "docs"), None),  # refuses to overwrite: exit 2
        (("replay", "--shard", "4/3"), None),  # click usage error
        (("status",), None),
        (("replay",), ('MODE = "v1"', 'MODE = "v2"')),  # same size, same second: drift
        (("diff", "docs", "a.txt"), None),
    ]:
        if edit:
            path = root / "inproc_mod.py"
            path.write_text(path.read_text().replace(*edit))
        result = run(*args, cwd=root)  # type: ignore[operator]
        out.append((result.code, result.stdout, result.stderr))
    return out


def test_in_process_and_subprocess_agree_byte_for_byte(tmp_path: Path) -> None:
    write_files(tmp_path / "sub", FILES)
    write_files(tmp_path / "inp", FILES)
    by_process = steps(tmp_path / "sub", run_cli)
    in_process = steps(tmp_path / "inp", invoke_cli)
    assert [code for code, _, _ in in_process] == [1, 0, 2, 2, 0, 1, 1]
    assert in_process == by_process
    assert "+b v2" in in_process[5][1]


def test_nothing_of_the_project_stays_behind(tmp_path: Path) -> None:
    write_files(tmp_path, FILES)
    path, environ = list(sys.path), dict(os.environ)
    result = invoke_cli("record", "docs", cwd=tmp_path, env={"LOCKSTEP_TEST_ONLY": "1"})
    assert result.code == 0, result.output
    assert "inproc_mod" not in sys.modules
    assert sys.path == path
    assert dict(os.environ) == environ
    assert Path.cwd() != tmp_path
    assert not list(tmp_path.rglob("__pycache__"))


def test_a_project_module_this_process_already_imported_is_refused(tmp_path: Path) -> None:
    write_files(tmp_path, {**FILES, "helpers.py": ""})  # the tests' own helpers module
    with pytest.raises(
        AssertionError, match=r"project's helpers \(.*tests/helpers.py\) is already imported"
    ):
        invoke_cli("status", cwd=tmp_path)
