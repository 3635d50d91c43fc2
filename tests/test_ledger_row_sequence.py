"""A ledger's rows replay as the one sequence they were verified as, whatever part is shown.

Recording verifies a ledger's rows in a fresh process, in the file's order, and a row may
rely on what the rows before it left: jmespath's ``Parser.parse`` looks its expression up
in a class-level cache and touches ``self`` only on a miss, so whether a row mutated its
parser follows from which rows ran before it.  ``lockstep replay --shard K/N`` and
``lockstep diff NAME ID`` ran only their rows, and every shard drifted on unchanged code
while the whole replay was green; ``--jobs`` handed the rows to processes in batches, the
later batches without the earlier ones.  Now each runs the rows before its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import copy_project, recorded, run_cli

PARSER = """
class Parser:
    _CACHE = {}

    def __init__(self):
        self.tokens = []

    def parse(self, text):
        cached = self._CACHE.get(text)
        if cached is not None:
            return cached
        self.tokens = text.split("+")  # only on a miss: a row's mutation follows the cache
        result = self._CACHE[text] = tuple(int(t) for t in self.tokens)
        return result
"""

TEXTS = [f"{i}+{i + 1}" for i in range(24)]
TEXTS[8:8] = [TEXTS[1], TEXTS[4]]  # found in the cache: their parser keeps another's tokens
TEXTS += [TEXTS[12], TEXTS[20], TEXTS[3]]

FILES = {
    "lockstep.toml": '[[ledger]]\nname = "parse"\ntarget = "calc.parser:Parser.parse"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/calc/__init__.py": "",
    "src/calc/parser.py": PARSER,
    "tests/test_parser.py": (
        "from calc.parser import Parser\n\n\n"
        "def test_parse():\n"
        "    parser = Parser()  # one parser, as a program keeps one\n"
        f"    for text in {TEXTS!r}:\n"
        "        assert parser.parse(text) == tuple(int(t) for t in text.split('+'))\n"
    ),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sequence") / "project"
    recorded(root, FILES)
    assert run_cli("replay", cwd=root).code == 0
    return root


def _hits(root: Path) -> list[str]:
    """The ids of the rows that found their expression cached (no mutation): each relies
    on an earlier row."""
    lines = (root / "lockstep/parse.ledger.jsonl").read_text().splitlines()[1:]
    rows = [json.loads(line) for line in lines]
    hits = [row["id"] for row in rows if "mutated" not in row]
    assert hits and len(hits) < len(rows)
    return hits


def test_every_shard_is_green_on_unchanged_code(project: Path) -> None:
    for k in (1, 2, 3, 4, 5):
        shard = run_cli("replay", "--shard", f"{k}/5", cwd=project)
        assert shard.code == 0, shard.output


def test_diff_of_a_row_that_relies_on_the_rows_before_it_is_green(project: Path) -> None:
    for case_id in _hits(project):
        shown = run_cli("diff", "parse", case_id, cwd=project)
        assert shown.code == 0, shown.output


def test_jobs_replay_a_ledger_as_one_sequence(project: Path) -> None:
    replayed = run_cli("replay", "--jobs", "2", cwd=project)
    assert replayed.code == 0, replayed.output


def test_a_shard_still_tells_a_change_to_its_rows(project: Path, tmp_path: Path) -> None:
    root = copy_project(project, tmp_path)
    source = root / "src/calc/parser.py"
    source.write_text(source.read_text().replace("int(t) for", "int(t) * 2 for"))
    drifted: list[str] = []
    for k in (1, 2, 3):
        shard = run_cli("replay", "-q", "--shard", f"{k}/3", cwd=root)
        assert shard.code == 1, shard.output
        drifted += [ln for ln in shard.stdout.splitlines() if ln.startswith("DRIFT parse")]
    whole = run_cli("replay", "-q", cwd=root)
    expected = [ln for ln in whole.stdout.splitlines() if ln.startswith("DRIFT parse")]
    assert sorted(drifted) == sorted(expected) and len(expected) == len(TEXTS), whole.stdout
