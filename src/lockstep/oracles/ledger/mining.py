"""A ledger's target as a subject to call directly (:class:`lockstep.oracles.mining.MiningSubject`).

Every input is frozen by the very recorder ``lockstep record`` uses
(:class:`~lockstep.oracles.ledger.recorder.TargetRecorder`), so a mined row is
byte for byte the row a driver calling the target with that input would have
written; rows are added through :func:`~lockstep.oracles.ledger.kind.write_recording`
in ``--new-only`` mode (verification in a fresh interpreter, dedup by input), and a
case is checked by the replayer ``lockstep replay`` uses.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from lockstep import canon
from lockstep.canon import JSON
from lockstep.canon.text import call_text
from lockstep.errors import CanonError, DataError, UsageError
from lockstep.model import Outcome, RecordReport
from lockstep.oracles.ledger.clock import Clock, as_json, travelling
from lockstep.oracles.ledger.file import iter_rows, outcome_of, read_header
from lockstep.oracles.ledger.format import LedgerRow
from lockstep.oracles.ledger.merging import Recording, merge_parts
from lockstep.oracles.ledger.recorder import TargetRecorder
from lockstep.oracles.ledger.replay import Replayer, afresh, used_less
from lockstep.oracles.ledger.spec import LedgerSpec
from lockstep.oracles.mining import Call, Ran, shape_of


def _clock_of(value: list[JSON]) -> Clock:
    """The clock an input carries as its third item (one with a bad clock is bad data)."""
    try:
        return msgspec.convert(value[2], Clock)
    except msgspec.ValidationError as e:
        raise DataError(f"input clock: {e}") from None


class Unfreezable(Exception):
    """The input or its outcome cannot be frozen (no row could hold it)."""


@dataclass
class LedgerSubject:
    """The ledger's target in this process, with the ledger's own freezing and comparison."""

    spec: LedgerSpec
    target: Callable[..., Any]
    path: Path
    """The ledger file (it may not exist in an old checkout: only :meth:`seeds` needs it)."""
    write: Callable[[Recording], RecordReport]
    """The kind's ``--new-only`` record path for a recording (verify, merge, write)."""
    replayer: Replayer

    typed: bool = True
    unit: str = "row"

    @property
    def timeout(self) -> float:
        return self.spec.timeout

    @property
    def sources(self) -> tuple[Path, ...]:
        """The target's module (through decorators); none for a built-in."""
        try:
            name = inspect.getsourcefile(inspect.unwrap(self.target))
        except (TypeError, ValueError):
            return ()
        return (Path(name),) if name else ()

    @property
    def stem_length(self) -> int:
        return self.replayer.stem_length

    def _rows(self) -> list[LedgerRow]:
        if not self.path.exists():
            raise UsageError(
                f"{self.spec.name}: not recorded yet; record it first "
                f"('lockstep record {self.spec.name}'): mining starts from the recorded calls"
            )
        return [row for _, row in iter_rows(self.path, read_header(self.path))]

    def seeds(self) -> list[Call]:
        calls = []
        for row in self._rows():
            try:
                args = canon.decode(row.args, path="args")
                kwargs = canon.decode(row.kwargs, path="kwargs") if row.kwargs else {}
            except CanonError as e:
                raise DataError(f"{self.spec.name}: row {row.id}: {e}") from None
            clock = None if row.clock is msgspec.UNSET else row.clock
            calls.append(Call(tuple(args), dict(kwargs), clock))
        return calls

    def recorded(self) -> list[JSON]:
        """Each row's input; a row recorded under a frozen clock carries its clock as a
        third item, so ``replay --against`` freezes and checks it at that instant."""
        return [self.encode_input(call) for call in self.seeds()]

    def describe(self, value: JSON) -> str:
        assert isinstance(value, list)
        args, kwargs, *clock = value
        assert isinstance(args, list) and isinstance(kwargs, dict)
        text = call_text(getattr(self.target, "__name__", "target"), args, kwargs)
        return f"{text} at {_clock_of(value).describe()}" if clock else text

    def _row(self, call: Call) -> LedgerRow:
        if call.clock is not None:  # a recorded row's input, at the instant it ran
            clock, call = call.clock, Call(call.args, call.kwargs)
            with travelling(clock):
                return self._row(call)
        recorder = TargetRecorder(self.spec.target, stem_length=self.stem_length)
        call = Call(*afresh(call.args, call.kwargs))
        pending = recorder.before(call.args, call.kwargs)
        if pending is None:
            raise Unfreezable("the input cannot be frozen")
        try:
            result = self.target(*call.args, **call.kwargs)
            if inspect.isawaitable(result):
                import asyncio  # only for an async target: it costs every record's start

                result = asyncio.run(awaited(result))
        except (Exception, canon.PastRecorded) as exc:  # asked past the recording: an outcome
            recorder.raised(pending, exc)
        else:
            recorder.returned(pending, result)
        entries = recorder.part().entries
        if not entries:
            raise Unfreezable("the outcome cannot be frozen")
        return entries[0].row

    def run(self, call: Call) -> Ran:
        row = self._row(call)
        result: JSON = None if isinstance(row.result, msgspec.UnsetType) else row.result
        outcome_class = "returned " + shape_of(result) if row.ok else f"raised {row.exc_type}"
        if row.mutated is not msgspec.UNSET:
            outcome_class += " and mutated " + ",".join(sorted(row.mutated))
        return Ran(outcome_class, outcome_of(row))

    def add(self, calls: Sequence[Call]) -> RecordReport:
        """Freeze ``calls`` like a driver's and merge the new ones into the ledger."""
        recorder = TargetRecorder(self.spec.target, stem_length=self.stem_length)
        for given in calls:
            call = Call(*afresh(given.args, given.kwargs), clock=given.clock)
            with travelling(call.clock) if call.clock is not None else nullcontext():
                pending = recorder.before(call.args, call.kwargs)
                try:
                    result = self.target(*call.args, **call.kwargs)
                except canon.PastRecorded:
                    # an input made from a row whose iterator or callable argument answers
                    # only what that row asked: it asked otherwise, so no row of it replays
                    continue
                except Exception as exc:
                    recorder.raised(pending, exc)
                else:
                    if used_less(list(call.args), call.kwargs) is None:  # (as above)
                        recorder.returned(pending, result)
        recording = merge_parts(self.spec.target, [recorder.part()])
        known = {row.id for row in self._rows()}
        fresh = {rid: row for rid, row in recording.rows.items() if rid not in known}
        return self.write(dataclasses.replace(recording, rows=fresh))

    def encode_input(self, call: Call) -> JSON:
        args, kwargs = canon.encode_call(call.args, call.kwargs)
        if call.clock is not None:
            return [args, kwargs, as_json(call.clock)]
        return [args, kwargs]

    def decode_input(self, value: JSON) -> Call:
        """The inverse of :meth:`encode_input` (a third item is the clock the call ran under)."""
        clock = None
        if isinstance(value, list) and len(value) == 3:
            value, clock = value[:2], _clock_of(value)
        args, kwargs = canon.decode(value, path="input")
        return Call(tuple(args), dict(kwargs), clock)

    def freeze(self, value: JSON) -> JSON:
        """The row this input gives here (an input with a clock runs at that instant)."""
        return msgspec.to_builtins(self._row(self.decode_input(value)))  # type: ignore[no-any-return]

    def check(self, case: JSON) -> Outcome:
        return self.replayer.run(0, msgspec.convert(case, LedgerRow))


async def awaited(awaitable: Any) -> Any:
    """What an awaitable a target returned resolves to (run under ``asyncio.run``)."""
    return await awaitable
