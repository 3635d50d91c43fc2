"""Diffs stay readable and cheap on long outputs: a pins drift where every other line of a
long output changed is explained line by line, and the text of ordinary diffs is
``difflib.unified_diff``'s."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from helpers import GitRepo, run_cli, write_files
from lockstep import diff

TEXTS = st.builds(
    lambda lines, end: "\n".join(lines) + end,
    st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g"]), max_size=30),
    st.sampled_from(["", "\n"]),
)


def _apply(a: list[str], text: str) -> list[str]:
    """The lines of ``b`` rebuilt from ``a`` and a unified diff of them."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    pos = 0
    i = 2  # past the --- and +++ headers
    while i < len(lines):
        hunk = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", lines[i])
        assert hunk, lines[i]
        start = int(hunk.group(1)) - (0 if hunk.group(2) == "0" else 1)
        out.extend(a[pos:start])
        pos = start
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            line = lines[i]
            if i + 1 < len(lines) and lines[i + 1] == "\\ No newline at end of file\n":
                line = line[:-1]
                i += 1
            sign, body = line[0], line[1:]
            if sign in " -":
                assert a[pos] == body
                pos += 1
            if sign in " +":
                out.append(body)
            i += 1
    out.extend(a[pos:])
    return out


@given(TEXTS, TEXTS)
def test_ordinary_diffs_are_difflibs_text(old: str, new: str) -> None:
    got = diff.unified(old, new, label_expected="old", label_actual="new")
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    want = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in difflib.unified_diff(a, b, fromfile="old", tofile="new", n=3)
    )
    assert got == want


@given(TEXTS, TEXTS)
def test_the_anchored_diff_rebuilds_the_new_text(old: str, new: str) -> None:
    with (
        mock.patch.object(diff, "MAX_QUADRATIC", 0),
        mock.patch.object(diff, "MAX_DIFF_LINES", 10**9),
    ):
        text = diff.unified(old, new)
    assert (old == new) == (text == "")
    if text:
        assert "".join(_apply(old.splitlines(keepends=True), text)) == new


def test_interleaved_changes_are_matched_line_by_line() -> None:
    n = 3000  # 9,000,000 line pairs: above what difflib is given to match
    old = "".join(f"keep {i}\nvalue {i}\n" for i in range(n))
    new = "".join(f"keep {i}\nvalue {i}!\n" for i in range(n))
    with mock.patch.object(diff, "MAX_DIFF_LINES", 10**9):
        text = diff.unified(old, new)
    lines = text.splitlines()
    assert sum(line.startswith("-value") for line in lines) == n
    assert sum(line.startswith("+value") for line in lines) == n
    assert not any(line.startswith(("-keep", "+keep")) for line in lines)
    assert "".join(_apply(old.splitlines(keepends=True), text)) == new


def test_a_long_interleaved_pins_drift_is_reported(git_repo: GitRepo, tmp_path: Path) -> None:
    program = "import os\nshift = int(os.environ.get('SHIFT', '0'))\n" + (
        "for i in range(20000):\n    print(f'row {i}')\n    print(f'total {i}' + '!' * shift)\n"
    )
    git_repo.commit(
        "a long report",
        {
            "lockstep.toml": (
                '[[pins]]\nname = "long"\ncommand = ["python", "long.py"]\n'
                'cases = "cases.toml"\nenv_keys = ["SHIFT"]\n'
            ),
            "long.py": program,
            "cases.toml": '[[case]]\nid = "all"\n',
        },
    )
    assert run_cli("record", "long", cwd=git_repo.root).code == 0
    write_files(git_repo.root, {"long.py": program.replace("'!' * shift", "'?'")})
    result = run_cli("replay", "long", cwd=git_repo.root)
    assert result.code == 1, result.output
    assert "-total 0\n" in result.output and "+total 0?\n" in result.output
    assert "-row" not in result.output and "+row" not in result.output
    assert "more diff lines not shown" in result.output
