"""``pytest --lockstep`` reads each pin at the byte offset it indexed: when the pins file is
replaced or rewritten while the run goes on, a case never gets another case's verdict."""

from __future__ import annotations

import pytest

from helpers import GitRepo, pytest_in, run_cli

# Both cases run the same command, so a's pin is not stale for b: only the id tells them apart.
# The first case to run swaps the pins file (once) for what the test prepared in swap.jsonl.
PROG = """
import os, sys
swap = "swap.jsonl"
if os.path.exists(swap):
    target = os.path.join("lockstep", "prog.pins.jsonl")
    if os.path.exists("in-place"):
        before = os.stat(target)
        with open(swap, "rb") as fh, open(target, "r+b") as out:
            out.write(fh.read())
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        os.unlink(swap)
    else:
        os.replace(swap, target)
print("new")
"""

CONFIG = """
[[pins]]
name = "prog"
command = ["python", "prog.py"]
cases = "cases/prog.toml"
"""

CASES = '[[case]]\nid = "a"\n\n[[case]]\nid = "b"\n'


@pytest.mark.parametrize("how", ["replaced", "in-place"])
def test_a_pin_read_by_offset_from_a_changed_file_is_refused(git_repo: GitRepo, how: str) -> None:
    root = git_repo.root
    git_repo.commit("pins", {"lockstep.toml": CONFIG, "prog.py": PROG, "cases/prog.toml": CASES})
    assert run_cli("record", cwd=root).code == 0
    pins = root / "lockstep" / "prog.pins.jsonl"
    header, a_line, b_line = pins.read_bytes().splitlines(keepends=True)
    assert b'"id":"a"' in a_line and b'"id":"b"' in b_line
    # b was pinned printing "old": it drifts now.
    pins.write_bytes(header + a_line + b_line.replace(b'"stdout":"new\\n"', b'"stdout":"old\\n"'))
    git_repo.commit("b drifts")
    # The swapped file holds a's pin exactly where b's was (behind a same-size pin "c").
    filler = a_line.replace(b'"id":"a"', b'"id":"c"')
    (root / "swap.jsonl").write_bytes(header + filler + a_line)
    assert len(filler) == len(a_line) == len(b_line)
    if how == "in-place":
        (root / "in-place").write_text("")

    result = pytest_in(root, "--lockstep", "-v")

    assert not (root / "swap.jsonl").exists(), "the swap never happened"
    assert "prog.pins.jsonl::a PASSED" in result.stdout, result.output
    assert "prog.pins.jsonl::b PASSED" not in result.stdout, result.output
    # a file that cannot be read stops the session, exit 2, as 'lockstep replay' stops
    assert "changed while this run was reading it (pin 'b'" in result.stdout, result.output
    assert result.code == 2


def test_unchanged_pins_file_replays_by_offset(git_repo: GitRepo) -> None:
    root = git_repo.root
    git_repo.commit("pins", {"lockstep.toml": CONFIG, "prog.py": PROG, "cases/prog.toml": CASES})
    assert run_cli("record", cwd=root).code == 0
    git_repo.commit("recorded")
    result = pytest_in(root, "--lockstep", "-v")
    assert result.code == 0, result.output
    assert "2 passed" in result.stdout
