"""The codec's shortcuts give exactly the bytes of its path-tracking encoder, or its errors.

Recorders freeze on every call, so :func:`canon.encode` answers scalars at once,
:data:`canon.LEAF_ENCODERS` freezes a value of a known type with one lookup, and
:func:`canon.encode_call_keyed` freezes and keys a call in one writer pass.  Each is
checked here against the slow encoder (``codec._slow_encode``) on generated values.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lockstep import canon
from lockstep.canon import codec
from lockstep.errors import CanonError
from test_canon import values


def slow_bytes(value: Any, *, loose: bool = False) -> bytes:
    return canon.canonical_json(codec._slow_encode(value, loose, "value"))


@given(values)
@settings(max_examples=400)
def test_encode_gives_the_slow_encoders_bytes(value: Any) -> None:
    assert canon.canonical_json(canon.encode(value)) == slow_bytes(value)


leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(allow_nan=True, allow_infinity=True, places=None),
    st.binary(max_size=20),
    st.binary(max_size=20).map(bytearray),
)


@given(leaves)
def test_each_leaf_encoder_writes_what_the_encoder_writes(value: Any) -> None:
    leaf = canon.LEAF_ENCODERS[type(value)]
    assert canon.canonical_json(leaf(value)) == slow_bytes(value)


@given(
    st.lists(values, max_size=4).map(tuple),
    st.dictionaries(st.text(max_size=4), values, max_size=3),
)
@settings(max_examples=300)
def test_encode_call_keyed_is_encode_call_plus_its_key(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    enc_args, enc_kwargs, key = canon.encode_call_keyed(args, kwargs)
    assert (enc_args, enc_kwargs) == canon.encode_call(args, kwargs)
    assert key == canon.canonical_json([enc_args, enc_kwargs])
    assert key == canon.canonical_json(
        [codec._slow_encode(list(args), False, "args"), codec._slow_encode(kwargs, False, "kwargs")]
    )


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("a\udcffb", "lone surrogate"),
        (10**4300, "more than 4300 characters"),
        ("\udcff", "lone surrogate"),
    ],
    ids=["surrogate-inside", "huge-int", "surrogate-alone"],
)
def test_the_shortcuts_still_refuse_what_cannot_be_frozen(value: Any, why: str) -> None:
    with pytest.raises(CanonError, match=why):
        canon.encode(value)
    with pytest.raises(CanonError, match=why):
        canon.encode_call_keyed((1, value), {})
    with pytest.raises(CanonError, match=why):
        canon.encode_call_keyed((), {"k": [value]})


def test_a_registered_encoder_takes_a_leaf_type_out_of_the_table() -> None:
    canon.register_encoder(Decimal, lambda d: str(d), lambda s: Decimal(s), name="test.Dec")
    try:
        assert Decimal not in canon.LEAF_ENCODERS
        assert canon.dumps(Decimal("1.50")) == b'{"$ext":["test.Dec","1.50"]}'
        assert canon.encode_call_keyed((Decimal("2"),), {})[0] == [{"$ext": ["test.Dec", "2"]}]
    finally:
        canon.unregister_encoder(Decimal)
    assert Decimal in canon.LEAF_ENCODERS
    assert canon.dumps(Decimal("1.50")) == b'{"$decimal":"1.50"}'


def test_a_type_outside_the_table_still_goes_through_the_encoder() -> None:
    assert dt.date not in canon.LEAF_ENCODERS
    assert canon.dumps(dt.date(2024, 1, 2)) == b'{"$date":"2024-01-02"}'
