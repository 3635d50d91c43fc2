"""Running one case of a program: a controlled environment, pinned stdin, a hard timeout.

A pin is only worth something if the run it freezes can be repeated, so a
case never sees the user's shell:

* **Environment.** The child gets a minimal documented base (:data:`ENV_BASE`:
  a fixed locale ``LC_ALL=LANG=C.UTF-8``, ``TZ=UTC`` and ``PYTHONHASHSEED=0`` so
  a legacy script that prints a set of strings prints it in one order), the
  value of ``PATH`` inherited (:data:`ENV_INHERIT`, so programs are found), and
  the case's own keys.  Nothing else leaks in.  The base is written into the
  oracle file, so a replay uses exactly the environment the freeze used.
* **stdin** is the pinned bytes, or empty: never the terminal.
* **Timeout.** Each case runs in a new session (its own process group).  At
  the timeout the *whole group* is killed (children and grandchildren too), and
  the output produced so far is returned.  After a normal exit the group is
  killed as well, so a program that left a background child behind does not
  leave it running.
* **Large output.** stdout and stderr are spooled to anonymous temporary files
  rather than pipes: no pipe can fill and deadlock, nothing is held twice in
  memory while the child runs, and a killed run's partial output is simply
  what the files hold.

A command whose first word is ``python`` or ``python3`` runs under the
interpreter that runs lockstep, so a pin does not depend on which Python
happens to be first on ``PATH`` (and the oracle still reads ``python``).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

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


@dataclass(frozen=True)
class RunResult:
    """What one run of a program produced."""

    exit_code: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    seconds: float = 0.0

    @property
    def killed_note(self) -> str:
        return (
            "killed at the timeout; output is what it had produced so far" if self.timed_out else ""
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


def _read_all(fh: IO[bytes]) -> bytes:
    fh.seek(0)
    return fh.read()


def _wait_for_exit(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Block until ``proc`` exits (True) or ``timeout`` passes (False), without polling.

    ``Popen.wait(timeout=...)`` polls with sleeps of up to 50 ms, which on a 20 ms
    program is a large share of what a pin costs.  A pidfd (Linux) becomes readable
    the moment the child exits; elsewhere a timer thread stands in for it.
    """
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is not None:
        try:
            fd = pidfd_open(proc.pid)
        except OSError:
            fd = -1
        if fd >= 0:
            try:
                ready, _, _ = select.select([fd], [], [], timeout)
                return bool(ready)
            finally:
                os.close(fd)
    done = threading.Event()
    timer = threading.Timer(timeout, done.set)
    timer.daemon = True
    timer.start()
    try:
        while not done.is_set():
            if proc.poll() is not None:
                return True
            done.wait(0.005)
        return proc.poll() is not None
    finally:
        timer.cancel()


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    stdin: bytes = b"",
    cwd: Path,
    timeout: float,
) -> RunResult:
    """Run ``argv`` once in ``cwd`` with exactly ``env``; never raises for the program's failures.

    A program that cannot be started at all (not found, not executable) raises
    :class:`~lockstep.errors.TargetError`: that is a configuration problem, not
    behaviour to pin.
    """
    command = resolve_argv(argv)
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(tempfile.TemporaryFile(prefix="lockstep-out-"))
        err = stack.enter_context(tempfile.TemporaryFile(prefix="lockstep-err-"))
        stdin_file: IO[bytes] | int = subprocess.DEVNULL
        if stdin:
            stdin_file = stack.enter_context(tempfile.TemporaryFile(prefix="lockstep-in-"))
            stdin_file.write(stdin)
            stdin_file.seek(0)
        try:
            proc = subprocess.Popen(
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
            raise TargetError(
                f"program {argv[0]!r} not found (command: {' '.join(argv)})"
            ) from None
        except PermissionError:
            raise TargetError(f"program {argv[0]!r} is not executable") from None
        except OSError as e:
            raise TargetError(f"program {argv[0]!r} cannot be started: {e.strerror}") from None
        try:
            timed_out = not _wait_for_exit(proc, timeout)
            if timed_out:
                _kill_group(proc.pid)
            code = proc.wait()
        except BaseException:
            _kill_group(proc.pid)
            proc.wait()
            raise
        # Whatever the program left running in its group goes too: no process left behind.
        _kill_group(proc.pid)
        return RunResult(
            exit_code=code,
            stdout=_read_all(out),
            stderr=_read_all(err),
            timed_out=timed_out,
            seconds=time.monotonic() - started,
        )
