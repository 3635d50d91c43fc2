"""A new input of scalars takes the recorder's short path (``canon.scalar_call_key``, the
outcome written in the wrapper): what it records must be byte for byte what the general
path records, in the ledger file and in the recording handed to a controller."""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path
from typing import Any
from unittest import mock

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from lockstep import record_io
from lockstep.oracles.ledger import recorder

_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=4),
    st.binary(max_size=4),
)
_handled = st.one_of(_scalar, st.lists(_scalar, min_size=1, max_size=3).map(tuple))
_declined = st.one_of(
    st.floats(allow_nan=False),
    st.lists(_scalar, max_size=2),  # mutable: the general path
    st.just((1, (2,))),
)
_input = st.one_of(
    st.tuples(  # the short path's kinds
        st.lists(_handled, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from(["a", "b"]), _scalar, max_size=2),
    ),
    st.tuples(  # with a value or a keyword it declines
        st.lists(_handled | _declined, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from(["a", "$c"]), _handled | _declined, max_size=2),
    ),
)
_outcome = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=4),
    st.none(),
    st.floats(allow_nan=False),
    st.lists(_scalar, max_size=2).map(tuple),
    st.sampled_from([ValueError("bad value 12"), KeyError("k")]),
)


def _record(
    calls: list[tuple[tuple[Any, ...], dict[str, Any], Any]], ledger: Path
) -> tuple[bytes, bytes]:
    """The ledger bytes and the recording's bytes of ``calls`` (each input, its outcome)."""
    outcomes = iter([outcome for _, _, outcome in calls])

    def target(*a: Any, **k: Any) -> Any:
        out = next(outcomes)
        if isinstance(out, Exception):
            raise out
        return out

    wrapped = record_io(target, ledger=ledger)
    for args, kwargs, _ in calls:
        with contextlib.suppress(ValueError, KeyError):
            wrapped(*args, **kwargs)
    part = msgspec.json.encode(wrapped.lockstep_recorder.part())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapped.lockstep_flush()
    wrapped.lockstep_recorder.active = False
    return ledger.read_bytes() if ledger.exists() else b"", part


@given(
    pool=st.lists(_input, min_size=1, max_size=6),
    picks=st.lists(st.tuples(st.integers(0, 5), _outcome), min_size=1, max_size=12),
)
@settings(max_examples=120, deadline=None)
def test_the_short_path_records_the_general_paths_bytes(
    tmp_path_factory: Any, pool: list[Any], picks: list[tuple[int, Any]]
) -> None:
    """Repeated inputs (found by the memo), outcomes that differ (refused), exceptions and
    inputs the short path declines, recorded with it and without it."""
    calls = [(*pool[i % len(pool)], outcome) for i, outcome in picks]
    folder = tmp_path_factory.mktemp("ledgers")
    short = _record(calls, folder / "short.ledger.jsonl")
    with mock.patch.object(recorder, "_scalar_call_key", lambda args, kwargs: None):
        general = _record(calls, folder / "general.ledger.jsonl")
    assert short == general


def test_the_short_path_is_taken_for_a_new_input_of_scalars(tmp_path: Path) -> None:
    """The property above compares something: this input goes the short way."""
    taken: list[bytes | None] = []

    def spy(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes | None:
        key = recorder.canon.scalar_call_key(args, kwargs)
        taken.append(key)
        return key

    with mock.patch.object(recorder, "_scalar_call_key", spy):
        ledger, _ = _record([((7, (b"\x00ab", "x")), {"flag": True}, 9)], tmp_path / "l.jsonl")
    assert taken == [b'[[7,{"$tuple":[{"$bytes":"AGFi"},"x"]}],{"flag":true}]']
    assert b'"result":9' in ledger
