"""Running one case of a program: a controlled environment, pinned stdin, a hard timeout.

A pin is only worth something if the run it freezes can be repeated, so a
case never sees the user's shell:

* **Environment.** The child gets a minimal documented base (:data:`ENV_BASE`:
  a fixed locale ``LC_ALL=LANG=C.UTF-8``, ``TZ=UTC`` and ``PYTHONHASHSEED=0`` so
  a legacy script that prints a set of strings prints it in one order), the
  value of ``PATH`` inherited (:data:`ENV_INHERIT`, so programs are found), and
  the case's own keys.  Nothing else leaks in (lockstep adds no marker of its
  own either).  The base is written into the oracle file, so a replay uses
  exactly the environment the freeze used.
* **stdin** is the pinned bytes, or empty: never the terminal.
* **Large output.** stdout and stderr are spooled to anonymous temporary files
  rather than pipes: no pipe can fill and deadlock, and a killed run's partial
  output is simply what the files hold.  Each stream has a cap
  (:data:`DEFAULT_OUTPUT_CAP`, 32 MiB, or ``max_output`` of a ``[[pins]]``
  table): a case whose stdout or stderr grows past it is killed, the result
  says which stream (:attr:`RunResult.truncated_stream`) and holds the first
  ``cap`` bytes.  Sizes are checked while the case runs (at most every 25 ms),
  and lockstep never reads more than the cap, so its memory is bounded by the
  cap, not by the output.

**The process tree is the case.**  Everything a case starts belongs to it, and
nothing outlives it:

* Each case runs in a new session (its own process group).  At the timeout, or
  past the output cap, the whole tree is killed — the group, and every
  descendant, including ones that left the group or session with ``setsid`` or
  ``setpgid``; the output produced so far is returned.
* When the main process exits normally, descendants it left running are killed
  too, and counted (:attr:`RunResult.leftovers`, with a note).
* To find descendants that left the session and whose parent died, lockstep
  makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux)
  while any case runs: such orphans are re-parented to lockstep instead of to
  init, so they stay findable, and lockstep reaps them.  Cases run in parallel
  threads (:func:`lockstep.parallel.run_parallel`) share the one lockstep
  process, so each orphan is attributed to its case: by having been seen in that
  case's tree (the tree of each running case is walked through
  ``/proc/PID/task/*/children`` every few milliseconds), by its session or
  process group (a descendant that did not call ``setsid`` keeps the case's), or
  by its environment (``/proc/PID/environ`` holding exactly one running case's
  keys).  An orphan none of those places is killed when the last case that
  was running when it appeared has finished: late rather than early, never one
  case's process killed while its own case still runs.  lockstep never kills or
  reaps a process it cannot attribute to a case (one that is in lockstep's own
  session, or older than every running case).  One limit: a child that other
  code in lockstep's own process starts in a *new session* while a case runs
  (another thread of a test run) looks like an orphan of that case.  Mains are
  started one at a time (under the tracker's lock), so a main just started is
  never taken for an orphan.
* Fallbacks: without the ``children`` files (a kernel built without them),
  trees are not walked while cases run; orphans re-parented to lockstep are
  found by scanning ``/proc`` when a case ends.  Where ``prctl`` is refused,
  orphans go to init and are found by scanning ``/proc`` for the sessions and
  processes seen in the case's tree (a descendant that left the session before
  it was seen survives).  Where there is no ``/proc`` (not Linux), only the
  case's process group is killed — a descendant that left it survives.

A command whose first word is ``python`` or ``python3`` runs under the
interpreter that runs lockstep, so a pin does not depend on which Python
happens to be first on ``PATH`` (and the oracle still reads ``python``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final, Protocol

from lockstep.errors import TargetError

ENV_BASE: Final[Mapping[str, str]] = {
    "LC_ALL": "C.UTF-8",
    "LANG": "C.UTF-8",
    "TZ": "UTC",
    "PYTHONHASHSEED": "0",
}
"""Fixed keys every case runs with (recorded in the oracle file)."""

ENV_INHERIT: Final[tuple[str, ...]] = ("PATH",)
"""Keys whose value is taken from lockstep's own environment (only so programs are found)."""

PYTHON_NAMES: Final = frozenset({"python", "python3"})

DEFAULT_OUTPUT_CAP: Final = 32 * 1024 * 1024
"""Bytes kept of each of stdout and stderr; a case writing more is killed (``max_output``)."""

_POLL_FIRST: Final = 0.002
_POLL_MAX: Final = 0.025
_CLEANUP_SECONDS: Final = 5.0


def format_size(n: int) -> str:
    """``33554432`` → ``"32 MiB"``: a byte count as the user would write it."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


@dataclass(frozen=True)
class RunResult:
    """What one run of a program produced."""

    exit_code: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    seconds: float = 0.0
    truncated_stream: str | None = None
    """``"stdout"`` or ``"stderr"`` when that stream passed the cap and the case was killed."""
    output_cap: int = DEFAULT_OUTPUT_CAP
    """The per-stream cap this run had (bytes)."""
    leftovers: int = 0
    """Descendants still running after the main process exited normally, killed then."""

    @property
    def killed_note(self) -> str:
        """Why lockstep killed the case, if it did: the timeout or the output cap."""
        if self.timed_out:
            return "killed at the timeout; output is what it had produced so far"
        if self.truncated_stream:
            return (
                f"{self.truncated_stream} exceeded the {format_size(self.output_cap)} cap; "
                "the case was killed there and its output cut at the cap"
            )
        return ""

    @property
    def leftover_note(self) -> str:
        """A note on the processes the case left running, if any."""
        if not self.leftovers:
            return ""
        n = self.leftovers
        return (
            f"killed {n} process{'' if n == 1 else 'es'} the case left running "
            "after it exited (a case is its whole process tree)"
        )


def build_env(
    case_env: Mapping[str, str],
    *,
    base: Mapping[str, str] = ENV_BASE,
    inherit: Sequence[str] = ENV_INHERIT,
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The complete environment of one run: base, inherited keys, then the case's keys."""
    source = os.environ if source is None else source
    env = dict(base)
    for key in inherit:
        if key in source:
            env[key] = source[key]
    env.update(case_env)
    return env


def resolve_argv(argv: Sequence[str]) -> list[str]:
    """``python``/``python3`` as the first word means the interpreter running lockstep."""
    if not argv:
        raise TargetError("empty command: give the program to run")
    if argv[0] in PYTHON_NAMES:
        return [sys.executable, *argv[1:]]
    return list(argv)


def is_python(argv: Sequence[str]) -> bool:
    """Whether ``argv`` starts a Python interpreter (env discovery only works for those)."""
    if not argv:
        return False
    name = Path(argv[0]).name
    return argv[0] in PYTHON_NAMES or name.startswith("python") or argv[0] == sys.executable


def _kill_group(pgid: int) -> None:
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
class _Case:
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


class _Tracker:
    """The running cases of this process and the orphans re-parented to it.

    One per process (reset in a forked child).  Its lock is held while a case's
    main process is started, so no other thread ever mistakes a just-started main
    for an orphan.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cases: list[_Case] = []
        self.pending: dict[tuple[int, int], list[_Case]] = {}
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

    def register(self, pid: int, env: Mapping[str, str]) -> _Case | None:
        """Called with :attr:`lock` held, right after the main process started."""
        if not self.proc:
            return None
        me = _read_proc(pid)
        start = me.start if me is not None else 0
        entries = frozenset(f"{k}={v}".encode() for k, v in env.items())
        case = _Case(pid, start, entries, members={(pid, start)}, sessions={pid})
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

    def _place(self, p: _Proc) -> _Case | list[_Case] | None:
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

    def _adopt(self, case: _Case, procs: Iterable[_Proc]) -> None:
        for p in procs:
            case.members.add(p.key)
            case.sessions.add(p.sid)
            case.sessions.add(p.pgid)

    def observe(self, case: _Case) -> None:
        """While a case runs: remember its tree, and place any new orphan."""
        if not self.children_files:
            return  # walking trees would scan all of /proc: sessions are found at the end
        with self.lock:
            self._adopt(case, self._tree([case.main]))
            if not self.subreaper:
                return  # orphans went to init: found by session when the case finishes
            for p in self._orphans():
                owner = self._place(p)
                if isinstance(owner, _Case):
                    self._adopt(owner, self._tree([p.pid]))

    def kill_tree(self, case: _Case) -> None:
        """At the timeout or the cap: SIGKILL the main process and all it started."""
        with self.lock:
            procs = self._tree([case.main])
            self._adopt(case, procs)
        for p in procs:
            if not p.dead:
                _signal(p)

    def _round(self, case: _Case) -> tuple[list[_Proc], list[_Proc], bool]:
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

    def finish(self, case: _Case, *, main_exited: bool) -> int:
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

    def close(self, case: _Case | None) -> None:
        with self.lock:
            if case is not None and case in self.cases:
                self.cases.remove(case)
            self.end()


_TRACKER = _Tracker()


def _reset_tracker_in_child() -> None:
    global _TRACKER
    _TRACKER = _Tracker()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_tracker_in_child)


# ---------------------------------------------------------------- waiting


class MainProcess(Protocol):
    """A case's main process however it was started: a fresh ``Popen``, or a warm fork."""

    @property
    def pid(self) -> int: ...

    def exited(self, seconds: float) -> bool:
        """Wait up to ``seconds``; True once the process has exited (not reaped yet)."""
        ...

    def wait(self) -> int:
        """Reap it; its exit code (negative: killed by that signal)."""
        ...

    def close(self) -> None: ...


Starter = Callable[
    [list[str], Path, Mapping[str, str], "IO[bytes] | int", IO[bytes], IO[bytes]], MainProcess
]
"""Starts ``(command, cwd, env, stdin, stdout, stderr)`` as a case's main process."""


class _PopenMain:
    """A fresh process: waited for through a pidfd where there is one, else ``waitid``."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.waiter = _Waiter(proc)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def exited(self, seconds: float) -> bool:
        return self.waiter.wait(seconds)

    def wait(self) -> int:
        return self.proc.wait()

    def close(self) -> None:
        self.waiter.close()


class _Waiter:
    """Wait for the main process's exit in slices, without polling where a pidfd exists."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.fd = -1
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None:
            with contextlib.suppress(OSError):
                self.fd = pidfd_open(proc.pid)

    def wait(self, seconds: float) -> bool:
        """True once the main process has exited (it is not reaped here)."""
        if self.fd >= 0:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, seconds))
            return bool(ready)
        end = time.monotonic() + seconds
        while True:
            with contextlib.suppress(ChildProcessError):
                flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
                if os.waitid(os.P_PID, self.proc.pid, flags) is not None:
                    return True
            if time.monotonic() >= end:
                return False
            time.sleep(min(0.005, max(0.0, end - time.monotonic())))

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _watch(
    proc: MainProcess,
    case: _Case | None,
    tracker: _Tracker,
    streams: Sequence[tuple[str, IO[bytes]]],
    deadline: float,
    cap: int,
) -> tuple[bool, str | None]:
    """Wait for the main process to exit, the deadline, or a stream past the cap.

    Returns ``(timed_out, truncated stream)``.  Between slices of waiting, the
    case's process tree is noted (so its orphans can be told apart later).
    """
    pause = _POLL_FIRST
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return True, None
        if proc.exited(min(pause, left)):
            return False, _over_cap(streams, cap)
        pause = min(pause * 2, _POLL_MAX)
        if case is not None:
            tracker.observe(case)
        truncated = _over_cap(streams, cap)
        if truncated:
            return False, truncated


def _end(proc: MainProcess, case: _Case | None, tracker: _Tracker, *, killed: bool) -> int:
    """Kill what must go (everything if ``killed``, else what outlived the main process).

    Returns how many processes outlived a main process that exited by itself.
    """
    if killed:
        if case is not None:
            tracker.kill_tree(case)
        _kill_group(proc.pid)
    if case is None:
        return 0
    return tracker.finish(case, main_exited=not killed)


def _over_cap(streams: Iterable[tuple[str, IO[bytes]]], cap: int) -> str | None:
    for name, fh in streams:
        if os.fstat(fh.fileno()).st_size > cap:
            return name
    return None


def _read_capped(fh: IO[bytes], cap: int) -> bytes:
    fh.seek(0)
    return fh.read(cap)


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    stdin: bytes = b"",
    cwd: Path,
    timeout: float,
    max_output: int = DEFAULT_OUTPUT_CAP,
    starter: Starter | None = None,
) -> RunResult:
    """Run ``argv`` once in ``cwd`` with exactly ``env``; never raises for the program's failures.

    The case is its whole process tree: at the timeout, past ``max_output`` bytes on
    stdout or stderr, or when the main process exits, nothing it started is left
    running (see the module docstring).

    A program that cannot be started at all (not found, not executable) raises
    :class:`~lockstep.errors.TargetError`: that is a configuration problem, not
    behaviour to pin.  ``starter`` starts the main process another way (a warm
    fork, :mod:`lockstep.oracles.pins.warm`); watching, caps and cleanup are the same.
    """
    command = resolve_argv(argv)
    started = time.monotonic()
    tracker = _TRACKER
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(tempfile.TemporaryFile(prefix="lockstep-out-"))
        err = stack.enter_context(tempfile.TemporaryFile(prefix="lockstep-err-"))
        stdin_file: IO[bytes] | int = subprocess.DEVNULL
        if stdin:
            stdin_file = stack.enter_context(tempfile.TemporaryFile(prefix="lockstep-in-"))
            stdin_file.write(stdin)
            stdin_file.seek(0)
        with tracker.lock:
            tracker.begin()
            try:
                if starter is None:
                    proc: MainProcess = _PopenMain(
                        _start(command, argv, cwd, env, stdin_file, out, err)
                    )
                else:
                    proc = starter(command, cwd, env, stdin_file, out, err)
                case = tracker.register(proc.pid, env)
            except BaseException:
                tracker.end()
                raise
        stack.callback(proc.close)
        try:
            streams = (("stdout", out), ("stderr", err))
            timed_out, truncated = _watch(
                proc, case, tracker, streams, started + timeout, max_output
            )
            leftovers = _end(proc, case, tracker, killed=timed_out or truncated is not None)
            # Whatever is left in its group goes too (while the main, a zombie until
            # waited for, keeps its pid and so its group id from being reused).
            _kill_group(proc.pid)
            code = proc.wait()
        except BaseException:
            with contextlib.suppress(Exception):
                _end(proc, case, tracker, killed=True)
            _kill_group(proc.pid)
            proc.wait()
            raise
        finally:
            tracker.close(case)
        return RunResult(
            exit_code=code,
            stdout=_read_capped(out, max_output),
            stderr=_read_capped(err, max_output),
            timed_out=timed_out,
            seconds=time.monotonic() - started,
            truncated_stream=truncated,
            output_cap=max_output,
            leftovers=leftovers,
        )


def _start(
    command: list[str],
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    stdin_file: IO[bytes] | int,
    out: IO[bytes],
    err: IO[bytes],
) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            command,
            cwd=cwd,
            env=dict(env),
            stdin=stdin_file,
            stdout=out,
            stderr=err,
            start_new_session=True,
            close_fds=True,
        )
    except FileNotFoundError:
        if not cwd.is_dir():
            raise TargetError(f"working folder {cwd} does not exist") from None
        raise TargetError(f"program {argv[0]!r} not found (command: {' '.join(argv)})") from None
    except PermissionError:
        raise TargetError(f"program {argv[0]!r} is not executable") from None
    except OSError as e:
        raise TargetError(f"program {argv[0]!r} cannot be started: {e.strerror}") from None
