"""``$regex``: patterns of the ``regex`` module freeze by source and flags, thaw inert, and
a grammar holding them is recorded and replayed.

parsimonious's grammars keep a ``regex`` pattern in each ``Regex`` expression; until such
patterns froze, every call given a grammar (or returning a tree naming its expressions)
was skipped: 39% of its suite's calls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from helpers import recorded, red_after_change, rows_of, run_cli
from lockstep import canon
from lockstep.canon.text import value_text
from lockstep.errors import CanonError

_FLAGS = [0, regex.IGNORECASE, regex.MULTILINE | regex.DOTALL, regex.VERBOSE, regex.V1]


@given(
    st.sampled_from([r"\p{L}+", r"(?P<x>[0-9a-f]+)", r"^\s*$", "", r"(?i:ab)c", r"a++"]),
    st.sampled_from(_FLAGS),
    st.booleans(),
)
def test_a_pattern_round_trips_with_its_flags(source: str, flags: int, as_bytes: bool) -> None:
    if as_bytes and "\\p" in source:
        source = r"\w+"  # Unicode properties are for text patterns
    pattern: Any = source.encode() if as_bytes else source
    value = regex.compile(pattern, flags)
    frozen = canon.encode(value)
    thawed = canon.decode(json.loads(json.dumps(frozen)))
    assert type(thawed) is type(value)
    assert (thawed.pattern, thawed.flags) == (value.pattern, value.flags)
    assert canon.encode(thawed) == frozen
    assert value_text(frozen).startswith("regex.compile(")


def test_a_changed_pattern_or_flag_freezes_differently_and_apart_from_re() -> None:
    import re

    base = canon.dumps(regex.compile(r"\d+"))
    assert canon.dumps(regex.compile(r"\d*")) != base
    assert canon.dumps(regex.compile(r"\d+", regex.IGNORECASE)) != base
    assert canon.dumps(re.compile(r"\d+")) != base  # the other module's pattern thaws as its own


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"$regex": ["a"]}, "expected [pattern, flags]"),
        ({"$regex": [1, 0]}, "[pattern (str or bytes), flags (int)]"),
        ({"$regex": ["a", "0"]}, "[pattern (str or bytes), flags (int)]"),
        ({"$regex": ["(", 0]}, "does not compile"),
        ({"$regex": ["a", 999999]}, "does not compile"),
        ({"$regex": ["a", 0]}, "the flags compiling it gives"),  # not the canonical flags
    ],
)
def test_a_malformed_payload_is_one_canon_error(payload: dict[str, Any], message: str) -> None:
    with pytest.raises(CanonError, match="regex") as raised:
        canon.decode(payload)
    assert message in str(raised.value)


def test_decoding_never_imports_regex(tmp_path: Path) -> None:
    """A ledger arriving in a pull request names ``$regex``: where the replayed code did not
    import ``regex``, decoding refuses in one line and imports nothing."""
    script = (
        "import sys\n"
        "from lockstep import canon\n"
        "try:\n"
        "    canon.decode({'$regex': ['a', 256]})\n"
        "except Exception as e:\n"
        "    print(type(e).__name__, e)\n"
        "print('regex' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path
    ).stdout.splitlines()
    assert out[0].startswith("CanonError") and "not imported here" in out[0]
    assert out[1] == "False"


GRAMMAR = r'''
import regex


class Rule:
    """A token rule of a legacy lexer: a name and its compiled pattern."""

    def __init__(self, name, pattern):
        self.name = name
        self.re = regex.compile(pattern, regex.V1)


def tokenize(text, rules):
    out = []
    at = 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        for rule in rules:
            found = rule.re.match(text, at)
            if found:
                out.append((rule.name, found.group(0)))
                at = found.end()
                break
        else:
            raise ValueError(f"no rule matches at {at}: {text[at:at + 5]!r}")
    return out
'''

GRAMMAR_TESTS = r"""
import pytest

from lexer.rules import Rule, tokenize

RULES = [Rule("word", r"\p{L}+"), Rule("number", r"\d+(?:\.\d+)?"), Rule("op", r"[-+*/=]")]


@pytest.mark.parametrize("text", ["total = 12 + 3.5", "élan * 2", "x / y - 7"])
def test_tokenize(text):
    assert "".join(v for _, v in tokenize(text, RULES)) == text.replace(" ", "")


def test_no_rule():
    with pytest.raises(ValueError):
        tokenize("a ? b", RULES)
"""


def _recorded_package(root: Path, package: str, module: str, source: str, tests: str) -> Any:
    """A one-module package and its test recorded by ``pytest --lockstep-record``."""
    return recorded(
        root,
        {
            f"{package}/__init__.py": "",
            f"{package}/{module}.py": source,
            f"tests/test_{module}.py": tests,
            "lockstep.toml": f'[[ledger]]\npackage = "{package}"\n',
        },
    )


def test_a_lexer_holding_regex_patterns_is_recorded_and_replayed(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    result = _recorded_package(root, "lexer", "rules", GRAMMAR, GRAMMAR_TESTS)
    assert "cannot freeze" not in result.stdout, result.stdout
    rows = rows_of(root / "lockstep/lexer.rules.tokenize.ledger.jsonl")
    assert len(rows) == 4  # three texts and the one no rule matches
    assert '"$regex"' in (root / "lockstep/lexer.rules.tokenize.ledger.jsonl").read_text()
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output
    red = red_after_change(root, "lexer/rules.py", "found.group(0)", "found.group(0).upper()")
    assert "lexer.rules.tokenize" in red.stdout


MATCHES = r"""
import re

DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
WORD = re.compile(r"\$(\w+)")


def find_date(line):
    return DATE.search(line)


def replace_word(match):
    return match.group(1).upper()


def expand(template):
    return WORD.sub(replace_word, template)
"""

MATCHES_TESTS = r"""
from billing.dates import WORD, expand, find_date, replace_word


def test_find_date():
    assert find_date("due 2024-03-09, paid").group(2) == "03"
    assert find_date("no date") is None


def test_expand():
    assert expand("dear $name, pay $total") == "dear NAME, pay TOTAL"
    for word in ("$name", "to $total"):
        assert replace_word(WORD.search(word)) == word.split("$")[1].upper()
"""


def test_matches_are_frozen_as_their_search_and_thaw_equal(tmp_path: Path) -> None:
    """``return DATE.search(line)``, and a ``re.sub`` callback given a match: both were
    skipped ("cannot freeze a re.Match"); a match now freezes as the search that finds it."""
    root = tmp_path / "proj"
    result = _recorded_package(root, "billing", "dates", MATCHES, MATCHES_TESTS)
    assert "cannot freeze" not in result.stdout, result.stdout
    found = rows_of(root / "lockstep/billing.dates.find_date.ledger.jsonl")
    assert len(found) == 2
    replaced = rows_of(root / "lockstep/billing.dates.replace_word.ledger.jsonl")
    assert len(replaced) == 2  # one per match the test gave it
    assert "$match" in json.dumps([r.args for r in replaced])
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output
    red = red_after_change(root, "billing/dates.py", r"(\d{2})-(\d{2})", r"(\d{2})-?(\d{2})")
    assert "billing.dates.find_date" in red.stdout


def test_a_match_a_search_would_not_find_first_is_refused() -> None:
    import re

    second = list(re.finditer(r"\d", "1 2"))[1]
    with pytest.raises(CanonError, match="does not find first"):
        canon.encode(second)
    first = re.search(r"\d", "1 2")
    assert canon.decode(canon.encode(first)).span() == (0, 1)
    frozen = canon.encode(regex.compile(r"\p{L}+").search("12 élan"))
    assert value_text(frozen).startswith("regex.compile(")
    assert canon.decode(frozen).group(0) == "élan"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"$match": [{"$re": ["a", 32]}, "bbb", 0, 3]}, "finds a match"),
        ({"$match": [{"$re": ["a", 32]}, "a", 0, 9]}, "finds a match within its bounds"),
        ({"$match": ["a", "a", 0, 1]}, "a $re or $regex pattern"),
        ({"$match": [{"$re": ["a", 32]}, {"$bytes": "YQ=="}, 0, 1]}, "a string its pattern"),
        ({"$match": [{"$re": ["a", 32]}, "a", "0", 1]}, "pos (int)"),
    ],
)
def test_a_malformed_match_is_one_canon_error(payload: dict[str, Any], message: str) -> None:
    with pytest.raises(CanonError, match=r"\$match") as raised:
        canon.decode(payload)
    assert message in str(raised.value)


def test_a_forged_match_that_backtracks_forever_is_stopped_by_the_row_s_timeout(
    tmp_path: Path,
) -> None:
    """A ``$match`` thaws by searching its string again, so a ledger arriving in a pull
    request could name a pattern that backtracks for hours (``(a+)+$`` on ``aa...ab``).
    Thawing runs under the row's deadline like its call: the row is an ERROR after the
    ledger's ``timeout`` and replay ends, red."""
    from lockstep.oracles.ledger.file import body_digest
    from lockstep.oracles.ledger.format import input_key, row_id

    root = tmp_path / "proj"
    _recorded_package(root, "billing", "dates", MATCHES, MATCHES_TESTS)
    config = root / "lockstep.toml"
    config.write_text(
        '[[ledger]]\nname = "w"\ntarget = "billing.dates:replace_word"\ntimeout = 1\n'
    )
    ledger = root / "lockstep/w.ledger.jsonl"
    source = (root / "lockstep/billing.dates.replace_word.ledger.jsonl").read_text()
    header, line = source.splitlines()[:2]
    row = json.loads(line)
    row["args"] = [{"$match": [{"$re": ["(a+)+$", 32]}, "a" * 60 + "b", 0, 61]}]
    row["id"] = row_id(input_key(row["args"], row["kwargs"]))  # a consistent forgery
    body = json.dumps(row, separators=(",", ":")).encode()
    stated = json.loads(header)
    stated["rows"] = 1
    stated["digest"] = body_digest([body])[1]
    ledger.write_bytes(json.dumps(stated).encode() + b"\n" + body + b"\n")
    replayed = run_cli("replay", "w", cwd=root)
    assert replayed.code == 1, replayed.output
    assert "did not return within 1 s (the ledger's timeout)" in replayed.stdout, replayed.stdout
