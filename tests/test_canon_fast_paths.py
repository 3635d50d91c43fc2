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
    [(10**4300, "more than 4300 characters")],
    ids=["huge-int"],
)
def test_the_shortcuts_still_refuse_what_cannot_be_frozen(value: Any, why: str) -> None:
    with pytest.raises(CanonError, match=why):
        canon.encode(value)
    with pytest.raises(CanonError, match=why):
        canon.encode_call_keyed((1, value), {})
    with pytest.raises(CanonError, match=why):
        canon.encode_call_keyed((), {"k": [value]})


@pytest.mark.parametrize("value", ["a\udcffb", "\udcff", "\\\ud800"])
def test_the_shortcuts_give_a_text_with_a_lone_surrogate_the_general_form(value: str) -> None:
    """The writer under every shortcut refuses a lone surrogate: each falls back to the
    general path, which writes such a text as ``$str``."""
    frozen = canon.encode(value)
    assert isinstance(frozen, dict) and set(frozen) == {"$str"}
    for args, kwargs in (((1, value), {}), ((), {"k": [value]})):
        enc_args, enc_kwargs, key = canon.encode_call_keyed(args, kwargs)
        assert key == canon.canonical_json([enc_args, enc_kwargs])
        assert canon.decode(enc_args) == list(args)
    assert canon.loads(canon.dumps(value)) == value


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


# -- canon.scalar_call_key: the key of a new call of scalars, or None ---------------------

_short_plain = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([2**64, -(2**63)]),
    st.text(max_size=6),
    st.sampled_from(["$x", 'q"\\\n\x00\u2028']),
    st.binary(max_size=12),
)
_plain_arg = st.one_of(
    _short_plain,
    st.integers(min_value=4290, max_value=4301).map(lambda n: 10**n),
    st.sampled_from(["a\udcffb", "\udcff", -(10**4299)]),
)
_handled_arg = st.one_of(_plain_arg, st.lists(_plain_arg, max_size=3).map(tuple))
_other_arg = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=6).map(bytearray),
    st.decimals(allow_nan=False, places=2),
    st.sampled_from([Level.LOW, Color.RED, dt.date(2024, 1, 2), frozenset({1}), 1j]),
    st.lists(_plain_arg, max_size=2),
    st.lists(_plain_arg, max_size=2).map(lambda items: ((*items, (1, b"x")),)[0]),
    st.dictionaries(st.text(max_size=3), _plain_arg, max_size=2),
)
_keywords = st.sampled_from(["a", "b", "$c", "é", "zz"])


def _handled(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """What :func:`canon.scalar_call_key` is made for, said independently of its code."""
    plain = (type(None), bool, int, str, bytes)

    def flat(v: Any) -> bool:
        return type(v) in plain or (type(v) is tuple and all(type(w) in plain for w in v))

    return (
        all(flat(v) for v in args)
        and all(not k.startswith("$") and type(v) in plain for k, v in kwargs.items())
        and list(kwargs) == sorted(kwargs)  # out of order: the row keeps the order passed
    )


def _general_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes | None:
    try:
        return canon.encode_call_keyed(args, kwargs)[2]
    except CanonError:
        return None


@given(
    st.lists(_handled_arg | _other_arg, max_size=4).map(tuple),
    st.dictionaries(_keywords, _plain_arg | _other_arg | _handled_arg, max_size=3),
)
@settings(max_examples=500)
def test_the_scalar_writer_gives_the_general_key_or_declines(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """Bytes equal to :func:`canon.encode_call_keyed`'s for every call it accepts; None for
    every call outside its kinds, and for one the general path refuses."""
    key = canon.scalar_call_key(args, kwargs)
    general = _general_key(args, kwargs)
    if key is not None:
        assert _handled(args, kwargs)
        assert key == general
    else:  # declined: not its kinds, refused, an int long enough for the slow check, or
        # a text with a lone surrogate (the writer refuses it; the general path tags it)
        assert (
            not _handled(args, kwargs)
            or general is None
            or _long_int(args, kwargs)
            or _lone_surrogate(args, kwargs)
        )


def _items(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    items = [*args, *kwargs.values()]
    return items + [w for v in items if type(v) is tuple for w in v]


def _long_int(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    items = _items(args, kwargs)
    return any(type(v) is int and abs(v) >= 10 ** (canon.MAX_INT_DIGITS - 2) for v in items)


def _lone_surrogate(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    items = _items(args, kwargs)
    return any(type(v) is str and canon.encode(v) != v for v in items)


@given(
    st.lists(_short_plain | st.lists(_short_plain, max_size=3).map(tuple), max_size=4).map(tuple),
    st.dictionaries(_keywords.filter(lambda k: k[0] != "$"), _short_plain, max_size=3),
)
@settings(max_examples=300)
def test_the_scalar_writer_accepts_every_call_of_its_kinds_the_codec_can_freeze(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    general = _general_key(args, kwargs)
    if list(kwargs) != sorted(kwargs):  # the general path keeps the order they came in
        assert canon.scalar_call_key(args, kwargs) is None
        return
    assert canon.scalar_call_key(args, kwargs) == general


def test_the_scalar_writer_declines_bytes_given_an_encoder_of_their_own() -> None:
    assert canon.scalar_call_key((b"\x00ab",), {}) == b'[[{"$bytes":"AGFi"}],{}]'
    canon.register_encoder(bytes, lambda b: b.hex(), bytes.fromhex, name="test.hex")
    try:
        for args, kwargs in [((b"ab",), {}), (((1, b"ab"),), {}), ((), {"k": b"ab"})]:
            assert canon.scalar_call_key(args, kwargs) is None
            assert b"test.hex" in canon.encode_call_keyed(args, kwargs)[2]
        assert canon.scalar_call_key((1, "a"), {"k": None}) == b'[[1,"a"],{"k":null}]'
    finally:
        canon.unregister_encoder(bytes)
    assert canon.scalar_call_key((b"ab",), {}) == b'[[{"$bytes":"YWI="}],{}]'
