"""Calls the codec targets of ``codec_cases`` over a fixed set of tricky values.

``lockstep record codec-...`` runs :func:`main` with one target wrapped and
keeps every distinct call; ``lockstep replay`` calls the current code with the
same arguments and compares.  Calls go through the module attribute, which is
what the recorder wraps.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import uuid
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from decimal import Decimal
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

import codec_cases as cc

UTC = dt.UTC
PLUS_2 = dt.timezone(dt.timedelta(hours=2))


class Name(str):
    """A str subclass: freezes as its base type."""


# fmt: off
VALUES: list[Any] = [
    # the same "one", five types
    1, "1", True, 1.0, Decimal("1"), None, False, 0, "",
    # floats
    -0.0, 0.0, math.nan, math.inf, -math.inf, 0.1, 1 / 3, 1e300, 5e-324, 1e16, 123456789.125,
    # ints of any size
    2**53 + 1, 2**64, -(2**100), 10**40,
    # strings
    "é", "日本語", "\u0000", "tab\tnew\nline", "quote\"back\\slash", "🎉", "\u2028", "\ufeffbom",
    "$tuple", "{}", "[]",
    # sequences
    (), [], (1, 2), [1, 2], (1,), [(1, 2)], ([1, 2],), ((1,), [(2, (3,))]), [[], ()],
    (None, True, 1, 1.0, "1"),
    # bytes
    b"", b"\x00\xff", b"abc", bytearray(), bytearray(b"ab"), [b"a", bytearray(b"a")],
    # sets
    set(), frozenset(), {3, 1, 2}, frozenset({"b", "a"}), {(1, 2), (0,)}, {1, "1", (1,)},
    {frozenset({1}), 2}, [{1}, frozenset({1})],
    # dicts and their keys
    {}, {"a": 1, "b": [1, (2,)]}, {1: "a"}, {"1": "a"}, {True: "a"}, {1.0: "a"}, {None: "a"},
    {(1, 2): "t"}, {b"k": "b"}, {frozenset({1}): "fs"}, {Decimal("1.0"): "d"},
    {1: "int", "1": "str", (1,): "tuple", None: "none", 2.5: "float", b"k": "bytes"},
    {"$tuple": [1]}, {"$": 0, "a": 1}, {"b": 2, "a": 1}, {"nested": {2: {(3,): [4]}}},
    OrderedDict([("z", 1), ("a", 2)]), defaultdict(list, {"k": [1]}), Name("sub"),
    # decimals
    Decimal("1.0"), Decimal("1.00"), Decimal("-0"), Decimal("1E+3"), Decimal("0.000001"),
    Decimal("NaN"), Decimal("-Infinity"), Decimal("123456789012345678901234567890.5"),
    # time
    dt.datetime(2024, 1, 2, 3, 4, 5, 6), dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
    dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=PLUS_2), dt.datetime(2024, 11, 3, 1, 30, fold=1),
    dt.date(2024, 2, 29), dt.time(23, 59, 59, 999999), dt.time(12, 0, tzinfo=UTC),
    dt.timedelta(days=-1, seconds=5), dt.timedelta(0),
    # other scalars
    uuid.UUID("12345678-1234-5678-1234-567812345678"), PurePosixPath("a/b.txt"),
    PureWindowsPath("C:/x/y"), complex(1, -0.0), complex(math.inf, math.nan),
    # user types
    cc.Colour.RED, cc.Level.LOW, cc.Point(1, (2, 3)), cc.Pair(1, [2]), [cc.Pair("a", ("b",))],
    cc.Money(1999, "EUR"), {cc.Money(1, "USD"): "key"},
]

PAIRS: list[tuple[Any, Any]] = [
    (1, "1"), (1, True), (1, 1.0), (0, False), (0.0, -0.0), (math.nan, math.nan),
    ((1, 2), [1, 2]), ([1, (2,)], [1, [2]]), (b"a", bytearray(b"a")), (set(), frozenset()),
    ({1, 2}, {2, 1}), ({"a": 1, "b": 2}, {"b": 2, "a": 1}), ({1: "a"}, {"1": "a"}),
    (Decimal("1.0"), Decimal("1.00")), (Decimal("1"), 1), ("", None), ([], ()),
    (cc.Pair(1, 2), (1, 2)), (OrderedDict([("a", 1)]), {"a": 1}),
]

TEXTS: list[str] = [
    # well-formed
    '"plain"', "[1,2]", "{}", '{"$tuple":[]}', '{"$set":[2,1]}', '{"$dict":[[1,"a"],["1","b"]]}',
    '{"$float":"-inf"}', '{"a":{"$tuple":[{"$bytes":"AP8="}]}}', '{"$decimal":"1.00"}',
    '{"$path":["PurePosixPath","a/b"]}', '{"$enum":["codec_cases:Colour","RED"]}',
    '{"$ext":["selftest:Money",{"$tuple":[5,"EUR"]}]}', '{"$timedelta":[1,2,3]}',
    '{"$datetime":["2024-01-02T03:04:05+00:00",null,0]}', "12345678901234567890123", "-0.0",
    # malformed tagged forms
    '{"$nope":1}', '{"$tuple":5}', '{"$tuple":[],"a":1}', '{"a":1,"$set":[]}',
    '{"$bytes":"!!"}', '{"$bytes":"abc"}', '{"$bytes":5}', '{"$decimal":"x"}', '{"$float":"NaN"}',
    '{"$float":1.5}', '{"$enum":["nomodule","A"]}', '{"$enum":["decimal:Nope","A"]}',
    '{"$enum":["codec_cases:Colour","BLUE"]}', '{"$enum":["no_such_module_xyz:C","A"]}',
    '{"$dataclass":["decimal:Decimal",{}]}', '{"$namedtuple":["codec_cases:Pair",[1]]}',
    '{"$path":["Foo","x"]}', '{"$dict":[[1]]}', '{"$dict":5}', '{"$set":[[1]]}',
    '{"$datetime":["2024-01-01T00:00:00","Not/AZone",0]}', '{"$date":"not-a-date"}',
    '{"$ext":["nope",1]}', '{"$uuid":"zz"}', '{"$timedelta":[1]}', '{"$complex":[1]}',
    '[1,{"a":{"$set":3}}]', '{"k":[0,{"$tuple":{"x":1}}]}',
    # oracle files are data: names of callables and unimported modules are refused, never used
    '{"$namedtuple":["os:system",["echo pwned"]]}', '{"$enum":["this:s","x"]}',
    '{"$dataclass":["builtins:eval",{}]}', '{"$enum":["codec_cases:Point","x"]}',
    '{"$namedtuple":["codec_cases:Pair",[1,2]]}', '{"$dataclass":["codec_cases:Point",{"x":1}]}',
    # limits and strict payloads
    '{"$timedelta":[999999999999,0,0]}', '{"$decimal":"1e99999999999999999999"}',
    '{"$decimal":"1e3"}', '{"$set":"ab"}', '{"$set":[1,1]}', '{"$bytes":"AB=="}',
    "[" * 201 + "]" * 201, "-" + "9" * 4300,
    # not JSON at all
    '{"a":', "", "nan", "[1,]",
]
# fmt: on

REFUSED = list(cc.SPECIALS)

# fmt: off
EXCEPTIONS: list[tuple[str, list[Any], int]] = [
    ("ValueError", ["empty amount"], 48),
    ("ValueError", ["  bad\n\tamount:   '12,5'  "], 48),
    ("ValueError", ["x" * 60], 48),
    ("ValueError", ["x" * 60], 10),
    ("ValueError", [], 48),
    ("ValueError", ["a", 2], 48),
    ("KeyError", ["qty"], 48),
    ("OSError", [2, "No such file or directory"], 48),
    ("LegacyError", ["legacy: code 7"], 48),
    ("Outer.InnerError", ["missing"], 48),
    ("KeyboardInterrupt", [], 48),
]
# fmt: on


def attempt(target: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Call a target; an exception it raises is behaviour too, and the ledger keeps it."""
    with contextlib.suppress(Exception):
        target(*args, **kwargs)


def main() -> None:
    for value in VALUES:
        attempt(cc.encode_text, value)
        attempt(cc.roundtrip, value)
    for value in [(1, 2), [(1, (2,))], {(1,): (2,)}, cc.Pair(1, (2,)), {(1, 2)}, [1, 2]]:
        attempt(cc.encode_text, value, loose=True)
        attempt(cc.roundtrip, value, loose=True)
    for a, b in PAIRS:
        attempt(cc.same, a, b)
        attempt(cc.same, a, b, loose=True)
    for text in TEXTS:
        attempt(cc.decode_text, text)
    for name in REFUSED:
        attempt(cc.encode_special, name)
    for exc_type, args, stem_length in EXCEPTIONS:
        attempt(cc.freeze, exc_type, args, stem_length)


if __name__ == "__main__":
    main()
