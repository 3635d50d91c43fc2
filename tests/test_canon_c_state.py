"""A project class whose objects keep their state in a C base is refused, never frozen blind.

Frozen by structure, a subclass of ``array.array``, ``collections.deque`` or numpy's
``ndarray`` showed only its ``__dict__``: two objects with other items froze alike, so a
changed result replayed green.  Such an object is now refused with the base named, unless
the project's own code says how its state is read.  Subclasses of the value types lockstep
reads through their own slots (``dict``, ``str``, ``datetime`` ...) and of C classes that
add no field freeze as before.
"""

from __future__ import annotations

import array
import collections
import copyreg
import datetime
import functools
import io
import threading
import typing
from typing import Any

import pytest

from lockstep import canon
from lockstep.canon.c_state import c_state_base, no_value_base
from lockstep.canon.callables import callables_from
from lockstep.errors import CanonError


class Samples(array.array):  # type: ignore[type-arg]
    """A buffer of readings, the way legacy code subclasses array for speed."""


class Tagged(array.array):  # type: ignore[type-arg]
    def __init__(self, *args: Any) -> None:
        self.tag = "t"


class Recent(collections.deque):  # type: ignore[type-arg]
    pass


class Buffer(io.StringIO):
    pass


class PerThread(threading.local):
    pass


class Bound(functools.partial):  # type: ignore[type-arg]
    pass


class Pickled(array.array):  # type: ignore[type-arg]
    """Says itself how its state is read, in pickle's ``__newobj__`` form: frozen so
    (``__reduce_ex__``: array's own one would come before a ``__reduce__``)."""

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (copyreg.__newobj__, (Pickled, self.typecode, list(self)), None)


class PickledOtherwise(array.array):  # type: ignore[type-arg]
    """Its own ``__reduce__`` in another form, which freezing passes over: refused."""

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (PickledOtherwise, (self.typecode, list(self)))


class Ordered(collections.OrderedDict):  # type: ignore[type-arg]
    pass


class Stamp(datetime.datetime):
    pass


T = typing.TypeVar("T")


class Box(typing.Generic[T]):
    def __init__(self, item: T) -> None:
        self.item = item


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self) -> None:
        self.a, self.b = 1, 2


class Zone(datetime.tzinfo):
    def utcoffset(self, dt: datetime.datetime | None) -> datetime.timedelta:
        return datetime.timedelta(hours=1)


@pytest.mark.parametrize(
    ("value", "base"),
    [
        (Samples("i", [1, 2, 3]), "array.array"),
        (Tagged("i", [4]), "array.array"),
        (Recent([1, 2]), "collections.deque"),
        (Buffer("text"), "_io.StringIO"),
        (PerThread(), "_thread._local"),
        (Bound(int, "7"), "functools.partial"),
        (PickledOtherwise("i", [5]), "array.array"),
    ],
)
def test_an_object_whose_state_is_in_a_c_base_is_refused_naming_it(value: Any, base: str) -> None:
    with callables_from(__name__), pytest.raises(CanonError, match=f"extends {base}, whose"):
        canon.encode(value)


def test_two_objects_with_other_items_never_freeze_alike() -> None:
    """What the refusal prevents: before it, both froze as ``{"state": {}}``."""
    with callables_from(__name__):
        for value in (Samples("i", [1]), Samples("i", [9])):
            with pytest.raises(CanonError):
                canon.encode(value)


@pytest.mark.parametrize(
    "value",
    [
        Ordered(a=1, b=2),
        Stamp(2024, 1, 2, 3, 4),
        Box(3),
        Slotted(),
        Zone(),
        Pickled("i", [1, 2]),
    ],
)
def test_value_bases_c_classes_without_fields_and_own_protocols_freeze_as_before(
    value: Any,
) -> None:
    with callables_from(__name__):
        frozen = canon.encode(value)
        assert canon.encode(canon.decode(frozen)) == frozen


def test_the_decision_reads_the_class_alone() -> None:
    assert c_state_base(Samples, no_value_base) is array.array
    assert c_state_base(Pickled, no_value_base) is array.array  # its reduce: read per object
    assert c_state_base(Ordered, lambda cls: dict) is None
    assert c_state_base(Box, no_value_base) is None
    assert c_state_base(ValueError, no_value_base) is None


READINGS = """
import array


class Readings(array.array):
    def mean(self):
        return sum(self) / len(self)


def smooth(values):
    out = Readings("d", values)
    for i in range(1, len(out)):
        out[i] = (out[i] + out[i - 1]) / 2
    return out
"""

READINGS_TESTS = """
from meter.readings import smooth


def test_smooth():
    assert list(smooth([2.0, 4.0, 6.0])) == [2.0, 3.0, 4.5]
    assert smooth([1.0, 1.0]).mean() == 1.0
"""


def test_a_recording_skips_calls_whose_result_keeps_its_items_in_c_and_says_why(
    tmp_path: Any,
) -> None:
    """Before, ``smooth``'s rows froze every result as ``{"state": {}}``: a rewrite that
    averaged otherwise replayed green."""
    from helpers import recorded

    root = tmp_path / "proj"
    result = recorded(
        root,
        {
            "meter/__init__.py": "",
            "meter/readings.py": READINGS,
            "tests/test_readings.py": READINGS_TESTS,
            "lockstep.toml": '[[ledger]]\npackage = "meter"\n',
        },
    )
    assert "extends array.array, whose objects keep their state in C fields" in result.stdout
    assert "SKIPPED 2 of 2 call(s)" in result.stdout, result.stdout
