"""The warm server: one interpreter that forks a fresh-looking ``__main__`` per pins case.

Started once per worker by :mod:`lockstep.oracles.pins.warm` as
``python PATH/warm_server.py FD PATH0 [IMPORT ...]`` (by path, so it needs nothing
but the standard library and the very interpreter the pins command names),
with the case-independent controlled environment.  It imports ``warm_imports``
once, then serves requests on the socket ``FD``: each request (a marshalled
dict, with the case's stdin, stdout and stderr files passed as descriptors)
forks a child that becomes the case as a fresh ``python SCRIPT ARGS`` or
``python -m MODULE ARGS`` would see it — its own session, fds 0/1/2, a
rebuilt ``sys.stdin/stdout/stderr``, ``sys.argv``, ``sys.path[0]``,
``os.environ`` replaced wholesale, the working folder, and an exit code
computed as CPython computes it (``SystemExit`` codes, a traceback and 1 for an
uncaught exception, atexit handlers, flushed streams).  The server answers with
the child's pid, then with its wait status once it has exited (the child is
reaped only at the next request, so its pid — its process group — cannot be
reused while lockstep cleans up after it).

The modules this server needs for itself (``socket``) are dropped from
``sys.modules`` in the child, so a program that imports them gets them fresh.
Whether a case behaves the same warm as cold is never assumed: record runs
each case both ways and keeps warm only where the outputs are identical.
"""

# The server keeps its own imports to what a fresh interpreter already has (no contextlib).
# ruff: noqa: SIM105, SIM115, UP020

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the server imports nothing a fresh interpreter lacks
    import socket
    from typing import Any, NoReturn

_STDIO = (sys.__stdin__, sys.__stdout__, sys.__stderr__)


def _send(sock: "socket.socket", obj: "dict[str, Any]") -> None:
    import marshal

    data = marshal.dumps(obj)
    sock.sendall(len(data).to_bytes(4, "big") + data)


def read_frame(sock: "socket.socket", head: bytes = b"") -> "bytes | None":
    """One length-prefixed message (4-byte big-endian size, then the body), ``head`` being
    what was already read of it; None when the peer closed first.  The lockstep side reads
    the server's replies with this same function."""
    while len(head) < 4:
        more = sock.recv(4 - len(head))
        if not more:
            return None
        head += more
    size = int.from_bytes(head[:4], "big")
    body = head[4:]
    while len(body) < size:
        more = sock.recv(size - len(body))
        if not more:
            return None
        body += more
    return body


def _recv(sock: "socket.socket") -> "tuple[dict[str, Any] | None, list[int]]":
    """One request and the descriptors sent with it; None at end of input."""
    import marshal
    import socket

    head, fds, _flags, _addr = socket.recv_fds(sock, 4, 3)
    if not head:
        return None, []
    body = read_frame(sock, head)
    return (None if body is None else marshal.loads(body)), fds


def _rebuild_stdio() -> None:
    """New ``sys.std*`` on fds 0/1/2, built as interpreter start builds them.

    Encoding, errors and buffering rules are the server's own (it started with
    the same environment, and a case that differs in what decides them runs
    cold); the buffer size follows the case's own files.
    """
    import io

    made = []
    for fd, name, mode, old in zip(
        (0, 1, 2), ("<stdin>", "<stdout>", "<stderr>"), ("r", "w", "w"), _STDIO, strict=True
    ):
        write_through = bool(old is not None and old.write_through)
        buffered = io.open(
            fd, mode + "b", buffering=0 if (write_through and fd) else -1, closefd=False
        )
        raw = getattr(buffered, "raw", buffered)
        setattr(raw, "name", name)  # noqa: B010 (a read-only property to type checkers)
        text = io.TextIOWrapper(
            buffered,
            encoding=old.encoding if old is not None else "utf-8",
            errors=old.errors if old is not None else "strict",
            newline="\n",
            line_buffering=bool(old is not None and old.line_buffering),
            write_through=write_through,
        )
        setattr(text, "mode", mode)  # noqa: B010
        made.append(text)
    sys.stdin, sys.stdout, sys.stderr = made
    for name, text in zip(("__stdin__", "__stdout__", "__stderr__"), made, strict=True):
        setattr(sys, name, text)


def _exit_code(exc: SystemExit) -> int:
    """What CPython exits with for an uncaught ``SystemExit``."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    try:
        sys.stderr.write(str(code) + "\n")
    except Exception:
        pass
    return 1


def _run_main(request: "dict[str, Any]") -> int:
    """Run the script or module as ``__main__``; the exit code a fresh interpreter returns."""
    args = list(request["argv"])
    module = request["module"]
    main = type(sys)("__main__")
    main.__dict__.update(__annotations__={}, __builtins__=sys.modules["builtins"])
    sys.modules["__main__"] = main  # not the server's own: the program gets a fresh one
    try:
        if module:
            import runpy

            sys.argv = ["-m", *args]
            sys.orig_argv = [request["interpreter"], "-m", module, *args]
            sys.path[0] = os.getcwd()
            runpy._run_module_as_main(module, alter_argv=True)  # type: ignore[attr-defined]
        else:
            script = request["script"]
            path = os.path.abspath(script)
            sys.argv = [script, *args]
            sys.orig_argv = [request["interpreter"], script, *args]
            sys.path[0] = os.path.dirname(os.path.realpath(path))
            loader = sys.modules["_frozen_importlib_external"].SourceFileLoader("__main__", path)
            main.__dict__.update(__cached__=None, __file__=path, __loader__=loader)
            try:
                with open(path, "rb") as fh:
                    source = fh.read()
            except OSError as e:
                sys.stderr.write(
                    f"{request['interpreter']}: can't open file {path!r}: "
                    f"[Errno {e.errno}] {e.strerror}\n"
                )
                return 2
            exec(compile(source, path, "exec", dont_inherit=True), main.__dict__)
        return 0
    except SystemExit as e:
        return _exit_code(e)
    except BaseException as e:
        tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
        e.__traceback__ = tb  # the program's frames only, as a fresh interpreter shows them
        try:
            sys.excepthook(type(e), e, tb)
        except Exception:
            pass
        if isinstance(e, KeyboardInterrupt):
            return -2
        return 1


def _finish(code: int) -> "NoReturn":
    """Interpreter shutdown as CPython orders it, then ``os._exit``."""
    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
    except BaseException:
        pass
    try:
        import atexit

        atexit._run_exitfuncs()
    except BaseException:
        pass
    main = sys.modules.get("__main__")
    if main is not None:
        try:
            main.__dict__.clear()  # objects that flush when collected (open files) do so now
        except BaseException:
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            code = 120
    if code == -2:
        import signal

        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code & 0xFF)


def _child(
    request: "dict[str, Any]", fds: list[int], sock: "socket.socket", machinery: set[str]
) -> "NoReturn":
    try:
        sock.close()
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        for name in machinery:
            sys.modules.pop(name, None)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        _rebuild_stdio()
        code = _run_main(request)
    except BaseException:
        os._exit(70)
    _finish(code)


def _status(pid: int) -> int:
    """The child's wait status, leaving it a zombie (reaped at the next request)."""
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    if info is None:
        return 0
    if info.si_code == os.CLD_EXITED:
        return info.si_status
    return -info.si_status


def _threads() -> int:
    """The server's threads, native ones included where the platform can count them."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def _loaded_files(names: "set[str]") -> "list[str]":
    """The files the modules ``names`` were loaded from (what the preloaded state came from)."""
    found = set()
    for name in names:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if isinstance(path, str):
            found.add(os.path.abspath(path))
    return sorted(found)


def main() -> None:
    fd = int(sys.argv[1])
    sys.path[0] = sys.argv[2]  # where the program's own modules are found, as in a fresh run
    started = set(sys.modules)
    failed = culprit = ""
    for name in sys.argv[3:]:
        culprit = name
        try:
            __import__(name)
        except BaseException as e:
            failed = f"cannot import {name!r}: {type(e).__name__}: {e}"
            break
        if _threads() > 1:  # a thread does not survive fork: the children would lack it
            failed = f"importing {name!r} started a thread, which a forked child would not have"
            break
    before = set(sys.modules)
    import marshal  # noqa: F401
    import socket

    machinery = set(sys.modules) - before
    sock = socket.socket(fileno=fd)
    _send(
        sock,
        {
            "ready": not failed,
            "error": failed,
            "culprit": culprit if failed else "",
            "version": sys.version,
            "files": _loaded_files(before - started),
        },
    )
    if failed:
        return
    last = 0
    while True:
        request, fds = _recv(sock)
        if last:
            try:
                os.waitpid(last, 0)
            except ChildProcessError:
                pass
            last = 0
        if request is None:
            for fd in fds:
                os.close(fd)
            return
        pid = os.fork()
        if pid == 0:
            _child(request, fds, sock, machinery)
        for fd in fds:
            os.close(fd)
        last = pid
        _send(sock, {"pid": pid})
        _send(sock, {"status": _status(pid)})


if __name__ == "__main__":
    main()
