"""A recorder remembers inputs holding objects by a cheap key (``canon.object_key``), so a
repeated call is not frozen again; these tests hold it to the same verdicts as a full freeze:
an equal input is one row, and a different outcome, a different result attribute or a
mutation seen only on a later call still refuses the input."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lockstep import canon, record_io
from lockstep.canon.shared import unshared
from lockstep.errors import CanonError


class Point:
    def __init__(self, x: int, y: int, tags: tuple[str, ...] = ()) -> None:
        self.x = x
        self.y = y
        self.tags = tags


class Box:
    def __init__(self, corner: Point, label: str) -> None:
        self.corner = corner
        self.label = label


CALLS = {"n": 0}


def moved(p: Point, by: int) -> Point:
    return Point(p.x + by, p.y, p.tags)


def counted(p: Point) -> int:
    CALLS["n"] += 1
    return CALLS["n"]


def drifting(b: Box) -> Point:
    CALLS["n"] += 1
    return Point(b.corner.x, CALLS["n"])


def grow_later(b: Box) -> str:
    CALLS["n"] += 1
    if CALLS["n"] > 1:
        b.label += "!"
    return b.label


@pytest.fixture(autouse=True)
def _reset() -> None:
    CALLS["n"] = 0


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    return tmp_path / "memo.ledger.jsonl"


def _part(ledger: Path, fn: Callable[..., Any], *calls: tuple[Any, ...]) -> Any:
    wrapped = record_io(fn, ledger=ledger)
    for args in calls:
        wrapped(*args)
    part = wrapped.lockstep_recorder.part()
    wrapped.lockstep_recorder.active = False  # nothing to write at exit
    return part


def test_equal_objects_are_one_row_and_not_frozen_again(ledger: Path) -> None:
    part = _part(ledger, moved, *[(Point(1, 2, ("a",)), 3) for _ in range(50)], (Point(1, 2), 3))
    assert part.calls == 51
    assert len(part.entries) == 2 and not part.refused
    assert "test_ledger_object_memo:Point" in str(part.entries[0].row.result)


def test_a_different_outcome_for_an_equal_object_is_refused(ledger: Path) -> None:
    part = _part(ledger, counted, (Point(1, 2),), (Point(1, 2),), (Point(1, 2),))
    assert len(part.refused) == 1 and not part.entries


def test_a_result_object_differing_in_one_attribute_is_refused(ledger: Path) -> None:
    part = _part(ledger, drifting, *[(Box(Point(0, 0), "b"),) for _ in range(3)])
    assert len(part.refused) == 1


def append_later(p: Point) -> int:
    CALLS["n"] += 1
    if CALLS["n"] > 2:
        p.tags.append("z")  # type: ignore[attr-defined]
    return len(p.tags)


def test_an_attribute_list_changed_in_place_on_a_later_call_is_refused(ledger: Path) -> None:
    part = _part(ledger, append_later, *[(Point(0, 0, ["a"]),) for _ in range(4)])  # type: ignore[arg-type]
    assert len(part.refused) == 1 and not part.entries


def test_a_mutation_seen_only_on_a_later_call_is_refused(ledger: Path) -> None:
    part = _part(ledger, grow_later, *[(Box(Point(0, 0), "b"),) for _ in range(3)])
    assert len(part.refused) == 1


def test_the_key_tells_apart_what_canon_tells_apart() -> None:
    canon.allow_callables_from(__name__)
    pairs = [
        (Point(1, 2), Point(1, 2.0)),
        (Point(1, 2), Point(1, True)),  # type: ignore[arg-type]
        (Point(1, 2, ("a",)), Point(1, 2, ["a"])),  # type: ignore[arg-type]
        (Point(1, 2), Box(Point(1, 2), "")),
        (Box(Point(0, 0), "a"), Box(Point(0, 1), "a")),
        (Point(1, 2, (b"x",)), Point(1, 2, (bytearray(b"x"),))),  # type: ignore[arg-type]
        (Point(1, 0.0), Point(1, -0.0)),  # type: ignore[arg-type]
        (Point(1, 2, ({"a": 1},)), Point(1, 2, ({"a": True},))),  # type: ignore[arg-type]
        (Point(1, 2, ({1: 1},)), Point(1, 2, ({"1": 1},))),  # type: ignore[arg-type]
    ]
    for a, b in pairs:
        ka, kb = canon.object_key((a,), {}), canon.object_key((b,), {})
        assert ka is not None and kb is not None
        assert ka != kb
        assert canon.dumps(a) != canon.dumps(b)
    assert canon.object_key((Point(1, 2),), {}) == canon.object_key((Point(1, 2),), {})
    assert canon.object_key((bytearray(b"x"),), {}) is None  # bytearray is not a key leaf


_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.0, -0.0, 1.0, 1e300])
    | st.sampled_from(["", "a", "é"])
    | st.sampled_from([b"", b"a"])
    | st.builds(bytearray, st.sampled_from([b"", b"a"])),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.sampled_from(["a", "b"]) | st.integers(0, 1), inner, max_size=2)
    ),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES, _VALUES)
def test_equal_keys_mean_equal_frozen_bytes(a: Any, b: Any) -> None:
    """The memo's promise, for any two builtin attribute values: the same key means the
    same canonical bytes, and an equal (deep-copied) value gets the same key."""
    canon.allow_callables_from(__name__)
    pa, pb = Point(0, 0, (a,)), Point(0, 0, (b,))
    ka, kb = canon.object_key((pa,), {}), canon.object_key((pb,), {})
    if ka is not None and ka == kb:
        assert canon.dumps(pa) == canon.dumps(pb)
    assert canon.object_key((copy.deepcopy(pa),), {}) == ka


class Offset:
    """Slotted, as dateutil's ``_ttinfo``: frozen by the path that reads slots."""

    __slots__ = ("minutes", "name")

    def __init__(self, minutes: int, name: str) -> None:
        self.minutes = minutes
        self.name = name


class Zone:
    """Like a time zone: many transitions pointing at a few shared offsets."""

    __slots__ = ("transitions",)

    def __init__(self, offsets: list[Offset], n: int) -> None:
        self.transitions = [offsets[i % len(offsets)] for i in range(n)]


def test_an_object_reached_many_times_in_one_object_is_written_once_and_thaws_shared() -> None:
    canon.allow_callables_from(__name__)
    shared = [Offset(60, "CET"), Offset(120, "CEST")]
    zone = Zone(shared, 500)
    copies = Zone([Offset(60, "CET"), Offset(120, "CEST")], 2)
    copies.transitions = [Offset(o.minutes, o.name) for o in zone.transitions]
    assert canon.equal(zone, copies)  # which objects are shared is not part of the value
    assert len(canon.dumps(zone)) * 5 < len(canon.dumps(copies))
    frozen = canon.encode(zone)
    items = frozen["$obj"][1]["state"]["$tuple"][1]["transitions"]  # type: ignore[index,call-overload]
    assert "$obj" in items[0] and "$obj" in items[1]
    assert items[2] == {"$same": 1} and items[3] == {"$same": 2}
    assert canon.canonical_json(unshared(frozen)) == canon.dumps(copies)
    thawed = canon.loads(canon.dumps(zone))
    assert thawed.transitions[0] is thawed.transitions[498]
    assert thawed.transitions[1] is thawed.transitions[499]
    assert thawed.transitions[0] is not thawed.transitions[1]
    assert canon.dumps(thawed) == canon.dumps(zone)


def test_a_value_holding_too_many_objects_is_refused_by_name() -> None:
    canon.allow_callables_from(__name__)
    with pytest.raises(CanonError, match="more than 20,000 objects"):
        canon.encode(Zone([Offset(i, "x") for i in range(30_000)], 30_000))


def big_report(n: int) -> str:
    return "x" * n


def test_a_call_frozen_larger_than_a_row_may_hold_is_skipped_with_its_size(
    ledger: Path,
) -> None:
    part = _part(ledger, big_report, (10,), (3 << 20,))
    assert len(part.entries) == 1
    assert any("MiB a row may hold" in reason for reason in part.unfreezable)


ZONES = {"calls": 0}


def every_zone() -> list[int]:
    """Like dateutil's ``get_zonefile_instance()``: no argument, a result too large to keep."""
    ZONES["calls"] += 1
    return list(range(300_000))


def every_zone_of(table: list[str]) -> list[object]:
    return [*range(300_000), table[0]]


def test_a_call_too_large_to_keep_is_not_frozen_again_on_its_next_calls(
    ledger: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lockstep.oracles.ledger import recorder

    frozen: list[int] = []
    real = recorder._encode

    def counting(value: Any, **kw: Any) -> Any:
        frozen.append(1)
        return real(value, **kw)

    monkeypatch.setattr(recorder, "_encode", counting)
    part = _part(ledger, every_zone, *[() for _ in range(5)])
    assert ZONES["calls"] == 5  # every call made
    assert not part.entries
    assert list(part.unfreezable.values()) == [5], part.unfreezable  # all five skipped, named
    assert "MiB a row may hold" in next(iter(part.unfreezable))
    assert len(frozen) == 1  # the result frozen once, on the first call only

    frozen.clear()
    part = _part(ledger, every_zone_of, *[(["x"],) for _ in range(4)], (["y"],))
    assert not part.entries and sum(part.unfreezable.values()) == 5, part.unfreezable
    # ["x"] frozen again after its first call and its result frozen, and so ["y"]: the
    # three later calls with ["x"] are skipped by the input's key, nothing frozen
    assert len(frozen) == 4


# -- a repeated call that changes its flat object's state --------------------------------


def retype_later(p: Point) -> int:
    CALLS["n"] += 1
    if CALLS["n"] > 2:
        p.x = float(p.x)  # type: ignore[assignment]  # equal value, another frozen form
    return 1


def rename_later(p: Point) -> int:
    CALLS["n"] += 1
    if CALLS["n"] > 2:
        value = p.y
        del p.y
        p.z = value  # type: ignore[attr-defined]  # the same value under another name
    return 1


def reclass_later(p: Point) -> int:
    CALLS["n"] += 1
    if CALLS["n"] > 2:
        p.__class__ = Moved
    return 1


class Moved(Point):
    pass


@pytest.mark.parametrize("fn", [retype_later, rename_later, reclass_later])
def test_a_later_call_changing_a_flat_object_is_refused(
    ledger: Path, fn: Callable[..., Any]
) -> None:
    """A repeated call is checked after the call by the key of its arguments: an equal value
    of another type, an attribute renamed and a class swapped are changes all the same."""
    canon.allow_callables_from(__name__)
    part = _part(ledger, fn, *[(Point(1, 2, ("a",)),) for _ in range(4)])
    assert part.calls == 4
    assert len(part.refused) == 1 and not part.entries


def test_a_flat_object_unchanged_by_its_calls_is_one_row(ledger: Path) -> None:
    part = _part(ledger, counted_once, *[(Point(1, 2, ("a", (b"x", None))),) for _ in range(5)])
    assert len(part.entries) == 1 and not part.refused


def counted_once(p: Point) -> int:
    return p.x


def test_keys_stay_right_after_cycles_and_many_frozensets() -> None:
    """The key pickler writes without a memo: a cycle gives no key (the call is frozen in
    full, and refused), and a pickler that fails is replaced, so the keys that follow are
    as before -- also after many frozensets, which CPython 3.11 miscounts in that mode."""
    canon.allow_callables_from(__name__)
    before = canon.object_key((Point(1, 2, ("a",)),), {})
    loop: list[Any] = []
    loop.append(loop)
    for _ in range(3):
        assert canon.object_key((Point(0, 0, loop),), {}) is None  # type: ignore[arg-type]
    for i in range(200):
        held = Point(i, 0, (frozenset({i}), [[{"a": frozenset({1})}]]))  # type: ignore[arg-type]
        key = canon.object_key((held,), {})
        assert key is None or key == canon.object_key((copy.deepcopy(held),), {})
        assert canon.object_key((Point(1, 2, ("a",)),), {}) == before
    deep: Any = ("a",)
    for _ in range(80):  # deeper than the nesting fast mode counts before it checks
        deep = (deep,)
    assert canon.object_key((Point(1, 2, deep),), {}) is not None
