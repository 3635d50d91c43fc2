"""``@record_io``: a function records its own calls and each process writes them at its end.

The rows of every decorated function are merged into its ledger file under the
file's lock (:func:`~.file.merge_into_file`) when the process ends (atexit, a
``multiprocessing`` worker finishing, SIGTERM: :mod:`.exit_hooks`), every
``LOCKSTEP_FLUSH_EVERY`` calls, and on ``fn.lockstep_flush()``.  Each new row is
first replayed in a fresh interpreter (:mod:`.verify_io`).
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from lockstep import canon
from lockstep.canon.codec import allow_callables_from
from lockstep.model import Refusal, RefusalReason
from lockstep.oracles.ledger.exit_hooks import (
    EXIT,
    finish_sigterm,
    in_main_thread,
    install_exit_hooks,
    stderr,
)
from lockstep.oracles.ledger.file import merge_into_file
from lockstep.oracles.ledger.format import (
    SUFFIX,
    LedgerRow,
    Param,
)
from lockstep.oracles.ledger.merging import Recording, merge_parts
from lockstep.oracles.ledger.recorder import TargetRecorder
from lockstep.oracles.ledger.wrapping import _wrap_member
from lockstep.switches import RECORD_IO_OFF


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
    kept_refusals: list[Refusal] = field(default_factory=list)
    """Rows left out by writes not reported yet (a secret, or no reproduction)."""
    unverifiable: str = ""
    """Why this function's rows cannot be replayed in a fresh interpreter ("" if they can)."""
    verified: set[str] = field(default_factory=set)
    """Row ids proven to reproduce in a fresh interpreter (not verified again)."""
    unreproducible: dict[str, Refusal] = field(default_factory=dict)
    """Row id -> why it did not reproduce: never written, told once."""


FLUSH_EVERY_ENV: Final = "LOCKSTEP_FLUSH_EVERY"
"""Environment variable: also write a decorated function's rows every N of its calls."""


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
    for state in list(EXIT.pending):
        try:
            told = _flush(state, report=True)
        except Exception as e:  # a warning made an error (-W error), or a bug: nobody can catch it
            stderr(f"lockstep: {state.ledger}: {type(e).__name__}: {e}")
        else:
            # The report the README promises (calls seen, rows kept, saturation), once, by
            # the process the user started; its workers' rows are merged silently.
            if told.notes and _is_top_process():
                stderr(f"lockstep: {_shown(state.ledger)}: {told.notes[0]}")
                for refusal in told.secrets:  # a row left out for a secret: said even at exit
                    stderr(f"lockstep: {_shown(state.ledger)}: {refusal.text()}")


def _fresh_child() -> None:
    """In a forked child: every decorated function starts with an empty table (its parent
    writes the calls made before the fork)."""
    for state in EXIT.pending:
        state.recorder.start_afresh()
        state.flushed_calls = state.reported_calls = 0
        state.kept_notes = []
        state.kept_refusals = []


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
    elif fresh and not EXIT.sigterm_seen:
        from lockstep.oracles.ledger.verify_io import unreproducible

        failed = unreproducible(
            state.ledger, recording.fn, state.signature, state.recorder.stem_length, fresh
        )
        state.unreproducible.update(failed)
        state.kept_refusals.extend(failed.values())
        state.verified.update(rid for rid in fresh if rid not in failed)
    return {rid: row for rid, row in rows.items() if rid not in state.unreproducible}


@dataclass(frozen=True)
class _Told:
    """What one write told the user: its notes, and the rows it left out for a secret."""

    notes: list[str] = field(default_factory=list)
    secrets: list[Refusal] = field(default_factory=list)


def flush(state: _DecoratorState) -> list[str]:
    """Merge what ``state`` recorded so far into its ledger file; returns the report lines.

    Rows are merged under the ledger's lock (:func:`merge_into_file`), so any number of
    processes may flush into one ledger; a row already in the file is kept as it is.
    """
    return _flush(state, report=True).notes


def _flush(state: _DecoratorState, *, report: bool) -> _Told:
    """Write the new rows; tell the notes only when ``report`` (else keep them for later)."""
    with EXIT.flush_lock:
        calls = state.recorder.calls
        if calls == state.flushed_calls and (not report or calls == state.reported_calls):
            return _Told()
        EXIT.writing = True
        try:
            part = state.recorder.part()
            recording = merge_parts(part.fn, [part])
            error: Exception | None = None
            if part.calls != state.flushed_calls:
                try:
                    written = merge_into_file(
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
                    state.kept_refusals.extend(written.refused)
                    state.kept_notes.extend(
                        f"{line}; another process or an earlier run recorded it first"
                        for line in written.notes
                    )
            kept_notes: list[str] = []
            kept_refusals: list[Refusal] = []
            if report:
                state.reported_calls = part.calls
                kept_notes, state.kept_notes = state.kept_notes, []
                kept_refusals, state.kept_refusals = state.kept_refusals, []
        finally:
            EXIT.writing = False
    try:
        if error is not None:
            warnings.warn(
                f"lockstep: could not write {state.ledger}: {error}",
                LedgerRecordWarning,
                stacklevel=3,
            )
            return _Told()
        if not report:
            return _Told()
        notes = [*recording.notes(), *(r.text() for r in kept_refusals), *kept_notes]
        dropped = sum(1 for rid in recording.rows if rid in state.unreproducible)
        if dropped:
            notes[0] += f"; {dropped} did not reproduce in a fresh interpreter and were not written"
        for line in notes[1:]:
            warnings.warn(f"lockstep: {line}", LedgerRecordWarning, stacklevel=3)
        secrets = [r for r in kept_refusals if r.reason is RefusalReason.SECRET]
        return _Told(notes, secrets)
    finally:
        if EXIT.term_pending and in_main_thread():  # SIGTERM came during this write: end now
            finish_sigterm()


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
        stderr(f"lockstep: {state.ledger}: {type(e).__name__}: {e}")


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
    default = Path("lockstep") / f"{inner.__qualname__}{SUFFIX}"
    path = Path(ledger) if ledger is not None else default
    state = _DecoratorState(
        rec,
        path.absolute(),
        signature,
        unverifiable=_unverifiable(inner.__module__, inner.__qualname__),
    )
    every = _flush_every()
    with EXIT.flush_lock:
        install_exit_hooks(_flush_all, _fresh_child)
        EXIT.pending.append(state)
    kind = type(replacement) if isinstance(replacement, (staticmethod, classmethod)) else None
    wrapper: Any = replacement.__func__ if kind is not None else replacement
    if every:
        wrapper = _flushing_every(wrapper, state, every)
        replacement = kind(wrapper) if kind is not None else wrapper
    wrapper.lockstep_flush = functools.partial(flush, state)
    wrapper.lockstep_recorder = rec
    return replacement
