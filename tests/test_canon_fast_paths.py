"""The codec's shortcuts give exactly the bytes of its path-tracking encoder, or its errors.

Recorders freeze on every call, so :func:`canon.encode` answers scalars at once,
:data:`canon.LEAF_ENCODERS` freezes a value of a known type with one lookup, and
:func:`canon.encode_call_keyed` freezes and keys a call in one writer pass.  Each is
checked here against the slow encoder (``encoding._slow_encode``) on generated values.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lockstep import canon
from lockstep.canon import encoding
from lockstep.errors import CanonError
from test_canon import Color, Level, values


def slow_bytes(value: Any, *, loose: bool = False) -> bytes:
    return canon.canonical_json(encoding._slow_encode(value, loose, "value"))


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
        [
            encoding._slow_encode(list(args), False, "args"),
            encoding._slow_encode(kwargs, False, "kwargs"),
        ]
    )


_flat = st.one_of(leaves, st.integers(), st.text(max_size=4))


@given(
    st.lists(_flat | st.lists(_flat, max_size=3).map(tuple), max_size=4).map(tuple),
    st.dictionaries(st.sampled_from(["a", "b", "$c", "é"]), _flat, max_size=2),
)
@settings(max_examples=300)
def test_a_call_of_scalars_and_tuples_is_keyed_as_the_sorting_writer_keys_it(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """Such a call (no object with two keys when at most one keyword is passed) is keyed
    by the writer that does not sort: its bytes must be the sorting writer's."""
    enc_args, enc_kwargs, key = canon.encode_call_keyed(args, kwargs)
    assert key == canon.canonical_json([enc_args, enc_kwargs])
    assert (enc_args, enc_kwargs) == canon.encode_call(args, kwargs)


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


def dumps_or_error(value: Any, *, loose: bool = False) -> bytes | str:
    try:
        return canon.dumps(value, loose=loose)
    except CanonError as e:
        return f"CanonError: {e}"


def slow_bytes_or_error(value: Any, *, loose: bool = False) -> bytes | str:
    try:
        return slow_bytes(value, loose=loose)
    except CanonError as e:
        return f"CanonError: {e}"


# What a render that builds a JSON document returns, with what must still be tagged or
# refused mixed in: keys and strings starting with "$", non-str keys, NaN and infinities,
# int and str subclasses, tuples, lone surrogates and ints too long to be frozen.
json_like = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=6),
        st.text(alphabet='$a"\\\udcff', max_size=4),
        st.sampled_from([Color.RED, Level.LOW, Decimal("1.0")]),
        st.tuples(st.sampled_from([1, -1]), st.sampled_from([4299, 4300, 4301])).map(
            lambda sign_digits: sign_digits[0] * 10 ** (sign_digits[1] - 1)
        ),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(alphabet='$ab"', max_size=3), inner, max_size=4),
        st.dictionaries(st.integers(-2, 2) | st.booleans() | st.none(), inner, max_size=2),
        st.lists(inner, max_size=3).map(tuple),
    ),
    max_leaves=16,
)


@given(json_like, st.booleans())
@settings(max_examples=600)
def test_dumps_gives_the_slow_encoders_bytes_or_error(value: Any, loose: bool) -> None:
    """``dumps`` writes a plain JSON value as it is (``encoding._plain_json``): the same bytes
    as the path-tracking encoder, and every value that needs a tag or is refused still is."""
    assert dumps_or_error(value, loose=loose) == slow_bytes_or_error(value, loose=loose)


@given(values)
@settings(max_examples=300)
def test_dumps_of_any_value_gives_the_slow_encoders_bytes(value: Any) -> None:
    assert dumps_or_error(value) == slow_bytes_or_error(value)


@pytest.mark.parametrize("depth", [canon.MAX_DEPTH - 1, canon.MAX_DEPTH, canon.MAX_DEPTH + 1])
@pytest.mark.parametrize("container", ["list", "dict"])
def test_dumps_of_deep_plain_json_keeps_the_depth_limit(depth: int, container: str) -> None:
    value: Any = 1
    for _ in range(depth):
        value = [value] if container == "list" else {"k": value}
    assert dumps_or_error(value) == slow_bytes_or_error(value)
    if depth > canon.MAX_DEPTH:
        with pytest.raises(CanonError, match="levels deep"):
            canon.dumps(value)
