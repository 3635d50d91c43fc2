"""Replay walks a row to reveal placeholders only when its encoding may hold one.

A ``<`` alone is common in recorded values (``"<1.0"`` in a version spec, ``"a < b"``);
the walk is needed only for a configured secret's placeholder, or any ``<NAME>`` when
some variable name is treated as secret.
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from lockstep.secrets.scrub import NamedSecret, Scrubber

SCRUBBERS = [
    Scrubber(),
    Scrubber((NamedSecret("db_pass", "DB_PASS"),), environ={"DB_PASS": "hunter2"}),
    Scrubber((NamedSecret("TOKEN", "TOKEN"),), environ={}),  # configured, not set here
    Scrubber(environ={}, ambient_names=("*_PASSWORD",)),
    Scrubber(environ={"DB_PASSWORD": "x"}, ambient_names=("*_PASSWORD",)),
]

texts = st.lists(
    st.sampled_from(["<", ">", "<1.0", "<TOKEN>", "<db_pass>", "<DB_PASSWORD>", "a", '"', "\\"])
    | st.text(max_size=4),
    max_size=6,
).map("".join)


def _touched(scrubber: Scrubber, text: str) -> bool:
    try:
        return scrubber.reveal(text) != text or scrubber.missing(text) is not None
    except Exception:  # SecretMissing: a placeholder it must refuse
        return True


@given(st.sampled_from(range(len(SCRUBBERS))), texts, st.booleans())
def test_a_value_reveal_would_change_or_refuse_is_always_walked(
    which: int, text: str, as_key: bool
) -> None:
    scrubber = SCRUBBERS[which]
    value: Any = {text: 1} if as_key else [text]
    if _touched(scrubber, text):
        assert scrubber.may_reveal(msgspec.json.encode(value))


def test_a_less_than_sign_alone_is_no_placeholder() -> None:
    for scrubber in SCRUBBERS:
        assert not scrubber.may_reveal(msgspec.json.encode(["<1.0", ">=0.1.1,<2", "a < b"]))
    assert SCRUBBERS[1].may_reveal(b'["x <db_pass> y"]')
    assert SCRUBBERS[3].may_reveal(b'["<DB_PASSWORD>"]')
    assert not SCRUBBERS[0].may_reveal(b'["<DB_PASSWORD>"]')  # nothing named secret here
