"""Record a function's real calls without changing what it does.

The messiest functions keep their contract in what callers actually pass and
get back.  This module wraps a target so that every call is frozen to a
canonical row (:mod:`lockstep.oracles.ledger.format`), while the caller sees exactly
what it would have seen unwrapped: the same returned object, the same
exception re-raised with its traceback.  Recording is best effort *around* the
call, never *instead of* it: anything that goes wrong while freezing is
counted and reported, and the call proceeds untouched.

Three ways in, one machinery:

* :func:`~.decorator.record_io` -- a decorator (``@record_io`` or ``record_io(fn,
  ledger=...)``) for a function, method, staticmethod, classmethod or async function;
  each process merges the rows of its own calls into the ledger file when it ends
  (normal exit, a ``multiprocessing`` worker finishing, SIGTERM: :mod:`.exit_hooks`).
* :class:`~.wrapping.Installation` -- wraps ``pkg.mod:qualname`` targets in place for a
  while (a pytest run, a driver script), including references other modules
  took with ``from pkg.mod import func`` before the wrap, and undoes it.
* :class:`TargetRecorder` (this module) -- the in-memory table behind both: rows are
  deduplicated by canonical input; an input seen with two different outcomes
  is *nondeterministic* (or stateful) and refused; values that cannot be
  frozen are reported with their argument path and skipped, never ``repr()``'d.

A process's recording is a :class:`RecordingPart` (plain data, one JSON line),
so pytest-xdist workers hand theirs to the controller through an append-only
spool file and :func:`~.merging.merge_parts` combines them, including the saturation
figure: how many distinct rows the last fifth of the calls still added.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable
from typing import Any, Final

import msgspec

from lockstep import canon
from lockstep.canon import JSON
from lockstep.canon._core import _INT_HIGH, _INT_LOW
from lockstep.canon._core import _encoder as _canonical_writer
from lockstep.errors import CanonError, TooDeepError, TooLargeError
from lockstep.oracles.ledger import clock as _clock
from lockstep.oracles.ledger.call_sites import caller_site as _caller_site
from lockstep.oracles.ledger.call_state import (
    _Again,
    _Fresh,
    _Materialized,
    _Oversize,
    _Pending,
    _Remembered,
    _Seen,
)
from lockstep.oracles.ledger.exc_state import exception_state
from lockstep.oracles.ledger.exit_hooks import EXIT
from lockstep.oracles.ledger.format import (
    ROW_ENCODER,
    SELF_FROZEN,
    row_id,
)
from lockstep.oracles.ledger.input_budget import InputBudget
from lockstep.oracles.ledger.input_kinds import (
    _TAKEN_AS_READ,
    _immutable,
    _memo_key,
    _mutable_input,
    _sequence_iterator_argument,
    blank_constructor_input,
)
from lockstep.oracles.ledger.iter_results import ITERATOR_RESULTS as ITERATOR_RESULTS
from lockstep.oracles.ledger.iter_results import kept_or_relayed as _kept_or_relayed
from lockstep.oracles.ledger.part import PartEntry, RecordingPart, RefusedInput
from lockstep.oracles.ledger.printed import MOST_PRINTED, PRINTED
from lockstep.oracles.ledger.row_keys import _ordered, _refusal, _row, _with_context
from lockstep.oracles.ledger.spool import (
    remove_runs,
    spill_threshold,
    write_run,
)

LATE_FRACTION: Final = 0.2
"""The tail of the run whose new rows measure saturation ("the last 20% of calls added 0 rows")."""

MEMO_LIMIT: Final = 100_000
"""Most inputs a recorder remembers by their ``marshal`` bytes (past it, calls just freeze)."""

_PRINTED_TOO_MUCH: Final = (
    f"printed more than {MOST_PRINTED:,} characters: too much to keep in a row"
)
MAX_ROW_BYTES: Final = 1 << 20
"""The largest frozen call (arguments and outcome) a row holds: a call passing or
returning a whole database is skipped, named, instead of a ledger of many megabytes."""

MEMO_KEY_MAX: Final = 1024
"""Longest ``marshal`` key kept: a big input's row already holds it once; freezing it again
costs little next to its size, and remembering it twice would double the recorder's memory."""

SNAPSHOT_WAIT: Final = 1.0
"""Seconds :meth:`TargetRecorder.part` waits for the table's lock before copying without it."""

_encode = canon.encode
_encode_call_keyed = canon.encode_call_keyed
_scalar_call_key = canon.scalar_call_key
_object_key = canon.object_key
_RAISED: Final = object()
"""What :meth:`TargetRecorder._again` is given for a call that raised (no result to key)."""
_canonical = canon.canonical_json
_write_outcome = _canonical_writer.encode
"""The outcome's canonical bytes: :func:`canon.canonical_json`'s writer, called directly."""
_UNWRITABLE: Final = (TypeError, ValueError, OverflowError, RecursionError, msgspec.EncodeError)
_time_module = time
_REAL_TIME: Final = (time.time,)
"""In a tuple: freezegun rebinds every module global that *is* ``time.time`` to its fake."""
_TIME_MACHINE: Final = "time_machine"
_modules = sys.modules


# --------------------------------------------------------------------------- the table


class TargetRecorder:
    """The distinct calls of one target seen by this process.

    Thread-safe (one lock around the table update); the call itself runs outside the lock.
    """

    def __init__(
        self,
        fn: str,
        *,
        stem_length: int = canon.DEFAULT_STEM,
        object_calls: int = 0,
        object_bytes: int = 0,
    ) -> None:
        self.fn = fn
        self.stem_length = stem_length
        self.budget = InputBudget(object_calls, object_bytes)
        """How many calls with an input holding objects, and how many bytes of them, are
        frozen; later ones with objects not met before run unrecorded, as skipped."""
        self.constructor = fn.endswith(".__init__")
        """A constructor's ``self`` after it raised is what the caller never gets: when it
        cannot be read then (half set), the row leaves it out rather than the call."""
        self.calls = 0
        self.active = True
        self.callables = "probe"
        """What its callable arguments get (:data:`.materialize.CALLABLES`): looked at on
        the first call given one, then recorded, or handed on as they are (unrecorded)
        once the target kept one."""
        self._seen: dict[bytes, _Seen] = {}
        self._memo: dict[bytes, _Seen | _Oversize] = {}
        self._objects: dict[bytes, _Remembered] = {}
        self._oversize: dict[bytes, str] = {}
        """Mutable inputs whose frozen call was too large, by object key (or frozen bytes,
        for one holding no object): why."""
        """Inputs holding objects by :func:`canon.object_key`, recorded without a mutation."""
        """Rows by the ``marshal`` bytes of an immutable input already seen: repeated calls
        (the usual case: most calls repeat an input) skip freezing their arguments."""
        self._unfreezable: Counter[str] = Counter()
        self._skip_sites: dict[str, list[str]] = {}
        self._faults: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.context: Callable[[], str] | None = None
        """Set while a context watch runs (:mod:`.context`): asked once per new row."""
        self._contexts: dict[bytes, str] = {}
        self.spill = False
        """Write the table out as a run (:mod:`.spool`) every :data:`.spool.SPILL_AT` rows, so a
        recording's memory stays flat however many distinct calls it sees.  Only for a
        recorder whose :meth:`part` is taken once, with ``release``."""
        self._runs: list[str] = []
        self._spill_at = spill_threshold()
        # Runs not handed over (the driver failed, the recording was abandoned) go with
        # the recorder; a forked child, which inherits the list, leaves them alone.
        weakref.finalize(self, remove_runs, self._runs, os.getpid())

    # -- around one call ------------------------------------------------------------

    def before(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], on: JSON | None = None
    ) -> _Pending | _Seen | _Again | _Fresh | _Oversize | None:
        """Freeze the input before the call (the callee may mutate it).

        An input made only of exact scalars and tuples that this recorder has seen
        already is found by its ``marshal`` bytes: its row comes back and nothing is frozen.
        ``on``: the subclass a classmethod was called on, frozen (see
        :attr:`~.format.LedgerRow.on`).
        """
        self.calls += 1
        index = self.calls
        if _time_module.time is not _REAL_TIME[0] or _TIME_MACHINE in _modules:
            frozen = _clock.now()
            if frozen is not None:  # keyed by its clock too: never memoized
                return self._before_context(index, args, kwargs, _clock.as_json(frozen), on)
        if on is not None:  # keyed by its class too: never memoized
            return self._before_context(index, args, kwargs, None, on)
        memo_key = _memo_key(args, kwargs)
        if memo_key is not None:
            seen = self._memo.get(memo_key)
            if seen is not None:
                return seen
            key = _scalar_call_key(args, kwargs)
            if key is not None:  # new, immutable: its key is all the row needs of it
                return (index, memo_key, key)
        return self._freeze_input(args, kwargs, index, memo_key)

    def _freeze_input(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], index: int, memo_key: bytes | None
    ) -> _Pending | _Again | None:
        """:meth:`before` for an input not in the memo and not of scalars only (``memo_key``:
        its ``marshal`` key when it is immutable, else None)."""
        object_key: bytes | None = None
        if memo_key is None:
            found = self._object_input(args, kwargs, index)
            if type(found) is not bytes:
                return found  # type: ignore[return-value]
            object_key = found or None
        try:
            enc_args, enc_kwargs, key = _encode_call_keyed(args, kwargs)
        except (TooLargeError, TooDeepError) as e:  # a row's worth: so many are walked no more
            self.budget.spent(MAX_ROW_BYTES)
            if isinstance(e, TooLargeError):
                self._skip(str(e))
                return None
            return self._before_materialized(index, args, kwargs, str(e))
        except CanonError as e:
            taken = self._before_materialized(index, args, kwargs, str(e))
            if taken is None and memo_key is None:
                self.budget.refund()  # skipped: it froze nothing the budget bounds
            return taken
        except Exception as e:
            self._faults[f"freezing the arguments: {type(e).__name__}: {e}"] += 1
            return None
        if memo_key is None:
            self.budget.spent(len(key))  # the frozen input's canonical bytes
        if self._oversize and object_key is None and key in self._oversize:
            self._skip(self._oversize[key])  # its outcome too large last time: not again
            return None
        # memoizable means immutable: nothing to compare after the call
        mutable = memo_key is None and _mutable_input(args, kwargs)
        return _Pending(
            index, args, kwargs, enc_args, enc_kwargs, mutable, memo_key, key, object_key
        )

    def _object_input(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], index: int
    ) -> bytes | _Again | _Materialized | None:
        """:meth:`_freeze_input`'s first steps for an input holding objects or mutable
        values: its object key (``b""`` when it has none) when it is to be frozen; else
        what the call gets instead (its remembered row, its iterator taken as read) or
        None, skipped (the budget spent, the input too large before).  A constructor's blank
        ``self`` with scalars is frozen past the budget, uncounted
        (:func:`.input_kinds.blank_constructor_input`)."""
        blank = False  # asked only past the budget: it costs a look at every constructor
        new_kind = False  # a kind of call not met before, frozen past the budget
        spent = self.budget.exhausted()
        if spent is not None:  # nothing keyed or frozen past the budget
            blank = self.constructor and blank_constructor_input(args, kwargs)
            new_kind = not blank and self.budget.new_kind(args, kwargs)
            if not blank and not new_kind:
                self._skip(spent)
                return None
        object_key = _object_key(args, kwargs)
        remembered = self._objects.get(object_key) if object_key is not None else None
        if remembered is not None:
            return _Again(remembered, object_key, args, kwargs)  # type: ignore[arg-type]
        if self._oversize and object_key in self._oversize:
            self._skip(self._oversize[object_key])
            return None
        refusal = None if blank or new_kind else self.budget.refusal()
        if refusal is not None:
            blank = self.constructor and blank_constructor_input(args, kwargs)
            if not blank:
                self._skip(refusal)
                return None
        if blank or new_kind:
            self.budget.charged = False  # not counted: nothing of it to give back
        else:
            self.budget.frozen(args, kwargs)
        if _sequence_iterator_argument(args, kwargs):
            return self._before_materialized(index, args, kwargs, _TAKEN_AS_READ)
        return object_key or b""

    def _before_context(
        self,
        index: int,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        clock: dict[str, Any] | None,
        on: JSON | None,
    ) -> _Pending | None:
        """A call under a frozen clock (:mod:`.clock`), or a classmethod's called on a
        subclass: its row holds the clock and the class, and both are part of its input,
        so the same call on another day, or on another class, is another row."""
        if _sequence_iterator_argument(args, kwargs):
            return self._before_materialized(index, args, kwargs, _TAKEN_AS_READ, clock, on)
        try:
            enc_args, enc_kwargs, key = _encode_call_keyed(args, kwargs)
        except CanonError as e:
            return self._before_materialized(index, args, kwargs, str(e), clock, on)
        except Exception as e:
            self._faults[f"freezing the arguments: {type(e).__name__}: {e}"] += 1
            return None
        return _Pending(
            index,
            args,
            kwargs,
            enc_args,
            enc_kwargs,
            _mutable_input(args, kwargs),
            None,
            _with_context(key, clock, on),
            clock=clock,
            on=on,
        )

    def _before_materialized(
        self,
        index: int,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        reason: str,
        clock: dict[str, Any] | None = None,
        on: JSON | None = None,
    ) -> _Materialized | None:
        """Arguments that did not freeze: their iterators are handed on through proxies
        that freeze each item as the target takes it (:func:`.materialize.taken_call`).
        The wrapper calls the target with the pending call's ``call_args``/``call_kwargs``,
        whether or not the call is recorded."""
        from lockstep.oracles.ledger.materialize import taken_call  # rare: only then

        pending, why = taken_call(index, args, kwargs, clock, on, self.callables)
        if why or pending is None:
            self._skip(why or reason)
        return pending

    def returned(
        self,
        pending: _Pending | _Seen | _Again | _Fresh | _Oversize | None,
        result: Any,
        printed: str | None = "",
    ) -> None:
        """Note a normal return (``printed``: what the call printed, None for too much;
        :mod:`.printed`)."""
        if pending is None:
            return
        if isinstance(pending, _Oversize):
            self._skip(pending.reason)
            return
        if printed is None:
            self._skip(_PRINTED_TOO_MUCH)
            return
        if type(pending) is _Pending:  # a new input (with objects: key the result too)
            if pending.object_key is not None:
                pending.result_key = _object_key((result,), {})
        elif isinstance(pending, _Again):
            found = self._again(pending, result)
            if found is None:
                return
            pending = found
        elif isinstance(pending, _Pending) and pending.object_key is not None:
            pending.result_key = _object_key((result,), {})
        if type(pending) is _Seen:
            t = type(result)
            if (
                t in SELF_FROZEN
                and pending.ok
                and type(pending.result) is t
                and pending.result == result
                and pending.mutated is None
                and printed == ""
            ):
                return  # the recorded outcome again: same bytes, nothing to note
        t = type(result)
        if (t is int and _INT_LOW < result < _INT_HIGH) or (t is str and result.isascii()):
            self._note(pending, True, result, "", "", printed)  # canon.encode's first test
            return
        self._note_result(pending, result, printed)

    def _note_result(
        self, pending: _Pending | _Seen | _Fresh, result: Any, printed: str = ""
    ) -> None:
        """:meth:`returned`'s general case: the result frozen, then noted."""
        try:
            enc = _encode(result, path="result")
        except CanonError as e:
            if type(pending) is _Materialized:
                self._settle_callables(pending, True)  # (a closure made of one, returned)
            if isinstance(e, TooLargeError | TooDeepError):
                self._walked_in_vain(pending, str(e))
                return
            self._skip(str(e))
            return
        except Exception as e:
            self._faults[f"freezing the result: {type(e).__name__}: {e}"] += 1
            return
        self._note(pending, True, enc, "", "", printed)

    def _settle_callables(self, pending: _Materialized, ok: bool) -> str:
        """What a call's callable arguments taught (:func:`.materialize.settled`): how the
        target's next ones are handed on; why this call is skipped, or ""."""
        from lockstep.oracles.ledger.materialize import settled

        mode, why = settled(pending.proxies, ok, pending.relayed)
        self.callables = mode or self.callables
        return why

    def relay(self, pending: _Pending | _Seen | _Again | _Fresh, result: Any) -> Any:
        """A generator handing the caller ``result``'s items unchanged, each frozen as it
        is consumed; the row is noted when it ends (see :func:`.iter_results.relay`).  An
        iterator over a sequence, set or dict is handed back as it is, its items read
        without consuming it (:func:`.iter_results.kept_or_relayed`)."""
        return _kept_or_relayed(self, pending, result)

    def iterated(
        self,
        pending: _Pending | _Seen | _Again | _Fresh | _Oversize,
        items: list[JSON],
        end: str,
        exc: BaseException | None,
        refused: str,
    ) -> None:
        """Note a call whose iterator result ended (exhausted, raised or closed open) after
        ``items`` were consumed: its result is ``{"$iter": {...}}``."""
        if isinstance(pending, _Oversize):
            self._skip(pending.reason)
            return
        if refused:
            self._skip(refused)
            return
        if isinstance(pending, _Again):
            found = self._again(pending, _RAISED)
            if found is None:
                return
            pending = found
        payload: dict[str, JSON] = {"items": items, "end": end}
        if exc is not None:
            try:
                frozen = canon.freeze_exception(exc, stem_length=self.stem_length)
            except Exception as e:
                self._faults[f"freezing the exception: {type(e).__name__}: {e}"] += 1
                return
            payload["exc_type"] = frozen.exc_type
            payload["exc_stem"] = frozen.exc_stem
        if type(pending) is _Materialized:
            pending.relayed = True
        self._note(pending, True, {"$iter": payload}, "", "")

    def raised(
        self,
        pending: _Pending | _Seen | _Again | _Fresh | _Oversize | None,
        exc: BaseException,
        printed: str | None = "",
    ) -> None:
        """Note an exception (the wrapper re-raises it); ``printed`` as :meth:`returned`
        takes it."""
        if pending is None:
            return
        if isinstance(pending, _Oversize):
            self._skip(pending.reason)
            return
        if printed is None:
            self._skip(_PRINTED_TOO_MUCH)
            return
        if isinstance(pending, _Again):
            found = self._again(pending, _RAISED)
            if found is None:
                return
            pending = found
        try:
            frozen = canon.freeze_exception(exc, stem_length=self.stem_length)
        except Exception as e:
            self._faults[f"freezing the exception: {type(e).__name__}: {e}"] += 1
            return
        # its attributes, in the outcome's result place: a call that raised an exception
        # in another state than before varies, as one that returned another value does
        state = exception_state(exc, self.fn)
        self._note(pending, False, state, frozen.exc_type, frozen.exc_stem, printed)

    def _again(self, again: _Again, result: Any) -> _Pending | _Seen | None:
        """After a repeated input with objects: None when the call gave its recorded result
        back by key (nothing to note); else what :meth:`_note` takes -- the row, when the
        arguments are unchanged (so no mutation), or the input rebuilt as first frozen, when
        this call changed them (its mutation is then frozen like any other)."""
        remembered = again.remembered
        if not again.unchanged():
            return _Pending(
                self.calls,
                again.args,
                again.kwargs,
                remembered.enc_args,
                remembered.enc_kwargs,
                True,
                None,
                remembered.key,
            )
        if (
            result is not _RAISED
            and remembered.result_key is not None
            and _object_key((result,), {}) == remembered.result_key
        ):
            return None
        return remembered.seen

    def _mutations(self, pending: _Pending, ok: bool) -> dict[str, JSON] | None:
        out: dict[str, JSON] = {}
        before_args = pending.enc_args
        assert isinstance(before_args, list)
        for i, value in enumerate(pending.args):
            if _immutable(value):
                continue
            if i == 0 and not ok and self.constructor:
                # Half built, and thrown away by the caller (``Cron("1#0")`` raised, no
                # one holds the object): what ``__init__`` set before it raised is no
                # behaviour anyone sees, and it holds what a fresh interpreter has
                # otherwise (croniter's start time, read from the clock before the
                # expression was checked, refused every error row of its constructor).
                continue
            after = _encode(value, path=f"args[{i}] after the call")
            if _canonical(after) != _canonical(before_args[i]):
                out[str(i)] = after
        before_kwargs = pending.enc_kwargs
        assert isinstance(before_kwargs, dict)
        for name, value in pending.kwargs.items():
            if _immutable(value):
                continue
            after = _encode(value, path=f"kwargs[{name!r}] after the call")
            if _canonical(after) != _canonical(before_kwargs[name]):
                out[name] = after
        return out or None

    def _note(  # noqa: C901 -- one test per kind of pending call, then the general case
        self,
        pending: _Pending | _Seen | _Fresh,
        ok: bool,
        result: JSON,
        exc_type: str,
        exc_stem: str,
        printed: str = "",
    ) -> None:
        if type(pending) is _Seen:
            self._note_again(pending, ok, result, exc_type, exc_stem, printed)
            return
        if type(pending) is tuple:
            self._note_fresh(pending, ok, result, exc_type, exc_stem, printed)
            return
        assert isinstance(pending, _Pending)
        if type(pending) is _Materialized and pending.proxies:
            from lockstep.oracles.ledger import materialize

            why = self._settle_callables(pending, ok)
            if not why:
                why = materialize.complete_input(pending, _immutable, _with_context)
            if why:
                self._skip(why)
                return
        mutable = pending.mutable
        try:
            mutated = self._mutations(pending, ok) if mutable else None
            if printed:
                mutated = {**(mutated or {}), PRINTED: printed}
            outcome = _write_outcome([ok, result, exc_type, exc_stem, mutated])
        except (TooLargeError, TooDeepError) as e:
            self._walked_in_vain(pending, str(e))
            return
        except CanonError as e:
            self._skip(str(e))
            return
        except _UNWRITABLE as e:  # canon.canonical_json's refusal, without its extra call
            self._skip(str(CanonError(f"cannot be written as JSON: {type(e).__name__}: {e}")))
            return
        except Exception as e:
            self._faults[f"freezing the outcome: {type(e).__name__}: {e}"] += 1
            return
        key = pending.key
        if pending.memo_key is None:
            self.budget.spent(len(outcome))  # with its input's, what the row holds
        if len(key) + len(outcome) > MAX_ROW_BYTES:
            self._too_large(
                len(key) + len(outcome), pending.memo_key, pending.object_key or pending.key
            )
            return
        if self.context is not None:
            self._observe(key, outcome)
        lock = self._lock  # acquire/release, not `with`: half the cost, on every new row
        lock.acquire()
        try:
            table = self._seen
            row = table.get(key)
            if row is None:
                row = table[key] = _Seen(
                    # passed order: a mutable input's dicts, two keywords or more
                    _ordered(pending, key) if mutable or len(pending.kwargs) > 1 else key,
                    ok,
                    result,
                    exc_type,
                    exc_stem,
                    mutated,
                    outcome,
                    pending.call_index,
                )
                if self.spill and len(table) >= self._spill_at:
                    self._spill()
                    return
            elif row.outcome != outcome and outcome not in row.other_outcomes:
                row.other_outcomes += (outcome,)
                row.other_calls += (pending.call_index,)
            memo_key = pending.memo_key
            if (
                memo_key is not None
                and len(memo_key) <= MEMO_KEY_MAX
                and len(self._memo) < MEMO_LIMIT
            ):
                self._memo[memo_key] = row
            object_key = pending.object_key
            if (
                object_key is not None
                and mutated is None
                and row.outcome == outcome
                and len(object_key) <= MEMO_KEY_MAX
                and len(self._objects) < MEMO_LIMIT
            ):
                self._objects[object_key] = _Remembered(
                    row,
                    pending.enc_args,
                    pending.enc_kwargs,
                    key,
                    pending.result_key,
                )
        finally:
            lock.release()

    def _note_fresh(
        self,
        fresh: _Fresh,
        ok: bool,
        result: JSON,
        exc_type: str,
        exc_stem: str,
        printed: str = "",
    ) -> None:
        """:meth:`_note` for a new immutable input (:data:`_Fresh`): its outcome written."""
        mutated: dict[str, JSON] | None = {PRINTED: printed} if printed else None
        try:
            outcome = _write_outcome([ok, result, exc_type, exc_stem, mutated])
        except _UNWRITABLE as e:  # canon.canonical_json's refusal, without its extra call
            self._skip(str(CanonError(f"cannot be written as JSON: {type(e).__name__}: {e}")))
            return
        except Exception as e:
            self._faults[f"freezing the outcome: {type(e).__name__}: {e}"] += 1
            return
        self._add(fresh, ok, result, exc_type, exc_stem, outcome, mutated)

    def _add(
        self,
        fresh: _Fresh,
        ok: bool,
        result: JSON,
        exc_type: str,
        exc_stem: str,
        outcome: bytes,
        mutated: dict[str, JSON] | None = None,
    ) -> None:
        """:meth:`_note`'s table update for a new immutable input (:data:`_Fresh`), its
        ``outcome`` written: no mutation, no object key, its key already in passed order."""
        index, memo_key, key = fresh
        if len(key) + len(outcome) > MAX_ROW_BYTES:
            self._too_large(len(key) + len(outcome), memo_key, None)
            return
        if self.context is not None:
            self._observe(key, outcome)
        lock = self._lock
        lock.acquire()
        try:
            table = self._seen
            row = table.get(key)
            if row is None:
                row = table[key] = _Seen(
                    key, ok, result, exc_type, exc_stem, mutated, outcome, index
                )
                if self.spill and len(table) >= self._spill_at:
                    self._spill()
                    return
            elif row.outcome != outcome and outcome not in row.other_outcomes:
                row.other_outcomes += (outcome,)
                row.other_calls += (index,)
            if len(memo_key) <= MEMO_KEY_MAX and len(self._memo) < MEMO_LIMIT:
                self._memo[memo_key] = row
        finally:
            lock.release()

    def _spill(self) -> None:
        """Write the table out as one sorted run and start an empty one (lock held).

        The memo goes too (its entries are the spilled rows): an input seen again is
        frozen again and lands in a later run, where the merge compares its outcome with
        the one spilled here.  When the run cannot be written (no space, no temporary
        folder), the rows stay in memory, spilling stops and the report says so: the
        recorder runs inside the user's calls and never fails one.
        """
        table = self._seen
        records: list[tuple[str, int, bytes, bytes]] = []
        encode = ROW_ENCODER.encode
        for key, seen in table.items():
            rid = row_id(key)
            records.append((rid, seen.first_call, seen.outcome, encode(_row(self.fn, rid, seen))))
            for other, call in zip(seen.other_outcomes, seen.other_calls, strict=True):
                records.append((rid, call, other, b""))
        if not records:
            return
        try:
            self._runs.append(write_run(records))
        except OSError as e:
            self.spill = False
            self._faults[f"writing rows to a scratch file: {e}; they were kept in memory"] += 1
            return
        self._seen, self._memo, self._objects = {}, {}, {}

    def _note_again(
        self, seen: _Seen, ok: bool, result: JSON, exc_type: str, exc_stem: str, printed: str = ""
    ) -> None:
        """A memoized (immutable, so never mutated) input: compare its outcome with the row's
        (what it printed is kept as a mutation is: :mod:`.printed`)."""
        try:
            outcome = _canonical(
                [ok, result, exc_type, exc_stem, {PRINTED: printed} if printed else None]
            )
        except Exception as e:
            self._faults[f"freezing the outcome: {type(e).__name__}: {e}"] += 1
            return
        if seen.outcome != outcome:
            if self.context is not None:
                self._observe(seen.key, outcome)
            with self._lock:
                if outcome not in seen.other_outcomes:
                    seen.other_outcomes += (outcome,)
                    seen.other_calls += (self.calls,)

    def _observe(self, key: bytes, outcome: bytes) -> None:
        """Note the context of a new row, or of an outcome differing from its row's."""
        if key in self._contexts or self.context is None:
            return
        seen = self._seen.get(key)
        if seen is not None and (seen.outcome == outcome or outcome in seen.other_outcomes):
            return
        try:
            hint = self.context()
        except Exception as e:
            self._faults[f"watching the context: {type(e).__name__}: {e}"] += 1
            return
        if hint:
            self._contexts[key] = hint

    def start_afresh(self) -> None:
        """In a forked child: an empty table, so the child writes only the calls it makes.

        The parent writes the calls it saw before the fork.  The inherited table is kept
        alive, not freed: freeing it would touch (and so copy) every page it lives on.
        """
        EXIT.inherited_tables.append((self._seen, self._memo))
        self._seen = {}
        self._memo = {}
        self._objects = {}
        self._oversize = {}
        self._objects_frozen = 0
        self._unfreezable = Counter()
        self._skip_sites = {}
        self._faults = Counter()
        self._contexts = {}
        self._runs.clear()  # the parent's: it merges them (and its finalizer spares them here)
        self.calls = 0
        self._lock = threading.Lock()  # another thread may have held it at the fork

    def _too_large(self, size: int, memo_key: bytes | None, object_key: bytes | None) -> None:
        """Skip a call whose frozen form is over :data:`MAX_ROW_BYTES`, and remember its
        input (by its memo key; else by its object key, or its frozen bytes when it holds
        no object), so that its next calls are skipped for the same reason before their
        outcome is frozen again (see :class:`_Oversize`)."""
        reason = (
            f"the frozen call takes {size / 2**20:.1f} MiB, "
            f"over the {MAX_ROW_BYTES // 2**20} MiB a row may hold (data, not behaviour)"
        )
        self._skip_again(reason, memo_key, object_key)

    def _skip_again(self, reason: str, memo_key: bytes | None, object_key: bytes | None) -> None:
        """Skip a call, and remember its input by its memo key or its object key (or
        frozen bytes) so that its next calls are skipped for ``reason`` at once."""
        self._skip(reason)
        for key, table, marker in (
            (memo_key, self._memo, _Oversize(reason)),
            (object_key, self._oversize, reason),
        ):
            if key is not None and len(key) <= MEMO_KEY_MAX and len(table) < MEMO_LIMIT:
                table[key] = marker  # type: ignore[assignment]

    def _walked_in_vain(self, pending: _Pending | _Seen | _Fresh, reason: str) -> None:
        """Skip a call whose outcome (its result, or its input as the call left it) held
        more objects than a value may, or nested past the codec's depth: learning that
        walked up to :data:`~lockstep.canon.objects.MAX_OBJECTS` objects.  The call is
        charged a row's worth of its target's byte budget when its input holds objects,
        and its input is remembered as :meth:`_too_large` remembers one, so its next calls
        are skipped before anything is walked again (a babel ``Locale`` loads its whole
        locale data on its first call: the input as that call left it was walked again
        on each of a thousand calls)."""
        if type(pending) is tuple:  # a new immutable input (_Fresh)
            memo_key: bytes | None = pending[1]
            object_key: bytes | None = None
        elif isinstance(pending, _Pending):
            memo_key = pending.memo_key
            object_key = pending.object_key or pending.key if memo_key is None else None
            if memo_key is None:
                self.budget.spent(MAX_ROW_BYTES)
        else:  # a row already recorded for this input: its next calls still compare
            memo_key = object_key = None
        self._skip_again(reason, memo_key, object_key)

    def _skip(self, reason: str) -> None:
        """Count a call skipped because a value cannot be frozen; keep its first call sites.

        A skipped call is a hole in the oracle (a branch only such calls reach is not
        guarded), so the report says where those calls come from.
        """
        self._unfreezable[reason] += 1
        sites = self._skip_sites.setdefault(reason, [])
        if len(sites) < SKIP_SITES and self._unfreezable[reason] <= SITE_LOOKS:
            site = _caller_site()
            if site and site not in sites:
                sites.append(site)

    # -- the result -------------------------------------------------------------------

    def part(self, *, release: bool = False) -> RecordingPart:
        """This process's recording as plain data (rows sorted by id).

        Waits at most :data:`SNAPSHOT_WAIT` seconds for the table's lock: a SIGTERM handler
        may be writing the rows while the thread it interrupted holds that lock, which it
        would never release.  The copy is then taken without the lock; a dict copy is one
        step under the GIL, so at worst it misses the row being added at that moment.

        ``release`` (the recording is over: nothing calls the target through this recorder
        again) hands the table over instead of copying it, and frees each table entry as
        its row is built, so a million rows are not held twice at the peak.
        """
        locked = self._lock.acquire(timeout=SNAPSHOT_WAIT)
        try:
            runs: list[str] = []
            if self._runs:  # the rows are on disk: the rest follows them there
                self._spill()
                runs = list(self._runs)  # handed over: merge_parts removes them
                self._runs.clear()
            table = self._seen
            if release:
                self._seen, self._memo, self._objects = {}, {}, {}
            else:
                table = dict(table)
            contexts = list(self._contexts.items())
            calls = self.calls
        finally:
            if locked:
                self._lock.release()
        entries: list[PartEntry] = []
        refused: list[RefusedInput] = []
        while table:
            key, seen = table.popitem()
            row = _row(self.fn, row_id(key), seen)
            if seen.other_outcomes:
                refused.append(
                    _refusal(row, seen.other_outcomes, [seen.first_call, *seen.other_calls])
                )
                continue
            entries.append(PartEntry(row=row, first_call=seen.first_call))
        entries.sort(key=lambda e: e.row.id)
        refused.sort(key=lambda r: r.id)
        return RecordingPart(
            fn=self.fn,
            calls=calls,
            entries=entries,
            refused=refused,
            unfreezable=dict(self._unfreezable),
            skip_sites={k: list(v) for k, v in self._skip_sites.items()},
            faults=dict(self._faults),
            contexts={row_id(key): hint for key, hint in contexts},
            runs=runs,
        )


SKIP_SITES: Final = 3
"""Call sites kept per reason a call was skipped."""
SITE_LOOKS: Final = 64
"""Skipped calls per reason whose site is looked for: calls from one or two sites would
otherwise walk the stack on every call, for a third site that never comes (coloraide's
suite skips 450,000 calls of a few targets past their budget)."""
