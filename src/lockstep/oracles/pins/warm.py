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

**What to preload** is ``warm_imports`` when given.  Otherwise record infers it
(:func:`infer_imports`): each case runs once under an import spy, and the
modules the program imported directly are kept unless they are the project's
own code or their import did something a fork does not carry over (see
:data:`IMPORT_SPY`); the server drops any that leaves a thread running.  The
list goes into the pins file's header (``warm.imports``) rather than only into a
printed suggestion: it is then reviewed with the pins it was proven with, and
replay uses it without the user copying anything into the configuration.  Replay
reads it as data, never as a verdict: each entry must be a module name, only the
speed depends on it, and a preload that is not the one record proved (below) is
never forked from.

**A preload never hides a change** (the choice made: run cold, not replay the
captured output).  The header also keeps ``warm.digest``, the sha256 of the
server's Python version and of every file the preload loaded
(:func:`preload_digest`).  Replay computes it again from the server it starts;
if any file differs (a module that now prints at import, an upgraded package,
another interpreter) the server is not used and every case runs cold, so the
new behaviour shows exactly as a cold start shows it.  Capturing the import
output instead could not place it where a cold run prints it (after whatever
the program printed before its import), nor see other import-time changes.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import select
import socket
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from lockstep.cancel import cancelled
from lockstep.errors import LockstepError
from lockstep.oracles.pins.warm_server import read_frame
from lockstep.parallel import run_parallel
from lockstep.probe.runs import ProbeTarget
from lockstep.process import MainProcess, RunResult, resolve_argv, run
from lockstep.pyentry import MODULE_NAME, PythonEntry, cold_reason, python_entry
from lockstep.store import sha256_hex

SERVER: Final = Path(__file__).with_name("warm_server.py")
_START_SECONDS: Final = 60.0
CAN_FORK: Final = hasattr(os, "fork") and hasattr(socket, "send_fds")


class WarmUnavailable(LockstepError):
    """The server could not start, or died: the case runs cold."""

    def __init__(self, message: str, *, culprit: str = "") -> None:
        super().__init__(message)
        self.culprit = culprit
        """The preloaded module that kept the server from starting, when one did."""


def preload_digest(version: str, files: Iterable[str]) -> str:
    """What the server's preloaded state was built from: its Python and every file it loaded.

    Content only (sha256 of each file, sorted), not paths, so a clone elsewhere on the
    same interpreter and packages gives the same digest.  A file that cannot be read
    counts as a change.
    """
    digests = []
    for name in files:
        try:
            digests.append(sha256_hex(Path(name).read_bytes()))
        except OSError:
            digests.append(f"unreadable {name}")
    return sha256_hex("\n".join([version, *sorted(digests)]).encode("utf-8"))


# ---------------------------------------------------------------- inferring the preload

IMPORT_SPY_OUT: Final = "LOCKSTEP_IMPORTSPY_OUT"
IMPORT_SPY_PATH: Final = "LOCKSTEP_IMPORTSPY_PYTHONPATH"

IMPORT_SPY: Final = r"""
import os, sys

_out = os.environ.pop("LOCKSTEP_IMPORTSPY_OUT", None)
_saved = os.environ.pop("LOCKSTEP_IMPORTSPY_PYTHONPATH", None)
if _saved is None:
    os.environ.pop("PYTHONPATH", None)
else:
    os.environ["PYTHONPATH"] = _saved
_here = os.path.dirname(os.path.abspath(__file__))
_importer = {}
_unsafe = {}
_UNSAFE = {
    "_thread.start_new_thread": "starts a thread",  # Python >= 3.12; the server counts threads
    "os.fork": "forks",
    "os.forkpty": "forks",
    "os.posix_spawn": "starts a process",
    "os.system": "starts a process",
    "os.exec": "starts a process",
    "subprocess.Popen": "starts a process",
    "ctypes.dlopen": "loads a native library",
    "open": "opens a file",
    "os.chdir": "changes the working folder",
    "os.putenv": "changes the environment",
    "os.unsetenv": "changes the environment",
}


def _loading(depth):
    # Every module whose module-level code is on the stack: all of them are being imported.
    names = []
    frame = sys._getframe(depth)
    while frame is not None:
        if frame.f_code.co_name == "<module>":
            names.append(frame.f_globals.get("__name__", "?"))
        frame = frame.f_back
    return names


def _hook(event, args):
    try:
        _note(event, args)
    except Exception:  # an exception here would fail the audited operation itself
        pass


def _note(event, args):
    if event == "import":
        name = args[0]
        if name not in sys.modules and name not in _importer:
            below = [n for n in _loading(3) if n != name]
            _importer[name] = below[0] if below else ""
        return
    reason = _UNSAFE.get(event) or ("opens a socket" if event.startswith("socket.") else None)
    if reason is None:
        return
    if event == "open" and sys._getframe(2).f_code.co_filename.startswith("<frozen "):
        return  # the import machinery reading a module's own source or cache
    for name in _loading(3):
        if name != "__main__":
            _unsafe.setdefault(name, reason)


def _write():
    if not _out:
        return
    lines = []
    for name, module in list(sys.modules.items()):
        if name in _before or name == "__main__":
            continue
        path = getattr(module, "__file__", None)
        lines.append("\t".join(
            [name, path if isinstance(path, str) else "", _importer.get(name, ""),
             _unsafe.get(name, "")]
        ))
    with open(_out, "w", encoding="utf-8", errors="surrogateescape") as fh:
        fh.write("\n".join(lines))


import atexit

atexit.register(_write)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_self = sys.modules.pop("sitecustomize")
try:
    import sitecustomize  # noqa: F401
except ImportError:
    sys.modules["sitecustomize"] = _self  # what the import of this module returns
_before = set(sys.modules)
sys.addaudithook(_hook)
"""
"""Started as ``sitecustomize`` (as :mod:`lockstep.probe.envspy` is): it notes, for each module
the program imports, which module's import-time code imported it and whether that code did
anything a fork does not carry over or that a per-case run would do differently (threads,
sockets, processes, open files, the working folder or environment), then writes that at
exit."""


@dataclass(frozen=True)
class Inference:
    """What ``warm = true`` preloads when ``warm_imports`` is not given, and what it left out."""

    imports: tuple[str, ...]
    left_out: tuple[str, ...]
    """``module (reason)`` for each module a case imported directly that is not preloaded."""
    reported: int
    """How many cases' runs reported (a program started with -I or -E does not)."""


@dataclass(frozen=True)
class _Seen:
    name: str
    path: str
    importer: str
    unsafe: str


def _spy_run(target: ProbeTarget, spy_dir: Path, out: Path) -> list[_Seen] | None:
    env = dict(target.env)
    if "PYTHONPATH" in env:
        env[IMPORT_SPY_PATH] = env["PYTHONPATH"]
        env["PYTHONPATH"] = os.pathsep.join([str(spy_dir), env["PYTHONPATH"]])
    else:
        env["PYTHONPATH"] = str(spy_dir)
    env[IMPORT_SPY_OUT] = str(out)
    run(
        target.argv,
        env=env,
        stdin=target.stdin,
        cwd=target.cwd,
        timeout=target.timeout,
        max_output=target.max_output,
    )
    try:
        text = out.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return None
    seen = []
    for line in text.split("\n"):
        parts = line.split("\t")
        if len(parts) == 4:
            seen.append(_Seen(*parts))
    return seen


def _own(path: str, root: Path) -> bool:
    """Whether a module file is the project's own code (not an installed package)."""
    if not path:
        return False
    try:
        rel = Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return not {"site-packages", "dist-packages"} & set(rel.parts)


def infer_imports(targets: Sequence[ProbeTarget], root: Path, *, jobs: int) -> Inference:
    """Run each case once under the import spy; what its warm server should preload.

    Kept: the modules a case's program imported *directly* (from ``__main__`` or from
    its own modules, or from a module left out), in first-import order, when their
    import-time code, with everything it imported, did none of the unsafe things the
    spy watches, and they are not the project's own code.  The project's own modules
    are never inferred: they are the code under refactor, and a change to their
    import-time behaviour must show as a cold run would show it; list them in
    ``warm_imports`` to preload them anyway.  Their imports of installed or standard
    modules are kept.  A thread started by native code is not seen here; the server
    refuses to start when a preloaded module left a thread running.
    """
    with tempfile.TemporaryDirectory(prefix="lockstep-importspy-") as tmp:
        spy_dir = Path(tmp) / "site"
        spy_dir.mkdir()
        (spy_dir / "sitecustomize.py").write_text(IMPORT_SPY, encoding="utf-8")

        def task(i: int, t: ProbeTarget) -> Callable[[], list[_Seen] | None]:
            return lambda: _spy_run(t, spy_dir, Path(tmp) / f"seen-{i}.txt")

        runs = list(run_parallel((task(i, t) for i, t in enumerate(targets)), jobs=jobs))
    kept: dict[str, None] = {}
    left_out: dict[str, str] = {}
    reported = 0
    for seen in runs:
        if seen is None:
            continue
        reported += 1
        by_name = {s.name: s for s in seen}
        for s in seen:
            importer = by_name.get(s.importer)
            direct = (
                not s.importer
                or s.importer == "__main__"
                or (importer is not None and (_own(importer.path, root) or bool(importer.unsafe)))
            )
            if not direct or s.name in kept or s.name in left_out:
                continue
            if _own(s.path, root):
                left_out[s.name] = "the project's own code"
            elif s.unsafe:
                left_out[s.name] = f"{s.unsafe} at import"
            elif MODULE_NAME.match(s.name):
                kept[s.name] = None
    return Inference(tuple(kept), tuple(f"{n} ({why})" for n, why in left_out.items()), reported)


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
            raise WarmUnavailable(
                f"warm imports: {hello.get('error')}", culprit=str(hello.get("culprit", ""))
            )
        self.digest = preload_digest(str(hello.get("version", "")), hello.get("files", []))
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
        self,
        command: list[str],
        imports: list[str],
        env: Mapping[str, str],
        root: Path,
        *,
        expected: str | None = None,
    ) -> None:
        self.command = command
        self.imports = imports
        self.expected = expected
        """The :func:`preload_digest` record proved warm = cold with (None: record itself)."""
        self.digest = ""
        self.env = dict(env)
        self.root = root
        self.local = threading.local()
        self.servers: list[WarmServer] = []
        self.lock = threading.Lock()
        self.failure = "" if CAN_FORK else "this platform has no fork: warm cases ran cold"
        if expected == "":
            self.failure = "the pins file records no proven preload: warm cases ran cold"

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
            self.digest = server.digest
            if self.expected is not None and server.digest != self.expected:
                server.close()
                self.failure = (
                    "the modules the warm server preloads changed since record (or were "
                    "never proven): warm cases ran cold; 'lockstep record --force' proves them"
                )
                raise WarmUnavailable(self.failure)
            self.local.server = server
            with self.lock:
                self.servers.append(server)
        return server

    def settle(self, entry: PythonEntry) -> list[str]:
        """Start one server, dropping each inferred import that keeps it from starting
        (one that leaves a thread running, or fails to import); the modules dropped."""
        dropped: list[str] = []
        while True:
            try:
                self._server(entry)
            except WarmUnavailable as e:
                if not e.culprit or e.culprit not in self.imports:
                    return dropped
                self.imports = [m for m in self.imports if m != e.culprit]
                dropped.append(f"{e.culprit} ({str(e).removeprefix('warm imports: ')})")
                self.failure = ""
                continue
            return dropped

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
