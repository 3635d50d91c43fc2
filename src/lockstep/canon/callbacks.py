"""Callable arguments, frozen as the calls the target made of them: ``{"$calls": [...]}``.

A call such as ``pick(rows, lambda r: r["total"] > 10)`` or ``group(items, key=by_day)``
with a closure cannot be frozen by name: the function has none a ledger could hold, and
data never names code to run.  The recorder (:mod:`lockstep.oracles.ledger.materialize`)
hands the target a proxy that calls the original and keeps each call it makes, frozen: its
arguments and its answer.  The argument freezes as::

    {"$calls": [{"args": [...], "kwargs": {...}, "returned": value}, ...]}

(``kwargs`` left out when empty; ``"raised": ["ValueError", [args]]`` in place of
``returned`` for a call that raised a builtin exception).  It thaws to a
:class:`CalledBack`, which answers the target's calls in turn with the recorded answers
after checking that each is asked what it was asked when recorded.  A call asked
otherwise, or once more than recorded, is not known: it raises :class:`CallsPastRecorded`,
which replay reports as the case's drift ("callable argument args[1]: call 2 with (3,)
/ call 2 with (4,)").  So a rewrite that calls a caller's function with other values, in
another order or more often is red even where the outcome is the same.

Nothing runs but the target: the answers are data, thawed afresh for each call.
"""

from __future__ import annotations

import builtins
from typing import Any, Final, cast

from lockstep.canon._core import JSON, check_level
from lockstep.canon.callables import PastRecorded
from lockstep.canon.decoding import PATH_TAGS, TAG_DECODERS, decode, decode_at, list_payload
from lockstep.canon.encoding import AS_USED, encode_call, same_form
from lockstep.canon.text import call_text
from lockstep.errors import CanonError

CALL_KEYS: Final = (frozenset({"args", "returned"}), frozenset({"args", "kwargs", "returned"}))
RAISED_KEYS: Final = (frozenset({"args", "raised"}), frozenset({"args", "kwargs", "raised"}))


class CallsPastRecorded(PastRecorded):
    """A replayed call called a callable argument otherwise than the recorded call did (other
    arguments, or once more): what it would have answered is not known."""

    def __init__(self, where: str, recorded: str, got: str) -> None:
        super().__init__(where, recorded, got)
        self.where, self.recorded, self.got = where, recorded, got

    def drift(self) -> tuple[str, str, str]:
        return (f"callable argument {self.where}".rstrip(), self.recorded, self.got)


def builtin_exception(name: str) -> type[Exception] | None:
    """The builtin exception class called ``name`` (what a recorded callable may raise)."""
    found = getattr(builtins, name, None)
    if isinstance(found, type) and issubclass(found, Exception):
        return found
    return None


class CalledBack:
    """What a target is handed at replay for a callable argument (and, once its call is
    noted, at record): each call is answered with the next recorded answer, when it is
    asked what the recorded call was asked.  It freezes as the recorded calls, however many
    it answered, so it thaws and freezes alike."""

    __slots__ = ("calls", "made", "where")

    def __init__(self, calls: list[dict[str, Any]], where: str = "") -> None:
        self.calls = calls
        self.made = 0
        self.where = where

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        index = self.made
        try:
            enc_args, enc_kwargs = encode_call(args, kwargs)
            asked: JSON = [enc_args, enc_kwargs]
            shown = call_text("", enc_args, enc_kwargs, limit=60)
        except CanonError as e:
            asked, shown = None, f"(<an argument that cannot be frozen: {e}>)"
        if index >= len(self.calls):
            raise CallsPastRecorded(
                self.where, f"called {len(self.calls)} time(s)", f"called again with {shown}"
            )
        call = self.calls[index]
        recorded_args, recorded_kwargs = call["args"], call.get("kwargs", {})
        if asked is None or not same_form(asked, [recorded_args, recorded_kwargs]):
            recorded = call_text("", recorded_args, recorded_kwargs, limit=60)
            raise CallsPastRecorded(
                self.where, f"call {index + 1} with {recorded}", f"call {index + 1} with {shown}"
            )
        self.made += 1
        if "raised" in call:
            name, exc_args = call["raised"]
            exc_type = builtin_exception(name)
            assert exc_type is not None  # checked when thawed
            raise exc_type(*decode(exc_args, path=f"{self.where}.raised"))
        return decode(call["returned"], path=f"{self.where}.returned")

    def __repr__(self) -> str:
        return f"<callable answering {len(self.calls)} recorded call(s)>"


def _dec_calls(payload: Any, path: str, depth: int) -> CalledBack:
    calls = list_payload("$calls", payload, path, depth)
    for i, call in enumerate(calls):
        where = f"{path}[{i}]"
        keys = frozenset(call) if type(call) is dict else frozenset()
        if keys not in CALL_KEYS and keys not in RAISED_KEYS:
            raise CanonError(
                'malformed $calls value: each call is {"args": [...], "kwargs": {...}, '
                '"returned": value} or {"args": [...], "raised": [name, [args]]}',
                where,
            )
        if type(call["args"]) is not list or type(call.get("kwargs", {})) is not dict:
            raise CanonError(
                "malformed $calls value: args must be an array, kwargs an object", where
            )
        # every part thawed once now: a malformed one is this value's error, not the target's
        decode_at(call["args"], f"{where}.args", depth + 3)
        decode_at(call.get("kwargs", {}), f"{where}.kwargs", depth + 3)
        if "raised" in call:
            raised = call["raised"]
            if (
                type(raised) is not list
                or len(raised) != 2
                or type(raised[0]) is not str
                or builtin_exception(raised[0]) is None
                or type(raised[1]) is not list
            ):
                raise CanonError(
                    "malformed $calls value: raised is [the name of a builtin exception, "
                    "[its arguments]]",
                    where,
                )
            decode_at(raised[1], f"{where}.raised", depth + 4)
        else:
            decode_at(call["returned"], f"{where}.returned", depth + 3)
    return CalledBack(calls, path)


def _enc_calls(value: CalledBack, depth: int) -> JSON:
    """The calls recorded (frozen when they were made), however many were answered since."""
    check_level(depth + 1)
    return {"$calls": cast("list[JSON]", value.calls)}


TAG_DECODERS["$calls"] = _dec_calls
PATH_TAGS.add("$calls")
AS_USED[CalledBack] = _enc_calls
