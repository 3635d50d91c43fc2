"""The process tree of each running case: found through ``/proc``, orphans attributed to
their case with the child subreaper, everything killed and reaped when the case ends
(see :mod:`lockstep.process`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

_CLEANUP_SECONDS: Final = 5.0


def kill_group(pgid: int) -> None:
    """SIGKILL the process group ``pgid``, if it is still there."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


# ---------------------------------------------------------------- /proc


@dataclass(frozen=True)
class _Proc:
    """One process as ``/proc/PID/stat`` shows it; ``(pid, start)`` names it across pid reuse."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    start: int

    @property
    def key(self) -> tuple[int, int]:
        return (self.pid, self.start)

    @property
    def dead(self) -> bool:
        return self.state in "ZXx"


_PROC: Final = Path("/proc")


def _read_proc(pid: int) -> _Proc | None:
    try:
        raw = (_PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    rest = raw[raw.rfind(b")") + 2 :].split()
    try:
        return _Proc(pid, int(rest[1]), int(rest[2]), int(rest[3]), rest[0].decode(), int(rest[19]))
    except (IndexError, ValueError):
        return None


def _has_children_files() -> bool:
    return (_PROC / "self" / "task" / str(threading.get_native_id()) / "children").exists()


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (every thread's), from ``/proc/PID/task/*/children``."""
    found: list[int] = []
    try:
        tasks = os.listdir(_PROC / str(pid) / "task")
    except OSError:
        return found
    for tid in tasks:
        try:
            text = (_PROC / str(pid) / "task" / tid / "children").read_bytes()
        except OSError:
            continue
        found.extend(int(p) for p in text.split())
    return found


def _all_procs() -> list[_Proc]:
    """Every process visible in ``/proc`` (the fallback when the children files are missing)."""
    out = []
    with contextlib.suppress(OSError):
        for name in os.listdir(_PROC):
            if name.isdigit() and (p := _read_proc(int(name))) is not None:
                out.append(p)
    return out


def _environ(pid: int) -> frozenset[bytes] | None:
    try:
        raw = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return None
    return frozenset(raw.split(b"\0")) if raw else None


def _signal(proc: _Proc) -> bool:
    """SIGKILL ``proc`` if that very process (same start time) still runs; True if signalled.

    Through a pidfd where there is one, so a pid reused between the check and the
    signal is never hit; else ``kill`` right after checking the start time.
    """
    pidfd_open = getattr(os, "pidfd_open", None)
    fd = -1
    if pidfd_open is not None:
        try:
            fd = pidfd_open(proc.pid)
        except ProcessLookupError:
            return False
        except OSError:
            fd = -1  # an old kernel: fall back to kill
    try:
        now = _read_proc(proc.pid)
        if now is None or now.start != proc.start or now.dead:
            return False
        if fd >= 0:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        else:
            os.kill(proc.pid, signal.SIGKILL)
        return True
    except OSError:
        return False
    finally:
        if fd >= 0:
            os.close(fd)


def _reap(pid: int) -> None:
    """Collect the exit status of a zombie child lockstep inherited (never a Popen child)."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


# ---------------------------------------------------------------- the tracker


def _libc_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


_PR_SET_CHILD_SUBREAPER: Final = 36


@dataclass(eq=False)
class TrackedCase:
    """One running case: its main process and everything known to belong to it."""

    main: int
    start: int
    env: frozenset[bytes]
    members: set[tuple[int, int]] = field(default_factory=set)
    sessions: set[int] = field(default_factory=set)
    finished: bool = False

    def owns(self, p: _Proc) -> bool:
        return p.key in self.members or (
            p.start >= self.start and (p.sid in self.sessions or p.pgid in self.sessions)
        )


class Tracker:
    """The running cases of this process and the orphans re-parented to it.

    One per process (reset in a forked child).  Its lock is held while a case's
    main process is started, so no other thread ever mistakes a just-started main
    for an orphan.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cases: list[TrackedCase] = []
        self.pending: dict[tuple[int, int], list[TrackedCase]] = {}
        self.foreign: set[tuple[int, int]] = set()
        self.users = 0
        self.subreaper = False
        self.proc = _PROC.joinpath("self", "stat").exists()
        self.children_files = self.proc and _has_children_files()
        self._prctl = _libc_prctl() if self.proc else None

    # -- the subreaper, on while any case runs

    def begin(self) -> None:
        """Called with :attr:`lock` held, before a case starts."""
        self.users += 1
        if self.users == 1 and self._prctl is not None:
            self.subreaper = self._prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        if self.subreaper and self.children_files:
            # Whatever lockstep has as children before the next main starts is not that
            # case's: place it among the cases already running (none: it is no case's).
            for p in self._orphans():
                self._place(p)

    def end(self) -> None:
        """Called with :attr:`lock` held, after a case is finished (or failed to start)."""
        self.users -= 1
        if self.users == 0:
            if self.subreaper and self._prctl is not None:
                self._prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
            self.subreaper = False
            self.pending.clear()
            self.foreign.clear()

    def register(self, pid: int, env: Mapping[str, str]) -> TrackedCase | None:
        """Called with :attr:`lock` held, right after the main process started."""
        if not self.proc:
            return None
        me = _read_proc(pid)
        start = me.start if me is not None else 0
        entries = frozenset(f"{k}={v}".encode() for k, v in env.items())
        case = TrackedCase(pid, start, entries, members={(pid, start)}, sessions={pid})
        self.cases.append(case)
        return case

    # -- walking trees

    def _tree(self, roots: Iterable[int]) -> list[_Proc]:
        """``roots`` and all their descendants (only the living are followed further)."""
        seen: dict[int, _Proc] = {}
        stack = list(roots)
        table: dict[int, list[int]] | None = None
        while stack:
            pid = stack.pop()
            if pid in seen:
                continue
            p = _read_proc(pid)
            if p is None:
                continue
            seen[pid] = p
            if self.children_files:
                stack.extend(_children(pid))
            else:
                if table is None:
                    table = {}
                    for q in _all_procs():
                        table.setdefault(q.ppid, []).append(q.pid)
                stack.extend(table.get(pid, []))
        return list(seen.values())

    def _orphans(self) -> list[_Proc]:
        """Processes re-parented to lockstep (or, without the subreaper, anywhere) not yet placed."""
        mains = {c.main for c in self.cases}
        own_sid = os.getsid(0)
        if self.subreaper and self.children_files:
            candidates = [p for p in map(_read_proc, _children(os.getpid())) if p is not None]
        else:
            candidates = _all_procs()
        return [
            p
            for p in candidates
            if p.pid not in mains and p.sid != own_sid and p.key not in self.foreign
        ]

    def _place(self, p: _Proc) -> TrackedCase | list[TrackedCase] | None:
        """Whose orphan ``p`` is: one case, several candidates (pending), or none (foreign)."""
        for case in self.cases:
            if case.owns(p):
                return case
        if not self.subreaper or p.ppid != os.getpid():
            return None  # only an orphan re-parented to lockstep can be a case's by elimination
        if p.key in self.pending:
            return self.pending[p.key]
        # Every case still registered (a finishing one too: its cleanup is what orphans most).
        candidates = [c for c in self.cases if c.start <= p.start]
        if len(candidates) > 1:
            env = _environ(p.pid)
            if env is not None:
                matching = [c for c in candidates if c.env <= env]
                candidates = matching or candidates
        if not candidates:
            self.foreign.add(p.key)
            return None
        if len(candidates) == 1:
            self._adopt(candidates[0], [p])
            return candidates[0]
        self.pending[p.key] = candidates
        return candidates

    def _adopt(self, case: TrackedCase, procs: Iterable[_Proc]) -> None:
        for p in procs:
            case.members.add(p.key)
            case.sessions.add(p.sid)
            case.sessions.add(p.pgid)

    def observe(self, case: TrackedCase) -> None:
        """While a case runs: remember its tree, and place any new orphan."""
        if not self.children_files:
            return  # walking trees would scan all of /proc: sessions are found at the end
        with self.lock:
            self._adopt(case, self._tree([case.main]))
            if not self.subreaper:
                return  # orphans went to init: found by session when the case finishes
            for p in self._orphans():
                owner = self._place(p)
                if isinstance(owner, TrackedCase):
                    self._adopt(owner, self._tree([p.pid]))

    def kill_tree(self, case: TrackedCase) -> None:
        """At the timeout or the cap: SIGKILL the main process and all it started."""
        with self.lock:
            procs = self._tree([case.main])
            self._adopt(case, procs)
        for p in procs:
            if not p.dead:
                _signal(p)

    def _round(self, case: TrackedCase) -> tuple[list[_Proc], list[_Proc], bool]:
        """One look at what is left of ``case``: alive, zombies to reap, whether main runs."""
        with self.lock:
            roots = [case.main]
            for p in self._orphans():
                owner = self._place(p)
                if owner is case or (isinstance(owner, list) and all(c.finished for c in owner)):
                    self.pending.pop(p.key, None)
                    roots.append(p.pid)
            procs = self._tree(roots)
            self._adopt(case, procs)
        me = os.getpid()
        alive = [p for p in procs if p.pid != case.main and not p.dead]
        zombies = [p for p in procs if p.pid != case.main and p.dead and p.ppid == me]
        main_runs = any(p.pid == case.main and not p.dead for p in procs)
        return alive, zombies, main_runs

    def finish(self, case: TrackedCase, *, main_exited: bool) -> int:
        """Kill and reap what the case left running; returns how many were still alive."""
        with self.lock:
            case.finished = True
        killed: set[tuple[int, int]] = set()
        deadline = time.monotonic() + _CLEANUP_SECONDS
        pause = 0.0005
        while True:
            alive, zombies, main_runs = self._round(case)
            for p in alive:
                if _signal(p) or p.key in killed:
                    killed.add(p.key)
            for p in zombies:
                _reap(p.pid)
            # A killed main still dying keeps its children until it is gone: wait for it.
            if not alive and not zombies and not main_runs:
                break
            if time.monotonic() > deadline:
                break
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
        return len(killed) if main_exited else 0

    def close(self, case: TrackedCase | None) -> None:
        with self.lock:
            if case is not None and case in self.cases:
                self.cases.remove(case)
            self.end()


_TRACKER = Tracker()


def _reset_tracker_in_child() -> None:
    global _TRACKER
    _TRACKER = Tracker()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_tracker_in_child)


def current_tracker() -> Tracker:
    """This process's tracker (a forked child gets a fresh one)."""
    return _TRACKER
