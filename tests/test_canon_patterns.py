"""``$re`` and ``$partial``: compiled patterns and partials of named functions freeze by
their parts, thaw inert, and only their canonical form is read."""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from collections.abc import Iterator
from json.decoder import py_scanstring
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockstep import canon
from lockstep.canon.callables import callables_from
from lockstep.canon.text import value_text
from lockstep.errors import CanonError


@pytest.fixture(autouse=True)
def _json_as_the_target_s_package() -> Iterator[None]:
    """json.decoder's functions stand for the target's own (only for these tests)."""
    with callables_from("json"):
        yield


_FLAGS = [0, re.IGNORECASE, re.MULTILINE | re.DOTALL, re.VERBOSE, re.ASCII]


@given(
    st.sampled_from([r"a\d+", r"(?P<x>[0-9a-f]+)", r"^\s*$", "", r"\{\}"]),
    st.sampled_from(_FLAGS),
    st.booleans(),
)
def test_a_pattern_round_trips_with_its_flags(source: str, flags: int, as_bytes: bool) -> None:
    pattern: Any = source.encode() if as_bytes else source
    if as_bytes and flags & re.ASCII:
        flags &= ~re.ASCII  # bytes patterns are ASCII already and refuse the flag
    value = re.compile(pattern, flags)
    frozen = canon.encode(value)
    thawed = canon.decode(json.loads(json.dumps(frozen)))
    assert type(thawed) is re.Pattern
    assert (thawed.pattern, thawed.flags) == (value.pattern, value.flags)
    assert canon.encode(thawed) == frozen


def test_a_changed_pattern_or_flag_freezes_differently() -> None:
    base = canon.encode(re.compile("a+"))
    assert canon.encode(re.compile("a*")) != base
    assert canon.encode(re.compile("a+", re.I)) != base
    assert value_text(canon.encode(re.compile("a+", re.I))) == "re.compile('a+', 34)"


def test_a_partial_of_a_named_function_round_trips() -> None:
    value = functools.partial(py_scanstring, "ab", strict=True)
    frozen = canon.encode(value)
    assert frozen == {"$partial": [{"$fn": "json.decoder:py_scanstring"}, ["ab"], {"strict": True}]}
    thawed = canon.decode(frozen)
    assert type(thawed) is functools.partial
    assert (thawed.func, thawed.args, thawed.keywords) == (py_scanstring, ("ab",), {"strict": True})
    assert value_text(frozen) == "partial(py_scanstring, 'ab', strict=True)"
    changed = functools.partial(py_scanstring, "ab", strict=False)
    assert canon.encode(changed) != frozen


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (functools.partial(lambda x: x, 1), "cannot freeze function '<lambda>'"),
        (functools.partial([].append), "value.func: cannot freeze"),  # bound to a list
        (functools.partial(re.compile("a").search), "partial over a callable object"),
        (functools.partial(len, [1]), None),  # a pure builtin: freezes
    ],
)
def test_a_partial_over_an_unnamed_callable_is_refused(value: Any, reason: str | None) -> None:
    if reason is None:
        assert canon.decode(canon.encode(value)).func is len
        return
    with pytest.raises(CanonError, match=re.escape(reason)):
        canon.encode(value)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"$re": ["a", 0]}, "the flags compiling it gives (32)"),  # not canonical
        ({"$re": ["(", 32]}, "does not compile"),
        ({"$re": [1, 32]}, "pattern (str or bytes)"),
        ({"$re": "a"}, "$re"),
        ({"$partial": [{"$fn": "os:system"}, ["true"], {}]}, "$fn names 'os:system'"),
        ({"$partial": ["os:system", [], {}]}, "a $fn naming its function"),
        ({"$partial": [{"$fn": "json.decoder:py_scanstring"}, {}, {}]}, "an array of arguments"),
        ({"$partial": [{"$fn": "json.decoder:py_scanstring"}, [], []]}, "an object of keywords"),
    ],
)
def test_a_malformed_or_hostile_payload_is_one_canon_error(
    payload: dict[str, Any], message: str
) -> None:
    with pytest.raises(CanonError, match=re.escape(message)):
        canon.decode(payload)


@pytest.mark.parametrize(
    "value",
    [
        dt.UTC,
        dt.timezone(dt.timedelta(hours=1)),
        dt.timezone(dt.timedelta(hours=-8), "-08:00"),
        dt.datetime(2020, 1, 2, 3, 4, tzinfo=dt.timezone(dt.timedelta(hours=-8), "-08:00")),
        dt.time(3, 4, tzinfo=dt.timezone(dt.timedelta(minutes=90), "Z+1:30")),
        dt.datetime(2020, 1, 2, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    ],
)
def test_a_fixed_offset_zone_round_trips_with_its_name(value: Any) -> None:
    frozen = canon.encode(value)
    thawed = canon.decode(json.loads(json.dumps(frozen)))
    assert thawed == value and type(thawed) is type(value)
    assert thawed.tzname() if not isinstance(value, dt.tzinfo) else True
    zone = thawed if isinstance(thawed, dt.tzinfo) else thawed.tzinfo
    original = value if isinstance(value, dt.tzinfo) else value.tzinfo
    assert zone.tzname(None) == original.tzname(None)  # "-08:00" is not "UTC-08:00"
    assert canon.encode(thawed) == frozen


def test_a_named_offset_and_its_default_name_freeze_apart() -> None:
    named = dt.datetime(2020, 1, 2, tzinfo=dt.timezone(dt.timedelta(hours=-8), "-08:00"))
    plain = dt.datetime(2020, 1, 2, tzinfo=dt.timezone(dt.timedelta(hours=-8)))
    assert canon.encode(named) != canon.encode(plain)
    assert canon.encode(plain)["$datetime"][1] is None  # unnamed: the ISO text has it


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"$timezone": [{"$timedelta": [0, 3600, 0]}, "UTC+01:00"]}, "null for the offset's"),
        ({"$timezone": [{"$timedelta": [1, 0, 0]}, None]}, "strictly between"),
        ({"$timezone": [3600, None]}, "[offset (a $timedelta), name or null]"),
        (
            {
                "$datetime": [
                    "2020-01-01T00:00:00+01:00",
                    {"$timezone": [{"$timedelta": [0, 3600, 0]}, None]},
                    0,
                ]
            },
            "an unnamed fixed offset is written null",
        ),
    ],
)
def test_a_malformed_timezone_is_one_canon_error(payload: dict[str, Any], message: str) -> None:
    with pytest.raises(CanonError, match=re.escape(message)):
        canon.decode(payload)
