"""Decoding is inert: a value read from an oracle file imports nothing and calls nothing it names.

Oracle files arrive in pull requests.  A tag that names ``module:callable`` must
never reach the callable, a module that is not imported must stay unimported,
and a class of the wrong kind is refused with a one-line error that names the
path and the name.  Legitimate enums, dataclasses and named tuples of imported
modules still round-trip.  The limits (depth, int size, strict payload shapes)
refuse with :class:`CanonError` and nothing else.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import http
import json
import os
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from lockstep import canon
from lockstep.errors import CanonError


class Color(enum.Enum):
    RED = "r"
    BLUE = "b"


class Level(enum.IntEnum):
    LOW = 1


@dataclasses.dataclass(frozen=True)
class Money:
    amount: Any
    currency: str


@dataclasses.dataclass(slots=True)
class Slotted:
    x: Any


class Point(NamedTuple):
    x: Any
    y: Any


class Outer:
    @dataclasses.dataclass
    class Inner:
        value: Any

    class Mode(enum.Enum):
        ON = 1


class PlainTuple(tuple[Any, ...]):
    """A tuple subclass without ``_fields``: not a named tuple."""


ColorAlias = Color  # the same class under another name: not the name it freezes under

# --------------------------------------------------------------------------- helpers

TAGS = ("$enum", "$dataclass", "$namedtuple")


def tagged(tag: str, name: str) -> dict[str, Any]:
    """A well-shaped payload for ``tag`` naming ``name``: only the name is wrong."""
    if tag == "$enum":
        return {tag: [name, "RED"]}
    if tag == "$dataclass":
        return {tag: [name, {}]}
    return {tag: [name, ["echo pwned"]]}


def refused(obj: Any, *, path: str = "value") -> str:
    """Decode ``obj`` (as given and through ``loads``), expecting a CanonError; its message."""
    with pytest.raises(CanonError) as info:
        canon.decode(obj, path=path)
    with pytest.raises(CanonError) as again:
        canon.loads(json.dumps(obj), path=path)
    assert str(again.value) == str(info.value)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.fixture
def tripwires(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Replace the callables an attacker would name with ones that note being called."""
    calls: list[str] = []

    def trip(name: str) -> Any:
        def called(*args: Any, **kwargs: Any) -> None:
            calls.append(name)

        return called

    for module, attr in [
        (os, "system"),
        (os, "popen"),
        (subprocess, "call"),
        (subprocess, "run"),
        (subprocess, "Popen"),
    ]:
        monkeypatch.setattr(module, attr, trip(f"{module.__name__}:{attr}"))
    yield calls
    assert calls == [], f"decoding called {calls}"


# --------------------------------------------------------------------------- callables by name

CALLABLES = [
    "os:system",
    "os:popen",
    "subprocess:call",
    "subprocess:run",
    "subprocess:Popen",
    "builtins:eval",
    "builtins:exec",
    "builtins:__import__",
    "builtins:open",
    "importlib:import_module",
    "pickle:loads",
    "shutil:rmtree",
    "os:remove",
]


@pytest.mark.parametrize("name", CALLABLES)
@pytest.mark.parametrize("tag", TAGS)
def test_a_tag_naming_a_callable_is_refused_and_nothing_is_called(
    tag: str, name: str, tripwires: list[str]
) -> None:
    message = refused({"args": [tagged(tag, name)]}, path="row")
    noun = {"$enum": "an Enum class", "$dataclass": "a dataclass", "$namedtuple": "a NamedTuple"}
    assert message.startswith(f'row["args"][0]: {tag} names {name!r}, which is not {noun[tag]}')
    assert message.endswith("already imported or registered")


def test_the_issue_example_names_the_argument_path(tripwires: list[str]) -> None:
    with pytest.raises(CanonError) as info:
        canon.decode([{"$namedtuple": ["os:system", ["touch /tmp/x"]]}], path="args")
    assert str(info.value) == (
        "args[0]: $namedtuple names 'os:system', "
        "which is not a NamedTuple class already imported or registered"
    )


def test_builtins_are_never_reached_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    names = ("eval", "exec", "__import__", "compile", "open", "getattr")
    payloads = [json.dumps(tagged(tag, f"builtins:{attr}")) for tag in TAGS for attr in names]
    calls: list[str] = []
    errors: list[BaseException] = []
    for attr in names:
        original = getattr(builtins, attr)

        def noted(*args: Any, _attr: str = attr, _original: Any = original, **kw: Any) -> Any:
            calls.append(_attr)
            return _original(*args, **kw)

        monkeypatch.setattr(builtins, attr, noted)
    calls.clear()  # monkeypatch itself imports and looks up while patching
    for text in payloads:  # nothing but the codec runs while the builtins are noted
        try:
            canon.loads(text)
        except CanonError as e:
            errors.append(e)
    monkeypatch.undo()
    assert calls == []
    assert len(errors) == len(payloads)
    assert all("already imported or registered" in str(e) for e in errors)


# --------------------------------------------------------------------------- modules by name


@pytest.fixture
def booby_trapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A module and a package on sys.path whose import writes a marker file."""
    marker = tmp_path / "imported.txt"
    body = f"""
import dataclasses, enum, typing
open({str(marker)!r}, "a").write(__name__ + "\\n")

class Thing(enum.Enum):
    RED = 1

@dataclasses.dataclass
class Data:
    x: int = 0

class Pair(typing.NamedTuple):
    a: int
    b: int
"""
    (tmp_path / "lockstep_trap_mod.py").write_text(body)
    pkg = tmp_path / "lockstep_trap_pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text(body)
    (pkg / "sub" / "__init__.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    return marker


TRAPS = [
    ("$enum", "lockstep_trap_mod:Thing"),
    ("$dataclass", "lockstep_trap_mod:Data"),
    ("$namedtuple", "lockstep_trap_mod:Pair"),
    ("$enum", "lockstep_trap_pkg.sub:Thing"),
    ("$dataclass", "lockstep_trap_pkg:Data"),
    ("$namedtuple", "lockstep_trap_pkg.sub:Pair"),
    ("$enum", "this:s"),  # the issue's example: importing `this` prints the Zen of Python
    ("$enum", "antigravity:geohash"),  # importing `antigravity` opens a web browser
]


@pytest.mark.parametrize(("tag", "name"), TRAPS)
def test_a_module_that_is_not_imported_stays_unimported(
    tag: str, name: str, booby_trapped: Path
) -> None:
    module = name.partition(":")[0]
    top = module.partition(".")[0]
    assert module not in sys.modules and top not in sys.modules
    message = refused({"x": (tagged(tag, name))})
    assert f"names {name!r}" in message
    assert module not in sys.modules and top not in sys.modules
    assert not booby_trapped.exists()


def test_the_same_module_resolves_once_the_program_imported_it(booby_trapped: Path) -> None:
    try:
        import lockstep_trap_mod  # type: ignore[import-not-found]

        assert booby_trapped.read_text() == "lockstep_trap_mod\n"
        assert canon.decode({"$enum": ["lockstep_trap_mod:Thing", "RED"]}) is (
            lockstep_trap_mod.Thing.RED
        )
        assert booby_trapped.read_text() == "lockstep_trap_mod\n"  # not imported again
    finally:
        sys.modules.pop("lockstep_trap_mod", None)


def test_a_module_getattr_is_not_consulted(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    lazy = types.ModuleType("lockstep_lazy_mod")

    def module_getattr(name: str) -> Any:
        asked.append(name)
        return Color

    lazy.__getattr__ = module_getattr  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "lockstep_lazy_mod", lazy)
    refused({"$enum": ["lockstep_lazy_mod:Color", "RED"]})
    assert asked == []


def test_something_not_a_module_in_sys_modules_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "lockstep_not_a_module", {"Color": Color})  # type: ignore[arg-type]
    refused({"$enum": ["lockstep_not_a_module:Color", "RED"]})


# --------------------------------------------------------------------------- the wrong kind

WRONG_KIND = [
    # $enum naming something that is not an Enum class
    ("$enum", f"{__name__}:Money"),
    ("$enum", f"{__name__}:Point"),
    ("$enum", f"{__name__}:Color.RED"),  # a member, not the class
    ("$enum", "builtins:int"),
    ("$enum", "decimal:Decimal"),
    ("$enum", "os:environ"),
    # $dataclass naming something that is not a dataclass
    ("$dataclass", f"{__name__}:Color"),
    ("$dataclass", f"{__name__}:Point"),
    ("$dataclass", "decimal:Decimal"),
    ("$dataclass", "builtins:object"),
    ("$dataclass", "collections:OrderedDict"),
    # $namedtuple naming something that is not a named tuple
    ("$namedtuple", f"{__name__}:Money"),
    ("$namedtuple", f"{__name__}:PlainTuple"),
    ("$namedtuple", "builtins:tuple"),
    ("$namedtuple", "builtins:str"),
    ("$namedtuple", "os:stat_result"),  # a struct sequence, not a NamedTuple
    ("$namedtuple", "collections:namedtuple"),  # the factory function
    # names that do not name the class they reach
    ("$enum", f"{__name__}:ColorAlias"),
    ("$enum", f"{__name__}:Nope"),
    ("$enum", f"{__name__}"),
    ("$enum", ":Color"),
    ("$enum", f"{__name__}:"),
    ("$enum", f"{__name__}:Outer..Mode"),
]


@pytest.mark.parametrize(("tag", "name"), WRONG_KIND)
def test_a_class_of_the_wrong_kind_is_refused(tag: str, name: str) -> None:
    message = refused([1, tagged(tag, name)])
    assert message.startswith(f"value[1]: {tag} names {name!r}, which is not ")


def test_building_a_value_runs_none_of_the_class_code() -> None:
    calls: list[str] = []

    @dataclasses.dataclass
    class Checked:
        x: int

        def __post_init__(self) -> None:
            calls.append("post_init")

        def __init__(self, x: int) -> None:  # type: ignore[misc]
            calls.append("init")
            self.x = x

    class Guarded(NamedTuple):
        a: int

    def guarded_new(cls: type, *args: Any) -> Any:
        calls.append("new")
        return tuple.__new__(cls, args)

    Guarded.__new__ = guarded_new  # type: ignore[method-assign,assignment]
    canon.register_type(Checked)
    canon.register_type(Guarded)
    try:
        assert canon.decode({"$dataclass": [canon.qualified_name(Checked), {"x": 1}]}).x == 1
        back = canon.decode({"$namedtuple": [canon.qualified_name(Guarded), [2]]})
        assert type(back) is Guarded and back.a == 2
    finally:
        canon.unregister_type(Checked)
        canon.unregister_type(Guarded)
    assert calls == []


def test_a_dataclass_payload_sets_only_the_declared_fields() -> None:
    name = f"{__name__}:Money"
    for fields in (
        {"amount": 1},
        {"amount": 1, "currency": "EUR", "__class__": "x"},
        {"amount": 1, "__dict__": {}},
    ):
        message = refused({"$dataclass": [name, fields]})
        assert "has the fields (amount, currency)" in message


def test_a_namedtuple_payload_must_have_every_field() -> None:
    message = refused({"$namedtuple": [f"{__name__}:Point", [1, 2, 3]]})
    assert message.endswith("has 2 fields (x, y), not 3")


def test_an_enum_member_is_looked_up_never_called() -> None:
    assert canon.decode({"$enum": [f"{__name__}:Color", "RED"]}) is Color.RED
    assert "has no member" in refused({"$enum": [f"{__name__}:Color", "r"]})  # a value
    assert "has no member" in refused({"$enum": [f"{__name__}:Color", "_missing_"]})
    assert "has no member" in refused({"$enum": [f"{__name__}:Color", "mro"]})


# --------------------------------------------------------------------------- what still works


def test_types_of_imported_modules_round_trip() -> None:
    values = [
        Color.BLUE,
        Level.LOW,
        Money(canon.decode({"$decimal": "1.10"}), "EUR"),
        Slotted([1, (2,)]),
        Point(1, (2, 3)),
        Outer.Inner(Outer.Mode.ON),
        [Point(Color.RED, Money(1, "x")), {Level.LOW: Point(1, 2)}],
        http.HTTPStatus.NOT_FOUND,
    ]
    for value in values:
        frozen = canon.dumps(value)
        back = canon.loads(frozen)
        assert back == value and type(back) is type(value), value
        assert canon.dumps(back) == frozen


def test_a_class_defined_in_a_function_needs_register_type() -> None:
    class Local(enum.Enum):
        A = 1

    frozen = canon.dumps(Local.A)
    assert b"<locals>" in frozen
    with pytest.raises(CanonError, match="not an Enum class already imported or registered"):
        canon.loads(frozen)
    assert canon.register_type(Local) is Local
    try:
        assert canon.loads(frozen) is Local.A
    finally:
        canon.unregister_type(Local)
    with pytest.raises(CanonError):
        canon.loads(frozen)


def test_register_type_takes_only_the_three_kinds() -> None:
    for cls in (int, tuple, PlainTuple, object):
        with pytest.raises(TypeError, match="not an Enum, a dataclass or a NamedTuple"):
            canon.register_type(cls)


def test_a_registered_class_still_checks_the_tag_kind() -> None:
    canon.register_type(Money)
    try:
        refused({"$enum": [f"{__name__}:Money", "RED"]})
        refused({"$namedtuple": [f"{__name__}:Money", [1, 2]]})
    finally:
        canon.unregister_type(Money)


# --------------------------------------------------------------------------- limits and shapes

MALFORMED = [
    # shapes the old decoder read leniently
    ({"$tuple": {"x": 1}}, "malformed $tuple value: expected an array, got an object"),
    ({"$set": "ab"}, "malformed $set value: expected an array, got a string"),
    ({"$frozenset": {"a": 1}}, "malformed $frozenset value: expected an array"),
    ({"$dict": "ab"}, "malformed $dict value: expected an array"),
    ({"$dict": [["k", 1, 2]]}, "expected [key, value] pairs"),
    ({"$dict": [[1, "a"], [1, "b"]]}, "key 1 appears twice"),
    ({"$set": [1, 1]}, "a member appears twice"),
    ({"$set": [[1]]}, "unhashable"),
    ({"$enum": ["x:Y", "A", "extra"]}, "expected [type name, member]"),
    ({"$enum": [1, "A"]}, "malformed $enum value: expected a string, got an int"),
    ({"$dataclass": [f"{__name__}:Money", [1]]}, "expected an object of fields"),
    ({"$namedtuple": [f"{__name__}:Point", {"x": 1}]}, "expected an array"),
    ({"$ext": "x"}, "expected [encoder name, value]"),
    ({"$ext": ["nope", 1]}, "no encoder is registered under the name 'nope'"),
    # numbers
    ({"$timedelta": [999999999999, 0, 0]}, "days must be an int in -999999999..999999999"),
    ({"$timedelta": [0, 86400, 0]}, "seconds must be an int in 0..86399"),
    ({"$timedelta": [0, 0, 1.5]}, "microseconds must be an int"),
    ({"$timedelta": [True, 0, 0]}, "days must be an int"),
    ({"$timedelta": [1]}, "expected [days, seconds, microseconds], got an array of 1"),
    ({"$decimal": "1e99999999999999999999"}, "is not a decimal number lockstep can read"),
    ({"$decimal": "x"}, "is not a decimal number lockstep can read"),
    ({"$decimal": "1e3"}, "is not the form lockstep writes"),
    ({"$decimal": " 1"}, "is not the form lockstep writes"),
    ({"$decimal": "1_000"}, "is not the form lockstep writes"),
    ({"$decimal": 1}, "expected a string, got an int"),
    ({"$float": "NaN"}, "bad $float payload 'NaN'"),
    ({"$float": "1e999"}, "bad $float payload"),
    ({"$float": ["nan"]}, "bad $float payload"),
    ({"$complex": [1]}, "expected [real, imag] floats"),
    ({"$complex": [1, 2]}, "expected [real, imag] floats"),
    ({"$complex": "1+2j"}, "expected [real, imag] floats"),
    # text forms
    ({"$bytes": "!!"}, "malformed $bytes value"),
    ({"$bytes": "abc"}, "malformed $bytes value"),
    ({"$bytes": "AB=="}, "is not the form lockstep writes"),
    ({"$bytes": "AA==\n"}, "malformed $bytes value"),
    ({"$bytearray": 5}, "expected a string, got an int"),
    ({"$date": "2024-13-01"}, "malformed $date value"),
    ({"$date": "20240101"}, "is not the form lockstep writes"),
    ({"$datetime": "2024-01-01"}, "expected [iso text, zone, fold]"),
    ({"$datetime": ["2024-01-01T00:00:00", None, 2]}, "fold must be 0 or 1"),
    ({"$datetime": ["2024-01-01T00:00:00", None, True]}, "fold must be 0 or 1"),
    ({"$datetime": ["2024-01-01T25:00:00", None, 0]}, "malformed $datetime value"),
    ({"$datetime": ["2024-01-01T00:00:00", "Not/AZone", 0]}, "unknown time zone 'Not/AZone'"),
    ({"$datetime": ["2024-01-01T00:00:00", "../../../etc/passwd", 0]}, "unknown time zone"),
    (  # a zone whose rules (or the machine's zone) give another offset: not a bad file
        {"$datetime": ["2024-01-01T00:00:00+05:00", "Europe/Paris", 0]},
        "its zone (zoneinfo:ZoneInfo) gives it the UTC offset +01:00 here, not the recorded "
        "+05:00: the zone depends on where or when it runs",
    ),
    ({"$datetime": ["2024-01-01T00:00:00.5+05:00", "Europe/Paris", 0]}, "not the form"),
    ({"$time": ["25:00", None, 0]}, "malformed $time value"),
    ({"$uuid": "zz"}, "malformed $uuid value"),
    ({"$uuid": "{12345678-1234-5678-1234-567812345678}"}, "is not the form lockstep writes"),
    ({"$path": ["Foo", "x"]}, "'Foo' is not a pathlib class"),
    ({"$path": ["PurePosixPath", "a//b"]}, "is not the form lockstep writes"),
    ({"$path": ["PurePosixPath", 5]}, "expected a string, got an int"),
    ({"$path": ["os:system", "x"]}, "is not a pathlib class"),
    ({"$kept": "os:system"}, "$kept names 'os:system', where os keeps no object of a class"),
    # tags in the wrong place
    ({"$nope": 1}, "unknown tag '$nope'"),
    ({"$tuple": [], "a": 1}, "must be the only key of its object"),
]


@pytest.mark.parametrize(("obj", "reason"), MALFORMED)
def test_every_tag_checks_its_payload(obj: Any, reason: str) -> None:
    message = refused({"k": [0, obj]})
    assert message.startswith('value["k"][1]: '), message
    assert reason in message, message


def test_nesting_is_limited_alike_both_ways() -> None:
    deepest: Any = 0
    for _ in range(canon.MAX_DEPTH):
        deepest = [deepest]
    assert canon.loads(canon.dumps(deepest)) == deepest
    with pytest.raises(CanonError, match="nested more than 200 levels deep"):
        canon.dumps([deepest])
    text = "[" * (canon.MAX_DEPTH + 1) + "]" * (canon.MAX_DEPTH + 1)
    assert str(refused(json.loads(text))) == (
        "value: nested more than 200 levels deep, or holds a reference cycle"
    )
    tuples: Any = ()
    for _ in range(canon.MAX_DEPTH // 2 - 1):
        tuples = (tuples,)
    assert canon.loads(canon.dumps(tuples)) == tuples
    with pytest.raises(CanonError, match="nested more than"):
        canon.dumps((tuples,))


@pytest.mark.parametrize("depth", [3000, 100_000])
def test_deep_json_text_is_a_canon_error(depth: int) -> None:
    for text in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
        with pytest.raises(CanonError, match="nested more than"):
            canon.loads(text)


def test_int_size_is_limited_alike_both_ways() -> None:
    largest = 10**canon.MAX_INT_DIGITS - 1  # 4300 digits
    lowest = -(10 ** (canon.MAX_INT_DIGITS - 1) - 1)  # "-" and 4299 digits
    assert canon.loads(canon.dumps([largest, lowest])) == [largest, lowest]
    over = "more than 4300 characters"
    for value in ([largest + 1], {"k": lowest - 1}, (1, 10**5000), {10**5000: 1}):
        with pytest.raises(CanonError, match=over):
            canon.dumps(value)
    for text in ("1" * 4301, "-" + "1" * 4300):
        with pytest.raises(CanonError, match="not valid JSON"):
            canon.loads(text)
    with pytest.raises(CanonError, match=rf"args\[1\]: an int of {over}"):
        canon.encode_call((1, lowest - 1), {})
    # digits in a string are no int: the long-run check only sends them the slow way
    assert canon.loads(canon.dumps(["9" * 5000, -1])) == ["9" * 5000, -1]


def test_int_limit_holds_when_the_process_lifts_python_s(monkeypatch: pytest.MonkeyPatch) -> None:
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        with pytest.raises(CanonError, match=r"value\[1\]: an int of more than 4300"):
            canon.dumps([1, 10**5000])
    finally:
        sys.set_int_max_str_digits(before)


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"k": {"\udcff": 1}}, 'value["k"]["\\udcff"]'),
        ([{"x\ud800y": "ok"}], 'value[0]["x\\ud800y"]'),
    ],
)
def test_a_key_with_a_lone_surrogate_is_refused_with_its_path(value: Any, where: str) -> None:
    with pytest.raises(CanonError) as info:
        canon.dumps(value)
    assert str(info.value).startswith(f"{where}: a string with a lone surrogate")
    str(info.value).encode("utf-8")  # the message itself can be printed and written


@pytest.mark.parametrize(
    "value",
    [
        "\udcff",
        ["ok", "x\ud800y"],
        {"k": ("\ud83d\ude00",)},  # a pair Python keeps as two lone surrogates
        {1: "\udcff"},
        {"\udcff", "a"},
        "back\\slash \udcff and \\udcff written out",
    ],
)
def test_a_text_with_a_lone_surrogate_freezes_as_written_and_thaws_exactly(value: Any) -> None:
    data = canon.dumps(value)
    data.decode("utf-8")  # a row stays UTF-8
    assert b'"$str"' in data
    back = canon.loads(data)
    assert back == value and canon.dumps(back) == data


@pytest.mark.parametrize(
    "payload",
    ["plain", "a\\q", "\\ud7ff", "\\uDCFF", "trailing\\", "\\\\", "x\udcff"],
)
def test_a_str_tag_not_as_lockstep_writes_it_is_refused(payload: str) -> None:
    with pytest.raises(CanonError, match="malformed \\$str value"):
        canon.decode({"$str": payload})


def test_refusals_name_keys_the_same_in_every_process() -> None:
    messages = []
    for _ in range(2):
        with pytest.raises(CanonError) as info:
            canon.dumps({object(): 1, "a": 2})
        messages.append(str(info.value))
    assert (
        messages[0]
        == messages[1]
        == (
            "value[<builtins.object>]: cannot freeze a bare object(): only a marker kept "
            "as a global by the module of an object holding it freezes (by that name)"
        )
    )
    with pytest.raises(CanonError) as info:
        canon.dumps({(1, b"k", Color.RED): object()})
    assert str(info.value).startswith("value[(1, b'k', Color.RED)]: cannot freeze")
    assert "0x" not in str(info.value)


def test_not_json_is_a_canon_error() -> None:
    for text in ("", "{", "[1,]", "nan", b"\xff", '"\\udcff"', "1e400"):
        with pytest.raises(CanonError, match="not valid JSON"):
            canon.loads(text)


class Perm(enum.Flag):
    R = 1
    W = 2
    X = 4


def test_a_flag_combination_freezes_by_its_member_names() -> None:
    both = canon.dumps(Perm.R | Perm.W)
    assert b'["R","W"]' in both
    assert canon.loads(both) is Perm.R | Perm.W
    assert canon.loads(canon.dumps(Perm(0))) is Perm(0)
    assert canon.loads(canon.dumps(Perm.X)) is Perm.X
    name = canon.qualified_name(Perm)
    for bad in (["W", "R"], ["R", "R"], ["Q"], [1]):
        with pytest.raises(CanonError, match=r"\$enum"):
            canon.loads(json.dumps({"$enum": [name, bad]}))


def test_a_class_defined_inside_a_function_is_refused_without_the_encoder_hint() -> None:
    class Local:  # like a test's own subclass: nothing can import it at replay
        pass

    with pytest.raises(CanonError) as info:
        canon.dumps([Local()])
    message = str(info.value)
    assert "a class defined inside a function cannot be rebuilt at replay" in message
    assert "<locals>.Local" in message
    assert "register_encoder" not in message


def test_a_generator_is_refused_with_what_to_freeze_instead() -> None:
    def numbers():  # type: ignore[no-untyped-def]
        yield 1

    with pytest.raises(CanonError) as info:
        canon.dumps(numbers())
    assert "cannot freeze a generator: what it yields exists only once" in str(info.value)
    assert "register_encoder" not in str(info.value)


class _Reference(collections.namedtuple("_Reference", ["scheme", "host"])):
    slots = ()  # not __slots__: instances get a __dict__ (rfc3986's URIReference)

    def __new__(cls, scheme: str, host: str, encoding: str = "utf-8") -> _Reference:
        ref = super().__new__(cls, scheme, host)
        ref.encoding = encoding  # type: ignore[attr-defined]
        return ref


def test_a_namedtuple_holding_attributes_beyond_its_fields_freezes_with_them() -> None:
    """Not lossily: ``encoding`` is frozen beside the fields, and thawed back."""
    frozen = canon.encode(_Reference("http", "example.org", "latin-1"))
    assert frozen["$namedtuple"][2] == {"encoding": "latin-1"}  # type: ignore[index,call-overload]
    plain = collections.namedtuple("_Reference", ["scheme", "host"])("http", "example.org")
    assert b"$namedtuple" in canon.dumps(plain)  # without attributes, the two-part form


@pytest.mark.parametrize(
    "make",
    [
        lambda: iter(range(10**6)),
        lambda: map(str, [1]),
        lambda: __import__("itertools").chain([1], [2]),
    ],
)
def test_an_iterator_inside_a_value_is_refused_saying_why(make: Any) -> None:
    """more-itertools' ``peekable`` keeps its source in ``_it``: no encoder would help, so
    the refusal says what is frozen instead of suggesting one.  (An iterator over a list,
    a tuple, a short range... freezes as what it has left: ``test_sequence_iterators``.)"""
    with pytest.raises(CanonError) as info:
        canon.dumps({"_it": make()})
    said = str(info.value)
    assert "an iterator's items exist only as it is read" in said
    assert "register_encoder" not in said
