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
  for a function, method, staticmethod, classmethod or async function; rows
  are merged into the ledger file when the process exits.
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
import marshal
import sys
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec

from lockstep import canon
from lockstep.canon import JSON
from lockstep.errors import CanonError, TargetError
from lockstep.oracles.ledger.file import merge_into_file, outcome_of
from lockstep.oracles.ledger.format import (
    LedgerRow,
    Param,
    call_text,
    input_key,
    outcome_text,
    row_id,
    signature_of,
)
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

_SELF_FROZEN: Final = frozenset({str, int, bool, type(None)})
"""Types whose frozen form is the value itself."""

_encode = canon.encode
_encode_call = canon.encode_call
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


class RecordingPart(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """What one process recorded for one target (the unit workers hand to the controller)."""

    fn: str
    calls: int
    entries: list[PartEntry]
    refused: list[RefusedInput] = []
    unfreezable: dict[str, int] = {}
    """``"args[1]: cannot freeze a socket.socket ..." -> calls`` skipped for that reason."""
    faults: dict[str, int] = {}
    """Errors inside the recorder itself (the calls proceeded; only their rows are missing)."""


@dataclass(slots=True)
class _Seen:
    args: JSON
    kwargs: JSON
    ok: bool
    result: JSON
    exc_type: str
    exc_stem: str
    mutated: dict[str, JSON] | None
    outcome: bytes
    first_call: int
    other_outcomes: list[bytes] = field(default_factory=list)


class _Pending:
    """What :meth:`TargetRecorder.before` learned about a new input, carried across the call."""

    __slots__ = ("args", "call_index", "enc_args", "enc_kwargs", "kwargs", "memo_key", "mutable")

    def __init__(
        self,
        call_index: int,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        enc_args: JSON,
        enc_kwargs: JSON,
        mutable: bool,
        memo_key: bytes | None,
    ) -> None:
        self.call_index = call_index
        self.args = args
        self.kwargs = kwargs
        self.enc_args = enc_args
        self.enc_kwargs = enc_kwargs
        self.mutable = mutable
        self.memo_key = memo_key


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
        """Rows by the ``marshal`` bytes of an immutable input already seen: repeated calls
        (the usual case: most calls repeat an input) skip freezing their arguments."""
        self._unfreezable: Counter[str] = Counter()
        self._faults: Counter[str] = Counter()
        self._lock = threading.Lock()

    # -- around one call ------------------------------------------------------------

    def before(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Pending | _Seen | None:
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
        try:
            enc_args, enc_kwargs = _encode_call(args, kwargs)
        except CanonError as e:
            self._unfreezable[str(e)] += 1
            return None
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
        return _Pending(index, args, kwargs, enc_args, enc_kwargs, mutable, memo_key)

    def returned(self, pending: _Pending | _Seen | None, result: Any) -> None:
        """Note a normal return."""
        if pending is None:
            return
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
            self._unfreezable[str(e)] += 1
            return
        except Exception as e:
            self._faults[f"freezing the result: {type(e).__name__}: {e}"] += 1
            return
        self._note(pending, True, enc, "", "")

    def raised(self, pending: _Pending | _Seen | None, exc: BaseException) -> None:
        """Note an exception (the wrapper re-raises it)."""
        if pending is None:
            return
        try:
            frozen = canon.freeze_exception(exc, stem_length=self.stem_length)
        except Exception as e:
            self._faults[f"freezing the exception: {type(e).__name__}: {e}"] += 1
            return
        self._note(pending, False, None, frozen.exc_type, frozen.exc_stem)

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
            key = input_key(pending.enc_args, pending.enc_kwargs)
            outcome = _canonical([ok, result, exc_type, exc_stem, mutated])
        except CanonError as e:
            self._unfreezable[str(e)] += 1
            return
        except Exception as e:
            self._faults[f"freezing the outcome: {type(e).__name__}: {e}"] += 1
            return
        with self._lock:
            seen = self._seen.get(key)
            if seen is None:
                self._seen[key] = _Seen(
                    pending.enc_args,
                    pending.enc_kwargs,
                    ok,
                    result,
                    exc_type,
                    exc_stem,
                    mutated,
                    outcome,
                    pending.call_index,
                )
            elif seen.outcome != outcome and outcome not in seen.other_outcomes:
                seen.other_outcomes.append(outcome)
            memo_key = pending.memo_key
            if (
                memo_key is not None
                and len(memo_key) <= MEMO_KEY_MAX
                and len(self._memo) < MEMO_LIMIT
            ):
                self._memo[memo_key] = self._seen[key]

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
            with self._lock:
                if outcome not in seen.other_outcomes:
                    seen.other_outcomes.append(outcome)

    # -- the result -------------------------------------------------------------------

    def part(self) -> RecordingPart:
        """This process's recording as plain data (rows sorted by id)."""
        with self._lock:
            items = list(self._seen.items())
            calls = self.calls
        entries: list[PartEntry] = []
        refused: list[RefusedInput] = []
        for key, seen in items:
            row = _row(self.fn, row_id(key), seen)
            if seen.other_outcomes:
                refused.append(_refusal(row, seen.other_outcomes))
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
            faults=dict(self._faults),
        )


def _row(fn: str, rid: str, seen: _Seen) -> LedgerRow:
    args = seen.args
    kwargs = seen.kwargs
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


def _refusal(row: LedgerRow, others: Iterable[bytes]) -> RefusedInput:
    first = outcome_text(row.ok, row.result, row.exc_type, row.exc_stem, row.mutated)
    return RefusedInput(
        id=row.id,
        call=call_text(row.fn, row.args, row.kwargs),
        outcomes=[first, *(_describe_outcome_bytes(o) for o in others)],
    )


# --------------------------------------------------------------------------- merging


@dataclass(frozen=True)
class Recording:
    """Every process's parts for one target, merged: what a ledger is written from."""

    fn: str
    calls: int
    rows: dict[str, LedgerRow]
    """Distinct, deterministic rows by id."""
    refused: list[RefusedInput]
    unfreezable: dict[str, int]
    faults: dict[str, int]
    late_rows: int
    """Rows first seen only in the last :data:`LATE_FRACTION` of some process's calls."""

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
        for reason, count in sorted(self.unfreezable.items()):
            lines.append(f"skipped {count} call(s): {reason}")
        for reason, count in sorted(self.faults.items()):
            lines.append(f"recorder fault on {count} call(s) (the calls were unaffected): {reason}")
        return lines


def merge_parts(fn: str, parts: Iterable[RecordingPart]) -> Recording:
    """Combine parts from several processes.

    An input whose outcome differs between processes is refused like one that
    differed within a process.
    """
    rows: dict[str, LedgerRow] = {}
    outcomes: dict[str, list[bytes]] = {}
    early: set[str] = set()
    late: set[str] = set()
    refused: dict[str, RefusedInput] = {}
    unfreezable: Counter[str] = Counter()
    faults: Counter[str] = Counter()
    calls = 0
    for part in parts:
        calls += part.calls
        threshold = part.calls * (1 - LATE_FRACTION)
        unfreezable.update(part.unfreezable)
        faults.update(part.faults)
        for r in part.refused:
            refused.setdefault(r.id, r)
        for entry in part.entries:
            row = entry.row
            (late if entry.first_call > threshold else early).add(row.id)
            outcome = outcome_of(row)
            known = outcomes.get(row.id)
            if known is None:
                rows[row.id] = row
                outcomes[row.id] = [outcome]
            elif outcome not in known:
                known.append(outcome)
    for rid, known in outcomes.items():
        if len(known) > 1 and rid not in refused:
            refused[rid] = _refusal(rows[rid], known[1:])
    for rid in refused:
        rows.pop(rid, None)
    late_rows = sum(1 for rid in late if rid not in early and rid in rows)
    return Recording(
        fn=fn,
        calls=calls,
        rows=dict(sorted(rows.items())),
        refused=sorted(refused.values(), key=lambda r: r.id),
        unfreezable=dict(unfreezable),
        faults=dict(faults),
        late_rows=late_rows,
    )


# --------------------------------------------------------------------------- wrapping


def _wrap_function(func: Callable[..., Any], rec: TargetRecorder, *, skip_first: bool) -> Any:
    """A wrapper that records around ``func`` and is otherwise ``func``."""
    before = rec.before
    returned = rec.returned
    raised = rec.raised

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            if not rec.active:
                return await func(*args, **kwargs)
            pending = before(args[1:] if skip_first else args, kwargs)
            try:
                result = await func(*args, **kwargs)
            except Exception as exc:
                raised(pending, exc)
                raise
            returned(pending, result)
            return result

        async_wrapper.__lockstep_wrapped__ = func  # type: ignore[attr-defined]
        return async_wrapper

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not rec.active:
            return func(*args, **kwargs)
        pending = before(args[1:] if skip_first else args, kwargs)
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
        replacement, signature = _wrap_member(raw, rec, where=f"{where}: {target!r}")
        attr = parts[-1]
        owned = attr in vars(owner)
        self._patches.append(_Patch(owner, attr, raw, owned))
        setattr(owner, attr, replacement)
        if owner is module:
            self._rebind_imports(raw, replacement, module)
        wrapped = Wrapped(target, rec, signature)
        self.wrapped.append(wrapped)
        return wrapped

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

    def undo(self) -> None:
        """Restore every original binding (newest first); recorders stop recording."""
        for wrapped in self.wrapped:
            wrapped.recorder.active = False
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


_PENDING_FLUSH: list[_DecoratorState] = []
_FLUSH_LOCK = threading.Lock()


def _flush_all() -> None:
    for state in list(_PENDING_FLUSH):
        flush(state)


def flush(state: _DecoratorState) -> list[str]:
    """Merge what ``state`` recorded so far into its ledger file; returns the report lines."""
    with _FLUSH_LOCK:
        part = state.recorder.part()
        if part.calls == state.flushed_calls:
            return []
        state.flushed_calls = part.calls
        recording = merge_parts(part.fn, [part])
        try:
            notes = merge_into_file(
                state.ledger,
                recording.fn,
                recording.rows,
                state.signature,
                state.recorder.stem_length,
            )
            notes = [*recording.notes(), *notes]
        except Exception as e:
            warnings.warn(
                f"lockstep: could not write {state.ledger}: {e}", LedgerRecordWarning, stacklevel=2
            )
            return []
        for line in notes[1:]:
            warnings.warn(f"lockstep: {line}", LedgerRecordWarning, stacklevel=2)
        return notes


def _importable_module(module: str) -> str:
    """The name a ``[[ledger]]`` target would use for ``module``.

    A function in a script run as ``python pkg/job.py`` or ``python -m pkg.job`` lives in
    ``__main__``; its ledger is named after the module it is imported as (``pkg.job``),
    so replay, which imports the target, accepts it.
    """
    if module != "__main__":
        return module
    main = sys.modules.get("__main__")
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
    ``lockstep/<qualname>.ledger.jsonl`` under the working directory) when the
    process exits, or when ``wrapper.lockstep_flush()`` is called.  Inputs with
    differing outcomes and values that cannot be frozen are reported as
    :class:`LedgerRecordWarning`, never written.
    """
    if fn is None:
        return functools.partial(record_io, ledger=ledger, stem_length=stem_length)
    inner = fn.__func__ if isinstance(fn, (staticmethod, classmethod)) else fn
    target = f"{_importable_module(inner.__module__)}:{inner.__qualname__}"
    rec = TargetRecorder(target, stem_length=stem_length)
    replacement, signature = _wrap_member(fn, rec, where=target)
    default = Path("lockstep") / f"{inner.__qualname__}.ledger.jsonl"
    path = Path(ledger) if ledger is not None else default
    state = _DecoratorState(rec, path.absolute(), signature)
    with _FLUSH_LOCK:
        if not _PENDING_FLUSH:
            atexit.register(_flush_all)
        _PENDING_FLUSH.append(state)
    wrapper: Any = (
        replacement.__func__
        if isinstance(replacement, (staticmethod, classmethod))
        else replacement
    )
    wrapper.lockstep_flush = functools.partial(flush, state)
    wrapper.lockstep_recorder = rec
    return replacement
