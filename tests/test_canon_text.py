"""Frozen values as Python-like text: exact, never raising, never importing what a file names."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import enum
import pathlib
import sys
import uuid
import zoneinfo
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lockstep import canon
from lockstep.canon import KNOWN_TAGS
from lockstep.canon.text import (
    _TAGS,
    call_text,
    clip,
    mutated_text,
    outcome_text,
    raised_text,
    short_name,
    value_text,
)


class Colour(enum.Enum):
    RED = 1
    BLUE = "b"


@dataclasses.dataclass(frozen=True)
class Point:
    x: Any
    y: Any


Pair = collections.namedtuple("Pair", "left right")


def text(value: Any) -> str:
    return value_text(canon.encode(value))


# --------------------------------------------------------------------------- examples


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (1, "1"),
        ("1", "'1'"),
        (1.0, "1.0"),
        (True, "True"),
        (None, "None"),
        (-0.0, "-0.0"),
        ((1, 2), "(1, 2)"),
        ([1, 2], "[1, 2]"),
        ((1,), "(1,)"),
        ((), "()"),
        (b"a", "b'a'"),
        ("a", "'a'"),
        (bytearray(b"a\x00"), "bytearray(b'a\\x00')"),
        (Decimal("1.10"), "Decimal('1.10')"),
        (float("nan"), "float('nan')"),
        (float("-inf"), "float('-inf')"),
        (complex(1, -0.0), "complex(1.0, -0.0)"),
        ({2, 1}, "{1, 2}"),
        (set(), "set()"),
        (frozenset(), "frozenset()"),
        (frozenset({"a"}), "frozenset({'a'})"),
        ({"b": 1, "a": (2,)}, "{'a': (2,), 'b': 1}"),
        ({1: "x", "1": "y"}, "{'1': 'y', 1: 'x'}"),
        ({"$ref": 1}, "{'$ref': 1}"),
        (dt.datetime(2024, 1, 31, 12, 0), "datetime('2024-01-31T12:00:00')"),
        (
            dt.datetime(2024, 11, 3, 1, 30, tzinfo=zoneinfo.ZoneInfo("America/New_York"), fold=1),
            "datetime('2024-11-03T01:30:00-05:00', 'America/New_York', fold=1)",
        ),
        (dt.date(2024, 1, 31), "date('2024-01-31')"),
        (dt.time(12, 0, tzinfo=dt.UTC), "time('12:00:00+00:00')"),
        (dt.timedelta(days=1, microseconds=3), "timedelta(days=1, microseconds=3)"),
        (dt.timedelta(0), "timedelta(0)"),
        (uuid.UUID(int=5), "UUID('00000000-0000-0000-0000-000000000005')"),
        (pathlib.PurePosixPath("/tmp/x"), "PurePosixPath('/tmp/x')"),
        (Colour.RED, "Colour.RED"),
        (Point(1, "a"), "Point(x=1, y='a')"),
        (Pair(1, [2]), "Pair(1, [2])"),
    ],
)
def test_values_read_like_python(value: Any, shown: str) -> None:
    assert text(value) == shown


def test_every_tag_of_the_codec_has_a_rendering() -> None:
    assert set(_TAGS) == set(KNOWN_TAGS)


@pytest.mark.parametrize(
    "stored",
    [
        {"$bytes": "not base64!"},
        {"$nope": 1},
        {"$tuple": 3},
        {"$datetime": ["2024-01-01"]},
        {"$dict": [[1]]},
        {"$enum": [1, 2]},
        {"$float": "NaN?"},
        {"$complex": [1, "x"]},
        {"$timedelta": [1, 2, "3"]},
        {"$dataclass": ["m:P", [1]]},
    ],
)
def test_a_corrupt_value_is_shown_as_stored_not_guessed(stored: dict[str, Any]) -> None:
    shown = value_text([stored])
    assert shown == f"[<unreadable {canon.canonical_json(stored).decode()}>]"


def test_rendering_imports_nothing_a_value_names() -> None:
    name = "lockstep_never_imported_module"
    for stored in (
        {"$enum": [f"{name}:Kind", "A"]},
        {"$dataclass": [f"{name}:Thing", {"a": 1}]},
        {"$namedtuple": [f"{name}:Row", [1]]},
        {"$ext": [f"{name}:Money", "1.00"]},
    ):
        value_text(stored)
    assert name not in sys.modules
    assert value_text({"$enum": [f"{name}:Kind", "A"]}) == "Kind.A"


def test_not_a_frozen_value_and_deep_nesting_do_not_raise() -> None:
    assert value_text(object()) == "<not a frozen value: object>"
    deep: Any = 1
    for _ in range(sys.getrecursionlimit() + 10):
        deep = [deep]
    assert value_text(deep) == "<a value nested too deeply to show>"


def test_limit_cuts_with_an_ellipsis() -> None:
    assert value_text("x" * 100, limit=10) == "'xxxxxxxx…"
    assert len(value_text("x" * 100, limit=10)) == 10
    assert value_text("short", limit=10) == "'short'"


def test_calls_outcomes_and_mutations() -> None:
    args, kwargs = canon.encode_call((b"9.99",), {"strict": True, "currency": "EUR"})
    assert call_text("parse_amount", args, kwargs) == (
        "parse_amount(b'9.99', currency='EUR', strict=True)"
    )
    assert short_name("refs.messy:parse_amount") == "parse_amount"
    assert short_name("refs.messy:Cart.total") == "Cart.total"
    assert short_name("tests.t:test_x.<locals>.helper") == "helper"
    result = canon.encode((Decimal("9.99"), "USD"))
    assert outcome_text(True, result, None, None) == "returned (Decimal('9.99'), 'USD')"
    assert outcome_text(True, 1, None, None, returned="->") == "-> 1"
    assert outcome_text(False, None, "ValueError", "bad amount: 'x'") == (
        "raised ValueError: bad amount: 'x'"
    )
    assert raised_text("KeyError", "") == "raised KeyError"
    assert raised_text("ValueError", "missing:") == "raised ValueError: missing:"
    mutated = {"0": canon.encode([1, 2]), "key": 3}
    assert mutated_text(mutated) == "args[0] -> [1, 2], key -> 3"
    assert outcome_text(True, None, None, None, mutated) == (
        "returned None; mutated args[0] -> [1, 2], key -> 3"
    )


# --------------------------------------------------------------------------- properties

_ZONES = st.sampled_from([None, zoneinfo.ZoneInfo("Europe/Paris"), dt.UTC])
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.binary(max_size=8),
    st.binary(max_size=8).map(bytearray),
    st.decimals(allow_nan=True, allow_infinity=True),
    st.complex_numbers(allow_nan=True, allow_infinity=True),
    st.datetimes(timezones=_ZONES),
    st.dates(),
    st.times(timezones=_ZONES),
    st.timedeltas(),
    st.uuids(),
    st.text(max_size=8).map(pathlib.PurePosixPath),
    st.sampled_from(Colour),
)
_hashables = st.recursive(
    _scalars.filter(
        lambda v: not isinstance(v, bytearray) and not (isinstance(v, Decimal) and v.is_snan())
    ),
    lambda inner: st.one_of(
        st.tuples(inner, inner),
        st.frozensets(inner, max_size=3),
    ),
    max_leaves=6,
)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.sets(_hashables, max_size=3),
        st.frozensets(_hashables, max_size=3),
        st.dictionaries(st.text(max_size=4), inner, max_size=3),
        st.dictionaries(_hashables, inner, max_size=3),
        st.builds(Point, inner, inner),
        st.builds(Pair, inner, inner),
    )


values = st.recursive(_scalars, _containers, max_leaves=12)


@given(values)
@settings(max_examples=400)
def test_rendering_any_frozen_value_never_raises(value: Any) -> None:
    shown = value_text(canon.encode(value))
    assert isinstance(shown, str) and shown
    assert "<unreadable" not in shown and "<not a frozen value" not in shown


@given(values, st.integers(min_value=1, max_value=60))
@settings(max_examples=400)
def test_a_cut_rendering_is_the_whole_rendering_cut(value: Any, limit: int) -> None:
    """Rendering stops once the scalars written pass the limit: what is shown is still
    exactly the whole rendering, cut."""
    frozen = canon.encode(value)
    assert value_text(frozen, limit=limit) == clip(value_text(frozen), limit)


def test_a_huge_value_cut_is_the_whole_rendering_cut() -> None:
    """A parse tree of a megabyte, of which a refusal shows 240 characters, used to be
    rendered whole first (seconds per refused row in a verifying interpreter); cut, its
    rendering stops early and still reads as the whole one's first characters."""
    huge = canon.encode({"rows": [list(range(50)) for _ in range(4000)], "tail": "end"})
    whole = value_text(huge)
    assert len(whole) > 500_000
    assert value_text(huge, limit=240) == clip(whole, 240)


@given(values, values)
@settings(max_examples=400)
def test_different_frozen_values_render_differently(a: Any, b: Any) -> None:
    frozen_a, frozen_b = canon.encode(a), canon.encode(b)
    if canon.canonical_json(frozen_a) != canon.canonical_json(frozen_b):
        assert value_text(frozen_a) != value_text(frozen_b)
    else:
        assert value_text(frozen_a) == value_text(frozen_b)


_SAME_LOOKING = [
    [(1, 2), [1, 2]],
    [1, "1", 1.0, True, Decimal("1"), complex(1, 0), b"1", bytearray(b"1")],
    [0, False, None, 0.0, -0.0, "", b"", (), [], {}, set(), frozenset()],
    [b"a", "a", bytearray(b"a")],
    [Decimal("1.0"), Decimal("1.00")],
    [{1: "a"}, {"1": "a"}, {(1,): "a"}],
    [float("nan"), "nan", Decimal("NaN")],
    [dt.date(2024, 1, 2), "2024-01-02", dt.datetime(2024, 1, 2)],
    [Pair(1, 2), (1, 2), Point(1, 2)],
]


@pytest.mark.parametrize("group", _SAME_LOOKING)
def test_values_of_different_types_never_read_alike(group: list[Any]) -> None:
    shown = [text(v) for v in group]
    assert len(set(shown)) == len(shown), shown


@given(st.one_of(st.text(), st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)))
@settings(max_examples=500)
def test_a_key_in_a_path_is_written_as_json_writes_it(key: str) -> None:
    """A path names a dict key as JSON text (an attribute's name the short way): the same
    text whichever way, escaped to ASCII only where the key holds a lone surrogate."""
    import json

    from lockstep.canon._core import _key_text

    text = json.dumps(key, ensure_ascii=False)
    if any("\ud800" <= c <= "\udfff" for c in key):
        text = json.dumps(key)
    assert _key_text(key) == text


def test_a_value_s_whole_text_is_bounded() -> None:
    """Without a limit a text still stops at ``WHOLE_MOST`` characters: a form whose objects
    share parts (each ``$same`` place written out in full) reads exponentially longer than
    it is stored, and rendering a marshmallow schema's whole ran until the verifying fork
    was killed ten minutes later."""
    from lockstep.canon.text import WHOLE_MOST, value_text

    nested: object = []
    for _ in range(WHOLE_MOST):  # more containers than the bound, nearly no scalar
        nested = [nested]
    text = value_text([[i] for i in range(WHOLE_MOST)])
    assert WHOLE_MOST // 2 < len(text) <= 2 * WHOLE_MOST and text.endswith("…]"), text[-20:]
    assert len(value_text(nested)) < 4 * WHOLE_MOST  # (too deep: said, not walked)
