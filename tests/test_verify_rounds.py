"""What a recording writes is what was verified: the rows left after a refusal are verified again.

A ledger replays its rows in one process, in the ledger's order.  When verification
refuses a row, the rows after it no longer run after that call, and one that reproduced
only because of it (a cache it filled) then fails the very next replay.  jmespath's
parser caches each expression it parses: 63 of the 487 rows written for
``Parser.parse`` drifted on ``lockstep replay`` of the unchanged code, under every hash
seed.  The rows left are now verified once more, as the ledger will hold them, until a
round refuses nothing.
"""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, rows_of, run_cli, write_files
from lockstep.oracles.ledger.format import input_key, row_id

COUNTER = """
_CALLS = [0]


def tick(tag):
    '''Legacy code with a module-level counter: only the first call of a process is first.'''
    _CALLS[0] += 1
    return "first" if _CALLS[0] == 1 else "again"


def shout(word):
    return word.upper()
"""


def _tags_by_falling_id(count: int) -> list[str]:
    """Tags whose rows' ids fall in the order the test calls them: the ledger (sorted by
    id) replays the first call last, so every round of verification refuses the first
    row it replays, and each refusal makes the next row the first."""
    tags = [f"tag{n}" for n in range(40)]
    return sorted(tags, key=lambda tag: row_id(input_key([tag], {})), reverse=True)[:count]


def test_rows_that_reproduced_only_beside_refused_ones_are_refused_too(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    tags = _tags_by_falling_id(4)
    calls = "\n".join(f"    assert tick({tag!r})" for tag in tags)
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/counter.py": COUNTER,
            "tests/test_counter.py": "from shop.counter import shout, tick\n\n\n"
            f"def test_ticks():\n{calls}\n\n\n"
            "def test_shout():\n    assert shout('a') == 'A'\n",
            "lockstep.toml": '[[ledger]]\npackage = "shop"\n',
        },
    )
    result = pytest_in(root, "--lockstep-record", "-q", "-p", "no:randomly", "tests")
    assert result.code == 0, result.output
    # the first round refuses the row replayed first and the one recorded first; each
    # later round refuses the row that became first: none is left to be red later
    assert "more time(s), each time without the rows refused before" in result.stdout
    assert "it reproduced only beside calls that were refused" in result.stdout
    ledger = root / "lockstep/shop.counter.tick.ledger.jsonl"
    assert not ledger.exists() or rows_of(ledger) == []
    assert len(rows_of(root / "lockstep/shop.counter.shout.ledger.jsonl")) == 1
    for seed in ("0", "1", "7"):
        replay = run_cli("replay", cwd=root, env={"PYTHONHASHSEED": seed})
        assert replay.code == 0, (seed, replay.output)


DECORATED = """
from lockstep import record_io

_CALLS = [0]


@record_io
def tick(tag):
    _CALLS[0] += 1
    return "first" if _CALLS[0] == 1 else "again"


if __name__ == "__main__":
    for tag in TAGS:
        tick(tag)
"""


def test_record_io_verifies_the_rows_left_again_too(tmp_path: Path) -> None:
    """The decorator's own verification, at the program's exit, goes round as well."""
    import subprocess
    import sys

    root = tmp_path / "proj"
    tags = _tags_by_falling_id(3)
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\nname = "tick"\ntarget = "shop.job:tick"\n',
            "shop/__init__.py": "",
            "shop/job.py": DECORATED.replace("TAGS", repr(tags)),
        },
    )
    proc = subprocess.run(
        [sys.executable, "shop/job.py"], cwd=root, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    ledger = root / "lockstep/tick.ledger.jsonl"
    assert not ledger.exists() or rows_of(ledger) == [], proc.stderr
    assert "it reproduced only beside calls that were refused" in proc.stderr
    assert "3 did not reproduce in a fresh interpreter and were not written" in proc.stderr
