"""A refusal line names its call in a few hundred characters, however large the arguments.

A method of a parsed document holds the whole document as ``self``: written out whole, one
refused row printed a megabyte line.  Each value a row's call shows is cut (with "…");
the ledger keeps the values whole.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers import pytest_in, write_files

DOCS = """
import itertools

_TICKS = itertools.count()


class Document:
    def __init__(self, lines):
        self.lines = list(lines)

    def stamped(self, label):
        return f"{label}:{len(self.lines)}:{next(_TICKS)}"  # another value every call


SHELF = []


def shelved(prefix):
    return [line for line in SHELF if line.startswith(prefix)]  # what a test put there
"""

TESTS = """
from docs import SHELF, Document, shelved


def test_shelved():
    SHELF.extend(f"line number {i} of a long document" for i in range(3000))
    assert len(shelved("line")) == 3000
    SHELF.clear()


def test_stamps():
    doc = Document(f"line number {i} of a long document" for i in range(3000))
    assert doc.stamped("a").startswith("a:3000:")
    assert doc.stamped("a").startswith("a:3000:")
"""


def test_a_refused_call_on_a_large_object_is_named_in_a_short_line(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "lockstep.toml": (
                '[[ledger]]\nname = "stamped"\ntarget = "docs:Document.stamped"\n'
                '[[ledger]]\nname = "shelved"\ntarget = "docs:shelved"\n'
            ),
            "docs.py": DOCS,
            "tests/test_docs.py": TESTS,
        },
    )
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    lines = recorded.output.splitlines()
    refused = [
        line
        for line in lines
        if line.startswith("  refused (") and ("stamped(Document(" in line or "shelved(" in line)
    ]
    assert len(refused) == 2, recorded.output
    # the fresh interpreter's reason shows the recorded value cut too
    assert any("fresh interpreter returned []" in line for line in refused), refused
    for line in refused:
        assert len(line) < 2000, line[:300]
        assert "…" in line
    assert "line number 2999" not in recorded.output


FAR = """
def report(n):
    head = "".join(f"line {i} of the header; " for i in range(n))
    return head + "total: " + str(hash("total") % 1000)  # the hash seed's, past the cut
"""


def test_a_difference_past_the_cut_is_what_the_reason_shows(tmp_path: Path) -> None:
    """A value rendered for the verifying interpreter's verdict is cut; where the two sides
    agreed past the cut, the reason showed the same text twice (vobject's ``serialize``
    rows, both ending at ``…DTSTART:``).  It shows the part that differs."""
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\nname = "report"\ntarget = "far:report"\n',
            "far.py": FAR,
            "tests/test_far.py": "from far import report\n\n\ndef test_report():\n"
            "    assert report(200).startswith('line 0')\n",
        },
    )
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    refused = [line for line in recorded.output.splitlines() if "refused (" in line]
    assert len(refused) == 1, recorded.output
    line = refused[0]
    # the differing end on both sides, not the shared head twice
    sides = re.search(r"recorded …[^,]*total: (\d+)', fresh interpreter …[^)]*total: (\d+)'", line)
    assert sides is not None, line
    assert sides[1] != sides[2], line
