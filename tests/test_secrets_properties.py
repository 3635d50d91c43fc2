"""Properties of scrubbing (it undoes exactly, an encoded value is always recognised) and of
the detector's gates (they never hide what a plugin would report)."""

from __future__ import annotations

import base64
import json
import math
import re
import string
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lockstep.secrets.detect import KEYWORD_PARTS
from lockstep.secrets.scrub import MIN_VALUE, NamedSecret, Scrubber, encoded_forms

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


values = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="<>"), min_size=MIN_VALUE)
texts = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="<>"))


def scrubber(value: str) -> Scrubber:
    return Scrubber((NamedSecret("TOKEN", "TOKEN"),), environ={"TOKEN": value})


@given(value=values, before=texts, after=texts)
def test_reveal_undoes_scrub_and_scrub_leaves_no_value(value: str, before: str, after: str) -> None:
    s = scrubber(value)
    text = before + value + after
    scrubbed = s.scrub(text)
    assert value not in scrubbed
    assert "<TOKEN>" in scrubbed
    assert s.reveal(scrubbed) == text


@given(value=values, before=st.binary(max_size=5), after=st.binary(max_size=5))
def test_base64_of_the_value_inside_any_bytes_is_recognised(
    value: str, before: bytes, after: bytes
) -> None:
    blob = base64.b64encode(before + value.encode() + after).decode()
    urlsafe = base64.urlsafe_b64encode(before + value.encode() + after).decode()
    forms = encoded_forms(value)
    assert any(f in blob for f in forms)
    assert any(f in urlsafe for f in forms)


@given(value=values)
def test_json_url_and_hex_spellings_are_recognised(value: str) -> None:
    s = scrubber(value)
    for spelled in (json.dumps(value), quote(value, safe=""), value.encode().hex()):
        if spelled != value:
            assert s.leaks(f"x {spelled} y") == ["<TOKEN>"]


def test_every_keyword_of_the_keyword_plugin_opens_its_gate() -> None:
    from detect_secrets.plugins.keyword import DENYLIST

    for keyword in DENYLIST:
        assert any(part in keyword.lower() for part in KEYWORD_PARTS), keyword


def _token_plugins() -> list[Any]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    return list(get_mapping_from_secret_type_to_class().values())


def test_the_token_anchors_were_written_from_the_installed_release() -> None:
    """If this fails after a detect-secrets upgrade: review TOKEN_ANCHORS and TOKEN_WORDS
    against the new patterns, then update ANCHORED_RELEASE and ANCHORED_PATTERNS (until
    then the token gate falls back to the wide run of token characters)."""
    from importlib.metadata import version

    from lockstep.secrets.detect import ANCHORED_PATTERNS, ANCHORED_RELEASE, token_patterns_digest

    assert version("detect-secrets") == ANCHORED_RELEASE
    assert token_patterns_digest(_token_plugins()) == ANCHORED_PATTERNS


def test_the_installed_release_is_read_from_its_source_as_its_metadata_says() -> None:
    """The release is read from detect-secrets' ``__version__.py`` (no import of
    ``importlib.metadata`` at a recording's end); it is the one its metadata names."""
    from importlib.metadata import version

    from lockstep.secrets.detect import _release_in_source

    assert _release_in_source() == version("detect-secrets")


def _token_patterns() -> list[re.Pattern[str]]:
    from lockstep.secrets.detect import _GATE_OF, _LEFT_OUT

    return [
        pattern
        for cls in _token_plugins()
        if cls.__name__ not in _GATE_OF and cls.__name__ not in _LEFT_OUT
        for pattern in cls.denylist
    ]


TOKEN_PATTERNS = _token_patterns()


@pytest.mark.parametrize("pattern", TOKEN_PATTERNS, ids=lambda p: p.pattern[:30])
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_token_pattern_match_opens_the_token_gate(
    pattern: re.Pattern[str], data: st.DataObject
) -> None:
    """Strings made from each token plugin's own pattern (with anything around them): the
    anchors find each, so the gate never hides what a plugin would report."""
    from lockstep.secrets.detect import _open_gates, candidate_lines, may_hold_secret

    text = data.draw(st.from_regex(pattern))
    assert pattern.search(text)
    assert may_hold_secret(text), text
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if pattern.search(line.rstrip("\r")):
            assert "run" in _open_gates(line.rstrip("\r")), line
            assert index in candidate_lines(text, lines), line


def test_the_gates_stay_shut_for_ids_and_rendered_documents() -> None:
    """What makes a clean corpus cheap: no gate opens, and detect-secrets is not needed."""
    from lockstep.secrets.detect import may_hold_secret

    for text in [
        "case_000123.json",
        "customer_000042.json",
        '{"net":"10527.60","qty":24,"sku":"PUL-445","tax_by_rate":{"0.055":"15.24"}}',
    ]:
        assert not may_hold_secret(text), text


@given(text=st.text())
def test_may_hold_secret_is_true_wherever_the_detector_finds(text: str) -> None:
    from lockstep.secrets.detect import may_hold_secret, scan_text

    if not may_hold_secret(text):
        assert scan_text(text) == []


def test_the_run_token_patterns_are_the_installed_discord_and_telegram_ones() -> None:
    """The token gate's stand-in for the two token plugins with no literal anchor."""
    from detect_secrets.plugins.discord import DiscordBotTokenDetector
    from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector

    from lockstep.secrets.detect import _RUN_TOKENS

    installed = [
        p.pattern
        for cls in (DiscordBotTokenDetector, TelegramBotTokenDetector)
        for p in cls.denylist
    ]
    assert _RUN_TOKENS.pattern.split("|") == installed
    assert all(
        p.flags == _RUN_TOKENS.flags
        for cls in (DiscordBotTokenDetector, TelegramBotTokenDetector)
        for p in cls.denylist
    )


def test_the_entropy_run_is_the_installed_entropy_plugins_charset() -> None:
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    from lockstep.secrets.detect import _BASE64_LIMIT, _ENTROPY_DISTINCT, _ENTROPY_RUN

    charset = Base64HighEntropyString().charset
    assert {chr(c) for c in range(0x3000) if _ENTROPY_RUN.fullmatch(chr(c))} == set(charset)
    assert math.log2(_ENTROPY_DISTINCT - 1) <= _BASE64_LIMIT < math.log2(_ENTROPY_DISTINCT)


_B64_CHARSET = string.ascii_letters + string.digits + "+/\\-_="


@settings(max_examples=300, deadline=None)
@given(
    distinct=st.lists(st.sampled_from(_B64_CHARSET), unique=True, min_size=18, max_size=40),
    data=st.data(),
)
def test_the_entropy_gate_opens_wherever_the_entropy_plugin_finds(
    distinct: list[str], data: st.DataObject
) -> None:
    """Quoted runs of 18 to 40 distinct characters, each once or more, shuffled (near 23
    distinct characters, where the gate's bound lies, a string reaches the entropy
    plugin's limit only when nearly uniform): whenever detect-secrets' entropy plugin
    itself reports one where the gate's quoted run is found, the quoted gate is open."""
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    from lockstep.secrets.detect import _BASE64_LIMIT, _QUOTED_LONG, _open_gates

    extra = data.draw(st.lists(st.sampled_from(distinct), max_size=10))
    body = "".join(data.draw(st.permutations(distinct + extra)))
    around = st.text(alphabet=_B64_CHARSET + " '\":=,", max_size=8)
    mark = data.draw(st.sampled_from(['"', "'"]))
    line = data.draw(around) + mark + body + mark + data.draw(around)
    found = Base64HighEntropyString(limit=_BASE64_LIMIT).analyze_line(filename="x", line=line)
    if found and _QUOTED_LONG.search(line):  # the distinct-characters bound: nothing lost
        assert "quoted" in _open_gates(line), line


def test_a_long_run_of_one_character_opens_no_gate() -> None:
    """webcolors' suite calls its parser with 80 ``A``: no plugin can report that."""
    from lockstep.secrets.detect import _open_gates

    for line in ['["' + "A" * 80 + '"]', "'" + "0123456789" * 8 + "'", "x" * 200]:
        assert _open_gates(line) == set(), line


@given(
    names=st.lists(st.text(alphabet="AbcK_Y*?[]!-9é", max_size=12), max_size=8),
    patterns=st.lists(st.text(alphabet="AbcK_Y*?[]!-9é", min_size=1, max_size=8), max_size=5),
)
def test_the_env_name_matcher_is_fnmatch_of_each_pattern(
    names: list[str], patterns: list[str]
) -> None:
    import fnmatch

    from lockstep.secrets.policy import env_name_matcher

    if not patterns:
        return
    matches = env_name_matcher(tuple(patterns))
    for name in names:
        expected = any(fnmatch.fnmatchcase(name.upper(), p.upper()) for p in patterns)
        assert (matches(name.upper()) is not None) == expected, (name, patterns)


def test_the_keyword_gate_holds_the_installed_keyword_plugins_denylist() -> None:
    from detect_secrets.plugins import keyword

    from lockstep.secrets.detect import _KEYWORDS

    assert _KEYWORDS.pattern == "|".join(keyword.DENYLIST)
    assert _KEYWORDS.flags & re.IGNORECASE


def _keyword_patterns() -> list[re.Pattern[str]]:
    from detect_secrets.plugins import keyword

    return [v for v in vars(keyword).values() if isinstance(v, re.Pattern)]


@pytest.mark.parametrize("pattern", _keyword_patterns(), ids=lambda p: p.pattern[-30:])
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_keyword_pattern_match_opens_the_keyword_gate(
    pattern: re.Pattern[str], data: st.DataObject
) -> None:
    """Strings made from each of the keyword plugin's patterns open its gate: the gate
    never hides what the plugin would report."""
    from lockstep.secrets.detect import _open_gates

    text = data.draw(st.from_regex(pattern))
    for line in text.split("\n"):
        if pattern.search(line.rstrip("\r")):
            assert "keyword" in _open_gates(line.rstrip("\r")), line


def test_an_error_message_naming_a_keyword_argument_opens_no_gate() -> None:
    """semver's suite records ``TypeError``s saying "unexpected keyword argument"."""
    from lockstep.secrets.detect import _open_gates

    assert _open_gates("replace() got 1 unexpected keyword argument(s): 'token'") == set()


@given(st.binary(max_size=200), st.integers(0, 40))
def test_the_word_value_screen_finds_what_the_pattern_finds(data: bytes, run: int) -> None:
    """The translation the screen uses for a token word's value (24 characters of
    ``[a-z0-9_\\-/+]``, case folded) finds exactly what the pattern's search finds."""
    from lockstep.secrets.detect import _WORD_VALUE, has_word_value_ascii

    text = (data[: len(data) // 2] + b"Ab9_-/+" * run + data[len(data) // 2 :]).decode("latin-1")
    ascii_bytes = text.encode("ascii", "replace")
    found = re.compile(_WORD_VALUE.pattern.encode("ascii"), re.IGNORECASE).search(ascii_bytes)
    assert has_word_value_ascii(ascii_bytes) == bool(found)
