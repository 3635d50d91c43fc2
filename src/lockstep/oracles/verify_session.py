"""One verifying interpreter for a whole recording session, not one per ledger.

Every recorded ledger is replayed in a fresh interpreter with another hash seed before it
is written (:mod:`lockstep.oracles.verify`).  Started once per ledger, that interpreter's
start and imports were most of what recording under a suite added to the suite: ten
ledgers, ten starts.  A :class:`VerifySession` starts it once per run (a pytest session
recording ledgers, a ``lockstep record`` run) and hands it each ledger's candidate in turn.

**No state carries from one ledger to the next.**  The session's interpreter (the
*server*) imports lockstep and its replay machinery, then never imports a target nor
replays a row itself: for each candidate it forks, and the fork replays that one ledger
and ends.  So every ledger is verified in a copy of the same pristine process -- a module
global that verifying ledger A changed, a cache it filled, a thread it started, exists
only in A's fork, and ledger B's fork starts from the server as it was before A.  Each
fork is what a fresh ``python -m lockstep.cli.verify_child`` would have been at the point
where it starts to replay (same executable, working directory, environment, hash seed and
``sys.path``), so every verdict, refusal and cause is the one a separate interpreter
would have given.  The order of the ledgers does not matter, and no target's modules need
to be compared with another's.

The protocol, on the server's pipes: the parent writes one JSON line per candidate (the
child's command-line arguments and its timeout); the fork writes the child's verdict lines
to stdout (what the replayed code prints goes to its stderr, a scratch file); the server
then writes an end line carrying the fork's exit code and the last line of its stderr
(or that it killed the fork at the timeout), tagged with a token only this session knows,
so nothing a target prints is taken for it.  The server and its forks stay in the
recording's process group: a Ctrl-C or a ``kill`` of the job reaches them as it reached a
per-ledger interpreter.

Where ``os.fork`` does not exist, or the candidate needs another environment (a
``@record_io`` candidate names its target on the command line and adds to the
environment), :func:`~lockstep.oracles.verify.verify` starts an interpreter per candidate
as before.  A server is started again when the environment changed since it started
(a verdict must not depend on when the server started).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import select
import selectors
import signal
import sys
import tempfile
import threading
import time
import traceback  # here, not in each fork that would import it again
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final

from lockstep.oracles import CHILD_MODULE
from lockstep.oracles.verify_zone import verifying_env

if TYPE_CHECKING:
    import subprocess

_ACTIVE: Final[ContextVar[VerifySession | None]] = ContextVar(
    "lockstep_verify_session", default=None
)
"""The session :func:`~lockstep.oracles.verify.verify` hands its candidates to, if any."""

SERVER_GRACE: Final = 30.0
"""Seconds past a candidate's timeout before the parent gives up on the server itself (the
server ends a fork at the timeout and says so)."""

END_KEY: Final = "lockstep-verify-end"
"""The key of the server's end line (its value is the session's token)."""


class SessionError(Exception):
    """The server could not replay a candidate: it died, or took longer than allowed."""

    def __init__(self, tail: str, *, timed_out: bool = False) -> None:
        super().__init__(tail)
        self.tail = tail
        self.timed_out = timed_out


@dataclass(frozen=True)
class Replayed:
    """What one fork wrote: its stdout (verdict lines), exit code, last stderr line."""

    stdout: bytes
    code: int
    tail: str


def forks() -> bool:
    """Whether this platform can verify candidates in forks of one interpreter."""
    return hasattr(os, "fork") and sys.platform != "win32"


def fresh_interpreter_env(seed: int, second_zone: bool = False) -> dict[str, str]:
    """What a verifying interpreter's environment sets over the recording's: another hash
    seed, no bytecode written, another local time zone (:mod:`.verify_zone`)."""
    return {
        "PYTHONHASHSEED": str(seed),
        "PYTHONDONTWRITEBYTECODE": "1",
        **verifying_env(second_zone),
    }


def _environment() -> dict[str, str]:
    return dict(os.environ)


@dataclass
class _Server:
    proc: subprocess.Popen[bytes]
    stderr: IO[bytes]
    env: dict[str, str]
    """``os.environ`` when the server started (a changed one starts a new server)."""

    def stop(self) -> None:
        """End the server (closing its stdin ends its loop); kill it if it lingers."""
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except Exception:
            self.kill()
        with contextlib.suppress(OSError):
            if self.proc.stdout is not None:
                self.proc.stdout.close()
        self.stderr.close()

    def kill(self) -> None:
        """The server (its fork, if any, is ended by the server's own deadline)."""
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)

    def stderr_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.stderr.seek(0)
            lines = self.stderr.read().decode("utf-8", "replace").strip().splitlines()
            return lines[-1] if lines else ""
        return ""


@dataclass
class VerifySession:
    """The verifying interpreters of one recording run: one per hash seed (and zone), started
    once each.

    Use as ``with session.active(): ...``; :meth:`close` ends the interpreters.
    """

    root: Path
    token: str = field(default_factory=lambda: secrets.token_hex(8))
    _servers: dict[tuple[int, bool], _Server] = field(default_factory=dict)
    """By hash seed, and whether in the second verifying zone."""
    starts: int = 0
    """Interpreters started (a figure for the benchmark and the tests)."""
    forked: int = 0
    """Candidates replayed in a fork."""

    def __post_init__(self) -> None:
        self.root = self.root.resolve()

    def serves(self, root: Path) -> bool:
        """True when a candidate of the project at ``root`` can be verified here."""
        return forks() and root.resolve() == self.root

    def start(self, seed: int) -> None:
        """Start the interpreter for ``seed`` now, so its start overlaps the recording."""
        if forks():
            self._server((seed, False))

    def _server(self, key: tuple[int, bool]) -> _Server:
        server = self._servers.get(key)
        env = _environment()
        if server is not None and (server.proc.poll() is not None or server.env != env):
            server.stop()
            server = None
        if server is None:
            server = self._spawn(key, env)
            self._servers[key] = server
        return server

    def _spawn(self, key: tuple[int, bool], env: dict[str, str]) -> _Server:
        import subprocess

        child_env = {**env, **fresh_interpreter_env(*key)}
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _Server.stop
        proc = subprocess.Popen(
            [sys.executable, "-m", CHILD_MODULE, "--serve", self.token],
            cwd=self.root,
            env=child_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        self.starts += 1
        return _Server(proc, stderr, env)

    def replay(
        self, seed: int, argv: Sequence[str], timeout: float, second_zone: bool = False
    ) -> Replayed:
        """Replay one candidate (``argv``: the child's arguments) in a fork of the server
        for ``seed`` (``second_zone``: the one in the second verifying zone)."""
        key = (seed, second_zone)
        server = self._server(key)
        proc = server.proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            request = {"argv": list(argv), "timeout": timeout}
            proc.stdin.write(json.dumps(request).encode() + b"\n")
            proc.stdin.flush()
        except OSError:
            self._drop(key)
            raise SessionError(server.stderr_tail() or "no output") from None
        self.forked += 1
        marker = f'{{"{END_KEY}":"{self.token}",'.encode()
        fd = proc.stdout.fileno()
        buf = bytearray()
        deadline = time.monotonic() + timeout + SERVER_GRACE
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    server.kill()
                    self._drop(key)
                    raise SessionError("timed out", timed_out=True)
                chunk = os.read(fd, 1 << 16)
                if not chunk:  # the server died
                    proc.wait()
                    tail = server.stderr_tail()
                    self._drop(key)
                    raise SessionError(tail or "no output")
                buf += chunk
                if buf.endswith(b"\n"):
                    start = buf.rfind(b"\n", 0, len(buf) - 1) + 1
                    if buf.startswith(marker, start):
                        break
        end = json.loads(bytes(buf[start:]))
        del buf[start:]
        if end.get("timeout"):
            raise SessionError("timed out", timed_out=True)
        return Replayed(bytes(buf), int(end["code"]), str(end["tail"]))

    def _drop(self, key: tuple[int, bool]) -> None:
        server = self._servers.pop(key, None)
        if server is not None:
            server.stop()

    def close(self) -> None:
        """End every interpreter of the session."""
        for key in list(self._servers):
            self._drop(key)

    @contextmanager
    def active(self) -> Iterator[VerifySession]:
        """Candidates verified inside this block go to this session."""
        reset = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(reset)


def current(root: Path) -> VerifySession | None:
    """The active session, when it can verify a candidate of the project at ``root``."""
    session = _ACTIVE.get()
    return session if session is not None and session.serves(root) else None


@contextmanager
def shared_verification(root: Path, seed: int | None = None) -> Iterator[VerifySession]:
    """A session active for the block and closed after it (``seed``: start it now)."""
    session = VerifySession(root)
    try:
        if seed is not None:
            session.start(seed)
        with session.active():
            yield session
    finally:
        session.close()


# --------------------------------------------------------------------------- the server


Package = Callable[[list[str]], "tuple[str, Callable[[], object]] | None"]
"""For a request's ``argv``: the key of its target's package and what imports the target's
module (see :func:`serve`), or None when the request has none to import ahead."""


def serve(
    token: str,
    run: Callable[[list[str]], int],
    prepare: Callable[[list[str]], None] | None = None,
    package: Package | None = None,
) -> int:
    """The server's loop: one request line in, one fork running ``run(argv)``, one end line out.

    The fork gets ``/dev/null`` as stdin (as a fresh child did) and a scratch file as
    stderr; it ends with ``os._exit`` so nothing of the server's runs in it twice.
    ``prepare(argv)``, when given, runs in the server before each fork: it may fill
    caches every fork would fill again (it must not import or run a target); whatever it
    raises or prints is ignored, so the fork meets and reports any problem itself.

    ``package(argv)``, when given, names the request's package: the first request of a
    package starts its *sub-server*, a fork of this server that imports the target's
    module once (:func:`_sub_server`), and every request of that package is then replayed
    in a fork of it instead of this server, without importing the module again.  A
    package whose import started a thread or a process, opened a descriptor, printed or
    failed has no sub-server: its requests fork from this server, as every request did
    before.  The server itself never imports a target.
    """
    requests = sys.stdin.buffer
    out = sys.stdout
    subs: dict[str, _SubServer | None] = {}
    while True:
        raw = requests.readline()
        if not raw:
            for sub in subs.values():
                if sub is not None:
                    sub.stop()
            return 0
        request = json.loads(raw)
        argv = [str(a) for a in request["argv"]]
        if prepare is not None:
            _prepare(prepare, argv)
        timeout = float(request["timeout"])
        found = _package_of(package, argv) if package is not None else None
        sub = None
        if found is not None:
            key, importer = found
            if key not in subs:
                subs[key] = _SubServer.start(importer, run, _fds_of(subs))
            sub = subs[key]
        fields = sub.replay(argv, timeout) if sub is not None else None
        if fields is None:
            if sub is not None and found is not None:  # it ended: its package forks from here
                sub.stop()
                subs[found[0]] = None
            fields = _fork_one(argv, timeout, run, _fds_of(subs))
        end = json.dumps(fields, separators=(",", ":"))
        out.write(f'{{"{END_KEY}":"{token}",{end[1:]}\n')
        out.flush()


def _fork_one(
    argv: list[str], timeout: float, run: Callable[[list[str]], int], close: list[int]
) -> dict[str, object]:
    """Replay one request in a fork of this process (closing ``close`` there first): the
    fields of its end line."""
    with tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the fork's own lines run in another process
            for fd in close:
                with contextlib.suppress(OSError):
                    os.close(fd)
            _in_fork(err, argv, run)
        status = _wait(pid, timeout)
        code = os.waitstatus_to_exitcode(status) if status is not None else -9
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
    tail = lines[-1] if lines else ""
    return {"code": code, "tail": tail, "timeout": status is None}


def _package_of(package: Package, argv: list[str]) -> tuple[str, Callable[[], object]] | None:
    try:
        return package(argv)
    except Exception:  # the fork meets and reports whatever this met
        return None


def _fds_of(subs: Mapping[str, _SubServer | None]) -> list[int]:
    return [fd for sub in subs.values() if sub is not None for fd in (sub.requests, sub.results)]


def import_changes(importer: Callable[[], object]) -> str:
    """Run ``importer`` (importing a target's module) and say what it changed in this
    process that a fork of it would share or lack: empty when it started no thread and no
    process, opened no descriptor, printed nothing and raised nothing."""
    if not os.path.isdir("/proc/self/fd") or not os.path.isdir("/proc/self/task"):
        return "no /proc to compare the process with"
    threads = threading.active_count()
    tasks = sorted(os.listdir("/proc/self/task"))
    fds = sorted(os.listdir("/proc/self/fd"))
    children = _has_children()
    sink = io.StringIO()
    out, err = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = sink
    try:
        importer()
    except BaseException as e:  # the fork meets it again and reports it
        return f"its import raised {type(e).__name__}"
    finally:
        sys.stdout, sys.stderr = out, err
    if threading.active_count() != threads or sorted(os.listdir("/proc/self/task")) != tasks:
        return "its import started a thread"
    if sorted(os.listdir("/proc/self/fd")) != fds:
        return "its import opened a file, socket or pipe"
    if _has_children() != children:
        return "its import started a process"
    if sink.getvalue():
        return "its import printed"
    return ""


def _has_children() -> bool:
    """Whether this process has a child (running, or ended and not waited for)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


@dataclass
class _SubServer:
    """A fork of the server that imported one package's target module (see :func:`serve`)."""

    pid: int
    requests: int
    """The write end of its request pipe."""
    results: int
    """The read end of its result pipe."""

    @classmethod
    def start(
        cls, importer: Callable[[], object], run: Callable[[list[str]], int], close: list[int]
    ) -> _SubServer | None:
        """Fork it; None when the import changed the process (see :func:`import_changes`)."""
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the sub-server's own lines run in another process
            for fd in (req_w, res_r, *close):
                with contextlib.suppress(OSError):
                    os.close(fd)
            _sub_server(req_r, res_w, importer, run)
        os.close(req_r)
        os.close(res_w)
        sub = cls(pid, req_w, res_r)
        if _read_line(res_r) != b"ready":
            sub.stop()
            return None
        return sub

    def replay(self, argv: list[str], timeout: float) -> dict[str, object] | None:
        """Replay one request in a fork of the sub-server: its end line's fields, or None
        when the sub-server has ended."""
        try:
            os.write(self.requests, json.dumps({"argv": argv, "timeout": timeout}).encode() + b"\n")
            line = _read_line(self.results)
            return dict(json.loads(line)) if line else None
        except (OSError, ValueError):
            return None

    def stop(self) -> None:
        for fd in (self.requests, self.results):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.waitpid(self.pid, 0)


def _read_line(fd: int) -> bytes:
    """One line from ``fd`` (without its newline); empty at the end of the pipe."""
    buf = bytearray()
    while not buf.endswith(b"\n"):
        chunk = os.read(fd, 1 << 12)
        if not chunk:
            return b""
        buf += chunk
    return bytes(buf[:-1])


def _sub_server(
    requests: int, results: int, importer: Callable[[], object], run: Callable[[list[str]], int]
) -> None:  # pragma: no cover - runs in the sub-server's process
    """The sub-server's life: import, say whether it serves, then fork per request."""
    import gc

    code = 0
    try:
        changed = import_changes(importer)
        if changed:
            os.write(results, f"no: {changed}\n".encode())
            os._exit(0)
        gc.freeze()
        os.write(results, b"ready\n")
        while line := _read_line(requests):
            request = json.loads(line)
            argv = [str(a) for a in request["argv"]]
            fields = _fork_one(argv, float(request["timeout"]), run, [requests, results])
            os.write(results, json.dumps(fields).encode() + b"\n")
    except BaseException:  # the server forks from itself from now on
        code = 1
    os._exit(code)


def _prepare(prepare: Callable[[list[str]], None], argv: list[str]) -> None:
    """Run ``prepare(argv)`` in the server: its output kept off the verdict pipe, its
    errors left for the fork to meet, what it built frozen like the server's imports."""
    import gc

    out = sys.stdout
    sys.stdout = sys.stderr
    try:  # a problem here is the fork's to meet and report
        with contextlib.suppress(Exception, SystemExit):
            prepare(argv)
    finally:
        sys.stdout = out
    gc.freeze()


def _wait(pid: int, timeout: float) -> int | None:
    """The fork's wait status; None when it ran past ``timeout`` seconds and was killed."""
    deadline = time.monotonic() + timeout
    pidfd = -1
    with contextlib.suppress(AttributeError, OSError):
        pidfd = os.pidfd_open(pid)
    try:
        delay = 0.001
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None
            if pidfd >= 0:  # readable when the fork ends
                select.select([pidfd], [], [], left)
            else:
                time.sleep(min(delay, left))
                delay = min(delay * 2, 0.05)
    finally:
        if pidfd >= 0:
            os.close(pidfd)


def _in_fork(err: IO[bytes], argv: list[str], run: Callable[[list[str]], int]) -> None:
    code = 1
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(err.fileno(), 2)
        sys.stdin = open(os.devnull)  # noqa: SIM115 - the fork ends with os._exit
        code = run(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
