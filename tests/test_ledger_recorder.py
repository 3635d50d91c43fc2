"""``lockstep.record_io`` and the ledger file format, in process: behaviour is never changed,
rows round-trip, and the reader refuses every malformed line with FILE:LINE."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import traceback
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import rows_of
from lockstep import canon, record_io
from lockstep.errors import DataError, LockstepError
from lockstep.oracles.ledger.decorator import LedgerRecordWarning
from lockstep.oracles.ledger.kind import iter_rows, read_header

SHARED = ["a", "shared", "list"]


def test_same_object_returned_and_same_exception_reraised(tmp_path: Path) -> None:
    def legacy(kind: str) -> Any:
        if kind == "shared":
            return SHARED
        raise KeyError(kind)

    wrapped = record_io(legacy, ledger=tmp_path / "l.ledger.jsonl")
    assert wrapped("shared") is SHARED
    with pytest.raises(KeyError) as info:
        wrapped("nope")
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert frames[-1] == "legacy"
    wrapped.lockstep_flush()
    got = rows_of(tmp_path / "l.ledger.jsonl")
    assert {(r.ok, r.exc_type) for r in got} == {(True, msgspec_unset()), (False, "KeyError")}


def msgspec_unset() -> Any:
    import msgspec

    return msgspec.UNSET


def test_methods_staticmethods_classmethods_and_async(tmp_path: Path) -> None:
    ledger = tmp_path / "ledgers"

    class Money:
        rate = 3

        @record_io(ledger=ledger / "static.ledger.jsonl")
        @staticmethod
        def cents(text: str) -> int:
            return int(Decimal(text) * 100)

        @record_io(ledger=ledger / "cls.ledger.jsonl")
        @classmethod
        def scaled(cls, n: int) -> tuple[int, int]:
            return (n, n * cls.rate)

    @record_io(ledger=ledger / "async.ledger.jsonl")
    async def fetch(sku: str) -> dict[str, int]:
        return {sku: len(sku)}

    assert Money.cents("1.25") == 125
    assert Money().cents("2") == 200
    assert Money.scaled(2) == (2, 6)
    assert asyncio.run(fetch("abc")) == {"abc": 3}
    Money.cents.lockstep_flush()
    Money.scaled.__func__.lockstep_flush()
    fetch.lockstep_flush()
    assert [r.args for r in rows_of(ledger / "static.ledger.jsonl")] in (
        [["1.25"], ["2"]],
        [["2"], ["1.25"]],
    )
    (scaled,) = rows_of(ledger / "cls.ledger.jsonl")
    assert scaled.args == [2] and scaled.result == {"$tuple": [2, 6]}
    header = read_header(ledger / "cls.ledger.jsonl")
    assert [p.name for p in header.signature] == ["n"]
    (fetched,) = rows_of(ledger / "async.ledger.jsonl")
    assert fetched.result == {"abc": 3}


def test_mutation_and_unfreezable_and_nondeterminism_are_reported(tmp_path: Path) -> None:
    state = {"n": 0}

    def messy(items: list[Any], handle: object = None) -> int:
        items.append("x")
        state["n"] += 1
        return state["n"] if items[0] == "again" else len(items)

    path = tmp_path / "m.ledger.jsonl"
    wrapped = record_io(messy, ledger=path)
    wrapped(["a"])
    wrapped(["a"], handle=open(os.devnull, "w"))  # noqa: SIM115 - unfreezable on purpose
    wrapped(["again"])
    wrapped(["again"])
    with pytest.warns(LedgerRecordWarning) as caught:
        notes = wrapped.lockstep_flush()
    text = "\n".join(notes)
    assert "saw 4 call(s), kept 1 distinct row(s)" in text
    assert 'skipped 1 call(s): kwargs["handle"]: cannot freeze a _io.TextIOWrapper that' in text
    assert "refused messy(['again'])" in text
    # messy is local to this test: no fresh interpreter can call it, which is said
    assert "messy: rows written without verification" in text
    assert len(caught) == 3
    (row,) = rows_of(path)
    assert row.args == [["a"]] and row.mutated == {"0": ["a", "x"]}


def test_a_recorder_fault_never_changes_the_call(tmp_path: Path) -> None:
    class Loud(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no message for you")

    def legacy() -> None:
        raise Loud()

    wrapped = record_io(legacy, ledger=tmp_path / "f.ledger.jsonl")
    with pytest.raises(Loud):
        wrapped()
    part = wrapped.lockstep_recorder.part()
    assert part.faults and not part.entries
    with pytest.warns(LedgerRecordWarning, match="recorder fault on 1 call"):
        wrapped.lockstep_flush()


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.binary(max_size=8),
    st.decimals(allow_nan=False, allow_infinity=False),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=4), inner, max_size=3),
        st.frozensets(st.integers(), max_size=3),
    ),
    max_leaves=8,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(args=st.lists(values, max_size=3), kwargs=st.dictionaries(st.sampled_from("abc"), values))
def test_rows_round_trip(tmp_path: Path, args: list[Any], kwargs: dict[str, Any]) -> None:
    def echo(*a: Any, **k: Any) -> tuple[Any, ...]:
        return (a, k)

    path = tmp_path / "echo.ledger.jsonl"
    path.unlink(missing_ok=True)
    wrapped = record_io(echo, ledger=path)
    assert wrapped(*args, **kwargs) == (tuple(args), kwargs)
    wrapped.lockstep_flush()
    (row,) = rows_of(path)
    assert canon.dumps(canon.decode(row.args)) == canon.dumps(args)
    assert canon.dumps(canon.decode(row.kwargs)) == canon.dumps(kwargs)
    assert canon.dumps(canon.decode(row.result)) == canon.dumps((tuple(args), kwargs))


def header_for(*rows: str) -> str:
    """A version-2 header whose count and digest match ``rows`` (so only the rows are judged)."""
    digest = hashlib.sha256("".join(r + "\n" for r in rows).encode("utf-8")).hexdigest()
    return json.dumps(
        {"digest": digest, "fn": "m:f", "lockstep_ledger": 2, "rows": len(rows), "signature": []}
    )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    line=st.one_of(
        st.text(min_size=1),
        st.binary(min_size=1).map(lambda b: b.decode("latin-1")),
        st.dictionaries(st.text(max_size=6), values.map(canon.encode)).map(json.dumps),
    )
)
def test_reader_refuses_malformed_lines_with_file_and_line(tmp_path: Path, line: str) -> None:
    line = line.replace("\n", " ").replace("\r", " ")
    if not line.strip():
        return
    path = tmp_path / "bad.ledger.jsonl"
    path.write_text(header_for(line) + "\n" + line + "\n", encoding="utf-8")
    try:
        list(iter_rows(path, read_header(path)))
    except DataError as e:
        assert ":2: " in str(e)
    except LockstepError as e:  # pragma: no cover - any other user error is also a bug here
        pytest.fail(f"unexpected {type(e).__name__}: {e}")


def test_rows_are_written_when_the_process_exits(tmp_path: Path) -> None:
    """No explicit flush: a script that only decorates and calls leaves its ledger behind."""
    script = tmp_path / "script.py"
    script.write_text(
        "from lockstep import record_io\n"
        "@record_io(ledger='out.ledger.jsonl')\n"
        "def double(x):\n"
        "    return x * 2\n"
        "double(1); double(2); double(1)\n"
    )
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    rows = rows_of(tmp_path / "out.ledger.jsonl")
    assert sorted((row.args, row.result) for row in rows) == [([1], 2), ([2], 4)]


# Values that == (or marshal) cannot tell apart but canon does: the memo of repeated inputs
# must never hand one of them the row of another.
LOOKALIKES = [1, True, 1.0, 0, False, 0.0, -0.0, b"a", bytearray(b"a"), memoryview(b"a"), "a", None]
LOOKALIKE_CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    call
    for x in LOOKALIKES
    for call in (((x,), {}), (((x,),), {}), ((1, (x, b"")), {}), ((), {"x": x}), ((), {"x": (x,)}))
]


@settings(max_examples=150, deadline=None)
@given(calls=st.lists(st.sampled_from(LOOKALIKE_CALLS), min_size=2, max_size=12))
def test_repeated_inputs_record_exactly_what_fresh_inputs_do(
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]],
) -> None:
    from lockstep.oracles.ledger import recorder, wrapping

    def parts(memo_limit: int) -> bytes:
        def typed(*a: Any, **k: Any) -> str:
            return repr((a, sorted(k.items())))

        original = recorder.MEMO_LIMIT
        recorder.MEMO_LIMIT = memo_limit  # type: ignore[misc]
        try:
            rec = recorder.TargetRecorder("m:typed")
            wrapped = wrapping._wrap_function(typed, rec, skip_first=False)
            for args, kwargs in calls * 3:
                wrapped(*args, **kwargs)
        finally:
            recorder.MEMO_LIMIT = original  # type: ignore[misc]
        return canon.canonical_json(msgspec.to_builtins(rec.part()))

    assert parts(recorder.MEMO_LIMIT) == parts(0)
