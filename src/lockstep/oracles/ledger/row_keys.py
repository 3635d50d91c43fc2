"""Rows from what a recorder keeps of a call: its input's key (with the clock the call ran
under and the subclass a classmethod was called on), its outcome's bytes, and the row or
refusal written from them.

Kept apart from :mod:`.recorder`, which calls these once per new row, not on every call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from lockstep import canon
from lockstep.canon import JSON
from lockstep.oracles.ledger import clock as _clock
from lockstep.oracles.ledger.call_state import _Pending, _Seen
from lockstep.oracles.ledger.format import (
    SHOWN_VALUE,
    LedgerRow,
    outcome_text,
    row_text,
)
from lockstep.oracles.ledger.part import RefusedInput

_canonical = canon.canonical_json


def _ordered(pending: _Pending, key: bytes) -> bytes:
    """The input's bytes with its dicts in insertion order (``key`` itself when that is
    its order).

    The caller asks only for an input that holds something mutable (a dict makes its
    argument mutable: the recorder knows that already, for free) or two keywords or more
    (``order(b=1, a=2)``: the keywords are a dict too).  Only a dict of two
    keys or more can be out of order, and in canonical JSON (no spaces) its second key
    always follows ``,"``; an input without those two bytes is not written again.
    """
    if key.find(b',"') == -1:
        return key
    frozen = [pending.enc_args, pending.enc_kwargs]
    if pending.on is not None:
        frozen += [pending.clock, pending.on]
    elif pending.clock is not None:
        frozen.append(pending.clock)
    ordered = _write_in_order(frozen)
    return key if ordered == key else ordered


def _with_context(key: bytes, clock: dict[str, Any] | None, on: JSON | None) -> bytes:
    """:func:`.format.input_key` from the canonical ``[args, kwargs]``: ``[args, kwargs,
    clock]`` under a frozen clock, ``[args, kwargs, clock or null, on]`` on a subclass."""
    if on is not None:
        frozen_clock = b"null" if clock is None else _canonical(clock)
        return key[:-1] + b"," + frozen_clock + b"," + _canonical(on) + b"]"
    if clock is None:
        return key
    return key[:-1] + b"," + _canonical(clock) + b"]"


_write_in_order = msgspec.json.Encoder().encode


def _row(fn: str, rid: str, seen: _Seen) -> LedgerRow:
    decoded = canon.loads_json(seen.key)
    assert isinstance(decoded, list)
    args, kwargs, *rest = decoded
    assert isinstance(args, list) and isinstance(kwargs, dict)
    clock = (
        msgspec.convert(rest[0], _clock.Clock) if rest and rest[0] is not None else msgspec.UNSET
    )
    on: JSON | msgspec.UnsetType = rest[1] if len(rest) > 1 else msgspec.UNSET
    mutated: dict[str, JSON] | msgspec.UnsetType = seen.mutated if seen.mutated else msgspec.UNSET
    ok = seen.ok
    return LedgerRow(
        id=rid,
        fn=fn,
        args=args,
        clock=clock,
        kwargs=kwargs,
        ok=ok,
        on=on,
        result=seen.result if ok else msgspec.UNSET,
        # a raising call's state rides in the result's place of its outcome (see raised)
        exc_state=seen.result if not ok and seen.result is not None else msgspec.UNSET,
        exc_type=msgspec.UNSET if ok else seen.exc_type,
        exc_stem=msgspec.UNSET if ok else seen.exc_stem,
        mutated=mutated,
    )


def _describe_outcome_bytes(outcome: bytes) -> str:
    decoded: Any = canon.loads_json(outcome)
    ok, result, exc_type, exc_stem, mutated = decoded
    return outcome_text(
        bool(ok), result, exc_type, exc_stem, mutated or msgspec.UNSET, limit=SHOWN_VALUE
    )


def _refusal(
    row: LedgerRow, others: Iterable[bytes], first_calls: Iterable[int] = ()
) -> RefusedInput:
    first = outcome_text(
        row.ok, row.result, row.exc_type, row.exc_stem, row.mutated, limit=SHOWN_VALUE
    )
    return RefusedInput(
        id=row.id,
        call=row_text(row),
        outcomes=[first, *(_describe_outcome_bytes(o) for o in others)],
        first_calls=list(first_calls),
    )
