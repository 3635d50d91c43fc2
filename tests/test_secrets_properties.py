"""Properties of scrubbing (it undoes exactly, an encoded value is always recognised) and of
the detector's gates (they never hide what a plugin would report)."""

from __future__ import annotations

import base64
import json
import re
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lockstep.secrets.detect import KEYWORD_PARTS
from lockstep.secrets.scrub import MIN_VALUE, NamedSecret, Scrubber, encoded_forms

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
