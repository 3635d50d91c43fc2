"""Ends that skip atexit: a process's recorded rows outlive it (SIGTERM, fork, workers).

A process writes its rows at exit (atexit), as a multiprocessing worker when it finishes
(Finalize: workers leave by os._exit), and on SIGTERM (a handler, only over the default
action).  A Python-level handler runs only when the main thread next executes bytecode:
a SIGTERM that lands just before the main thread starts a blocking wait (a semaphore,
a pipe read) is noted by the C handler and then never acted on.  Pool.terminate() sends
its workers one SIGTERM, just as they start waiting on a lock it never releases, and
joins them: a few percent of pools would hang.  So in child processes a daemon thread,
the kicker, hears every caught signal through signal.set_wakeup_fd and, when a SIGTERM's
handler has not started within KICK_DELAY, sends SIGTERM again to the main thread alone,
which ends its wait with EINTR and runs the handler.  The process that started the
recording gets no thread: it is the one that forks pools, and forking a process with
threads is unsafe (and a DeprecationWarning from Python 3.12); a child pauses its kicker
around its own forks.  And a forked child forgets the signals its Python handlers noted
before it finished starting (CPython clears them after fork), so a SIGTERM sent to a
worker that just started would be lost: SIGTERM is blocked across the fork and unblocked
in the child once its kicker listens, so the kernel holds such a signal until then.

Everything this module knows about the process is one object, :data:`EXIT`
(:class:`ExitState`): no other module-level state, no ``global`` statement.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Final

import msgspec

SIGTERM_WAIT: Final = 30.0
"""Seconds the SIGTERM handler waits for another thread's write to finish before dying."""

KICK_DELAY: Final = 0.05
"""Seconds a child's kicker gives the SIGTERM handler to start before sending SIGTERM again."""

_EXIT_PRIORITY: Final = 100
"""``multiprocessing.util.Finalize`` priority: higher runs earlier, before queues close."""


def _nothing() -> None:
    """No recording to write (yet)."""


class ExitState:
    """The recorder's process-wide state, in one object (:data:`EXIT`).

    A fork copies it; :func:`_after_fork_in_child` resets what is the parent's.
    """

    def __init__(self) -> None:
        self.pending: list[Any] = []
        """The ``@record_io`` states whose rows are written at the end (:mod:`.decorator`)."""
        self.flush_lock = threading.RLock()
        """Serialises writes.  Reentrant so the SIGTERM handler, which runs in the main
        thread between two bytecodes, can take it even when it interrupted that thread
        inside a write (it then sees :attr:`writing` and lets that write finish instead of
        starting another)."""
        self.writing = False
        """True while a write works on the file (under :attr:`flush_lock`)."""
        self.term_pending = False
        """SIGTERM arrived during a write of the main thread's: die once that write is done."""
        self.hooks_pid = 0
        """The process in which the exit hooks were last installed."""
        self.mp_finalizer: Any = None
        """This process's ``multiprocessing.util.Finalize`` for :attr:`flush_all`, if armed."""
        self.mp_after_fork_registered = False
        self.is_child = False
        """This process was forked or started by another that records (it gets the kicker)."""
        self.sigterm_seen = False
        """:func:`_on_sigterm` has started."""
        self.kicker: _Kicker | None = None
        self.forking = threading.local()
        """Per forking thread: whether :func:`_before_fork` blocked SIGTERM (and so must
        unblock it)."""
        self.inherited_tables: list[tuple[dict[bytes, Any], dict[bytes, Any]]] = []
        """Tables a forked child inherited and set aside (see
        :meth:`~.recorder.TargetRecorder.start_afresh`)."""
        self.flush_all: Callable[[], None] = _nothing
        """Writes every pending recording (:func:`install_exit_hooks`)."""
        self.fresh_child: Callable[[], None] = _nothing
        """Starts a forked child's recordings afresh (:func:`install_exit_hooks`)."""


EXIT: Final = ExitState()
"""This process's one exit state."""


def _flush_all() -> None:
    EXIT.flush_all()


def stderr(line: str) -> None:
    """Tell the user when no warning can reach them (the process is ending)."""
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    with contextlib.suppress(OSError):
        os.write(2, f"{line}\n".encode(errors="replace"))


def _die_by(signum: int) -> None:
    """End as the default action of ``signum`` would, so the parent sees the same status."""
    try:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    finally:
        os._exit(128 + signum)  # only if the signal did not end the process


def finish_sigterm() -> None:
    """SIGTERM came during a write: that write is done, write the rest and die."""
    EXIT.term_pending = False
    EXIT.flush_all()
    _die_by(signal.SIGTERM)


def _on_sigterm(signum: int, frame: object) -> None:
    """Write the rows, then die by SIGTERM as if this handler had never been installed."""
    EXIT.sigterm_seen = True  # the kicker stops here
    if EXIT.flush_lock.acquire(timeout=SIGTERM_WAIT):
        try:
            if EXIT.writing:  # this thread was stopped inside a write: let it end first
                EXIT.term_pending = True
                return
            EXIT.flush_all()
        except BaseException as e:
            stderr(f"lockstep: SIGTERM: rows not written: {type(e).__name__}: {e}")
        finally:
            EXIT.flush_lock.release()
    else:
        stderr(
            f"lockstep: SIGTERM: another thread was still writing after {SIGTERM_WAIT:g}s; "
            "rows recorded since the last write are lost"
        )
    _die_by(signum)


def in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _install_sigterm_handler() -> None:
    """Only over the default action, only from the main thread (where Python allows it)."""
    if not in_main_thread():
        return
    with contextlib.suppress(ValueError, OSError, AttributeError):
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_sigterm)


class _Kicker(msgspec.Struct):
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
        if EXIT.sigterm_seen:  # the handler runs: it writes the rows and ends the process
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
    if EXIT.kicker is not None or not in_main_thread() or not hasattr(signal, "pthread_kill"):
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
    EXIT.kicker = _Kicker(read_fd, write_fd, threading.main_thread().ident or 0)
    _run_kicker(EXIT.kicker)


def _before_fork() -> None:
    """Before ``os.fork``: hold SIGTERM for the child (see above), and no kicker thread."""
    with contextlib.suppress(Exception):
        if signal.getsignal(signal.SIGTERM) is _on_sigterm:
            held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
            EXIT.forking.blocked = signal.SIGTERM not in held
    kicker = EXIT.kicker
    if kicker is None or kicker.thread is None or not kicker.thread.is_alive():
        return
    with contextlib.suppress(OSError):
        os.write(kicker.write_fd, b"\0")
    kicker.thread.join(timeout=1.0)


def _release_sigterm() -> None:
    """After ``os.fork``, in either process: deliver a SIGTERM held across it."""
    if getattr(EXIT.forking, "blocked", False):
        EXIT.forking.blocked = False
        with contextlib.suppress(Exception):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _after_fork_in_parent() -> None:
    """After ``os.fork``, in the parent."""
    try:
        kicker = EXIT.kicker
        if (
            kicker is not None
            and not EXIT.sigterm_seen
            and not (kicker.thread and kicker.thread.is_alive())
        ):
            _run_kicker(kicker)
    finally:
        _release_sigterm()


def _drop_inherited_kicker() -> None:
    """After ``os.fork``, in the child: the pipe and the wakeup fd are the parent's."""
    kicker = EXIT.kicker
    if kicker is None:
        return
    EXIT.kicker = None
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
    """Run :func:`EXIT.flush_all` when this ``multiprocessing`` process ends.

    A worker (a ``Pool``'s too) ends by ``os._exit`` after running the
    ``multiprocessing.util.Finalize`` callbacks of its own process, so atexit never runs
    there.  A child started by fork clears the callbacks it inherited, then runs the
    after-fork ones: :func:`_in_multiprocessing_child` is one, so this survives the clear.
    (Spawn and forkserver children clear nothing and run no after-fork callbacks.)
    """
    util = sys.modules.get("multiprocessing.util")
    if util is None:  # not used by this process: atexit and SIGTERM cover it
        return
    finalizer = EXIT.mp_finalizer
    if finalizer is None or finalizer._pid != os.getpid() or not finalizer.still_active():
        EXIT.mp_finalizer = util.Finalize(None, _flush_all, exitpriority=_EXIT_PRIORITY)
    if not EXIT.mp_after_fork_registered:  # the registry is inherited by forks, like this flag
        util.register_after_fork(_AFTER_FORK_HOOK, _in_multiprocessing_child)
        EXIT.mp_after_fork_registered = True


def _in_multiprocessing_child(_hook: object = None) -> None:
    """A ``multiprocessing`` child started by fork begins to run, in its main thread."""
    EXIT.is_child = True
    _rearm()
    _start_kicker()


def _after_fork_in_child() -> None:
    """``os.fork`` (also ``multiprocessing``'s): a fresh table, fresh locks, exit hooks."""
    try:
        EXIT.flush_lock = threading.RLock()
        EXIT.writing = False
        EXIT.term_pending = False
        EXIT.sigterm_seen = False
        EXIT.hooks_pid = os.getpid()
        EXIT.is_child = True
        EXIT.fresh_child()
        _drop_inherited_kicker()
        _rearm()
        _start_kicker()
    finally:
        _release_sigterm()  # last: a SIGTERM held since the fork now reaches the kicker


def install_exit_hooks(flush_all: Callable[[], None], fresh_child: Callable[[], None]) -> None:
    """Everything that makes rows outlive the process: once per process, on first use.

    ``flush_all`` writes every pending recording (at exit, a worker's end, SIGTERM);
    ``fresh_child`` starts a forked child's recordings afresh.  Called under
    ``EXIT.flush_lock``.
    """
    EXIT.flush_all = flush_all
    EXIT.fresh_child = fresh_child
    if EXIT.hooks_pid == 0:  # first use in this interpreter (fork children inherit what follows)
        atexit.register(_flush_all)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(
                before=_before_fork,
                after_in_parent=_after_fork_in_parent,
                after_in_child=_after_fork_in_child,
            )
    EXIT.hooks_pid = os.getpid()
    _rearm()
    _install_sigterm_handler()
    if _started_by_multiprocessing():
        EXIT.is_child = True
    if EXIT.is_child:
        _start_kicker()


def _started_by_multiprocessing() -> bool:
    """A spawn child (its command line carries multiprocessing's marker, also while it
    imports the main module, before it knows its parent) or any running child."""
    if "--multiprocessing-fork" in getattr(sys, "orig_argv", ()):
        return True
    mp = sys.modules.get("multiprocessing")
    return mp is not None and mp.parent_process() is not None
