"""The parts of mining that need no process: constants, shapes, strategies, the arc collector."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lockstep import canon
from lockstep.mine.constants import harvest_near, harvest_source
from lockstep.mine.coverage import ArcCollector
from lockstep.mine.search import draw_each, smallest_failure
from lockstep.mine.strategies import constant_calls, inputs_like
from lockstep.oracles.mining import Call, shape_of

SOURCE = textwrap.dedent(
    '''
    """Module docstring: not a constant anyone compares with."""
    SENTINELS = {"n/a", "-"}
    UNUSED = ("far", "away")


    def parse(raw, limit=10):
        """Docstring."""
        if raw.endswith("%") or raw.startswith(("$", "EUR ")):
            return raw.removesuffix("pct")
        if raw in SENTINELS or len(raw) > 404:
            return {"key": -2.5}
        return raw
    '''
)


def test_harvest_finds_literals_affixes_and_number_neighbours() -> None:
    found = harvest_source(SOURCE)
    assert {"n/a", "-", "%", "$", "EUR ", "pct", "key", "far"} <= set(found.strings)
    assert not any("docstring" in s.lower() for s in found.strings)
    assert set(found.suffixes) == {"%", "pct"}
    assert set(found.prefixes) == {"$", "EUR "}
    assert {403, 404, 405, 9, 10, 11} <= set(found.ints)
    assert -2.5 in found.floats


def test_harvest_near_keeps_the_function_and_the_names_it_reads(tmp_path: Path) -> None:
    path = tmp_path / "near_mod.py"
    path.write_text(SOURCE, encoding="utf-8")
    namespace: dict[str, Any] = {}
    exec(compile(SOURCE, str(path), "exec"), namespace)
    near = harvest_near(namespace["parse"])
    assert {"n/a", "-", "%", "key"} <= set(near.strings)
    assert "far" not in near.strings  # a module literal the function never reads


def test_shape_of_tells_types_and_containers_apart() -> None:
    assert shape_of(canon.encode((1.5, "a"))) == "tuple[float|str]"
    assert shape_of(canon.encode([1, [2]])) == "list[int|list[int]]"
    assert shape_of(canon.encode({"a": 1})) == "dict"
    assert shape_of(canon.encode(b"x")) == "bytes"
    assert shape_of(None) == "None"


@settings(suppress_health_check=[HealthCheck.too_slow])  # a loaded 2-core machine
@given(
    st.recursive(
        st.none() | st.integers(-(2**63), 2**63) | st.text() | st.floats(), st.lists, max_leaves=8
    )
)
def test_shape_of_any_frozen_value_is_a_name(value: Any) -> None:
    assert shape_of(canon.encode(value))


def test_generated_calls_keep_the_recorded_shapes_and_are_repeatable() -> None:
    seeds = [Call(("abc",), {}), Call(("x", 3), {"strict": True})]
    pool = harvest_source(SOURCE)

    def target(raw: str, limit: int = 10, *, strict: bool = False) -> str:
        return raw

    def draws(seed: int) -> list[Call]:
        out: list[Call] = []
        draw_each(inputs_like(seeds, pool, target), out.append, examples=60, seed_value=seed)
        return out

    first = draws(5)
    assert first == draws(5)
    for call in first:
        # a recorded shape, plus keywords for parameters with a default no caller set
        if len(call.args) == 1:
            assert set(call.kwargs) <= {"limit", "strict"}
        else:
            assert len(call.args) == 2 and "strict" in call.kwargs and "limit" not in call.kwargs
        assert isinstance(call.args[0], str)
    assert any("limit" in call.kwargs for call in first)  # never recorded, still explored
    constants = [value for _, value in constant_calls(seeds, pool)]
    assert "n/a" in constants and "12%" in constants and 404 in constants


def test_a_failing_property_is_shrunk() -> None:
    seeds = [Call(("abc",), {})]
    pool = harvest_source(SOURCE)
    strategy = inputs_like(seeds, pool, lambda raw: raw)

    def differs(call: Call) -> bool:
        text = call.args[0].strip()
        return text.endswith("%") and text[:-1].isdigit() and int(text[:-1]) > 0

    smallest = smallest_failure(strategy, differs, examples=1000, seed_value=1)
    assert smallest == Call(("1%",), {})


def test_the_arc_collector_sees_which_branch_ran() -> None:
    namespace: dict[str, Any] = {}
    exec(compile(SOURCE, "/virtual/arcs_mod.py", "exec"), namespace)
    parse = namespace["parse"]
    collector = ArcCollector(frozenset({"/virtual/arcs_mod.py"}))
    plain = collector.run(lambda: parse("plain"))[1]
    percent = collector.run(lambda: parse("5%"))[1]
    assert plain != percent and not percent <= plain
    assert collector.run(lambda: parse("plain"))[1] == plain


_JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-99, 99), st.text(max_size=6))
_JSON = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=60, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(st.text(max_size=4), _JSON, min_size=1, max_size=4))
def test_constants_inside_a_document_change_one_place_each(document: dict[str, Any]) -> None:
    pool = harvest_source('KEYS = ("n/a", "discount")\nLIMIT = 7\n')
    before = canon.canonical_json(document)
    calls = constant_calls([Call((document,), {})], pool)
    assert canon.canonical_json(document) == before  # the recorded input is never mutated
    for call, constant in calls:
        (variant,) = call.args
        if constant is not None:  # a whole-argument constant
            continue
        assert isinstance(variant, dict) and variant != document
        assert set(document) <= set(variant)  # a key is added, never removed
        assert len(set(variant) - set(document)) <= 1


def test_record_like_documents_keep_each_keys_types_and_offer_source_keys() -> None:
    seeds = [
        Call(({"name": "apple", "price": "1.5", "qty": 2},), {}),
        Call(({"name": "pear", "price": "2"},), {}),
    ]
    pool = harvest_source('def f(d):\n    return "discount" in d\n')
    drawn: list[dict[str, Any]] = []
    draw_each(
        inputs_like(seeds, pool, lambda path: path, hinted=False),
        lambda call: drawn.append(call.args[0]),
        examples=200,
        seed_value=3,
    )
    records = [d for d in drawn if isinstance(d, dict) and {"name", "price"} <= set(d)]
    assert len(records) > len(drawn) // 3
    assert any("discount" in d for d in records)
    assert any("qty" in d for d in records) and any("qty" not in d for d in records)
