"""lockstep.Tape and the tape comparison, in process: what gets recorded and how drift reads."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import socket
import sys
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import write_files
from lockstep import Tape
from lockstep.errors import CanonError, DataError, UsageError
from lockstep.oracles.tape.compare import compare, render_event, render_tape
from lockstep.oracles.tape.document import (
    VERSION,
    Output,
    TapeDocument,
    read_document,
    write_document,
)
from lockstep.oracles.tape.recorder import Event
from lockstep.rules import RuleSet, builtin_rule


class Rates:
    """A legacy-style collaborator: a class with a lookup, a constant and an exception type."""

    base = "EUR"

    class Unavailable(Exception):
        pass

    def rate(self, currency: str) -> Decimal:
        if currency == "XXX":
            raise Rates.Unavailable(f"no   rate\nfor {currency}")
        return {"EUR": Decimal("1"), "USD": Decimal("0.92")}[currency]

    def _private(self) -> int:
        return 1


def test_spy_records_name_canonical_args_and_result_in_order() -> None:
    tape = Tape()
    rate = tape.spy("rates.rate", Rates().rate)
    fee = tape.spy("fees.late_fee", lambda total, days=0: total + days)
    assert rate("EUR") == Decimal("1")
    assert fee(10, days=3) == 13
    assert [render_event(e) for e in tape.events] == [
        "rates.rate('EUR') -> Decimal('1')",
        "fees.late_fee(10, days=3) -> 13",
    ]
    assert tape.events[0].returned == {"$decimal": "1"}


def test_a_raising_collaborator_is_recorded_as_raising_and_still_raises() -> None:
    tape = Tape()
    rate = tape.spy("rates.rate", Rates().rate)
    with pytest.raises(Rates.Unavailable):
        rate("XXX")
    (event,) = tape.events
    assert event.raised is not None
    assert event.raised.exc_type == "test_tape.Rates.Unavailable"
    assert event.raised.exc_stem == "no rate for XXX"


def test_watch_records_public_methods_and_passes_private_names_and_classes_through() -> None:
    tape = Tape()
    rates = tape.watch(Rates(), name="rates")
    assert rates.rate("USD") == Decimal("0.92")
    assert rates._private() == 1
    assert rates.base == "EUR"
    with pytest.raises(rates.Unavailable):
        rates.rate("XXX")
    assert [e.collaborator for e in tape.events] == ["rates.rate", "rates.rate"]


def test_watch_hands_out_one_spy_per_method_until_the_method_changes() -> None:
    tape = Tape()
    target = Rates()
    rates = tape.watch(target, name="rates")
    assert rates.rate is rates.rate
    rates.rate("EUR")
    target.rate = lambda currency: Decimal("2")  # type: ignore[method-assign]
    assert rates.rate("USD") == Decimal("2")
    rates.rate("EUR")
    assert [render_event(e) for e in tape.events] == [
        "rates.rate('EUR') -> Decimal('1')",
        "rates.rate('USD') -> Decimal('2')",
        "rates.rate('EUR') -> Decimal('2')",
    ]


def test_leaf_arguments_freeze_as_the_codec_freezes_them() -> None:
    tape = Tape()
    spied = tape.spy("fees.fee", lambda total, *, days, blob=b"": (total, days, blob))
    spied(Decimal("12.50"), days=3.5, blob=b"\x00a")
    spied(bytearray(b"z"), days=float("nan"), blob=None)
    first, second = tape.events
    assert first.args == [{"$decimal": "12.50"}]
    assert first.kwargs == {"days": 3.5, "blob": {"$bytes": "AGE="}}
    assert second.args == [{"$bytearray": "eg=="}]
    assert second.kwargs == {"days": {"$float": "nan"}, "blob": None}


def test_watch_records_attribute_reads_only_when_asked() -> None:
    tape = Tape()
    rates = tape.watch(Rates(), name="rates", attributes=True)
    assert rates.base == "EUR"
    (event,) = tape.events
    assert event.read and render_event(event) == "rates.base -> 'EUR'"


def test_patch_swaps_a_module_function_for_the_block_and_restores_it(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "tape_patch_pkg/__init__.py": "",
            "tape_patch_pkg/rates.py": "def rate(c):\n    return 2\n",
        },
    )
    sys.path.insert(0, str(tmp_path))
    try:
        import tape_patch_pkg.rates as module

        original = module.rate
        tape = Tape()
        with tape.patch("tape_patch_pkg.rates.rate"):
            assert module.rate("EUR") == 2
        assert module.rate is original
        assert [render_event(e) for e in tape.events] == ["rates.rate('EUR') -> 2"]
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("tape_patch_pkg.rates", None)
        sys.modules.pop("tape_patch_pkg", None)


def test_patch_of_something_that_does_not_exist_names_it() -> None:
    with pytest.raises(UsageError, match="has no attribute 'nope'"), Tape().patch("json.nope"):
        pass


def test_spying_on_a_non_callable_is_a_clear_error() -> None:
    with pytest.raises(UsageError, match=r"tape.spy\('rates', ...\): a dict is not callable"):
        Tape().spy("rates", {"EUR": 1})  # type: ignore[type-var]


def test_an_unfreezable_argument_is_named_by_its_path_and_poisons_the_tape() -> None:
    tape = Tape()
    send = tape.spy("net.send", lambda payload: None)
    # a legacy target that swallows every exception
    with socket.socket() as sock, contextlib.suppress(Exception):
        send({"conn": [sock]})
    with pytest.raises(
        CanonError, match=r'net.send args\[0\]\["conn"\]\[0\]: cannot freeze a socket.socket'
    ):
        _ = tape.events


def test_within_names_the_spied_call_each_call_happened_inside() -> None:
    tape = Tape()
    rate = tape.spy("rates.rate", Rates().rate)
    convert = tape.spy("summary.convert", lambda codes: [rate(c) for c in codes])
    convert(["EUR"])
    rate("USD")
    assert [(e.collaborator, e.within) for e in tape.events] == [
        ("summary.convert", ""),
        ("rates.rate", "summary.convert"),
        ("rates.rate", ""),
    ]
    assert render_tape(tape.events).splitlines()[1] == "   2    rates.rate('EUR') -> Decimal('1')"


def test_rules_normalize_volatile_strings_inside_recorded_values() -> None:
    uuid_rule = builtin_rule("uuid")
    assert uuid_rule is not None
    tape = Tape(rules=RuleSet((uuid_rule,)))
    log = tape.spy("audit.log", lambda message, **extra: None)
    log("run 123e4567-e89b-12d3-a456-426614174000 done", at=dt.date(2024, 1, 31))
    (event,) = tape.events
    assert event.args == ["run <UUID> done"]
    assert event.kwargs == {"at": {"$date": "2024-01-31"}}
    assert tape.rules.fired["uuid"] == 1


def test_threads_keep_their_own_nesting() -> None:
    tape = Tape()
    rate = tape.spy("rates.rate", Rates().rate)
    workers = [threading.Thread(target=rate, args=("EUR",)) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(tape) == 4 and all(e.within == "" for e in tape.events)


# --------------------------------------------------------------------------- compare


def _events(*calls: tuple[str, Any]) -> list[Event]:
    return [Event(collaborator=name, args=[arg] if arg is not None else []) for name, arg in calls]


LOOP = _events(
    ("rates.rate", "EUR"), ("rates.rate", "USD"), ("rates.rate", "EUR"), ("fees.late_fee", None)
)


def test_ordered_drift_reads_as_a_sequence_diff() -> None:
    swapped = _events(
        ("rates.rate", "EUR"), ("rates.rate", "USD"), ("fees.late_fee", None), ("rates.rate", "EUR")
    )
    assert compare(LOOP, swapped)[0] in (
        "call 3: expected rates.rate('EUR'), got fees.late_fee()",
        "call 3: expected rates.rate('EUR'), missing",
    )
    hoisted = _events(("rates.rate", "EUR"), ("rates.rate", "USD"), ("fees.late_fee", None))
    assert compare(LOOP, hoisted) == [
        "call 3: expected rates.rate('EUR'), missing",
        "rates.rate('EUR') called 1 time, expected 2",
    ]


def test_a_changed_outcome_is_said_as_such() -> None:
    changed = [Event(collaborator="rates.rate", args=["EUR"], returned=2)]
    assert compare([Event(collaborator="rates.rate", args=["EUR"], returned=1)], changed) == [
        "call 1: rates.rate('EUR') -> 2, expected -> 1"
    ]


def test_multiset_ignores_order_but_not_counts_and_counts_only_counts() -> None:
    reordered = list(reversed(LOOP))
    assert compare(LOOP, reordered, "multiset") == []
    assert compare(LOOP, reordered, "ordered") != []
    fewer = LOOP[1:]
    assert compare(LOOP, fewer, "multiset") == [
        "rates.rate('EUR') -> None happened 1 time, expected 2"
    ]
    other_args = _events(
        ("rates.rate", "GBP"), ("rates.rate", "GBP"), ("rates.rate", "GBP"), ("fees.late_fee", None)
    )
    assert compare(LOOP, other_args, "counts") == []
    assert compare(LOOP, fewer, "counts") == ["rates.rate called 2 times, expected 3"]


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))
events_strategy = st.lists(
    st.builds(
        lambda name, args, ret: Event(collaborator=name, args=args, returned=ret),
        st.sampled_from(["rates.rate", "fees.late_fee", "audit.note"]),
        st.lists(scalars, max_size=3),
        scalars,
    ),
    max_size=12,
)


@given(events_strategy, st.randoms())
def test_property_a_permutation_matches_in_multiset_and_counts(
    events: list[Event], rnd: Any
) -> None:
    shuffled = list(events)
    rnd.shuffle(shuffled)
    assert compare(events, events, "ordered") == []
    assert compare(events, shuffled, "multiset") == []
    assert compare(events, shuffled, "counts") == []


@given(events_strategy, events_strategy)
def test_property_compare_is_empty_exactly_when_the_tapes_are_equal(
    a: list[Event], b: list[Event]
) -> None:
    # Equal as data, not as Python values: False == 0 in Python, yet a collaborator
    # returning 0 where it returned False is a drift.
    same = _SORTED.encode(a) == _SORTED.encode(b)
    assert (compare(a, b, "ordered") == []) == same


_SORTED = msgspec.json.Encoder(order="sorted")


# --------------------------------------------------------------------------- file


@given(events_strategy)
def test_property_a_tape_file_reads_back_what_was_written(events: list[Event]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.tape.json"
        doc = TapeDocument(
            version=VERSION,
            name="t",
            mode="ordered",
            rules=[],
            events=events,
            output=Output(returned=1),
        )
        write_document(path, doc)
        assert read_document(path, owner="t", owner_kind="oracle") == doc


GOOD = {"version": 1, "name": "t", "mode": "ordered", "rules": [], "events": [], "output": {}}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "not valid JSON"),
        (json.dumps({**GOOD, "extra": 1}).encode(), "unknown field `extra`"),
        (json.dumps({**GOOD, "name": "other"}).encode(), "recorded by another oracle ('other')"),
        (json.dumps({**GOOD, "version": 9}).encode(), "version 9 is not supported"),
        (
            json.dumps({**GOOD, "events": [{"collaborator": "a", "when": 1}]}).encode(),
            "unknown field `when`",
        ),
    ],
)
def test_a_bad_tape_file_is_a_data_error_naming_the_file(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "t.tape.json"
    path.write_bytes(content)
    with pytest.raises(DataError) as info:
        read_document(path, owner="t", owner_kind="oracle")
    assert "t.tape.json" in str(info.value) and message in str(info.value)
