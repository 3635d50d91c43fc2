"""Warm pins: run a Python case by forking a preloaded server instead of starting an interpreter.

A fresh interpreter costs ~15 ms before the program's first line, more when it
imports a heavy library.  With ``warm = true`` each worker thread starts one
server (:mod:`lockstep.oracles.pins.warm_server`) with the case-independent
controlled environment; it imports ``warm_imports`` once and forks a child per
case.  The child is the case's main process for :func:`lockstep.process.run`
exactly as a fresh process is: same output files and caps, same timeout, its
own session whose whole tree is killed and reaped.

When to run warm is decided per case, never assumed: a case whose env sets a
key Python reads at start (:func:`lockstep.pyentry.cold_reason`) runs cold, and
record runs every case both ways and stores ``warm: true`` only where the
outputs are identical.  If the server cannot start or dies, the case runs cold.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import select
import socket
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Final

from lockstep.cancel import cancelled
from lockstep.errors import LockstepError
from lockstep.oracles.pins.warm_server import read_frame
from lockstep.probe.runs import ProbeTarget
from lockstep.process import MainProcess, RunResult, resolve_argv, run
from lockstep.pyentry import PythonEntry, cold_reason, python_entry

SERVER: Final = Path(__file__).with_name("warm_server.py")
_START_SECONDS: Final = 60.0
CAN_FORK: Final = hasattr(os, "fork") and hasattr(socket, "send_fds")


class WarmUnavailable(LockstepError):
    """The server could not start, or died: the case runs cold."""


def _read_message(sock: socket.socket) -> dict[str, Any]:
    body = read_frame(sock)
    if body is None:
        raise WarmUnavailable("the warm server exited")
    found: dict[str, Any] = marshal.loads(body)
    return found


class _WarmMain:
    """A case forked by the server: its exit status arrives on the socket."""

    def __init__(self, sock: socket.socket, pid: int) -> None:
        self.sock = sock
        self._pid = pid
        self.status: int | None = None
        self.lost = False

    @property
    def pid(self) -> int:
        return self._pid

    def exited(self, seconds: float) -> bool:
        if self.status is not None or self.lost:
            return True
        ready, _, _ = select.select([self.sock], [], [], max(0.0, seconds))
        if not ready:
            return False
        try:
            self.status = int(_read_message(self.sock)["status"])
        except (WarmUnavailable, OSError, KeyError, ValueError, EOFError, TypeError):
            self.lost = True
        return True

    def wait(self) -> int:
        while not self.exited(1.0):
            pass
        if self.status is None:
            with contextlib.suppress(OSError):
                os.killpg(self._pid, 9)
            return -9
        return self.status

    def close(self) -> None:
        pass


class WarmServer:
    """One server interpreter, serving one case at a time."""

    def __init__(
        self, entry: PythonEntry, imports: list[str], env: Mapping[str, str], root: Path
    ) -> None:
        ours, theirs = socket.socketpair()
        path0 = root / entry.script if entry.script else root
        path0 = path0.resolve().parent if entry.script else path0.resolve()
        interpreter = resolve_argv([entry.interpreter])[0]
        try:
            self.proc = subprocess.Popen(
                [interpreter, str(SERVER), str(theirs.fileno()), str(path0), *imports],
                pass_fds=(theirs.fileno(),),
                env=dict(env),
                cwd=root,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError as e:
            ours.close()
            raise WarmUnavailable(f"cannot start the warm server: {e.strerror}") from None
        finally:
            theirs.close()
        self.sock = ours
        self.dead = False
        self.sock.settimeout(_START_SECONDS)
        try:
            hello = _read_message(self.sock)
        except (OSError, WarmUnavailable) as e:
            self.close()
            raise WarmUnavailable(f"the warm server did not start ({e})") from None
        finally:
            self.sock.settimeout(None)
        if not hello.get("ready"):
            self.close()
            raise WarmUnavailable(f"warm_imports: {hello.get('error')}")
        self.main: _WarmMain | None = None

    def start(
        self,
        command: list[str],
        cwd: Path,
        env: Mapping[str, str],
        stdin: IO[bytes] | int,
        out: IO[bytes],
        err: IO[bytes],
    ) -> MainProcess:
        """A :data:`lockstep.process.Starter`: fork ``command`` (the server's entry, other args)."""
        if self.dead:
            raise WarmUnavailable("the warm server exited")
        entry = python_entry(command)
        if isinstance(entry, str):
            raise WarmUnavailable(entry)
        request = {
            "interpreter": resolve_argv([entry.interpreter])[0],
            "script": entry.script,
            "module": entry.module,
            "argv": list(entry.args),
            "env": dict(env),
            "cwd": str(cwd),
        }
        data = marshal.dumps(request)
        with contextlib.ExitStack() as stack:
            if isinstance(stdin, int):
                stdin = stack.enter_context(open(os.devnull, "rb"))
            fds = [stdin.fileno(), out.fileno(), err.fileno()]
            try:
                socket.send_fds(self.sock, [len(data).to_bytes(4, "big")], fds)
                self.sock.sendall(data)
                pid = int(_read_message(self.sock)["pid"])
            except (OSError, WarmUnavailable, KeyError, ValueError) as e:
                self.dead = True
                raise WarmUnavailable(f"the warm server exited ({e})") from None
        self.main = _WarmMain(self.sock, pid)
        return self.main

    def close(self) -> None:
        """Let the server exit by itself (it sees the socket close); killed if cancelled."""
        self.dead = True
        with contextlib.suppress(OSError):
            self.sock.close()
        if cancelled():
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class WarmPool:
    """One server per worker thread, started on first use; closed with the replay or record."""

    def __init__(
        self, command: list[str], imports: list[str], env: Mapping[str, str], root: Path
    ) -> None:
        self.command = command
        self.imports = imports
        self.env = dict(env)
        self.root = root
        self.local = threading.local()
        self.servers: list[WarmServer] = []
        self.lock = threading.Lock()
        self.failure = "" if CAN_FORK else "this platform has no fork: warm cases ran cold"

    def _server(self, entry: PythonEntry) -> WarmServer:
        if self.failure:
            raise WarmUnavailable(self.failure)
        server: WarmServer | None = getattr(self.local, "server", None)
        if server is None or server.dead:
            try:
                server = WarmServer(entry, self.imports, self.env, self.root)
            except WarmUnavailable as e:
                self.failure = str(e)
                raise
            self.local.server = server
            with self.lock:
                self.servers.append(server)
        return server

    def cold_reason(self, target: ProbeTarget) -> str:
        """Why ``target`` cannot run warm at all (before trying)."""
        entry = python_entry(target.argv)
        if isinstance(entry, str):
            return entry
        return cold_reason(target.env, self.env)

    def run(self, target: ProbeTarget) -> RunResult:
        """Run ``target`` warm; :class:`WarmUnavailable` if it must be run cold instead."""
        entry = python_entry(target.argv)
        if isinstance(entry, str):
            raise WarmUnavailable(entry)
        server = self._server(entry)
        server.main = None
        result = run(
            target.argv,
            env=target.env,
            stdin=target.stdin,
            cwd=target.cwd,
            timeout=target.timeout,
            max_output=target.max_output,
            starter=server.start,
        )
        if server.main is not None and server.main.lost:
            server.dead = True
            raise WarmUnavailable("the warm server died while the case ran")
        return result

    def close(self) -> None:
        with self.lock:
            servers, self.servers = self.servers, []
        for server in servers:
            server.close()
