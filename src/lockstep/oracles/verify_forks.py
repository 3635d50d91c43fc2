"""The verifying server's side: each request replayed in a fork, several forks at a time.

A recording session's verifying interpreter (:mod:`lockstep.oracles.verify_session`) reads
one JSON request per line (an id, the child's command-line arguments, a timeout), forks
for each, and writes one end line per request when its fork has ended, tagged with the
request's id, in the order the forks end.  Forks run side by side: the parent sends a new
request while earlier ones replay, so a session verifying twenty ledgers on two cores
waits for about half of their forks in turn.  Each fork is still a copy of the same
pristine process, never of another fork, so running them side by side changes no verdict:
only what a target leaves outside the process (a file it writes) could be seen by another
ledger's fork, as it could be by the next ledger's fork when they ran one after another.

A fork's standard output (the verdict lines) goes to a scratch file of its own, not to
the server's pipe, so forks running side by side never mix their lines; the end line
carries that output (as Latin-1 text: every byte kept) with the fork's exit code and the
last line of its standard error (what the replayed code prints goes there).

The first request of a package starts that package's *sub-server* (:class:`_SubServer`), a
fork of the server that imports the target's module once and serves that package's
requests with the very same loop, forking from itself; when it ends (or refuses, because
its import changed the process), its requests fork from the server, as every request did
before sub-servers existed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import selectors
import signal
import sys
import tempfile
import threading
import time
import traceback  # here, not in each fork that would import it again
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any, Final

from lockstep.oracles.verify_session import END_KEY, WARM_KEY

Run = Callable[[list[str]], int]
"""What a fork runs on a request's ``argv``: its exit code."""

Package = Callable[[list[str]], "tuple[str, Callable[[], object]] | None"]
"""For a request's ``argv``: the key of its target's package and what imports the target's
module (see :func:`serve`), or None when the request has none to import ahead."""

Emit = Callable[[dict[str, Any]], None]
"""Writes one ended request's fields (its end line)."""

POLL_MOST: Final = 0.05
"""Seconds at most between two looks at the forks where no process descriptor tells when
one ends (``os.pidfd_open`` is Linux's)."""


def serve(
    token: str,
    run: Run,
    prepare: Callable[[list[str]], None] | None = None,
    package: Package | None = None,
    ready: int | None = None,
) -> int:
    """The server's loop: request lines in on stdin, one fork each running ``run(argv)``,
    one end line out on stdout per request, as its fork ends (see the module's text).

    The fork gets ``/dev/null`` as stdin, a scratch file as stdout and another as stderr;
    it ends with ``os._exit`` so nothing of the server's runs in it twice.
    ``prepare(argv)``, when given, runs in the server before each fork: it may fill
    caches every fork would fill again (it must not import or run a target); whatever it
    raises or prints is ignored, so the fork meets and reports any problem itself.

    ``package(argv)``, when given, names the request's package: the first request of a
    package starts its sub-server, and every request of that package is then replayed in
    a fork of it instead of this server, without importing the module again.  A package
    whose import started a thread or a process, opened a descriptor, printed or failed
    has no sub-server: its requests fork from this server.  ``ready``, a descriptor no
    fork inherits, is closed once the requests sent ahead are handled (the packages they
    warm imported).  A request marked :data:`WARM_KEY` is only prepared for, and starts
    its package's sub-server: it forks nothing and gets no end line.  The server itself never imports a target.  When stdin
    ends, forks still running are ended: nobody waits for their verdicts.
    """
    out = sys.stdout

    def emit(fields: dict[str, Any]) -> None:
        end = json.dumps(fields, separators=(",", ":"))
        out.write(f'{{"{END_KEY}":"{token}",{end[1:]}\n')
        out.flush()

    subs: dict[str, _SubServer | None] = {}
    held = _Held([ready] if ready is not None else [])

    def private() -> list[int]:
        return [*held.fds, *_fds_of(subs)]

    loop = _Loop(run, emit, private)

    def on_request(request: dict[str, Any]) -> None:
        argv = [str(a) for a in request["argv"]]
        if prepare is not None:
            _prepare(prepare, argv)
        found = _package_of(package, argv) if package is not None else None
        if found is not None:
            key, importer = found
            if key not in subs:
                subs[key] = _SubServer.start(importer, run, prepare, private())
                sub = subs[key]
                if sub is not None:
                    loop.watch(sub.results, lambda: _on_sub_results(loop, subs, key))
            sub = subs[key]
            if request.get(WARM_KEY):
                return
            if sub is not None and sub.send(request):
                return
        if not request.get(WARM_KEY):
            loop.fork(request)

    try:
        loop.serve(sys.stdin.buffer.fileno(), on_request, held.close)
    finally:
        held.close()  # (when its stdin ended first)
        _stop_all(subs)
    return 0


def _stop_all(subs: dict[str, _SubServer | None]) -> None:
    for sub in subs.values():
        if sub is not None:
            sub.stop()


def _on_sub_results(loop: _Loop, subs: dict[str, _SubServer | None], key: str) -> None:
    """A sub-server's end lines: passed on.  When it has ended, its requests not answered
    fork from the server (the package forks from here from now on)."""
    sub = subs[key]
    assert sub is not None
    lines, ended = sub.lines.read()
    for line in lines:
        with contextlib.suppress(ValueError):
            fields = json.loads(line)
            sub.pending.pop(json.dumps(fields.get("id")), None)
            loop.emit(fields)
    if ended:
        loop.unwatch(sub.results)
        subs[key] = None
        sub.stop()
        for request in sub.pending.values():
            loop.fork(request)


@dataclass
class _Running:
    """A fork replaying one request."""

    request_id: object
    pid: int
    pidfd: int
    """Readable when the fork ends; -1 where there is none (:data:`POLL_MOST`)."""
    out: IO[bytes]
    err: IO[bytes]
    deadline: float


@dataclass
class _Lines:
    """Whole lines read from a descriptor as they come, without blocking."""

    fd: int
    buf: bytearray = field(default_factory=bytearray)

    def read(self) -> tuple[list[bytes], bool]:
        """The lines now complete, and whether the descriptor has ended."""
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            return [], True
        self.buf += chunk
        end = self.buf.rfind(b"\n")
        if end < 0:
            return [], False
        lines = bytes(self.buf[:end]).split(b"\n")
        del self.buf[: end + 1]
        return lines, False


class _Loop:
    """One process's forks and the descriptors it waits on (the server's or a
    sub-server's): each request forked at once, each end emitted when its fork ends."""

    def __init__(self, run: Run, emit: Emit, close_in_fork: Callable[[], list[int]]) -> None:
        self.run = run
        self.emit = emit
        self.close_in_fork = close_in_fork
        self.selector = selectors.DefaultSelector()
        self.running: dict[int, _Running] = {}
        self.handlers: dict[int, Callable[[], None]] = {}

    def watch(self, fd: int, ready: Callable[[], None]) -> None:
        self.selector.register(fd, selectors.EVENT_READ)
        self.handlers[fd] = ready

    def unwatch(self, fd: int) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(fd)
        self.handlers.pop(fd, None)

    def serve(
        self,
        requests: int,
        on_request: Callable[[dict[str, Any]], None],
        settled: Callable[[], None] | None = None,
    ) -> None:
        """Until ``requests`` ends: each request line to ``on_request``, each fork's end
        emitted as it comes.  Forks still running then are ended.  ``settled`` is called
        once, the first time no request is waiting to be read (those sent ahead handled)."""
        lines = _Lines(requests)
        open_ = True

        waiting = [settled] if settled is not None else []

        def settle() -> None:
            if waiting and not _readable(requests):
                waiting.pop()()

        def read_requests() -> None:
            nonlocal open_
            got, ended = lines.read()
            for line in got:
                if line.strip():
                    on_request(json.loads(line))
            if ended:
                open_ = False
                self.unwatch(requests)
            settle()

        self.watch(requests, read_requests)
        settle()
        delay = 0.001
        try:
            while open_:
                events = self.selector.select(self._wait(delay))
                for key, _ in events:
                    handler = self.handlers.get(int(key.fd))
                    if handler is not None:
                        handler()
                delay = 0.001 if events else min(delay * 2, POLL_MOST)
                self._reap()
        finally:
            for running in list(self.running.values()):
                with contextlib.suppress(OSError):
                    os.kill(running.pid, signal.SIGKILL)
                self._ended(running, timed_out=True, emit=False)
            self.selector.close()

    def _wait(self, delay: float) -> float | None:
        """Seconds to wait for a descriptor: until the nearest deadline, and not long where
        a fork has no process descriptor to say when it ends."""
        if not self.running:
            return None
        left = min(r.deadline for r in self.running.values()) - time.monotonic()
        if any(r.pidfd < 0 for r in self.running.values()):
            left = min(left, delay)
        return max(0.0, left)

    def fork(self, request: dict[str, Any]) -> None:
        """Replay ``request`` in a fork of this process, now."""
        argv = [str(a) for a in request["argv"]]
        out = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _ended
        err = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _ended
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the fork's own lines run in another process
            for fd in (*self.close_in_fork(), *self.handlers):
                with contextlib.suppress(OSError):
                    if fd > 2:  # its stdin, stdout and stderr are set by _in_fork
                        os.close(fd)
            _in_fork(out, err, argv, self.run)
        pidfd = -1
        with contextlib.suppress(AttributeError, OSError):
            pidfd = os.pidfd_open(pid)
        deadline = time.monotonic() + float(request["timeout"])
        running = _Running(request.get("id"), pid, pidfd, out, err, deadline)
        self.running[pid] = running
        if pidfd >= 0:
            self.watch(pidfd, lambda: None)  # a wake-up: :meth:`_reap` looks at every fork

    def _reap(self) -> None:
        """Emit the end of every fork that has ended; kill those past their deadline."""
        now = time.monotonic()
        for running in list(self.running.values()):
            done, _status = os.waitpid(running.pid, os.WNOHANG)
            if done:
                self._ended(running, status=_status)
            elif now >= running.deadline:
                with contextlib.suppress(OSError):
                    os.kill(running.pid, signal.SIGKILL)
                self._ended(running, timed_out=True)

    def _ended(
        self,
        running: _Running,
        status: int | None = None,
        timed_out: bool = False,
        emit: bool = True,
    ) -> None:
        if status is None:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(running.pid, 0)
        del self.running[running.pid]
        if running.pidfd >= 0:
            self.unwatch(running.pidfd)
            os.close(running.pidfd)
        code = os.waitstatus_to_exitcode(status) if status is not None else -9
        with running.out as out, running.err as err:
            if not emit:
                return
            out.seek(0)
            err.seek(0)
            lines = err.read().decode("utf-8", "replace").strip().splitlines()
            fields = {
                "id": running.request_id,
                "code": code,
                "tail": lines[-1] if lines else "",
                "timeout": timed_out,
                "out": out.read().decode("latin-1"),
            }
        self.emit(fields)


def _package_of(package: Package, argv: list[str]) -> tuple[str, Callable[[], object]] | None:
    try:
        return package(argv)
    except Exception:  # the fork meets and reports whatever this met
        return None


@dataclass
class _Held:
    """The server's own descriptors no fork inherits, until it closes them."""

    fds: list[int]

    def close(self) -> None:
        while self.fds:
            with contextlib.suppress(OSError):
                os.close(self.fds.pop())


def _fds_of(subs: dict[str, _SubServer | None]) -> list[int]:
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
    lines: _Lines
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The requests sent and not answered yet, by their id's JSON."""

    @classmethod
    def start(
        cls,
        importer: Callable[[], object],
        run: Run,
        prepare: Callable[[list[str]], None] | None,
        close: list[int],
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
            _sub_server(req_r, res_w, importer, run, prepare)
        os.close(req_r)
        os.close(res_w)
        sub = cls(pid, req_w, res_r, _Lines(res_r))
        if _read_line(res_r) != b"ready":
            sub.stop()
            return None
        return sub

    def send(self, request: dict[str, Any]) -> bool:
        """Hand ``request`` to the sub-server; False when it has ended."""
        try:
            _write_all(self.requests, json.dumps(request).encode() + b"\n")
        except OSError:
            return False
        self.pending[json.dumps(request.get("id"))] = request
        return True

    def stop(self) -> None:
        for fd in (self.requests, self.results):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.waitpid(self.pid, 0)


def _readable(fd: int) -> bool:
    """Whether ``fd`` has something to read now (or has ended)."""
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


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
    requests: int,
    results: int,
    importer: Callable[[], object],
    run: Run,
    prepare: Callable[[list[str]], None] | None,
) -> None:  # pragma: no cover - runs in the sub-server's process
    """The sub-server's life: import, say whether it serves, then fork per request (each
    prepared here first, as the server prepares its own: the server's caches stopped
    reaching this process when it was forked)."""
    import gc

    code = 0
    try:
        changed = import_changes(importer)
        if changed:
            os.write(results, f"no: {changed}\n".encode())
            os._exit(0)
        gc.freeze()
        os.write(results, b"ready\n")

        def emit(fields: dict[str, Any]) -> None:
            _write_all(results, json.dumps(fields).encode() + b"\n")

        loop = _Loop(run, emit, lambda: [requests, results])

        def on_request(request: dict[str, Any]) -> None:
            if prepare is not None:
                _prepare(prepare, [str(a) for a in request["argv"]])
            loop.fork(request)

        loop.serve(requests, on_request)
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


def _in_fork(
    out: IO[bytes], err: IO[bytes], argv: list[str], run: Run
) -> None:  # pragma: no cover - runs in the fork
    code = 1
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(out.fileno(), 1)
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
