"""Replaying ledger rows: thaw the arguments, call the current target, compare canonically.

* the return value *and its type* (a list where a tuple was is drift), or the
  exception's qualified type and message stem;
* every argument the call mutated, frozen after the call.

Comparison is exact.  Two opt-ins per ``[[ledger]]`` relax it, each documented
where a reviewer reads the config: ``float_tolerance = 1e-9`` accepts floats
(anywhere inside the result or a mutated argument) that differ by at most that
absolute amount -- types must still match -- and ``loose = true`` treats tuples
and lists as the same sequence.
"""

from __future__ import annotations

import datetime as dt
import functools
import inspect
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import msgspec

from lockstep import canon, diff
from lockstep.canon import JSON
from lockstep.canon.shared import unshared
from lockstep.canon.text import SHOWN_VALUE, around_difference, clip, value_text
from lockstep.errors import CanonError, DataError, ThawError
from lockstep.model import Drift, Outcome, Status
from lockstep.oracles.ledger.clock import Clock, ClockUnavailable, travelling
from lockstep.oracles.ledger.deadline import DEFAULT_TIMEOUT, Deadline, RowTimedOut
from lockstep.oracles.ledger.format import SELF_FROZEN, LedgerRow, outcome_text, row_text
from lockstep.oracles.ledger.iter_results import ITERATOR_RESULTS
from lockstep.oracles.ledger.printed import PRINTED, PRINTED_ASPECT, teed
from lockstep.oracles.ledger.relocation import relocated
from lockstep.oracles.ledger.secret_rows import revealed, scrubbed_outcome
from lockstep.oracles.ledger.write_guard import enter, leave
from lockstep.secrets import Scrubber, SecretMissing

if TYPE_CHECKING:
    import asyncio


def _close(expected: Any, actual: Any, tol: float) -> bool:
    """Structural equality of two frozen values with an absolute tolerance on floats."""
    if type(expected) is not type(actual):
        return False
    if type(expected) is float:
        return bool(abs(expected - actual) <= tol)
    if type(expected) is list:
        return len(expected) == len(actual) and all(
            _close(e, a, tol) for e, a in zip(expected, actual, strict=True)
        )
    if type(expected) is dict:
        return expected.keys() == actual.keys() and all(
            _close(expected[k], actual[k], tol) for k in expected
        )
    return bool(expected == actual)


"""Types whose frozen form is the value itself and which cannot change in place.

A thawed value of one of these is the very object the ledger holds, so freezing it
again gives the recorded bytes: replay compares such values without freezing them.
(Not float: ``-0.0 == 0.0``, and a non-finite float freezes to a tag.)
"""

_decode = canon.decode


def _expected_text(row: LedgerRow, limit: int | None = None) -> str:
    return outcome_text(row.ok, row.result, row.exc_type, row.exc_stem, limit=limit)


def _an_error_where_the_project_raises(
    compare: Callable[..., Outcome],
) -> Callable[..., Outcome]:
    """``compare``, or an ERROR outcome when the project's code it runs to read what the
    call gave (an iterator's ``__next__``, a ``__repr__`` for the diff) raises: one row's
    verdict, never the end of the replay.  Reading a returned iterator that asks an
    argument recorded as it was used for more than the recording answers is a drift, as
    the call's own asking is (a ``BaseException``: it crossed the replay's fork as a
    traceback and ended ``lockstep replay``; more-itertools' ``split_at``)."""

    @functools.wraps(compare)
    def guarded(replayer: Replayer, lineno: int, row: LedgerRow, *rest: Any) -> Outcome:
        try:
            return compare(replayer, lineno, row, *rest)
        except canon.PastRecorded as e:
            return _took_more(replayer.oracle, row.id, e)
        except DataError:
            raise
        except Exception as e:
            note = f"reading what the call gave raised {type(e).__name__}: {e}"
            return Outcome(replayer.oracle, row.id, Status.ERROR, note=clip(note, SHOWN_VALUE))

    return guarded


REPLAY_ARGV: Final = ("lockstep-replay",)
"""``sys.argv`` while a row replays, wherever it replays: a call that reads the command
line (argparse's ``parse_args()`` with no arguments) was verified under the verifying
interpreter's and replayed under ``lockstep replay``'s own (vobject's
``ics_diff.getOptions`` raised a usage error at recording and in verification, returned
at replay: red on unchanged code).  The same everywhere, a row that read the test's own
``sys.argv`` does not reproduce in verification and is refused there."""


@dataclass(slots=True)
class Replayer:
    """Calls the current target for each row and compares the canonical outcome."""

    oracle: str
    shown: str
    target: Callable[..., Any]
    loose: bool
    tolerance: float
    stem_length: int
    loop: asyncio.AbstractEventLoop | None = None  # only for an async target
    scrubber: Scrubber | None = None
    """The ``[[secret]]`` values to put back into each row (None: nothing configured)."""
    candidate: bool = False
    """See :attr:`lockstep.model.ReplayOptions.candidate`."""
    timeout: float = DEFAULT_TIMEOUT
    """The ledger's ``timeout``: seconds a call may run under :meth:`run_under`."""
    relocate: tuple[str, str] | None = None
    """The folder the rows name paths inside and today's, when they differ
    (:mod:`.relocation`): each row is replayed with today's in its place."""
    guarded: str | None = None
    """The project's folder, which no replayed call may write into (:mod:`.write_guard`:
    as :func:`~.write_guard.guarded_folder` gives it)."""

    def same(self, expected: JSON, actual: JSON) -> bool:
        if canon.same_form(expected, actual):
            return True
        expected, actual = unshared(expected), unshared(actual)
        if self.loose:
            try:
                expected = canon.encode(canon.decode(expected), loose=True)
                actual = canon.encode(canon.decode(actual), loose=True)
            except CanonError:
                return False
            if canon.canonical_json(expected) == canon.canonical_json(actual):
                return True
        return self.tolerance > 0 and _close(expected, actual, self.tolerance)

    def run_under(self, deadline: Deadline, lineno: int, row: LedgerRow) -> Outcome:
        """:meth:`run` with ``deadline`` watching the call (:mod:`.deadline`): a row whose
        call runs past it is an ERROR, and so is every later row (not called)."""
        if deadline.stuck is not None:
            return Outcome(self.oracle, row.id, Status.ERROR, note=deadline.not_called_note())
        deadline.running = row.id
        try:
            outcome = self.run(lineno, row)
            deadline.running = None  # from here on, no tick can stop this row
        except RowTimedOut:
            deadline.running = None
            deadline.stuck = row.id
            return Outcome(self.oracle, row.id, Status.ERROR, note=deadline.timed_out_note())
        except BaseException:
            deadline.running = None
            raise
        return outcome

    def run(self, lineno: int, row: LedgerRow) -> Outcome:
        try:
            if self.relocate is not None:
                row = relocated(row, *self.relocate)
            before = enter(self.guarded) if self.guarded is not None else None
            argv = sys.argv
            sys.argv = list(REPLAY_ARGV)
            try:
                if self.scrubber is not None:
                    return self._run_revealed(lineno, row, self.scrubber)
                return self._run(lineno, row)
            finally:
                sys.argv = argv
                if self.guarded is not None:
                    leave(before)
        except SystemExit as e:
            # today's code asked to end the process (``sys.exit(0)`` in the target): that
            # ended the replay with that status, and a status of 0 read as green
            note = f"the call exited the process (SystemExit: {e.code!r}): it must return or raise"
            return Outcome(self.oracle, row.id, Status.ERROR, note=clip(note, SHOWN_VALUE))

    def _run_revealed(self, lineno: int, row: LedgerRow, scrubber: Scrubber) -> Outcome:
        """Replay a row recorded with secrets scrubbed: with today's values put back."""
        try:
            real = revealed(row, scrubber)
        except SecretMissing as e:
            return Outcome(self.oracle, row.id, Status.ERROR, note=str(e))
        outcome = self._run(lineno, real)
        if real is row and not scrubber:  # nothing put back, no value to scrub: as is
            return outcome
        return scrubbed_outcome(outcome, scrubber, row_text(row))

    def _run(self, lineno: int, row: LedgerRow) -> Outcome:
        args: list[Any] = row.args
        kwargs: dict[str, Any] = row.kwargs
        # Scalars thaw to themselves: such rows (the usual kind) need no decoding at all.
        scalar = SELF_FROZEN.issuperset(map(type, args)) and (
            not kwargs or SELF_FROZEN.issuperset(map(type, kwargs.values()))
        )
        if not scalar:
            thawed = self._thawed(lineno, row, _decode_input, args, kwargs)
            if isinstance(thawed, Outcome):
                return thawed
            ((args, kwargs),) = thawed
        target = self.target if row.on is msgspec.UNSET else self._on_subclass(lineno, row)
        if isinstance(target, Outcome):
            return target
        # what the call prints, captured where the row kept some to compare it with (.printed)
        tee = teed(sink=True) if isinstance(row.mutated, dict) and PRINTED in row.mutated else None
        try:
            called = self._call(target, row, args, kwargs)
        finally:
            printed = tee.end() if tee is not None else ""
        if isinstance(called, Outcome):
            return called
        ok, result, exc = called
        expected: Any = row.result
        # The common case, decided without freezing anything: a scalar result whose frozen
        # form is itself, of exactly the recorded type (so ``==`` cannot confuse 1, 1.0 and
        # True), and arguments that cannot have changed in place.
        if (
            scalar
            and ok
            and row.ok
            and type(result) is type(expected)
            and type(result) in SELF_FROZEN
            and result == expected
            and not row.mutated
        ):
            return Outcome(self.oracle, row.id, Status.PASS)
        outcome = self._compare(lineno, row, args, kwargs, ok, result, exc, printed)
        return outcome if scalar else self._all_calls_made(outcome, args, kwargs)

    def _all_calls_made(self, outcome: Outcome, args: list[Any], kwargs: dict[str, Any]) -> Outcome:
        """``outcome``, or a drift when it passed but a callable argument was called fewer
        times, or fewer items were taken from an iterator argument, than by the recorded
        call."""
        if outcome.status is not Status.PASS:
            return outcome
        fewer = used_less(args, kwargs)
        if fewer is None:
            return outcome
        return Outcome(self.oracle, outcome.case_id, Status.DRIFT, drifts=(fewer,))

    def _call(
        self, target: Callable[..., Any], row: LedgerRow, args: list[Any], kwargs: dict[str, Any]
    ) -> tuple[bool, Any, BaseException | None] | Outcome:
        """The call's outcome (returned, result, exception), at the row's clock if it has
        one; an Outcome when it cannot be made or asked past what the recording answers."""
        if row.clock is not msgspec.UNSET:
            try:
                return self._call_at(target, row.clock, args, kwargs)
            except ClockUnavailable as e:
                return Outcome(self.oracle, row.id, Status.ERROR, note=str(e))
            except canon.PastRecorded as e:
                return _took_more(self.oracle, row.id, e)
        try:
            result = target(*args, **kwargs)
            if self.loop is not None and inspect.isawaitable(result):
                result = self.loop.run_until_complete(result)
        except canon.PastRecorded as e:
            return _took_more(self.oracle, row.id, e)
        except (Exception, SystemExit) as e:  # an exit is the call's outcome, as recorded
            return False, None, e
        return True, result, None

    def _on_subclass(self, lineno: int, row: LedgerRow) -> Callable[..., Any] | Outcome:
        """The classmethod target bound to the subclass the row was called on
        (:attr:`~.format.LedgerRow.on`): the defining class's function, with that class as
        ``cls`` -- as the recorded call ran, whether or not the subclass overrides the
        method.  A row that cannot be so bound (the class is gone or no longer a subclass,
        the target is no longer a classmethod) is an ERROR: nothing is called."""
        owner = getattr(self.target, "__self__", None)
        func = getattr(self.target, "__func__", None)
        if not isinstance(owner, type) or func is None:
            note = "the row was called on a subclass, and the target is no longer a classmethod"
            return Outcome(self.oracle, row.id, Status.ERROR, note=note)
        thawed = self._thawed(lineno, row, _decode_class, row.on)
        if isinstance(thawed, Outcome):
            return thawed
        (cls,) = thawed
        if not isinstance(cls, type) or not issubclass(cls, owner):
            shown = clip(repr(cls), SHOWN_VALUE)
            note = f"the row's class ({shown}) is not a subclass of {owner.__qualname__} today"
            return Outcome(self.oracle, row.id, Status.ERROR, note=note)
        return types.MethodType(func, cls)

    def _thawed(
        self, lineno: int, row: LedgerRow, thaw: Callable[..., Any], *frozen: Any
    ) -> tuple[Any] | Outcome:
        """``(thaw(*frozen),)``; or the row's ERROR when its values do not rebuild with
        today's code, or do not thaw in a candidate's fresh interpreter.  Bad data in a
        ledger itself is a :class:`DataError` naming its line and row."""
        try:
            return (thaw(*frozen),)
        except ThawError as e:
            return self._not_rebuilt(row, e)
        except CanonError as e:
            if self.candidate:
                return self._not_thawed(row, e)
            raise DataError(f"{self.shown}:{lineno}: row {row.id}: {e}") from None

    def _call_at(
        self, target: Callable[..., Any], clock: Clock, args: list[Any], kwargs: dict[str, Any]
    ) -> tuple[bool, Any, BaseException | None]:
        """Call the target with the clock travelled to the row's frozen instant."""
        with travelling(clock):
            try:
                result = target(*args, **kwargs)
                if self.loop is not None and inspect.isawaitable(result):
                    result = self.loop.run_until_complete(result)
            except (Exception, SystemExit) as e:
                return False, None, e
        return True, result, None

    def _check_recorded(self, lineno: int, row: LedgerRow) -> Outcome | None:
        """A recorded value that does not thaw is a corrupt line, never a drift to show
        (in a candidate: a case that does not reproduce, see :attr:`candidate`)."""
        thawed = self._thawed(lineno, row, _decode_recorded, row)
        return thawed if isinstance(thawed, Outcome) else None

    def _not_rebuilt(self, row: LedgerRow, e: ThawError) -> Outcome:
        """The row is well formed but today's code cannot rebuild its values: the change's
        failure, reported on the case (not a corrupt file)."""
        note = f"the recorded values do not rebuild with today's code: {e}"
        return Outcome(self.oracle, row.id, Status.ERROR, note=note)

    def _not_thawed(self, row: LedgerRow, e: CanonError) -> Outcome:
        note = f"a recorded value does not thaw in a fresh interpreter: {e}"
        return Outcome(self.oracle, row.id, Status.ERROR, note=note)

    @_an_error_where_the_project_raises
    def _compare(
        self,
        lineno: int,
        row: LedgerRow,
        args: list[Any],
        kwargs: dict[str, Any],
        ok: bool,
        result: Any,
        exc: BaseException | None,
        printed: str | None = "",
    ) -> Outcome:
        drifts: list[Drift] = []
        limit = _candidate_cut(self.candidate)
        if ok and row.ok:
            try:
                actual = _iterated(result, row.result, self.stem_length)
            except CanonError as e:
                drifts.append(Drift("result", _expected_text(row, _most(limit)), _unfrozen_text(e)))
            else:
                expected: JSON = row.result  # type: ignore[assignment]
                if not self.same(expected, actual):
                    diff = "" if self.candidate else _value_diff(expected, actual)
                    sides = functools.partial(_result_sides, row, expected, actual)
                    drifts.append(_cut_drift("result", sides, limit, diff))
        elif not ok and not row.ok:
            assert exc is not None
            raised = self._exception_drift(row, exc, limit)
            if raised is not None:
                drifts.append(raised)
        else:
            drifts.append(self._outcome_drift(row, result, exc, limit))
        mutation = self._mutation_drift(row, args, kwargs)
        if mutation is not None:
            drifts.append(mutation)
        shown = _printed_drift(row, printed, limit)
        if shown is not None:
            drifts.append(shown)
        if not drifts:
            # a candidate's row is written only where what it recorded thaws: a later drift
            # of a value that does not would read as a corrupt line (configobj's sections,
            # each pointing back at its parent, froze to a form the codec did not thaw)
            unthawed = self._check_recorded(lineno, row) if self.candidate else None
            return unthawed or Outcome(self.oracle, row.id, Status.PASS)
        unthawed = self._check_recorded(lineno, row)
        if unthawed is not None:
            return unthawed
        return Outcome(
            self.oracle,
            row.id,
            Status.DRIFT,
            tuple(drifts),
            note=row_text(row),
        )

    def _exception_drift(
        self, row: LedgerRow, exc: BaseException, limit: int | None
    ) -> Drift | None:
        """A recorded exception against the one raised now: its type and message stem,
        then, where the row keeps them, its attributes (:mod:`.exc_state`)."""
        frozen = canon.freeze_exception(exc, stem_length=self.stem_length)
        if (frozen.exc_type, frozen.exc_stem) != (row.exc_type, row.exc_stem):

            def exception_sides(cut: int | None) -> tuple[str, str]:
                return _expected_text(row, cut), outcome_text(
                    False, None, frozen.exc_type, frozen.exc_stem, limit=cut
                )

            return _cut_drift("exception", exception_sides, limit)
        if row.exc_state is not msgspec.UNSET:
            return _state_drift(row, exc, limit)
        return None

    def _mutation_drift(
        self, row: LedgerRow, args: list[Any], kwargs: dict[str, Any]
    ) -> Drift | None:
        actual: dict[str, JSON] = {}
        expected = row.mutated if isinstance(row.mutated, dict) else {}
        if PRINTED in expected:  # not an argument: compared by _printed_drift
            expected = {k: v for k, v in expected.items() if k != PRINTED}
        try:
            for i, value in enumerate(args):
                if value is row.args[i] and type(value) in SELF_FROZEN:
                    continue  # thawed to the recorded object itself, and it cannot change
                if i == 0 and not row.ok and "0" not in expected and _constructor(row):
                    continue  # half built and thrown away, as recorded (the recorder left it out)
                after = canon.encode(value)
                if not canon.same_form(after, row.args[i]):
                    actual[str(i)] = after
            for name, value in kwargs.items():
                if value is row.kwargs[name] and type(value) in SELF_FROZEN:
                    continue
                after = canon.encode(value)
                if not canon.same_form(after, row.kwargs[name]):
                    actual[name] = after
        except CanonError as e:
            return Drift("mutation", "arguments frozen after the call", f"an argument {e}")
        if actual.keys() == expected.keys() and all(
            self.same(expected[k], actual[k]) for k in expected
        ):
            return None
        limit = _candidate_cut(self.candidate)

        def sides(cut: int | None) -> tuple[str, str]:
            return _mutation_text(expected, cut), _mutation_text(actual, cut)

        return _cut_drift("mutation", sides, limit)

    def _outcome_drift(
        self, row: LedgerRow, result: Any, exc: BaseException | None, limit: int | None
    ) -> Drift:
        """The drift of a call that returned where it raised, or raised where it returned."""
        if exc is not None:
            frozen = canon.freeze_exception(exc, stem_length=self.stem_length)

            def raised_sides(cut: int | None) -> tuple[str, str]:
                return _expected_text(row, cut), outcome_text(
                    False, None, frozen.exc_type, frozen.exc_stem, limit=cut
                )

            return _cut_drift("outcome", raised_sides, limit)
        try:
            made = canon.encode(result)
        except CanonError as e:
            return Drift("outcome", _expected_text(row, _most(limit)), _unfrozen_text(e))

        def returned_sides(cut: int | None) -> tuple[str, str]:
            return _expected_text(row, cut), outcome_text(True, made, None, None, limit=cut)

        return _cut_drift("outcome", returned_sides, limit)


def _decode_input(args: list[JSON], kwargs: dict[str, JSON]) -> tuple[Any, Any]:
    thawed = _decode(args, path="args")
    return _in_own_zone(thawed, args), (_decode(kwargs, path="kwargs") if kwargs else {})


def _in_own_zone(thawed: Any, frozen: list[JSON]) -> Any:
    """A zone's call given a time in that very zone: the time's zone is the zone again.

    The datetime machinery calls a ``tzinfo``'s ``utcoffset``, ``dst``, ``tzname`` and
    ``fromutc`` with a datetime whose ``tzinfo`` is that object, and dateutil's
    ``fromutc`` checks it (``dt.tzinfo is not self`` raises).  The row freezes both as
    values, so they thawed as two equal objects and every such row was refused (226 of
    dateutil's).  A time argument whose zone froze exactly as the call's first argument
    (a ``tzinfo``) did is given that argument as its zone: equal state, the same object
    again, as when the call was made.
    """
    if len(thawed) < 2 or not isinstance(thawed[0], dt.tzinfo):
        return thawed
    zone = thawed[0]
    out = list(thawed)
    for i in range(1, len(out)):
        value, form = out[i], frozen[i]
        if (
            isinstance(value, dt.datetime | dt.time)
            and value.tzinfo is not None
            and value.tzinfo is not zone
            and type(form) is dict
            and len(form) == 1
        ):
            ((tag, payload),) = form.items()
            if (
                tag in _CLOCK_TAGS
                and type(payload) is list
                and len(payload) == 3
                and payload[1] == frozen[0]
            ):
                out[i] = value.replace(tzinfo=zone)
    return type(thawed)(out) if isinstance(thawed, tuple) else out


_CLOCK_TAGS: Final = frozenset({"$datetime", "$time"})


def _decode_class(on: JSON) -> Any:
    return _decode(on, path="on")


def _decode_recorded(row: LedgerRow) -> None:
    """Thaw what the row recorded (its result, its mutations, its exception's attributes),
    to see that it thaws: a forged one is a corrupt line, not a drift to show."""
    if row.ok and not isinstance(row.result, msgspec.UnsetType):
        _decode(row.result, path="result")
    if isinstance(row.mutated, dict):
        _decode(row.mutated, path="mutated")
    if not row.ok and not isinstance(row.exc_state, msgspec.UnsetType):
        if not isinstance(row.exc_state, dict):
            raise CanonError("not an object of attributes", "exc_state")
        _decode(row.exc_state, path="exc_state")


def _candidate_cut(candidate: bool) -> int | None:
    """How much of a drift's values to render: a candidate's drift is only ever read cut
    (its verdict shows :data:`SHOWN_VALUE` characters, masked on a margin past them:
    :data:`lockstep.oracles.BRIEF_MARGIN`), so its values are rendered only so far; a
    replay's drift whole (its report shows it)."""
    from lockstep.oracles import BRIEF_MARGIN

    return 2 * (SHOWN_VALUE + BRIEF_MARGIN) if candidate else None


DRIFT_SIDE_MOST: Final = 20_000
"""Characters of each side a replay's drift keeps at most: a longer value is cut around
its first difference (a 50 MB recorded string was printed whole, on one line)."""


def _most(limit: int | None) -> int:
    """How much of a drift's side is kept: ``limit``, a replay's at most
    :data:`DRIFT_SIDE_MOST`."""
    return DRIFT_SIDE_MOST if limit is None else limit


def _cut_drift(
    aspect: str, sides: Callable[[int | None], tuple[str, str]], limit: int | None, diff: str = ""
) -> Drift:
    """A drift of ``sides`` rendered to ``limit`` characters (a replay's: to
    :data:`DRIFT_SIDE_MOST`); where the first difference lies past the cut (the two cut
    sides alike: a candidate's refusal then showed the same text twice, vobject's
    ``VBase.serialize`` ending at ``DTSTART:``), rendered whole and cut around it."""
    cut = _most(limit)
    expected, actual = sides(cut)
    if _alike_to_the_cut(expected, actual) and (len(expected) >= cut or len(actual) >= cut):
        expected, actual = around_difference(*sides(None), cut)
    return Drift(aspect, expected, actual, diff)


def _state_drift(row: LedgerRow, exc: BaseException, limit: int | None) -> Drift | None:
    """The drift of an exception raised as recorded, type and message alike, whose
    attributes differ from the recorded ones (:mod:`.exc_state`); None when they agree."""
    from lockstep.oracles.ledger.exc_state import exception_state

    expected: JSON = row.exc_state  # type: ignore[assignment]
    actual = exception_state(exc, row.fn)
    if actual is not None and canon.same_form(expected, actual):
        return None

    def sides(cut: int | None) -> tuple[str, str]:
        raised = f"raised {row.exc_type} with attributes "
        shown = (
            value_text(expected, limit=cut),
            ("none kept" if actual is None else value_text(actual, limit=cut)),
        )
        if shown[0] == shown[1] and actual is not None:  # alike as text: their forms
            shown = (
                clip(canon.canonical_json(expected).decode(), cut),
                clip(canon.canonical_json(actual).decode(), cut),
            )
        return raised + shown[0], raised + shown[1]

    return _cut_drift("exception", sides, limit)


def _result_sides(row: LedgerRow, expected: JSON, actual: JSON, cut: int | None) -> tuple[str, str]:
    """A result drift's two sides rendered; as their frozen forms where they render alike
    (munch's ``DefaultMunch`` whose state's two halves were swapped printed the same
    twice, and the drift said nothing of what differs)."""
    shown = _expected_text(row, cut), outcome_text(True, actual, None, None, limit=cut)
    if shown[0] != shown[1]:
        return shown
    return (
        "returned " + clip(canon.canonical_json(expected).decode(), cut),
        "returned " + clip(canon.canonical_json(actual).decode(), cut),
    )


def _alike_to_the_cut(expected: str, actual: str) -> bool:
    """Whether two cut renderings agree up to where the shorter one ends (its last
    character may be the cut's mark)."""
    shorter = max(min(len(expected), len(actual)) - 1, 0)
    return expected[:shorter] == actual[:shorter]


def _unfrozen_text(error: CanonError) -> str:
    """What a replayed call returned that does not freeze, as a drift's actual side:
    "returned a value that does not freeze (value.items[2]): cannot freeze a ..."."""
    return f"returned a value that does not freeze ({error.path}): {error.reason}"


def _constructor(row: LedgerRow) -> bool:
    """Whether the row is a call of ``__init__`` (see ``TargetRecorder.constructor``)."""
    return row.fn.endswith(".__init__")


def _mutation_text(mutated: dict[str, JSON], limit: int | None = None) -> str:
    if not mutated:
        return "no argument mutated"
    return outcome_text(True, None, None, None, mutated, limit=limit).split("; ", 1)[1]


DIFF_MOST: Final = 64 * 1024
"""Bytes of a value's frozen form past which a drift shows no line-by-line diff (its
expected and actual texts, clipped, still say what differs)."""


def _value_diff(expected: JSON, actual: JSON) -> str:
    """A unified diff of two values pretty-printed, when they are big enough to need one.

    Printed thawed, in Python's own notation; a value whose class's ``__repr__`` raises
    (pyrsistent's map rebuilt under another hash seed looks its keys up, and does not
    find them) is printed as its frozen form instead: the diff is the drift's
    explanation, never a reason for replay to stop."""
    import pprint

    if max(len(canon.canonical_json(v)) for v in (expected, actual)) > DIFF_MOST:
        return ""  # pretty-printing it would take longer than anyone would read it
    try:
        left = pprint.pformat(canon.decode(expected), width=80)
        right = pprint.pformat(canon.decode(actual), width=80)
    except CanonError:
        return ""
    except Exception:  # the project's own __repr__ failed
        left, right = _frozen_pretty(expected), _frozen_pretty(actual)
    texts = type(expected) is str and type(actual) is str
    alike = left == right  # printed alike (a __repr__ leaving out what differs)
    if alike or _unbroken(left) or _unbroken(right) or (not texts and _long(left, right)):
        left, right = _frozen_pretty(expected), _frozen_pretty(actual)
    short = "\n" not in left and "\n" not in right and max(len(left), len(right)) <= LONG_LINE
    if short and not alike:
        return ""  # one short line each: the drift's two sides say it all
    return diff.unified(
        _folded(left) + "\n",
        _folded(right) + "\n",
        label_expected="recorded",
        label_actual="replayed",
    )


LONG_LINE: Final = 120
"""A line longer than this is folded for a drift's diff (:func:`_folded`)."""

_BREAK_AFTER: Final = re.compile(r"[\s>,;]")


def _folded(text: str) -> str:
    """``text`` with each line longer than :data:`LONG_LINE` folded, after a space, a
    ``>``, a comma or a semicolon once a piece is 60 characters long (cut at 120 where
    there is none): a 32 KB rendered page as one string made a diff of one line each
    side, no place shown where they differ.  The breaks depend on the text around them,
    so past a change the two sides break alike again and the diff shows only the lines
    that differ; continued lines start with "↪ "."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= LONG_LINE:
            out.append(line)
            continue
        pieces: list[str] = []
        start = 0
        while len(line) - start > LONG_LINE:
            window = line[start + 60 : start + LONG_LINE]
            found = _BREAK_AFTER.search(window)
            end = start + 60 + found.end() if found else start + LONG_LINE
            pieces.append(line[start:end])
            start = end
        pieces.append(line[start:])
        out.append(pieces[0])
        out.extend("↪ " + piece for piece in pieces[1:])
    return "\n".join(out)


def _unbroken(text: str) -> bool:
    """Whether ``pprint`` left a value's text with no content at all: an object of the
    project's own class prints through its ``__repr__`` (``<pkg.Doc object at 0x...>``),
    and a diff of such lines shows no place where they differ."""
    return " object at 0x" in text


def _long(*texts: str) -> bool:
    """Whether a line is past :data:`LONG_LINE`: a value other than a text printed so (a
    ``Doc(...)`` of 200 rows as one 6,000-character line, through its ``__repr__``) reads
    better as its frozen form, one key or item a line; a text's long lines are folded."""
    return any(len(line) > LONG_LINE for text in texts for line in text.splitlines())


def _frozen_pretty(value: JSON) -> str:
    """A value's frozen form, one key or item a line (what a drift's diff falls back to)."""
    import json

    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def _printed_drift(row: LedgerRow, printed: str | None, limit: int | None) -> Drift | None:
    """What the call printed against what the row kept, where it kept some (a row that
    kept none says nothing of printing: :mod:`.printed`)."""
    kept = row.mutated.get(PRINTED) if isinstance(row.mutated, dict) else None
    if not isinstance(kept, str) or printed == kept:
        return None

    def sides(cut: int | None) -> tuple[str, str]:
        now = "more than it can keep" if printed is None else value_text(printed, limit=cut)
        return value_text(kept, limit=cut), now

    diff = "" if limit is not None or printed is None else _value_diff(kept, printed)
    return _cut_drift(PRINTED_ASPECT, sides, limit, diff)


def _iterated(result: Any, expected: Any, stem_length: int) -> JSON:
    """``result`` frozen; where an iterator result (``{"$iter": {...}}``) was recorded, the
    returned iterator consumed as far as the recording caller did (one item further when it
    ran out or raised, to see that it still ends there) and frozen the same way."""
    payload = expected.get("$iter") if type(expected) is dict and len(expected) == 1 else None
    if type(payload) is not dict or type(result) not in ITERATOR_RESULTS:
        return canon.encode(result, path="result")
    recorded = payload.get("items")
    limit = len(recorded) if type(recorded) is list else 0
    if payload.get("end") != "open":
        limit += 1
    items: list[JSON] = []
    out: dict[str, JSON] = {"items": items, "end": "open"}
    while len(items) < limit:
        try:
            item = next(result)
        except StopIteration:
            out["end"] = "exhausted"
            break
        except Exception as e:
            frozen = canon.freeze_exception(e, stem_length=stem_length)
            out.update(end="raised", exc_type=frozen.exc_type, exc_stem=frozen.exc_stem)
            break
        items.append(canon.encode(item, path=f"result item {len(items)}"))
    close = getattr(result, "close", None)
    if out["end"] == "open" and close is not None:
        close()
    return {"$iter": out}


def afresh(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments with each iterator or callable argument recorded as it was used made
    anew, unused: an input generated from a row (mining) may share one between calls."""

    def new(value: Any) -> Any:
        if type(value) is canon.CalledBack:
            return canon.CalledBack(value.calls, value.where)
        if type(value) is canon.IterItems:
            return canon.IterItems(value.items, open=value.open)
        return value

    return tuple(map(new, args)), {k: new(v) for k, v in kwargs.items()}


def used_less(args: list[Any], kwargs: dict[str, Any]) -> Drift | None:
    """An argument recorded as the target used it that the call used less of than the
    recorded call (the outcome alike otherwise): fewer calls of a callable, fewer items
    taken from an iterator.  A drift in what it asks of its caller, who sees it (a side
    effect not made, an iterator left further back)."""
    places = [*(f"args[{i}]" for i in range(len(args))), *(f"kwargs[{k!r}]" for k in kwargs)]
    for place, value in zip(places, (*args, *kwargs.values()), strict=True):
        if type(value) is canon.CalledBack and value.made < len(value.calls):
            return Drift(
                f"callable argument {place}",
                f"called {len(value.calls)} time(s)",
                f"called {value.made} time(s)",
            )
        if type(value) is canon.IterItems and value.taken < len(value.items):
            return Drift(
                f"iterator argument {place}",
                f"took {len(value.items)} item(s)",
                f"took {value.taken} item(s)",
            )
    return None


def _took_more(oracle: str, case_id: str, past: canon.PastRecorded) -> Outcome:
    """The call asked an argument recorded as it was used for more than the recorded call
    did (an iterator's next item, a callable's next or another answer): a drift in what it
    takes from its caller (:class:`lockstep.canon.PastRecorded`)."""
    return Outcome(oracle, case_id, Status.DRIFT, drifts=(Drift(*past.drift()),))
