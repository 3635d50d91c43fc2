"""The canonical codec: lossless, typed round trips and injectivity, by property and by example."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import io
import math
import pathlib
import socket
import threading
import uuid
import zoneinfo
from collections import Counter, OrderedDict, defaultdict
from decimal import Decimal
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sortedcontainers import SortedDict, SortedList

from lockstep import canon
from lockstep.errors import CanonError


class Color(enum.Enum):
    RED = "r"
    BLUE = "b"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass(frozen=True)
class Money:
    amount: Decimal
    currency: str


class Point(NamedTuple):
    x: int
    y: int


# ----------------------------------------------------------------- strict equality


def same(a: Any, b: Any) -> bool:
    """Equal *and* of the same types all the way down; NaN equals NaN, -0.0 differs from 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, complex):
        return same(a.real, b.real) and same(a.imag, b.imag)
    if isinstance(a, Decimal):
        return a.as_tuple() == b.as_tuple()
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, set | frozenset):
        return len(a) == len(b) and all(any(same(x, y) for y in b) for x in a)
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        if getattr(a, "default_factory", None) is not getattr(b, "default_factory", None):
            return False
        if isinstance(a, OrderedDict) and not all(
            same(ka, kb) for ka, kb in zip(a, b, strict=True)
        ):
            return False
        for ka, va in a.items():
            match = [kb for kb in b if same(ka, kb)]
            if len(match) != 1 or not same(va, b[match[0]]):
                return False
        return True
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, dt.datetime | dt.time):
        return (
            a == b and a.tzinfo == b.tzinfo and a.fold == b.fold and a.isoformat() == b.isoformat()
        )
    return bool(a == b)


# ----------------------------------------------------------------- strategies

floats = st.floats(allow_nan=True, allow_infinity=True)
decimals = st.decimals(allow_nan=False, allow_infinity=False, places=None) | st.sampled_from(
    [Decimal("1.0"), Decimal("1.00"), Decimal("-0"), Decimal("1E+3"), Decimal("NaN")]
)
zones = st.sampled_from(
    [None, dt.UTC, dt.timezone(dt.timedelta(hours=-5)), zoneinfo.ZoneInfo("Europe/Paris")]
)
datetimes = st.builds(
    lambda d, tz, fold: d.replace(tzinfo=tz, fold=fold),
    st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)),
    zones,
    st.integers(0, 1),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**64, max_value=2**200),
    floats,
    st.text(),
    st.text(alphabet="$abc", max_size=4),
    st.binary(max_size=16),
    st.binary(max_size=8).map(bytearray),
    decimals,
    st.dates(),
    datetimes,
    st.times(timezones=st.sampled_from([None, dt.UTC])),
    st.timedeltas(),
    st.uuids(),
    st.sampled_from(
        [pathlib.Path("a/b.txt"), pathlib.PurePosixPath("/x"), pathlib.PureWindowsPath("C:/y")]
    ),
    st.sampled_from(list(Color) + list(Level)),
    st.complex_numbers(allow_nan=False),
    st.sampled_from([NotImplemented, Ellipsis]),  # a dunder's "not for this operand"
)
hashables = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.text(max_size=5),
        st.binary(max_size=4),
        st.uuids(),
    ),
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3),
    max_leaves=6,
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=5), inner, max_size=4),
        st.dictionaries(hashables, inner, max_size=3),
        st.sets(hashables, max_size=4),
        st.frozensets(hashables, max_size=4),
        st.builds(Money, decimals, st.text(max_size=3)),
        st.builds(Point, st.integers(), st.integers()),
        st.dictionaries(hashables, inner, max_size=3).map(OrderedDict),
        st.builds(
            defaultdict,
            st.sampled_from([None, int, list, str]),
            st.dictionaries(hashables, inner, max_size=3),
        ),
        st.dictionaries(hashables, st.integers(), max_size=3).map(Counter),
        st.dictionaries(st.integers(), inner, max_size=3).map(SortedDict),
        st.lists(st.integers(), max_size=4).map(SortedList),
    ),
    max_leaves=12,
)


@given(values)
@settings(max_examples=400)
def test_round_trip_keeps_value_and_types(value: Any) -> None:
    thawed = canon.loads(canon.dumps(value))
    assert same(thawed, value), (value, thawed)


@given(values)
@settings(max_examples=200)
def test_encoding_is_deterministic(value: Any) -> None:
    assert canon.dumps(value) == canon.dumps(canon.loads(canon.dumps(value)))


@given(values, values)
@settings(max_examples=400)
def test_encode_is_injective(a: Any, b: Any) -> None:
    if canon.dumps(a) == canon.dumps(b):
        assert same(a, b), (a, b)
    else:
        assert not same(a, b), (a, b)


@given(st.lists(st.text(max_size=3), max_size=6))
def test_set_order_is_canonical(items: list[str]) -> None:
    assert canon.dumps(set(items)) == canon.dumps(set(reversed(items)))


# ----------------------------------------------------------------- examples


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({1: "x"}, {"1": "x"}),
        ((1,), [1]),
        (True, 1),
        (False, 0),
        (1, 1.0),
        (Decimal("1.0"), Decimal("1.00")),
        (0.0, -0.0),
        (b"a", "a"),
        (b"a", bytearray(b"a")),
        ({1, 2}, frozenset({1, 2})),
        (Color.RED, "r"),
        (Level.LOW, 1),
        (Point(1, 2), (1, 2)),
        ({"$tuple": [1]}, (1,)),
        (None, "null"),
    ],
)
def test_different_values_never_encode_alike(a: Any, b: Any) -> None:
    assert canon.dumps(a) != canon.dumps(b)


def test_a_dict_that_looks_like_a_tag_is_not_mistaken_for_one() -> None:
    value = {"$tuple": [1, 2]}
    frozen = canon.dumps(value)
    assert canon.loads(frozen) == value
    assert type(canon.loads(frozen)["$tuple"]) is list


def test_a_hand_written_tag_with_extra_keys_is_refused() -> None:
    with pytest.raises(CanonError, match="must be the only key"):
        canon.decode({"$tuple": [1], "other": 2})


def test_a_const_tag_names_only_the_two_constants() -> None:
    assert canon.loads(b'{"$const":"NotImplemented"}') is NotImplemented
    assert canon.loads(b'[{"$const":"Ellipsis"}]') == [Ellipsis]
    for payload in (b'{"$const":"os.system"}', b'{"$const":1}'):
        with pytest.raises(CanonError, match=r"\$const"):
            canon.loads(payload)


def test_an_unknown_tag_is_refused_with_its_path() -> None:
    with pytest.raises(CanonError, match=r'value\["a"\]: unknown tag'):
        canon.decode({"a": {"$mystery": 1}})


def test_canonical_bytes_are_sorted_compact_and_utf8() -> None:
    assert canon.dumps({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()
    assert canon.dumps(0.1) == b"0.1"
    assert canon.dumps(1e16) == b"1e16"
    assert canon.dumps(float("nan")) == b'{"$float":"nan"}'
    assert canon.dumps(-0.0) == b"-0.0"


def test_decimal_keeps_its_exponent() -> None:
    assert canon.dumps(Decimal("1.00")) == b'{"$decimal":"1.00"}'
    assert canon.loads(canon.dumps(Decimal("1.00"))).as_tuple().exponent == -2


def test_timezones_survive() -> None:
    paris = dt.datetime(2024, 3, 31, 2, 30, tzinfo=zoneinfo.ZoneInfo("Europe/Paris"))
    assert canon.loads(canon.dumps(paris)).tzinfo == zoneinfo.ZoneInfo("Europe/Paris")
    fixed = dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert canon.loads(canon.dumps(fixed)).utcoffset() == dt.timedelta(hours=2)


def test_loose_mode_treats_tuple_and_list_alike() -> None:
    assert canon.dumps((1, [2, (3,)]), loose=True) == canon.dumps([1, [2, [3]]], loose=True)
    assert canon.dumps((1,)) != canon.dumps([1])


@pytest.mark.parametrize(
    ("value", "where", "what"),
    [
        ((1, {"conn": socket.socket()}), 'args[1]["conn"]', "socket"),
        ([io.TextIOWrapper(io.BytesIO())], "args[0]", "TextIOWrapper"),
        ({"gen": (i for i in range(3))}, 'args["gen"]', "generator"),
        ({2: threading.Semaphore()}, "args[2]", "Semaphore"),
        (Money(Decimal(1), object()), "args.currency", "object"),  # type: ignore[arg-type]
    ],
)
def test_unfreezable_values_are_refused_with_their_path(value: Any, where: str, what: str) -> None:
    with pytest.raises(CanonError) as info:
        canon.encode(value, path="args")
    message = str(info.value)
    assert message.startswith(f"{where}: cannot freeze")
    assert what.lower() in message.lower()
    if what == "generator":  # no encoder can help: its items exist only once consumed
        assert "freeze a function that consumes it" in message
    elif what == "object":  # a bare object() freezes only as a marker a module keeps
        assert "kept as a global by the module" in message
    elif what == "TextIOWrapper":  # a file freezes as what it reads, open for reading alone
        assert "not open for reading alone" in message
    else:
        assert "register_encoder" in message


def test_a_reference_cycle_is_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(CanonError, match="cycle"):
        canon.encode(loop)


class Opaque:
    def __init__(self, token: str) -> None:
        self.token = token

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque) and other.token == self.token

    def __hash__(self) -> int:
        return hash(self.token)


def test_registered_encoders_freeze_user_types() -> None:
    canon.register_encoder(Opaque, lambda o: (o.token,), lambda v: Opaque(v[0]), name="test.Opaque")
    try:
        frozen = canon.dumps({"o": Opaque("abc")})
        assert frozen == b'{"o":{"$ext":["test.Opaque",{"$tuple":["abc"]}]}}'
        assert canon.loads(frozen) == {"o": Opaque("abc")}
    finally:
        canon.unregister_encoder(Opaque)
    with pytest.raises(CanonError, match="no encoder is registered"):
        canon.loads(frozen)


def test_the_standard_librarys_dicts_keep_their_kind_and_others_are_refused() -> None:
    """An object's state thawed with a plain dict for its defaultdict or OrderedDict replays
    otherwise (KeyError where it counted, no popitem(last=False)): each keeps its kind."""
    ordered = canon.loads(canon.dumps(OrderedDict([(10, "a"), (2, "b")])))
    assert type(ordered) is OrderedDict and list(ordered) == [10, 2]
    assert canon.dumps(OrderedDict(b=1, a=2)) != canon.dumps(OrderedDict(a=2, b=1))
    counts = canon.loads(canon.dumps(defaultdict(int, {"b": 1})))
    assert type(counts) is defaultdict and counts.default_factory is int
    counts["new"] += 1
    assert canon.dumps(defaultdict(int, {1: 2})) == canon.dumps(defaultdict(int, {1: 2}))
    assert canon.dumps(defaultdict(int, {1: 2})) != canon.dumps(defaultdict(list, {1: 2}))
    assert canon.dumps(defaultdict(int, {1: 2})) != canon.dumps({1: 2})
    tally = canon.loads(canon.dumps(Counter("abracadabra")))
    assert type(tally) is Counter and tally["z"] == 0 and tally.most_common(1) == [("a", 5)]
    assert canon.dumps(Counter(a=1, b=2)) == canon.dumps(Counter(b=2, a=1))  # equal: same bytes

    class Sorted(dict):  # a dict subclass of another library (sortedcontainers' SortedDict)
        pass

    with pytest.raises(
        CanonError, match=r'value\["v"\]\[0\]: cannot freeze a .*Sorted: as a plain dict'
    ):
        canon.dumps({"v": [Sorted(a=1)]})
    with pytest.raises(CanonError, match=r"value\.default_factory: cannot freeze function"):
        canon.dumps(defaultdict(lambda: 0))


def test_sortedcontainers_collections_keep_their_class_and_order() -> None:
    """A SortedDict (portion's IntervalDict holds one, sorted by its own key function)
    thaws as a SortedDict with that key, not a dict."""
    from sortedcontainers import SortedDict, SortedKeyList, SortedList, SortedSet

    for value in (SortedDict({10: "a", 2: "b"}), SortedList([3, 1, 2]), SortedSet(["b", "a"])):
        thawed = canon.loads(canon.dumps(value))
        assert type(thawed) is type(value) and list(thawed) == list(value)
    table = canon.loads(canon.dumps({"t": SortedDict({10: "a", 2: "b"})}))["t"]
    assert table.popitem(-1) == (10, "a") and table.peekitem(0) == (2, "b")
    assert canon.dumps(SortedDict({1: 2})) != canon.dumps({1: 2})
    # a key that freezes by name (a pure builtin here; the target's own functions too)
    keyed = canon.loads(canon.dumps(SortedDict(abs, {-3: "a", 2: "b"})))
    assert type(keyed) is SortedDict and keyed.key is abs and list(keyed) == [2, -3]
    by_abs = canon.loads(canon.dumps(SortedKeyList([-3, 2], key=abs)))
    assert type(by_abs) is SortedKeyList and list(by_abs) == [2, -3]
    with pytest.raises(CanonError, match=r"value\.key: cannot freeze function .*<lambda>"):
        canon.dumps(SortedDict(lambda k: -k, {1: 2}))
    for malformed in (
        '{"$sorted": ["subprocess", null, []]}',
        '{"$sorted": ["SortedList", {"$fn": "builtins:abs"}, []]}',
        '{"$sorted": ["SortedDict", "builtins:abs", []]}',
        '{"$sorted": ["SortedDict", {"$fn": "os:system"}, []]}',  # no data names code
    ):
        with pytest.raises(CanonError):
            canon.loads(malformed)


@pytest.mark.parametrize(
    "frozen",
    [
        '{"$defaultdict": [{"$fn": "os:system"}, []]}',  # nothing named in the data is called
        '{"$defaultdict": ["builtins:int", []]}',
        '{"$defaultdict": [null]}',
        '{"$odict": [[1, 2], [1, 3]]}',
        '{"$counter": {"a": 1}}',
    ],
)
def test_a_malformed_dict_kind_is_refused(frozen: str) -> None:
    with pytest.raises(CanonError):
        canon.loads(frozen)


@pytest.mark.parametrize(
    ("exc", "type_name", "stem"),
    [
        (ValueError("bad   amount:\n  '9.99x'"), "ValueError", "bad amount: '9.99x'"),
        (KeyError("k"), "KeyError", "'k'"),
        (CanonError("x", "p"), "lockstep.errors.CanonError", "p: x"),
        (RuntimeError("y" * 100), "RuntimeError", "y" * 48),
    ],
)
def test_exceptions_freeze_as_type_and_stem(exc: BaseException, type_name: str, stem: str) -> None:
    frozen = canon.freeze_exception(exc)
    assert (frozen.exc_type, frozen.exc_stem) == (type_name, stem)


def test_stem_length_is_configurable() -> None:
    assert canon.freeze_exception(ValueError("abcdef"), stem_length=3).exc_stem == "abc"


@given(st.text())
def test_message_stem_is_folded_and_bounded(message: str) -> None:
    stem = canon.message_stem(message)
    assert len(stem) <= canon.DEFAULT_STEM
    assert "  " not in stem and "\n" not in stem
    assert stem == stem.strip()


def test_the_uuid_and_path_tags_are_readable() -> None:
    u = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert canon.dumps(u) == b'{"$uuid":"12345678-1234-5678-1234-567812345678"}'
    assert canon.dumps(pathlib.PurePosixPath("/a")) == b'{"$path":["PurePosixPath","/a"]}'
