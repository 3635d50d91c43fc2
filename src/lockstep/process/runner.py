"""Running one case: spooled and capped output, a hard timeout, the main process watched
until it exits and its tree cleaned up (see :mod:`lockstep.process`).
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final, Protocol

from lockstep.cancel import Cancelled, cancelled, check
from lockstep.config import DEFAULT_MAX_OUTPUT
from lockstep.errors import TargetError
from lockstep.process.env import resolve_argv
from lockstep.process.tracker import TrackedCase, Tracker, current_tracker, kill_group

DEFAULT_OUTPUT_CAP: Final = DEFAULT_MAX_OUTPUT
"""Bytes kept of each of stdout and stderr; a case writing more is killed (the default of a
``[[pins]]`` table's ``max_output``)."""

_POLL_FIRST: Final = 0.002
_POLL_MAX: Final = 0.025


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
    case: TrackedCase | None,
    tracker: Tracker,
    streams: Sequence[tuple[str, IO[bytes]]],
    deadline: float,
    cap: int,
) -> tuple[bool, str | None]:
    """Wait for the main process to exit, the deadline, or a stream past the cap.

    Returns ``(timed_out, truncated stream)``; a cancelled run (:mod:`.cancel`) stops
    waiting as a timeout does.  Between slices of waiting, the case's process tree is
    noted (so its orphans can be told apart later).
    """
    pause = _POLL_FIRST
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or cancelled():
            return True, None
        if proc.exited(min(pause, left)):
            return False, _over_cap(streams, cap)
        pause = min(pause * 2, _POLL_MAX)
        if case is not None:
            tracker.observe(case)
        truncated = _over_cap(streams, cap)
        if truncated:
            return False, truncated


def _end(proc: MainProcess, case: TrackedCase | None, tracker: Tracker, *, killed: bool) -> int:
    """Kill what must go (everything if ``killed``, else what outlived the main process).

    Returns how many processes outlived a main process that exited by itself.
    """
    if killed:
        if case is not None:
            tracker.kill_tree(case)
        kill_group(proc.pid)
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
    running (see :mod:`lockstep.process`).

    A program that cannot be started at all (not found, not executable) raises
    :class:`~lockstep.errors.TargetError`: that is a configuration problem, not
    behaviour to pin.  ``starter`` starts the main process another way (a warm
    fork, :mod:`lockstep.oracles.pins.warm`); watching, caps and cleanup are the same.

    Once the run is cancelled (SIGTERM, Ctrl-C: :mod:`lockstep.cancel`) no case
    starts, and a running one is killed with its whole tree within one slice of
    waiting; both raise :class:`~lockstep.cancel.Cancelled`.
    """
    check()
    command = resolve_argv(argv)
    started = time.monotonic()
    tracker = current_tracker()
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
            kill_group(proc.pid)
            code = proc.wait()
        except BaseException:
            with contextlib.suppress(Exception):
                _end(proc, case, tracker, killed=True)
            kill_group(proc.pid)
            proc.wait()
            raise
        finally:
            tracker.close(case)
        if cancelled():
            raise Cancelled
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
