"""Normalization rules: built-ins are idempotent, counts are exact, records round-trip."""

from __future__ import annotations

import json
import re
import uuid

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from lockstep.rules import (
    BUILTIN_NAMES,
    BUILTIN_PATTERNS,
    RuleRecord,
    RuleSet,
    builtin_rule,
    rules_from_records,
)

ALL_BUILTINS = RuleSet(tuple(r for n in BUILTIN_NAMES if (r := builtin_rule(n)) is not None))

uuids = st.uuids().map(str)
timestamps = st.datetimes().map(lambda d: d.isoformat())
tmp_paths = st.from_regex(r"/tmp/[a-z0-9_]{1,12}(/[a-z0-9_.]{1,8}){0,2}", fullmatch=True)
addresses = st.integers(min_value=0x100000, max_value=0xFFFFFFFFFFFF).map(hex)
volatile = st.one_of(uuids, timestamps, tmp_paths, addresses)
plain_words = st.from_regex(r"[a-z]{1,8}", fullmatch=True)
documents = st.lists(st.one_of(volatile, plain_words), max_size=12).map(" ".join)
noise = st.text(alphabet=st.characters(codec="utf-8"), max_size=60)


@given(st.one_of(documents, noise), st.sampled_from(BUILTIN_NAMES))
@settings(max_examples=300)
def test_each_builtin_is_idempotent(text: str, name: str) -> None:
    rule = builtin_rule(name)
    assert rule is not None
    once = RuleSet((rule,)).apply(text)
    assert RuleSet((rule,)).apply(once) == once


@given(documents)
def test_all_builtins_together_are_idempotent_and_leave_no_volatile_value(text: str) -> None:
    once = ALL_BUILTINS.fresh().apply(text)
    assert ALL_BUILTINS.fresh().apply(once) == once
    for name, (pattern, _) in BUILTIN_PATTERNS.items():
        assert not re.search(pattern, once), name


@given(st.lists(uuids, min_size=0, max_size=8), plain_words)
def test_fire_count_is_the_number_of_spans_replaced(ids: list[str], word: str) -> None:
    rules = RuleSet((builtin_rule("uuid"),)) if builtin_rule("uuid") else RuleSet()
    text = "\n".join(f"{word} {i}" for i in ids)
    out = rules.apply(text)
    assert rules.fired["uuid"] == len(ids)
    assert out.count("<UUID>") == len(ids)
    fresh = rules.fresh()
    assert fresh.fired["uuid"] == 0
    assert fresh.names == ["uuid"]


def test_counts_accumulate_across_calls() -> None:
    rules = RuleSet((builtin_rule("uuid"), builtin_rule("iso-timestamp")))  # type: ignore[arg-type]
    rules.apply(f"{uuid.uuid4()} at 2024-01-02T03:04:05Z")
    rules.apply(f"{uuid.uuid4()} {uuid.uuid4()}")
    assert dict(rules.fired) == {"uuid": 3, "iso-timestamp": 1}


PAIRS = [
    (r"run-[0-9a-f]{8}", "<RUN>"),
    (r"(pid[=: ]*)[0-9]+", r"\g<1><PID>"),
    (r"\d+ ms", "<DURATION>"),
    (r"seed=\w+", "seed=<SEED>"),
]
user_records = st.builds(
    lambda name, pair, ignore_case: RuleRecord(
        name=name, pattern=pair[0], replace=pair[1], ignore_case=ignore_case
    ),
    st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True),
    st.sampled_from(PAIRS),
    st.booleans(),
)
records = st.lists(
    st.one_of(
        user_records,
        st.sampled_from(BUILTIN_NAMES).map(lambda n: builtin_rule(n).record),  # type: ignore[union-attr]
    ),
    max_size=5,
)


@given(records, documents)
def test_records_round_trip_through_the_oracle_file(recs: list[RuleRecord], text: str) -> None:
    original = rules_from_records(recs, where="test")
    encoded = msgspec.json.encode(original.records())
    decoded = msgspec.json.decode(encoded, type=list[RuleRecord])
    assert decoded == original.records()
    again = rules_from_records(decoded, where="test")
    assert again.apply(text) == original.fresh().apply(text)


@given(
    st.dictionaries(
        st.text(max_size=6), st.one_of(st.integers(), st.text(max_size=6), st.none()), max_size=6
    )
)
def test_json_sort_keys_makes_key_order_irrelevant(doc: dict[str, object]) -> None:
    rule = builtin_rule("json-sort-keys")
    assert rule is not None
    forward = json.dumps(doc)
    backward = json.dumps(dict(reversed(list(doc.items()))))
    a = RuleSet((rule,)).apply(forward + "\n")
    b = RuleSet((rule,)).apply(backward + "\n")
    assert a == b
    assert json.loads(a) == doc


def test_a_recorded_rule_that_does_not_compile_names_the_file() -> None:
    bad = RuleRecord(name="broken", pattern="(unclosed", replace="x")
    try:
        rules_from_records([bad], where="lockstep/x.pins.jsonl:1")
    except Exception as e:
        assert "lockstep/x.pins.jsonl:1" in str(e)
        assert "broken" in str(e)
    else:
        raise AssertionError("a pattern that does not compile must be refused")


def test_a_replacement_naming_a_missing_group_is_refused_up_front() -> None:
    bad = RuleRecord(name="run", pattern="run-[0-9]+", replace=r"\g<1><RUN>")
    try:
        rules_from_records([bad], where="lockstep/x.pins.jsonl:1")
    except Exception as e:
        assert "run" in str(e) and "x.pins.jsonl:1" in str(e)
    else:
        raise AssertionError("a replacement with a missing group must be refused")
