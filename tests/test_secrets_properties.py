"""Properties of scrubbing: it undoes exactly, and an encoded value is always recognised."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

from hypothesis import given
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
