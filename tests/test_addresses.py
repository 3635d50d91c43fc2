"""One pattern says what an object's address is, for the ``hex-address`` rule, for
verification naming that cause and for an exception's kept attributes: each used to have
its own, and they disagreed on a hex number longer than an address or glued to a word."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockstep.addresses import HEX_ADDRESS_BYTES, HEX_ADDRESS_TEXT
from lockstep.oracles.verify import only_addresses_differ
from lockstep.rules import builtin_rule


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("<Token 'x' at 0x7FE7B7B3CB20>", True),
        ("<function f at 0x7f3a2c1d9e80>", True),
        ("id=0xdeadbeef", True),
        ("0x12345", False),  # five digits: a small constant, not an address
        ("0x1234567890abcdef1", False),  # seventeen: longer than any address
        ("ab0x7f3a2c1d9e80", False),  # glued to a word
        ("nothing here", False),
    ],
)
def test_every_user_agrees_on_what_an_address_is(text: str, address: bool) -> None:
    rule = builtin_rule("hex-address")
    assert rule is not None
    assert (HEX_ADDRESS_TEXT.search(text) is not None) is address
    assert (HEX_ADDRESS_BYTES.search(text.encode()) is not None) is address
    assert (rule.apply(text)[1] > 0) is address


@given(st.integers(min_value=16**5, max_value=16**16 - 1), st.integers(0, 16**12))
def test_two_reprs_differing_only_in_their_address_are_told_apart_as_such(
    first: int, second: int
) -> None:
    recorded = f"<Token 'x' at {hex(first)}>"
    fresh = f"<Token 'x' at {hex(max(second, 16**5))}>"
    reason = f"result: recorded {recorded}, fresh interpreter {fresh}"
    assert only_addresses_differ(reason) is (recorded != fresh)
    other = f"result: recorded {recorded}, fresh interpreter <Token 'y' at {hex(first)}>"
    assert not only_addresses_differ(other)
