"""A named tuple that also holds attributes freezes with them.

rfc3986's ``URIReference`` is a named tuple whose subclass writes ``slots = ()`` where it
meant ``__slots__``, so its objects have a ``__dict__``, and its ``__new__`` sets
``encoding`` there.  Frozen by its fields alone it would have lost that, so every call
taking or returning one (94% of the calls its suite makes) was skipped.  It now freezes as
``{"$namedtuple": [name, items, attributes]}``.
"""

from __future__ import annotations

import collections
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockstep import canon
from lockstep.canon.text import value_text
from lockstep.errors import CanonError

MODULE = "namedtuple_attrs_probe"


class Ref(collections.namedtuple("Ref", "scheme path")):
    slots = ()  # not __slots__: its objects have a __dict__, as rfc3986's do

    def __new__(cls, scheme: str, path: str, encoding: str = "utf-8") -> Ref:
        ref = super().__new__(cls, scheme, path)
        ref.encoding = encoding  # type: ignore[attr-defined]
        return ref


class Slotted(collections.namedtuple("Slotted", "x y")):
    __slots__ = ()


@pytest.fixture(autouse=True)
def _module() -> Iterator[None]:
    module = types.ModuleType(MODULE)
    for cls in (Ref, Slotted):
        cls.__module__ = MODULE
        setattr(module, cls.__name__, cls)
    sys.modules[MODULE] = module
    yield
    sys.modules.pop(MODULE, None)


@given(st.text(max_size=8), st.text(max_size=8), st.sampled_from(["utf-8", "latin-1", "x"]))
def test_its_fields_and_attributes_round_trip(scheme: str, path: str, encoding: str) -> None:
    ref = Ref(scheme, path, encoding)
    frozen = canon.encode(ref)
    assert frozen == {"$namedtuple": [f"{MODULE}:Ref", [scheme, path], {"encoding": encoding}]}
    thawed = canon.decode(frozen)
    assert type(thawed) is Ref and thawed == ref and thawed.encoding == encoding
    assert canon.encode(thawed) == frozen


def test_a_changed_attribute_is_another_value_and_reads_in_its_text() -> None:
    assert canon.encode(Ref("a", "b", "utf-8")) != canon.encode(Ref("a", "b", "latin-1"))
    assert value_text(canon.encode(Ref("a", "b"))) == "Ref('a', 'b', encoding='utf-8')"


def test_one_without_attributes_keeps_the_two_part_form() -> None:
    assert canon.encode(Slotted(1, 2)) == {"$namedtuple": [f"{MODULE}:Slotted", [1, 2]]}


@pytest.mark.parametrize(
    "attrs",
    [[1], {"$dict": [[1, 2]]}, {}],
)
def test_attributes_not_of_the_form_written_are_refused(attrs: Any) -> None:
    with pytest.raises(CanonError, match=r"\$namedtuple"):
        canon.decode({"$namedtuple": [f"{MODULE}:Ref", ["a", "b"], attrs]})


def test_attributes_for_a_named_tuple_without_a_dict_are_refused() -> None:
    with pytest.raises(CanonError, match="holds no attributes"):
        canon.decode({"$namedtuple": [f"{MODULE}:Slotted", [1, 2], {"z": 1}]})
