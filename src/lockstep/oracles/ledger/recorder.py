"""Record a function's real calls without changing what it does.

The messiest functions keep their contract in what callers actually pass and
get back.  This module wraps a target so that every call is frozen to a
canonical row (:mod:`lockstep.oracles.ledger.format`), while the caller sees exactly
what it would have seen unwrapped: the same returned object, the same
exception re-raised with its traceback.  Recording is best effort *around* the
call, never *instead of* it: anything that goes wrong while freezing is
counted and reported, and the call proceeds untouched.

Three ways in, one machinery:

* :func:`record_io` -- a decorator (``@record_io`` or ``record_io(fn, ledger=...)``)
  for a function, method, staticmethod, classmethod or async function; each
  process merges the rows of its own calls into the ledger file when it ends
  (normal exit, a ``multiprocessing`` worker finishing, SIGTERM), see :func:`record_io`.
* :class:`Installation` -- wraps ``pkg.mod:qualname`` targets in place for a
  while (a pytest run, a driver script), including references other modules
  took with ``from pkg.mod import func`` before the wrap, and undoes it.
* :class:`TargetRecorder` -- the in-memory table behind both: rows are
  deduplicated by canonical input; an input seen with two different outcomes
  is *nondeterministic* (or stateful) and refused; values that cannot be
  frozen are reported with their argument path and skipped, never ``repr()``'d.

A process's recording is a :class:`RecordingPart` (plain data, one JSON line),
so pytest-xdist workers hand theirs to the controller through an append-only
spool file and :func:`merge_parts` combines them, including the saturation
figure: how many distinct rows the last fifth of the calls still added.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import inspect
import itertools
import marshal
import os
import signal
import sys
import threading
import time
import warnings
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from types import FrameType
from typing import Any, Final, TypeVar

import msgspec

from lockstep import canon
from lockstep.canon import JSON
from lockstep.canon.codec import allow_callables_from
from lockstep.errors import CanonError, TargetError
from lockstep.oracles.ledger.file import merge_into_file, outcome_of
from lockstep.oracles.ledger.format import (
    ROW_DECODER,
    ROW_ENCODER,
    LedgerRow,
    Param,
    call_text,
    outcome_text,
    row_id,
    signature_of,
)
from lockstep.oracles.ledger.materialize import materialize
from lockstep.oracles.ledger.spool import (
    RowFile,
    RunRecord,
    merged_runs,
    remove_runs,
    spill_threshold,
    write_run,
)
from lockstep.secrets import SECRET_REFUSED
from lockstep.targets import root_on_path, split_target

F = TypeVar("F", bound=Callable[..., Any])

LATE_FRACTION: Final = 0.2
"""The tail of the run whose new rows measure saturation ("the last 20% of calls added 0 rows")."""

_IMMUTABLE: Final = frozenset(
    {int, str, float, bool, type(None), bytes, Decimal, complex, range, type(Ellipsis)}
)

_MEMO_LEAVES: Final = frozenset({int, str, bytes, bool, float, type(None)})
"""Exact types whose ``marshal`` bytes tell every value apart that canon tells apart.

``marshal`` keeps ``1``, ``1.0`` and ``True`` apart, and ``-0.0`` from ``0.0``, unlike
``==``; but it writes every buffer (bytearray, memoryview, a bytes subclass) as bytes,
so inputs holding anything but these exact types and tuples of them are never memoized.
"""

MEMO_LIMIT: Final = 100_000
"""Most inputs a recorder remembers by their ``marshal`` bytes (past it, calls just freeze)."""

MEMO_KEY_MAX: Final = 1024
"""Longest ``marshal`` key kept: a big input's row already holds it once; freezing it again
costs little next to its size, and remembering it twice would double the recorder's memory."""

_RAISED: Final = object()
"""What :meth:`TargetRecorder._again` is given for a call that raised (no result to key)."""

_SELF_FROZEN: Final = frozenset({str, int, bool, type(None)})
"""Types whose frozen form is the value itself."""

SNAPSHOT_WAIT: Final = 1.0
"""Seconds :meth:`TargetRecorder.part` waits for the table's lock before copying without it."""

_INHERITED_TABLES: list[tuple[dict[bytes, Any], dict[bytes, Any]]] = []
"""Tables a forked child inherited and set aside (see :meth:`TargetRecorder.start_afresh`)."""

_encode = canon.encode
_encode_call_keyed = canon.encode_call_keyed
_object_key = canon.object_key
_canonical = canon.canonical_json
_marshal = marshal.dumps


def _memoizable(values: Iterable[Any]) -> bool:
    """True when every value is of a :data:`_MEMO_LEAVES` type or a tuple of such (immutable too)."""
    leaves = _MEMO_LEAVES
    for v in values:
        t = type(v)
        if t in leaves:
            continue
        if t is not tuple:
            return False
        for w in v:  # one level inline: a call per nested tuple shows at a microsecond a call
            t = type(w)
            if t not in leaves and (t is not tuple or not _memoizable(w)):
                return False
    return True


def _immutable(value: Any) -> bool:
    """True when ``value`` cannot change in place (so the after-call re-freeze can be skipped)."""
    t = type(value)
    if t in _IMMUTABLE:
        return True
    if t is tuple or t is frozenset:
        for v in value:  # noqa: SIM110 - a plain loop: this runs on every recorded call
            if type(v) not in _IMMUTABLE and not _immutable(v):
                return False
        return True
    return False


# --------------------------------------------------------------------------- the table


class PartEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A distinct row as one process saw it, with when it first appeared."""

    row: LedgerRow
    first_call: int
    """1-based index of the call that first produced this row in its process."""


class RefusedInput(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """An input seen with different outcomes: nondeterministic or stateful, so not frozen."""

    id: str
    call: str
    outcomes: list[str]
    first_calls: list[int] = []
    """The call number that first produced each outcome (aligned with ``outcomes``), so a
    test run can name the test in which the input behaved differently."""


class RecordingPart(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """What one process recorded for one target (the unit workers hand to the controller)."""

    fn: str
    calls: int
    entries: list[PartEntry]
    refused: list[RefusedInput] = []
    unfreezable: dict[str, int] = {}
    """``"args[1]: cannot freeze a socket.socket ..." -> calls`` skipped for that reason."""
    skip_sites: dict[str, list[str]] = {}
    """For each reason, the first few call sites (``file:line``) of calls skipped for it."""
    faults: dict[str, int] = {}
    """Errors inside the recorder itself (the calls proceeded; only their rows are missing)."""
    contexts: dict[str, str] = {}
    """Row id -> what differed from the recording's start when the row (or an outcome of its
    input that differed) was first seen: a likely cause should the row not reproduce."""
    runs: list[str] = []
    """Scratch files (:mod:`.spool`) holding the rows of a recorder that spilled: its
    rows are there, not in ``entries``, and :func:`merge_parts` removes them."""


class _Seen(msgspec.Struct, gc=False):
    """One distinct input's row as this process saw it.

    A msgspec Struct outside the garbage collector (nothing it holds can refer back to
    it): built once per new input, it costs a fraction of a dataclass's ``__init__``, and
    the collector does not walk the rows themselves.  The input is kept only as its
    canonical bytes (``key``, the table's own key): the frozen arguments are decoded from
    them when the row is built, which saves about a quarter of a row's memory.
    """

    key: bytes
    """Bytes of the frozen input ``[args, kwargs]``: the table's key (its canonical bytes,
    the same object) unless a dict in it was passed out of sorted order; then the same
    input with every dict in the order it was passed (see :func:`_ordered`), what the row
    is written from, so replay passes the same dict."""
    ok: bool
    result: JSON
    exc_type: str
    exc_stem: str
    mutated: dict[str, JSON] | None
    outcome: bytes
    first_call: int
    other_outcomes: tuple[bytes, ...] = ()
    other_calls: tuple[int, ...] = ()
    """The call number that first produced each of ``other_outcomes``.  (Tuples, rebuilt on
    the rare second outcome: a row costs no list of its own.)"""


class _Pending(msgspec.Struct, gc=False):
    """What :meth:`TargetRecorder.before` learned about a new input, carried across the call.

    Short-lived and referred to only by the wrapper's frame, so kept out of the garbage
    collector like :class:`_Seen`.
    """

    call_index: int
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    enc_args: JSON
    enc_kwargs: JSON
    mutable: bool
    memo_key: bytes | None
    key: bytes
    """Canonical bytes of the frozen input: what rows are deduplicated by."""
    object_key: bytes | None = None
    """:func:`canon.object_key` of an input holding objects (remembered once recorded)."""
    result_key: bytes | None = None


class _Again(msgspec.Struct, gc=False):
    """A repeated input holding objects (found by :func:`canon.object_key`): nothing was
    frozen; after the call its key is taken again to see whether the call changed it."""

    remembered: _Remembered
    before: bytes
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


class _Remembered(msgspec.Struct, gc=False):
    """An input with objects, as first frozen: its row, its frozen arguments and table key,
    and the key of the object it returned (None when it raised or returned no such value)."""

    seen: _Seen
    enc_args: JSON
    enc_kwargs: JSON
    key: bytes
    result_key: bytes | None


class _Materialized(_Pending, gc=False):
    """A call whose iterator arguments were consumed: the target gets fresh ones."""

    call_args: tuple[Any, ...] = ()
    call_kwargs: dict[str, Any] = {}
    recorded: bool = False
    """False when the call is skipped (still called with ``call_args``)."""

    def call(
        self, args: tuple[Any, ...], skip_first: bool
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The arguments to call the target with (``self`` kept when it was skipped)."""
        return ((args[0], *self.call_args) if skip_first else self.call_args), self.call_kwargs


class TargetRecorder:
    """The distinct calls of one target seen by this process.

    Thread-safe (one lock around the table update); the call itself runs outside the lock.
    """

    def __init__(self, fn: str, *, stem_length: int = canon.DEFAULT_STEM) -> None:
        self.fn = fn
        self.stem_length = stem_length
        self.calls = 0
        self.active = True
        self._seen: dict[bytes, _Seen] = {}
        self._memo: dict[bytes, _Seen] = {}
        self._objects: dict[bytes, _Remembered] = {}
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
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> _Pending | _Seen | _Again | None:
        """Freeze the input before the call (the callee may mutate it).

        An input made only of exact scalars and tuples that this recorder has seen
        already is found by its ``marshal`` bytes: its row comes back and nothing is frozen.
        """
        self.calls += 1
        index = self.calls
        memo_key: bytes | None = None
        try:
            if _memoizable(args) and (not kwargs or _memoizable(kwargs.values())):
                memo_key = _marshal((args, kwargs), 2)
                seen = self._memo.get(memo_key)
                if seen is not None:
                    return seen
        except RecursionError:
            memo_key = None
        object_key = None if memo_key is not None else _object_key(args, kwargs)
        remembered = self._objects.get(object_key) if object_key is not None else None
        if remembered is not None:
            return _Again(remembered, object_key, args, kwargs)  # type: ignore[arg-type]
        try:
            enc_args, enc_kwargs, key = _encode_call_keyed(args, kwargs)
        except CanonError as e:
            return self._before_materialized(index, args, kwargs, str(e))
        except Exception as e:
            self._faults[f"freezing the arguments: {type(e).__name__}: {e}"] += 1
            return None
        mutable = False
        for a in () if memo_key is not None else args:  # memoizable means immutable
            if type(a) not in _IMMUTABLE and not _immutable(a):
                mutable = True
                break
        if not mutable and memo_key is None:
            for v in kwargs.values():
                if type(v) not in _IMMUTABLE and not _immutable(v):
                    mutable = True
                    break
        return _Pending(
            index, args, kwargs, enc_args, enc_kwargs, mutable, memo_key, key, object_key
        )

    def _before_materialized(
        self, index: int, args: tuple[Any, ...], kwargs: dict[str, Any], reason: str
    ) -> _Materialized | None:
        """Arguments that did not freeze: consume their iterators (:mod:`.materialize`).

        The wrapper then calls the target with the returned ``call_args``/``call_kwargs``
        (fresh iterators over the same items), whether or not the call is recorded.
        """
        done = materialize(args, kwargs)
        if done is None:
            self._skip(reason)
            return None
        pending = _Materialized(
            index,
            (),
            {},
            None,
            None,
            False,
            None,
            b"",
            call_args=done.call_args,
            call_kwargs=done.call_kwargs,
        )
        if done.too_long:
            self._skip(done.too_long)
            return pending
        try:
            enc_args, enc_kwargs, key = _encode_call_keyed(done.frozen_args, done.frozen_kwargs)
        except CanonError as e:
            self._skip(str(e))
            return pending
        pending.args, pending.kwargs = done.frozen_args, done.frozen_kwargs
        pending.enc_args, pending.enc_kwargs, pending.key = enc_args, enc_kwargs, key
        pending.mutable = not all(map(_immutable, (*pending.args, *pending.kwargs.values())))
        pending.recorded = True
        return pending

    def returned(self, pending: _Pending | _Seen | _Again | None, result: Any) -> None:
        """Note a normal return."""
        if pending is None:
            return
        if isinstance(pending, _Again):
            found = self._again(pending, result)
            if found is None:
                return
            pending = found
        elif isinstance(pending, _Pending) and pending.object_key is not None:
            pending.result_key = _object_key((result,), {})
        if type(pending) is _Seen:
            t = type(result)
            if (
                t in _SELF_FROZEN
                and pending.ok
                and type(pending.result) is t
                and pending.result == result
                and pending.mutated is None
            ):
                return  # the recorded outcome again: same bytes, nothing to note
        try:
            enc = _encode(result, path="result")
        except CanonError as e:
            self._skip(str(e))
            return
        except Exception as e:
            self._faults[f"freezing the result: {type(e).__name__}: {e}"] += 1
            return
        self._note(pending, True, enc, "", "")

    def raised(self, pending: _Pending | _Seen | _Again | None, exc: BaseException) -> None:
        """Note an exception (the wrapper re-raises it)."""
        if pending is None:
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
        self._note(pending, False, None, frozen.exc_type, frozen.exc_stem)

    def _again(self, again: _Again, result: Any) -> _Pending | _Seen | None:
        """After a repeated input with objects: None when the call gave its recorded result
        back by key (nothing to note); else what :meth:`_note` takes -- the row, when the
        arguments are unchanged (so no mutation), or the input rebuilt as first frozen, when
        this call changed them (its mutation is then frozen like any other)."""
        remembered = again.remembered
        if _object_key(again.args, again.kwargs) != again.before:
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

    def _mutations(self, pending: _Pending) -> dict[str, JSON] | None:
        out: dict[str, JSON] = {}
        before_args = pending.enc_args
        assert isinstance(before_args, list)
        for i, value in enumerate(pending.args):
            if _immutable(value):
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

    def _note(
        self, pending: _Pending | _Seen, ok: bool, result: JSON, exc_type: str, exc_stem: str
    ) -> None:
        if type(pending) is _Seen:
            self._note_again(pending, ok, result, exc_type, exc_stem)
            return
        assert isinstance(pending, _Pending)
        try:
            mutated = self._mutations(pending) if pending.mutable else None
            key = pending.key
            outcome = _canonical([ok, result, exc_type, exc_stem, mutated])
        except CanonError as e:
            self._skip(str(e))
            return
        except Exception as e:
            self._faults[f"freezing the outcome: {type(e).__name__}: {e}"] += 1
            return
        if self.context is not None:
            self._observe(key, outcome)
        with self._lock:
            seen = self._seen.get(key)
            if seen is None:
                self._seen[key] = _Seen(
                    _ordered(pending, key) if pending.mutable else key,
                    ok,
                    result,
                    exc_type,
                    exc_stem,
                    mutated,
                    outcome,
                    pending.call_index,
                )
                if self.spill and len(self._seen) >= self._spill_at:
                    self._spill()
                    return
            elif seen.outcome != outcome and outcome not in seen.other_outcomes:
                seen.other_outcomes += (outcome,)
                seen.other_calls += (pending.call_index,)
            memo_key = pending.memo_key
            if (
                memo_key is not None
                and len(memo_key) <= MEMO_KEY_MAX
                and len(self._memo) < MEMO_LIMIT
            ):
                self._memo[memo_key] = self._seen[key]
            object_key = pending.object_key
            row = self._seen[key]
            if (
                object_key is not None
                and mutated is None
                and row.outcome == outcome
                and len(object_key) <= MEMO_KEY_MAX
                and len(self._objects) < MEMO_LIMIT
            ):
                self._objects[object_key] = _Remembered(
                    row, pending.enc_args, pending.enc_kwargs, key, pending.result_key
                )

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
        self, seen: _Seen, ok: bool, result: JSON, exc_type: str, exc_stem: str
    ) -> None:
        """A memoized (immutable, so never mutated) input: compare its outcome with the row's."""
        try:
            outcome = _canonical([ok, result, exc_type, exc_stem, None])
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
        _INHERITED_TABLES.append((self._seen, self._memo))
        self._seen = {}
        self._memo = {}
        self._objects = {}
        self._unfreezable = Counter()
        self._skip_sites = {}
        self._faults = Counter()
        self._contexts = {}
        self._runs.clear()  # the parent's: it merges them (and its finalizer spares them here)
        self.calls = 0
        self._lock = threading.Lock()  # another thread may have held it at the fork

    def _skip(self, reason: str) -> None:
        """Count a call skipped because a value cannot be frozen; keep its first call sites.

        A skipped call is a hole in the oracle (a branch only such calls reach is not
        guarded), so the report says where those calls come from.
        """
        self._unfreezable[reason] += 1
        sites = self._skip_sites.setdefault(reason, [])
        if len(sites) < SKIP_SITES:
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


def _ordered(pending: _Pending, key: bytes) -> bytes:
    """The input's bytes with its dicts in insertion order (``key`` itself when that is
    its order).

    The caller asks only for an input that holds something mutable (a dict makes its
    argument mutable: the recorder knows that already, for free).  Only a dict of two
    keys or more can be out of order, and in canonical JSON (no spaces) its second key
    always follows ``,"``; an input without those two bytes is not written again.
    """
    if key.find(b',"') == -1:
        return key
    ordered = _write_in_order([pending.enc_args, pending.enc_kwargs])
    return key if ordered == key else ordered


_write_in_order = msgspec.json.Encoder().encode


def _row(fn: str, rid: str, seen: _Seen) -> LedgerRow:
    decoded = canon.loads_json(seen.key)
    assert isinstance(decoded, list)
    args, kwargs = decoded
    assert isinstance(args, list) and isinstance(kwargs, dict)
    mutated: dict[str, JSON] | msgspec.UnsetType = seen.mutated if seen.mutated else msgspec.UNSET
    if seen.ok:
        return LedgerRow(
            id=rid, fn=fn, args=args, kwargs=kwargs, ok=True, result=seen.result, mutated=mutated
        )
    return LedgerRow(
        id=rid,
        fn=fn,
        args=args,
        kwargs=kwargs,
        ok=False,
        exc_type=seen.exc_type,
        exc_stem=seen.exc_stem,
        mutated=mutated,
    )


def _describe_outcome_bytes(outcome: bytes) -> str:
    decoded: Any = canon.loads_json(outcome)
    ok, result, exc_type, exc_stem, mutated = decoded
    return outcome_text(bool(ok), result, exc_type, exc_stem, mutated or msgspec.UNSET)


SKIP_SITES: Final = 3
"""Call sites kept per reason a call was skipped."""
_OWN_FILES: Final = frozenset({__file__.removesuffix("c")})


def _caller_site() -> str:
    """``file:line`` of the code that called the recorded function (outside this module)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in _OWN_FILES:
        frame = frame.f_back
    if frame is None:
        return ""
    try:
        shown = Path(frame.f_code.co_filename).resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        shown = Path(frame.f_code.co_filename)
    return f"{shown.as_posix()}:{frame.f_lineno}"


def _refusal(
    row: LedgerRow, others: Iterable[bytes], first_calls: Iterable[int] = ()
) -> RefusedInput:
    first = outcome_text(row.ok, row.result, row.exc_type, row.exc_stem, row.mutated)
    return RefusedInput(
        id=row.id,
        call=call_text(row.fn, row.args, row.kwargs),
        outcomes=[first, *(_describe_outcome_bytes(o) for o in others)],
        first_calls=list(first_calls),
    )


# --------------------------------------------------------------------------- merging


@dataclass(frozen=True)
class Recording:
    """Every process's parts for one target, merged: what a ledger is written from."""

    fn: str
    calls: int
    rows: Mapping[str, LedgerRow]
    """Distinct, deterministic rows by id, in id order (a :class:`~.spool.RowFile` on
    disk when the recorder spilled)."""
    refused: list[RefusedInput]
    unfreezable: dict[str, int]
    faults: dict[str, int]
    late_rows: int
    skip_sites: dict[str, list[str]] = field(default_factory=dict)
    """Rows first seen only in the last :data:`LATE_FRACTION` of some process's calls."""
    contexts: dict[str, str] = field(default_factory=dict)
    """Row id -> the context it was first seen in, where it was unusual (see :mod:`.context`)."""

    def notes(self) -> list[str]:
        """Lines for the user: saturation, refused inputs, skipped values."""
        pct = round(LATE_FRACTION * 100)
        lines = [
            f"{self.fn}: saw {self.calls} call(s), kept {len(self.rows)} distinct row(s); "
            f"the last {pct}% of calls added {self.late_rows} row(s)"
        ]
        for refused in self.refused:
            lines.append(
                f"refused {refused.call} [{refused.id}]: nondeterministic or stateful, "
                f"{len(refused.outcomes)} different outcomes ({' | '.join(refused.outcomes)})"
            )
        skipped = sum(self.unfreezable.values())
        if skipped:  # a hole in the oracle: said on the line everyone reads
            share = 100 * skipped / max(1, self.calls)
            lines[0] += (
                f"; SKIPPED {skipped} of {self.calls} call(s) ({share:.0f}%) whose values "
                "cannot be frozen: no row guards what they do (see below)"
            )
        for reason, count in sorted(self.unfreezable.items()):
            sites = self.skip_sites.get(reason, [])
            where = f" (called from {', '.join(sites)})" if sites else ""
            lines.append(f"skipped {count} call(s): {reason}{where}")
        for reason, count in sorted(self.faults.items()):
            lines.append(f"recorder fault on {count} call(s) (the calls were unaffected): {reason}")
        return lines


class _MergedRows:
    """The rows of several parts, lean per row (a million rows pass through here).

    A row's outcome bytes are computed only for an id seen in more than one part, and
    only ids every part saw late are tracked for saturation.
    """

    def __init__(self) -> None:
        self.rows: dict[str, LedgerRow] = {}
        self.others: dict[str, list[bytes]] = {}
        """Id -> the outcomes seen after its first row's (only ids seen in several parts)."""
        self.late: set[str] = set()
        """Ids every part so far first saw in the last :data:`LATE_FRACTION` of its calls."""
        self.in_order = True
        self._last = ""

    def add(self, entries: Iterable[PartEntry], threshold: float) -> None:
        rows = self.rows
        for entry in entries:
            row = entry.row
            rid = row.id
            first = rows.get(rid)
            if first is None:
                rows[rid] = row
                if entry.first_call > threshold:
                    self.late.add(rid)
                if rid <= self._last:
                    self.in_order = False
                self._last = rid
                continue
            if entry.first_call <= threshold:
                self.late.discard(rid)
            outcome = outcome_of(row)
            if outcome != outcome_of(first):
                known = self.others.setdefault(rid, [])
                if outcome not in known:
                    known.append(outcome)


@dataclass
class _Tally:
    """What every part says besides its rows, summed."""

    calls: int = 0
    refused: dict[str, RefusedInput] = field(default_factory=dict)
    unfreezable: Counter[str] = field(default_factory=Counter)
    skip_sites: dict[str, list[str]] = field(default_factory=dict)
    faults: Counter[str] = field(default_factory=Counter)
    contexts: dict[str, str] = field(default_factory=dict)

    def add(self, part: RecordingPart) -> None:
        self.calls += part.calls
        for rid, hint in part.contexts.items():
            self.contexts.setdefault(rid, hint)
        self.unfreezable.update(part.unfreezable)
        for reason, sites in part.skip_sites.items():
            kept = self.skip_sites.setdefault(reason, [])
            kept.extend(site for site in sites if site not in kept and len(kept) < SKIP_SITES)
        self.faults.update(part.faults)
        for r in part.refused:
            self.refused.setdefault(r.id, r)

    def recording(self, fn: str, rows: Mapping[str, LedgerRow], late_rows: int) -> Recording:
        return Recording(
            fn=fn,
            calls=self.calls,
            rows=rows,
            refused=sorted(self.refused.values(), key=lambda r: r.id),
            unfreezable=dict(self.unfreezable),
            faults=dict(self.faults),
            late_rows=late_rows,
            skip_sites=self.skip_sites,
            contexts=self.contexts,
        )


def merge_parts(fn: str, parts: Iterable[RecordingPart], *, remove_runs: bool = True) -> Recording:
    """Combine parts from several processes.

    An input whose outcome differs between processes is refused like one that
    differed within a process.  Parts whose rows were spilled to disk are merged
    there (:func:`_merge_spilled`), and their run files are removed unless
    ``remove_runs`` is False (the caller reads them again, then removes them).
    """
    parts = list(parts)
    if any(part.runs for part in parts):
        return _merge_spilled(fn, parts, remove_runs)
    merged = _MergedRows()
    tally = _Tally()
    for part in parts:
        tally.add(part)
        merged.add(part.entries, part.calls * (1 - LATE_FRACTION))
    refused = tally.refused
    rows = merged.rows
    for rid, known in merged.others.items():
        if rid not in refused:
            refused[rid] = _refusal(rows[rid], known)
    for rid in refused:
        rows.pop(rid, None)
    return tally.recording(
        fn,
        rows if merged.in_order else dict(sorted(rows.items())),
        sum(1 for rid in merged.late if rid in rows),
    )


def _merge_spilled(fn: str, parts: list[RecordingPart], remove_runs: bool) -> Recording:
    """:func:`merge_parts` on disk: every part's runs (and rows) read at once in id order.

    A group of records with one id is one input: its first record (lowest part, then
    lowest call) is its row; a second outcome anywhere -- another spill window, another
    process -- refuses it.  The rows kept go to a :class:`~.spool.RowFile`.
    """
    tally = _Tally()
    for part in parts:
        tally.add(part)
    refused = tally.refused
    thresholds = [part.calls * (1 - LATE_FRACTION) for part in parts]
    runs = [(index, path) for index, part in enumerate(parts) for path in part.runs]
    extra = [_entry_records(index, part.entries) for index, part in enumerate(parts)]
    late_rows = 0

    def kept() -> Iterator[tuple[str, bytes]]:
        nonlocal late_rows
        records = merged_runs(runs, extra, remove=remove_runs)
        for rid, group in itertools.groupby(records, key=lambda r: r[0]):
            line = b""
            first_call = 0
            outcomes: list[bytes] = []
            calls: list[int] = []
            late = True
            last_part = -1
            for _, index, call, outcome, row_line in group:
                if not line and row_line:
                    line, first_call = row_line, call
                if outcome not in outcomes:
                    outcomes.append(outcome)
                    calls.append(call)
                if index != last_part:  # a part's first record of the id: its first sight
                    late = late and call > thresholds[index]
                    last_part = index
            if rid in refused or not line:
                continue
            if len(outcomes) > 1:
                row = ROW_DECODER.decode(line)
                others = [o for o in outcomes if o != outcome_of(row)]
                refused[rid] = _refusal(row, others, [first_call, *calls[1:]])
                continue
            late_rows += late
            yield rid, line

    rows = RowFile.from_lines(kept())
    return tally.recording(fn, rows, late_rows)


def _entry_records(index: int, entries: list[PartEntry]) -> Iterator[RunRecord]:
    """A part's in-memory rows as run records (its entries are sorted by id)."""
    encode = ROW_ENCODER.encode
    for entry in entries:
        row = entry.row
        yield row.id, index, entry.first_call, outcome_of(row), encode(row)


# --------------------------------------------------------------------------- wrapping


def _wrap_coroutine_function(
    func: Callable[..., Any], rec: TargetRecorder, *, skip_first: bool
) -> Any:
    """:func:`_wrap_function` for an ``async def``: records around the awaited call."""
    before = rec.before
    returned = rec.returned
    raised = rec.raised

    @functools.wraps(func)
    async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
        if not rec.active:
            return await func(*args, **kwargs)
        pending = before(args[1:] if skip_first else args, kwargs)
        if type(pending) is _Materialized:
            args, kwargs = pending.call(args, skip_first)
            if not pending.recorded:
                pending = None
        try:
            result = await func(*args, **kwargs)
        except Exception as exc:
            raised(pending, exc)
            raise
        returned(pending, result)
        return result

    async_wrapper.__lockstep_wrapped__ = func  # type: ignore[attr-defined]
    return async_wrapper


def _wrap_function(func: Callable[..., Any], rec: TargetRecorder, *, skip_first: bool) -> Any:
    """A wrapper that records around ``func`` and is otherwise ``func``."""
    if inspect.iscoroutinefunction(func):
        return _wrap_coroutine_function(func, rec, skip_first=skip_first)
    before = rec.before
    returned = rec.returned
    raised = rec.raised

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not rec.active:
            return func(*args, **kwargs)
        pending = before(args[1:] if skip_first else args, kwargs)
        if type(pending) is _Materialized:  # iterator arguments, consumed: fresh ones
            args, kwargs = pending.call(args, skip_first)
            if not pending.recorded:
                pending = None
        try:
            result = func(*args, **kwargs)
        except Exception as exc:
            raised(pending, exc)
            raise
        # returned()'s first test, inlined: a repeated input giving its recorded scalar back.
        if (
            type(pending) is _Seen
            and type(result) in _SELF_FROZEN
            and pending.ok
            and type(pending.result) is type(result)
            and pending.result == result
            and pending.mutated is None
        ):
            return result
        returned(pending, result)
        return result

    wrapper.__lockstep_wrapped__ = func  # type: ignore[attr-defined]
    return wrapper


def _wrap_member(raw: Any, rec: TargetRecorder, *, where: str) -> tuple[Any, list[Param]]:
    """Wrap a function or a class member as found in ``__dict__``; also return its signature."""
    if isinstance(raw, staticmethod):
        inner = raw.__func__
        return staticmethod(_wrap_function(inner, rec, skip_first=False)), signature_of(inner)
    if isinstance(raw, classmethod):
        inner = raw.__func__
        return (
            classmethod(_wrap_function(inner, rec, skip_first=True)),
            signature_of(inner, drop_first=True),
        )
    if isinstance(raw, property) and raw.fget is not None:
        getter = _wrap_function(raw.fget, rec, skip_first=False)
        return raw.getter(getter), signature_of(raw.fget)
    if isinstance(raw, type):
        raise TargetError(f"{where}: is a class; name the method to record (Class.method)")
    if not callable(raw):
        raise TargetError(f"{where}: is a {type(raw).__name__}, not a callable")
    return _wrap_function(raw, rec, skip_first=False), signature_of(raw)


@dataclass
class _Patch:
    owner: Any
    attr: str
    original: Any
    owned: bool


@dataclass
class Wrapped:
    """One installed target: its recorder and its signature at install time."""

    target: str
    recorder: TargetRecorder
    signature: list[Param]


class Installation:
    """Targets wrapped in place; :meth:`undo` puts every original back.

    Module-level functions are also replaced wherever another already-imported
    module bound them by name (``from pkg.mod import func``, with or without
    ``as``), because that is how most legacy callers reach them.
    """

    def __init__(self) -> None:
        self._patches: list[_Patch] = []
        self.wrapped: list[Wrapped] = []

    def wrap(
        self,
        target: str,
        root: Path,
        *,
        where: str,
        stem_length: int = canon.DEFAULT_STEM,
    ) -> Wrapped:
        """Wrap ``pkg.mod:qualname``; errors name ``where`` and what failed."""
        module_name, qualname = split_target(target, where=where)
        with root_on_path(root):
            try:
                module = __import__(module_name, fromlist=["_"])
            except Exception as e:
                raise TargetError(
                    f"{where}: cannot import module {module_name!r}: {type(e).__name__}: {e}"
                ) from None
        owner: Any = module
        parts = qualname.split(".")
        try:
            for part in parts[:-1]:
                owner = getattr(owner, part)
            raw = inspect.getattr_static(owner, parts[-1])
        except AttributeError:
            raise TargetError(
                f"{where}: module {module_name!r} has no attribute {qualname!r}"
            ) from None
        rec = TargetRecorder(target, stem_length=stem_length)
        allow_callables_from(module_name)  # its callbacks freeze by name (canon: $fn)
        replacement, signature = _wrap_member(raw, rec, where=f"{where}: {target!r}")
        attr = parts[-1]
        owned = attr in vars(owner)
        self._patches.append(_Patch(owner, attr, raw, owned))
        setattr(owner, attr, replacement)
        if owner is module:
            self._rebind_imports(raw, replacement, module)
        elif isinstance(owner, type):
            self._rebind_aliases(owner, attr, raw, replacement)
        wrapped = Wrapped(target, rec, signature)
        self.wrapped.append(wrapped)
        return wrapped

    def _rebind_aliases(self, owner: type[Any], attr: str, original: Any, replacement: Any) -> None:
        """Other names of the same member in its class (``__radd__ = __add__``): a call
        through the alias is a call of the target."""
        for name, value in list(vars(owner).items()):
            if name != attr and value is original:
                self._patches.append(_Patch(owner, name, original, True))
                setattr(owner, name, replacement)

    def _rebind_imports(self, original: Any, replacement: Any, home: Any) -> None:
        for mod in list(sys.modules.values()):
            if mod is None or mod is home:
                continue
            namespace = getattr(mod, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for name, value in list(namespace.items()):
                if value is original:
                    self._patches.append(_Patch(mod, name, original, True))
                    namespace[name] = replacement

    def watch_context(self) -> None:
        """From now on, note for each new row what differs from the process as it is now
        (a patched collaborator, a changed registry, a frozen clock, a switched locale):
        the likely cause should the row not reproduce.  Call it once every target is wrapped."""
        from lockstep.oracles.ledger.context import ContextWatch

        watch = ContextWatch([w.target for w in self.wrapped])
        for wrapped in self.wrapped:
            wrapped.recorder.context = watch

    def undo(self) -> None:
        """Restore every original binding (newest first); recorders stop recording."""
        for wrapped in self.wrapped:
            wrapped.recorder.active = False
            wrapped.recorder.context = None
        for patch in reversed(self._patches):
            if patch.owned:
                setattr(patch.owner, patch.attr, patch.original)
            else:
                with contextlib.suppress(AttributeError):
                    delattr(patch.owner, patch.attr)
        self._patches.clear()


# --------------------------------------------------------------------------- the decorator


class LedgerRecordWarning(UserWarning):
    """Something :func:`record_io` could not freeze or write (the calls were unaffected)."""


@dataclass
class _DecoratorState:
    recorder: TargetRecorder
    ledger: Path
    signature: list[Param]
    flushed_calls: int = 0
    """The recorder's call count at the last write that reached the file."""
    reported_calls: int = 0
    """The recorder's call count when its notes were last told to the user."""
    kept_notes: list[str] = field(default_factory=list)
    """Notes from writes not reported yet (the periodic ones are silent)."""
    unverifiable: str = ""
    """Why this function's rows cannot be replayed in a fresh interpreter ("" if they can)."""
    verified: set[str] = field(default_factory=set)
    """Row ids proven to reproduce in a fresh interpreter (not verified again)."""
    unreproducible: dict[str, str] = field(default_factory=dict)
    """Row id -> why it did not reproduce: never written, told once."""


RECORD_IO_OFF: Final = "LOCKSTEP_RECORD_IO_OFF"
"""Set in the interpreter that verifies recorded rows (:mod:`.verify_io`): no recording there."""

FLUSH_EVERY_ENV: Final = "LOCKSTEP_FLUSH_EVERY"
"""Environment variable: also write a decorated function's rows every N of its calls."""

SIGTERM_WAIT: Final = 30.0
"""Seconds the SIGTERM handler waits for another thread's write to finish before dying."""

KICK_DELAY: Final = 0.05
"""Seconds a child's kicker gives the SIGTERM handler to start before sending SIGTERM again."""

_EXIT_PRIORITY: Final = 100
"""``multiprocessing.util.Finalize`` priority: higher runs earlier, before queues close."""

_PENDING_FLUSH: list[_DecoratorState] = []
_FLUSH_LOCK = threading.RLock()
"""Serialises writes.  Reentrant so the SIGTERM handler, which runs in the main thread
between two bytecodes, can take it even when it interrupted that thread inside :func:`flush`
(it then sees :data:`_writing` and lets that write finish instead of starting another)."""
_writing = False
"""True while :func:`flush` works on the file (under :data:`_FLUSH_LOCK`)."""
_term_pending = False
"""SIGTERM arrived during a write of the main thread's: die once that write is done."""
_hooks_pid = 0
"""The process in which the exit hooks below were last installed."""
_mp_finalizer: Any = None
"""This process's ``multiprocessing.util.Finalize`` for :func:`_flush_all`, if armed."""
_mp_after_fork_registered = False
_is_child = False
"""This process was forked or started by another that records (it gets the kicker)."""
_sigterm_seen = False
""":func:`_on_sigterm` has started."""
_kicker: _Kicker | None = None


def _stderr(line: str) -> None:
    """Tell the user when no warning can reach them (the process is ending)."""
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    with contextlib.suppress(OSError):
        os.write(2, f"{line}\n".encode(errors="replace"))


def _is_top_process() -> bool:
    import multiprocessing

    return multiprocessing.parent_process() is None


def _shown(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


def _flush_all() -> None:
    """Write every decorated function's new rows: at exit, worker exit and SIGTERM."""
    for state in list(_PENDING_FLUSH):
        try:
            notes = flush(state)
        except Exception as e:  # a warning made an error (-W error), or a bug: nobody can catch it
            _stderr(f"lockstep: {state.ledger}: {type(e).__name__}: {e}")
        else:
            # The report the README promises (calls seen, rows kept, saturation), once, by
            # the process the user started; its workers' rows are merged silently.
            if notes and _is_top_process():
                _stderr(f"lockstep: {_shown(state.ledger)}: {notes[0]}")
                for line in notes[1:]:  # a row left out for a secret: said even at exit
                    if SECRET_REFUSED in line:
                        _stderr(f"lockstep: {_shown(state.ledger)}: {line}")


def _reproducible_rows(state: _DecoratorState, recording: Recording) -> dict[str, LedgerRow]:
    """The rows to write: each new one first replayed in a fresh interpreter (:mod:`.verify_io`).

    Not while the process dies by SIGTERM: a pool's ``terminate()`` waits for it, so
    those rows are written as recorded (the README says so).
    """
    rows = recording.rows
    fresh = {
        rid: row
        for rid, row in rows.items()
        if rid not in state.verified and rid not in state.unreproducible
    }
    if fresh and state.unverifiable:
        if not state.verified:  # told once: nothing of it was verified
            state.kept_notes.append(state.unverifiable)
        state.verified.update(fresh)
    elif fresh and not _sigterm_seen:
        from lockstep.oracles.ledger.verify_io import unreproducible

        failed = unreproducible(
            state.ledger, recording.fn, state.signature, state.recorder.stem_length, fresh
        )
        state.unreproducible.update(failed)
        state.kept_notes.extend(failed.values())
        state.verified.update(rid for rid in fresh if rid not in failed)
    return {rid: row for rid, row in rows.items() if rid not in state.unreproducible}


def flush(state: _DecoratorState) -> list[str]:
    """Merge what ``state`` recorded so far into its ledger file; returns the report lines.

    Rows are merged under the ledger's lock (:func:`merge_into_file`), so any number of
    processes may flush into one ledger; a row already in the file is kept as it is.
    """
    return _flush(state, report=True)


def _flush(state: _DecoratorState, *, report: bool) -> list[str]:
    """Write the new rows; tell the notes only when ``report`` (else keep them for later)."""
    global _writing
    with _FLUSH_LOCK:
        calls = state.recorder.calls
        if calls == state.flushed_calls and (not report or calls == state.reported_calls):
            return []
        _writing = True
        try:
            part = state.recorder.part()
            recording = merge_parts(part.fn, [part])
            error: Exception | None = None
            if part.calls != state.flushed_calls:
                try:
                    kept = merge_into_file(
                        state.ledger,
                        recording.fn,
                        _reproducible_rows(state, recording),
                        state.signature,
                        state.recorder.stem_length,
                    )
                except Exception as e:
                    error = e
                else:
                    state.flushed_calls = part.calls
                    state.kept_notes.extend(
                        line
                        if SECRET_REFUSED in line
                        else f"{line}; another process or an earlier run recorded it first"
                        for line in kept
                    )
            kept_notes: list[str] = []
            if report:
                state.reported_calls = part.calls
                kept_notes, state.kept_notes = state.kept_notes, []
        finally:
            _writing = False
    try:
        if error is not None:
            warnings.warn(
                f"lockstep: could not write {state.ledger}: {error}",
                LedgerRecordWarning,
                stacklevel=3,
            )
            return []
        if not report:
            return []
        notes = [*recording.notes(), *kept_notes]
        dropped = sum(1 for rid in recording.rows if rid in state.unreproducible)
        if dropped:
            notes[0] += f"; {dropped} did not reproduce in a fresh interpreter and were not written"
        for line in notes[1:]:
            warnings.warn(f"lockstep: {line}", LedgerRecordWarning, stacklevel=3)
        return notes
    finally:
        if _term_pending and _in_main_thread():  # SIGTERM came during this write: end now
            _finish_sigterm()


# -- ends that skip atexit ---------------------------------------------------------------
#
# A process writes its rows at exit (atexit), as a multiprocessing worker when it finishes
# (Finalize: workers leave by os._exit), and on SIGTERM (a handler, only over the default
# action).  A Python-level handler runs only when the main thread next executes bytecode:
# a SIGTERM that lands just before the main thread starts a blocking wait (a semaphore,
# a pipe read) is noted by the C handler and then never acted on.  Pool.terminate() sends
# its workers one SIGTERM, just as they start waiting on a lock it never releases, and
# joins them: a few percent of pools would hang.  So in child processes a daemon thread,
# the kicker, hears every caught signal through signal.set_wakeup_fd and, when a SIGTERM's
# handler has not started within KICK_DELAY, sends SIGTERM again to the main thread alone,
# which ends its wait with EINTR and runs the handler.  The process that started the
# recording gets no thread: it is the one that forks pools, and forking a process with
# threads is unsafe (and a DeprecationWarning from Python 3.12); a child pauses its kicker
# around its own forks.  And a forked child forgets the signals its Python handlers noted
# before it finished starting (CPython clears them after fork), so a SIGTERM sent to a
# worker that just started would be lost: SIGTERM is blocked across the fork and unblocked
# in the child once its kicker listens, so the kernel holds such a signal until then.


def _die_by(signum: int) -> None:
    """End as the default action of ``signum`` would, so the parent sees the same status."""
    try:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    finally:
        os._exit(128 + signum)  # only if the signal did not end the process


def _finish_sigterm() -> None:
    """SIGTERM came during a write: that write is done, write the rest and die."""
    global _term_pending
    _term_pending = False
    _flush_all()
    _die_by(signal.SIGTERM)


def _on_sigterm(signum: int, frame: object) -> None:
    """Write the rows, then die by SIGTERM as if this handler had never been installed."""
    global _term_pending, _sigterm_seen
    _sigterm_seen = True  # the kicker stops here
    if _FLUSH_LOCK.acquire(timeout=SIGTERM_WAIT):
        try:
            if _writing:  # this thread was stopped inside a write: let it end first
                _term_pending = True
                return
            _flush_all()
        except BaseException as e:
            _stderr(f"lockstep: SIGTERM: rows not written: {type(e).__name__}: {e}")
        finally:
            _FLUSH_LOCK.release()
    else:
        _stderr(
            f"lockstep: SIGTERM: another thread was still writing after {SIGTERM_WAIT:g}s; "
            "rows recorded since the last write are lost"
        )
    _die_by(signum)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _install_sigterm_handler() -> None:
    """Only over the default action, only from the main thread (where Python allows it)."""
    if not _in_main_thread():
        return
    with contextlib.suppress(ValueError, OSError, AttributeError):
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_sigterm)


@dataclass
class _Kicker:
    """The thread that makes a child's SIGTERM reach :func:`_on_sigterm` (see above)."""

    read_fd: int
    write_fd: int
    """Our ``signal.set_wakeup_fd``: the C signal handler writes each signal's number."""
    main: int
    thread: threading.Thread | None = None


def _kick_loop(kicker: _Kicker) -> None:
    while True:
        try:
            data = os.read(kicker.read_fd, 512)
        except OSError:
            return
        if signal.SIGTERM in data:
            break
        if not data or 0 in data:  # closed, or paused for a fork (no signal is numbered 0)
            return
    delay = KICK_DELAY
    while True:
        time.sleep(delay)
        if _sigterm_seen:  # the handler runs: it writes the rows and ends the process
            return
        try:
            signal.pthread_kill(kicker.main, signal.SIGTERM)
        except (OSError, ValueError):
            return
        delay = min(delay * 2, 1.0)


def _run_kicker(kicker: _Kicker) -> None:
    kicker.thread = threading.Thread(
        target=_kick_loop, args=(kicker,), name="lockstep-sigterm", daemon=True
    )
    kicker.thread.start()


def _start_kicker() -> None:
    """In a child whose SIGTERM handler is ours, from its main thread, if the wakeup fd is free."""
    global _kicker
    if _kicker is not None or not _in_main_thread() or not hasattr(signal, "pthread_kill"):
        return
    if signal.getsignal(signal.SIGTERM) is not _on_sigterm:
        return
    read_fd, write_fd = os.pipe()
    try:
        os.set_blocking(write_fd, False)
        previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        if previous != -1:  # someone else's (an event loop): leave it to them
            signal.set_wakeup_fd(previous)
            raise ValueError(previous)
    except (OSError, ValueError):
        os.close(read_fd)
        os.close(write_fd)
        return
    _kicker = _Kicker(read_fd, write_fd, threading.main_thread().ident or 0)
    _run_kicker(_kicker)


_FORKING = threading.local()
"""Per forking thread: whether :func:`_before_fork` blocked SIGTERM (and so must unblock it)."""


def _before_fork() -> None:
    """Before ``os.fork``: hold SIGTERM for the child (see above), and no kicker thread."""
    with contextlib.suppress(Exception):
        if signal.getsignal(signal.SIGTERM) is _on_sigterm:
            held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
            _FORKING.blocked = signal.SIGTERM not in held
    kicker = _kicker
    if kicker is None or kicker.thread is None or not kicker.thread.is_alive():
        return
    with contextlib.suppress(OSError):
        os.write(kicker.write_fd, b"\0")
    kicker.thread.join(timeout=1.0)


def _release_sigterm() -> None:
    """After ``os.fork``, in either process: deliver a SIGTERM held across it."""
    if getattr(_FORKING, "blocked", False):
        _FORKING.blocked = False
        with contextlib.suppress(Exception):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _after_fork_in_parent() -> None:
    """After ``os.fork``, in the parent."""
    try:
        kicker = _kicker
        if (
            kicker is not None
            and not _sigterm_seen
            and not (kicker.thread and kicker.thread.is_alive())
        ):
            _run_kicker(kicker)
    finally:
        _release_sigterm()


def _drop_inherited_kicker() -> None:
    """After ``os.fork``, in the child: the pipe and the wakeup fd are the parent's."""
    global _kicker
    kicker = _kicker
    if kicker is None:
        return
    _kicker = None
    with contextlib.suppress(ValueError, OSError):
        previous = signal.set_wakeup_fd(-1)
        if previous not in (-1, kicker.write_fd):
            signal.set_wakeup_fd(previous)
    for fd in (kicker.read_fd, kicker.write_fd):
        with contextlib.suppress(OSError):
            os.close(fd)


class _AfterForkHook:
    """A weak-referenceable owner for ``multiprocessing.util.register_after_fork``."""


_AFTER_FORK_HOOK: Final = _AfterForkHook()


def _rearm() -> None:
    """Run :func:`_flush_all` when this ``multiprocessing`` process ends.

    A worker (a ``Pool``'s too) ends by ``os._exit`` after running the
    ``multiprocessing.util.Finalize`` callbacks of its own process, so atexit never runs
    there.  A child started by fork clears the callbacks it inherited, then runs the
    after-fork ones: :func:`_in_multiprocessing_child` is one, so this survives the clear.
    (Spawn and forkserver children clear nothing and run no after-fork callbacks.)
    """
    global _mp_finalizer, _mp_after_fork_registered
    util = sys.modules.get("multiprocessing.util")
    if util is None:  # not used by this process: atexit and SIGTERM cover it
        return
    finalizer = _mp_finalizer
    if finalizer is None or finalizer._pid != os.getpid() or not finalizer.still_active():
        _mp_finalizer = util.Finalize(None, _flush_all, exitpriority=_EXIT_PRIORITY)
    if not _mp_after_fork_registered:  # the registry is inherited by forks, like this flag
        util.register_after_fork(_AFTER_FORK_HOOK, _in_multiprocessing_child)
        _mp_after_fork_registered = True


def _in_multiprocessing_child(_hook: object = None) -> None:
    """A ``multiprocessing`` child started by fork begins to run, in its main thread."""
    global _is_child
    _is_child = True
    _rearm()
    _start_kicker()


def _after_fork_in_child() -> None:
    """``os.fork`` (also ``multiprocessing``'s): a fresh table, fresh locks, exit hooks."""
    global _FLUSH_LOCK, _writing, _term_pending, _sigterm_seen, _hooks_pid, _is_child
    try:
        _FLUSH_LOCK = threading.RLock()
        _writing = False
        _term_pending = False
        _sigterm_seen = False
        _hooks_pid = os.getpid()
        _is_child = True
        for state in _PENDING_FLUSH:
            state.recorder.start_afresh()
            state.flushed_calls = state.reported_calls = 0
            state.kept_notes = []
        _drop_inherited_kicker()
        _rearm()
        _start_kicker()
    finally:
        _release_sigterm()  # last: a SIGTERM held since the fork now reaches the kicker


def _install_exit_hooks() -> None:
    """Everything that makes rows outlive the process: once per process, on first use."""
    global _hooks_pid, _is_child
    if _hooks_pid == 0:  # first use in this interpreter (fork children inherit what follows)
        atexit.register(_flush_all)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(
                before=_before_fork,
                after_in_parent=_after_fork_in_parent,
                after_in_child=_after_fork_in_child,
            )
    _hooks_pid = os.getpid()
    _rearm()
    _install_sigterm_handler()
    if _started_by_multiprocessing():
        _is_child = True
    if _is_child:
        _start_kicker()


def _started_by_multiprocessing() -> bool:
    """A spawn child (its command line carries multiprocessing's marker, also while it
    imports the main module, before it knows its parent) or any running child."""
    if "--multiprocessing-fork" in getattr(sys, "orig_argv", ()):
        return True
    mp = sys.modules.get("multiprocessing")
    return mp is not None and mp.parent_process() is not None


def _flush_every() -> int:
    """``LOCKSTEP_FLUSH_EVERY``: a positive number of calls, or 0 (only at the end)."""
    raw = os.environ.get(FLUSH_EVERY_ENV, "").strip()
    if not raw:
        return 0
    if raw.isdigit() and int(raw) > 0 and len(raw) < 10:
        return int(raw)
    warnings.warn(
        f"lockstep: {FLUSH_EVERY_ENV}={raw!r} is not a whole number of calls from 1 to "
        "999999999; rows are written when the process ends",
        LedgerRecordWarning,
        stacklevel=3,
    )
    return 0


def _flushing_every(func: Callable[..., Any], state: _DecoratorState, every: int) -> Any:
    """``func`` (a recording wrapper) that also writes the rows every ``every`` calls.

    A separate layer, only when asked for, so the default call path stays as it is.
    """
    rec = state.recorder

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_ticking(*args: Any, **kwargs: Any) -> Any:
            try:
                return await func(*args, **kwargs)
            finally:
                if rec.calls - state.flushed_calls >= every:
                    _flush_quietly(state)

        return async_ticking

    @functools.wraps(func)
    def ticking(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        finally:
            if rec.calls - state.flushed_calls >= every:
                _flush_quietly(state)

    return ticking


def _flush_quietly(state: _DecoratorState) -> None:
    """A periodic write: silent (its notes wait for the next full flush), and never lets a
    problem reach the caller of the recorded function."""
    try:
        _flush(state, report=False)
    except Exception as e:  # a warning made an error (-W error)
        _stderr(f"lockstep: {state.ledger}: {type(e).__name__}: {e}")


def _importable_module(module: str) -> str:
    """The name a ``[[ledger]]`` target would use for ``module``.

    A function in a script run as ``python pkg/job.py`` or ``python -m pkg.job`` lives in
    ``__main__`` (``__mp_main__`` in a ``multiprocessing`` spawn or forkserver worker);
    its ledger is named after the module it is imported as (``pkg.job``), so replay,
    which imports the target, accepts it, and every process names the same target.
    """
    if module not in ("__main__", "__mp_main__"):  # __mp_main__: a spawned worker's main
        return module
    main = sys.modules.get(module)
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name and spec.name != "__main__":
        return str(spec.name).removesuffix(".__main__")
    file = getattr(main, "__file__", None)
    if not file:
        return module
    path = Path(file).resolve()
    try:
        rel = path.relative_to(Path.cwd().resolve())
    except ValueError:
        return path.stem
    parts = [*rel.parent.parts, rel.stem]
    if parts and parts[0] == "src":
        parts = parts[1:]
    return ".".join(parts)


def _unverifiable(module: str, qualname: str) -> str:
    """Why a function of ``module`` cannot be imported again to verify its rows, or "".

    Verifying imports the function's module in a fresh interpreter and looks the function
    up by name: one defined inside another function has no such name.  A script run as
    ``python job.py`` is imported as a module then: harmless behind an
    ``if __name__ == "__main__":`` guard, but without one the whole program would run again.
    """
    if "<" in qualname:
        return (
            f"{qualname}: rows written without verification: a function defined inside "
            "another has no name a fresh interpreter (or lockstep replay) can call it by"
        )
    if module not in ("__main__", "__mp_main__"):
        return ""
    main = sys.modules.get(module)
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name and spec.name not in ("__main__", "__mp_main__"):
        return ""
    file = getattr(main, "__file__", None)
    try:
        text = Path(file).read_text(errors="replace") if file else ""
    except OSError:
        text = ""
    if "__main__" in text:
        return ""
    return (
        f"{file or module}: rows written without verification: the script has no "
        "'if __name__ == \"__main__\":' guard, so importing it to replay its rows would run it"
    )


def record_io(
    fn: Any = None,
    *,
    ledger: str | Path | None = None,
    stem_length: int = canon.DEFAULT_STEM,
) -> Any:
    """Record every call of ``fn`` into a ledger, without changing what ``fn`` does.

    Use as ``@record_io``, ``@record_io(ledger="lockstep/parse.ledger.jsonl")`` or
    ``record_io(fn, ledger=...)``; works on functions, methods, staticmethods,
    classmethods (decorate above ``@staticmethod`` / ``@classmethod``) and async
    functions.  Distinct rows are merged into the ledger (default
    ``lockstep/<qualname>.ledger.jsonl`` under the working directory), under its lock,
    by each process for the calls it made itself:

    * when it exits normally (atexit), or finishes as a ``multiprocessing`` worker or
      ``Process`` (its ``multiprocessing.util.Finalize`` callbacks: workers skip atexit);
    * on SIGTERM, when SIGTERM still had its default action as the decorator ran in the
      main thread: the rows are written, then the process dies by SIGTERM as before;
    * every ``LOCKSTEP_FLUSH_EVERY`` calls when that variable is set (silently: the notes
      come with the final write), and whenever ``wrapper.lockstep_flush()`` is called.

    A child made by ``os.fork`` starts with an empty table (its parent writes the calls
    made before the fork).  SIGKILL, ``os._exit`` outside a ``multiprocessing`` worker
    and a crash lose the rows since the last write.  Inputs with differing outcomes and
    values that cannot be frozen are reported as :class:`LedgerRecordWarning`, never
    written; an outcome differing from the row another process wrote first is reported
    by the process that writes second, and the first row is kept.
    """
    if fn is None:
        return functools.partial(record_io, ledger=ledger, stem_length=stem_length)
    if os.environ.get(RECORD_IO_OFF):  # the interpreter verifying recorded rows replays them
        return fn
    inner = fn.__func__ if isinstance(fn, (staticmethod, classmethod)) else fn
    target = f"{_importable_module(inner.__module__)}:{inner.__qualname__}"
    rec = TargetRecorder(target, stem_length=stem_length)
    allow_callables_from(target.partition(":")[0])
    replacement, signature = _wrap_member(fn, rec, where=target)
    default = Path("lockstep") / f"{inner.__qualname__}.ledger.jsonl"
    path = Path(ledger) if ledger is not None else default
    state = _DecoratorState(
        rec,
        path.absolute(),
        signature,
        unverifiable=_unverifiable(inner.__module__, inner.__qualname__),
    )
    every = _flush_every()
    with _FLUSH_LOCK:
        _install_exit_hooks()
        _PENDING_FLUSH.append(state)
    kind = type(replacement) if isinstance(replacement, (staticmethod, classmethod)) else None
    wrapper: Any = replacement.__func__ if kind is not None else replacement
    if every:
        wrapper = _flushing_every(wrapper, state, every)
        replacement = kind(wrapper) if kind is not None else wrapper
    wrapper.lockstep_flush = functools.partial(flush, state)
    wrapper.lockstep_recorder = rec
    return replacement
