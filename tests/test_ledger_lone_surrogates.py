"""A call given or giving text with a lone surrogate is recorded, replayed and guards code.

tinycss2's ``test_bad_unicode`` feeds its tokenizer ``"\\udca9"`` (what ``surrogateescape``
makes of an undecodable byte): the one test of the identifiers' fallback for text UTF-8
cannot write.  Such text could not be frozen, its calls were skipped, and a one-line
change in the fallback replayed green while the suite failed.
"""

from __future__ import annotations

from helpers import package_project, pytest_in, replayed_after, rows_of, run_cli

TOKENS = '''
def ident(text):
    """The identifier as serialized: the text, or an escaped form UTF-8 can write."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "\\\\" + text.encode("utf-8", "backslashreplace").decode("ascii")
    return text


def undecoded(data):
    return data.decode("utf-8", "surrogateescape")
'''

TESTS = """
from tokens import ident, undecoded


def test_ident():
    assert ident("abc") == "abc"
    assert ident("a\\udca9").startswith("\\\\a")


def test_undecoded():
    assert undecoded(b"x\\xff") == "x\\udcff"
"""


def test_text_with_a_lone_surrogate_is_recorded_replayed_and_guards_its_code(
    tmp_path,
) -> None:
    root = package_project(tmp_path / "tokens", "tokens", TOKENS, TESTS)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert "lone surrogate" not in recorded.output  # nothing skipped for it
    idents = rows_of(root / "lockstep" / "tokens.ident.ledger.jsonl")
    assert {"$str": "a\\udca9"} in [row.args[0] for row in idents]
    raw = (root / "lockstep" / "tokens.undecoded.ledger.jsonl").read_bytes()
    raw.decode("utf-8")  # the ledger stays UTF-8
    assert b'"$str"' in raw
    assert run_cli("replay", cwd=root).code == 0

    red = replayed_after(root, "src/tokens/__init__.py", '"backslashreplace"', '"replace"')
    assert red.code == 1, red.output
    assert "tokens.ident" in red.stdout and "'a\\udca9'" in red.stdout
