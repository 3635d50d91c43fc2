"""Objects of a class with ``__slots__`` take the encoder's fast path, with the same bytes.

A plain object of the project's own class is frozen inline as ``{"state": __dict__}``;
one whose class has ``__slots__`` (semantic_version's identifiers, in every ``Version``)
went through the general object freezer, about ten times slower per object.  It now
freezes inline as ``{"state": object.__getstate__(v)}``, which is what the general
freezer writes for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lockstep import canon
from lockstep.canon import encoding
from lockstep.canon.callables import callables_from


class Ident:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Pair:
    __slots__ = ("left", "right")

    def __init__(self, left: Any, right: Any = None, *, set_right: bool = True) -> None:
        self.left = left
        if set_right:
            self.right = right


class Mixed(Ident):
    """Slots of its base, and a ``__dict__`` of its own."""

    def __init__(self, value: Any, **extra: Any) -> None:
        super().__init__(value)
        self.__dict__.update(extra)


class Version:
    """A plain class holding slotted ones, as semantic_version's does."""

    def __init__(self, *parts: Any) -> None:
        self.parts = tuple(Ident(p) for p in parts)
        self.key = (len(parts), [Pair(p, Ident(p)) for p in parts])


@pytest.fixture(autouse=True)
def _own_classes() -> Iterator[None]:
    with callables_from(__name__):
        yield


def slow_bytes(value: Any) -> bytes:
    return canon.canonical_json(encoding._slow_encode(value, False, "value"))


scalars = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.booleans())
objects = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.builds(Ident, inner),
        st.builds(Pair, inner, inner, set_right=st.booleans()),
        st.builds(Mixed, inner, tag=inner),
        st.builds(Mixed, inner),
        st.lists(inner, max_size=3).map(tuple),
        st.builds(lambda *p: Version(*p), scalars, scalars),
    ),
    max_leaves=12,
)


@given(objects)
@settings(max_examples=300)
def test_a_slotted_object_freezes_as_the_general_freezer_freezes_it(value: Any) -> None:
    assert canon.canonical_json(canon.encode(value)) == slow_bytes(value)


def test_the_fast_path_takes_slotted_objects_of_scalars(monkeypatch: pytest.MonkeyPatch) -> None:
    general: list[str] = []
    freeze = encoding.freeze_object

    def counted(self: Any, v: Any, t: type[Any], depth: int) -> Any:
        general.append(t.__name__)
        return freeze(self, v, t, depth)

    monkeypatch.setattr(encoding, "freeze_object", counted)
    frozen = canon.encode([Ident(1), Ident(b"rc1"), Pair(1, 2.5), Mixed(3, tag="x")])
    assert general == []
    assert frozen[1] == {  # type: ignore[index]
        "$obj": [f"{__name__}:Ident", {"state": {"$tuple": [None, {"value": {"$bytes": "cmMx"}}]}}]
    }
    canon.encode(Pair(Ident(1)))  # holding an object: the slow path, as before
    assert general == ["Pair", "Ident"]


def test_an_unset_slot_and_a_cycle_freeze_as_before() -> None:
    empty = Pair(None, set_right=False)
    del empty.left
    assert canon.encode(empty) == {"$obj": [f"{__name__}:Pair", {}]}
    ring = Pair(1)
    ring.right = ring  # a cycle: the general freezer names it
    assert canon.canonical_json(canon.encode(ring)) == slow_bytes(ring)
    assert b'"$ref"' in slow_bytes(ring)
