"""Each ledger replays alone, in a fork of the replaying process, as it was verified.

Recording verifies each ledger in a fork of its own of a pristine interpreter
(:mod:`lockstep.oracles.verify_session`): its rows are written because they reproduce when
no other ledger's calls ran before them.  ``lockstep replay`` of several ledgers ran them
one after another in one process, so a ledger whose calls change shared state (a value
cached on a module-level object, a registry filled) changed what the next ledger's calls
returned: unchanged code replayed red, and green again when that ledger was replayed alone
or in the other order.  Now each ledger's rows replay in a fork of the replaying process,
which has imported the ledger's target but made none of its calls; whatever one ledger's
calls change ends with its fork, and the order of the ledgers no longer matters.

The fork sends its outcomes back through a pipe in pickled batches (a passing case as its
oracle and id), and an exception it raises is raised here.  Pickle is safe here: both ends
are this process and its fork, and nothing read from an oracle file is unpickled.  Where
``os.fork`` does not exist, the rows replay in this process as before.  A fork that ends
before its last row (a replayed call that exits the process) leaves this process running:
the ledger's rows not replayed are errors that say how it ended.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import pickle
import signal
import sys
import time
from collections.abc import Callable, Iterator
from typing import IO, Any, Final

from lockstep.errors import LockstepError, TargetError
from lockstep.model import Outcome, Status

BATCH_CASES: Final = 1024
"""Outcomes sent in one message at most."""

BATCH_SECONDS: Final = 0.05
"""How long a slow ledger's outcomes wait in the fork before they are sent anyway (a
progress bar keeps moving)."""

_HEAD: Final = 8
"""Bytes of the length prefix of each message."""


def forks() -> bool:
    """Whether ledgers can replay in forks here."""
    return hasattr(os, "fork") and sys.platform != "win32"


def in_fork(produce: Callable[[], Iterator[Outcome]]) -> Iterator[Outcome]:
    """The outcomes ``produce()`` yields, produced in a fork of this process."""
    read_fd, write_fd = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    # The fork's collector leaves what it inherited alone: traversing it would copy every
    # page it lives on (and take the time a collection of the whole process takes).
    gc.freeze()
    try:
        pid = os.fork()
    except BaseException:
        gc.unfreeze()
        raise
    if pid == 0:  # pragma: no cover - the fork's own lines run in another process
        os.close(read_fd)
        _produce_in_fork(produce, write_fd)
    gc.unfreeze()
    os.close(write_fd)
    ended: list[bool] = []
    try:
        with os.fdopen(read_fd, "rb") as pipe:
            yield from received(pipe, ended)
    finally:
        finished = bool(ended)
        if not finished:  # the consumer stopped early, or the fork died
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if not finished:  # the change's failure (a call that ends the process), not bad input
        raise TargetError(
            f"the process replaying its rows ended before its last row ({_ended(status)})"
        )


_PASS: Final = Status.PASS


def _passed(oracle: str, case_id: str) -> Outcome:
    """``Outcome(oracle, case_id, Status.PASS)``: a passing case travels from the fork as
    its oracle and id alone."""
    return Outcome(oracle, case_id, _PASS)


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(number).name}"
        return f"killed by signal {number}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def _receive(pipe: IO[bytes]) -> tuple[str, Any] | None:
    head = pipe.read(_HEAD)
    if len(head) < _HEAD:
        return None
    body = pipe.read(int.from_bytes(head, "big"))
    message: tuple[str, Any] = pickle.loads(body)  # our own fork's message
    return message


def _send(out: IO[bytes], what: str, payload: object) -> None:
    body = pickle.dumps((what, payload), protocol=pickle.HIGHEST_PROTOCOL)
    out.write(len(body).to_bytes(_HEAD, "big") + body)
    out.flush()


def _fresh_streams() -> None:
    """New ``sys.stdout``/``sys.stderr`` on the same descriptors: a lock another thread of
    this process (a progress bar's) held at the fork stays held in the old objects."""
    fresh: dict[int, IO[str]] = {}
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            continue  # not a file (captured): nothing another thread writes through
        if fd not in fresh:
            fresh[fd] = open(  # noqa: SIM115 - the fork ends with os._exit
                os.dup(fd),
                "w",
                encoding=getattr(stream, "encoding", None) or "utf-8",
                errors=getattr(stream, "errors", None) or "strict",
                buffering=1,
            )
        setattr(sys, name, fresh[fd])


def _produce_in_fork(
    produce: Callable[[], Iterator[Outcome]], fd: int
) -> None:  # pragma: no cover - runs in the fork
    code = 0
    try:
        _fresh_streams()
        _without_our_command_line()
        _without_a_terminal()
        with contextlib.suppress(OSError):
            os.dup2(2, 1)  # what the replayed code prints is no part of lockstep's output
        dropped, sys.stdout = sys.stdout, sys.stderr
        if dropped is not sys.stderr:
            with contextlib.suppress(Exception):
                dropped.close()  # (left to the collector, it warned of an unclosed file)
        with os.fdopen(fd, "wb") as out:
            stream_outcomes(produce, out)
    except BaseException:
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def under_our_command_line() -> bool:
    """Whether this process runs inside a click command (``lockstep replay``'s own): its
    context is on click's stack, where a replayed call of click would find it."""
    stack = sys.modules.get("click.globals")
    return stack is not None and stack.get_current_context(silent=True) is not None


def _without_our_command_line() -> None:
    """In a fork: click's stack of contexts emptied.  lockstep's command line is a click
    program, so ``lockstep replay`` replayed click's own ``get_current_context(silent=True)``
    with lockstep's context on the stack, where the fresh interpreter that verified the
    row (and pytest) had none: red on unchanged code.  The fork never returns to the
    command line, so nothing of it needs the stack again."""
    stack = sys.modules.get("click.globals")
    if stack is None:
        return
    with contextlib.suppress(Exception):
        while stack.get_current_context(silent=True) is not None:
            stack.pop_context()


def _without_a_terminal() -> None:
    """In a fork: a session of its own, with no controlling terminal.  The fresh
    interpreter that verified the rows had none to read (a recording's is started under
    pytest, whose input is no terminal either), but ``lockstep replay`` typed in a
    terminal handed its fork one: click's ``prompt(hide_input=True)`` read the password
    from ``/dev/tty`` through ``getpass`` and waited out the ledger's timeout.  Without
    one, ``getpass`` reads the empty standard input, as when verified.  The fork still
    ends with its parent: the parent kills it when it stops reading."""
    with contextlib.suppress(OSError):
        os.setsid()


def stream_outcomes(produce: Callable[[], Iterator[Outcome]], out: IO[bytes]) -> None:
    """Send what ``produce()`` yields to ``out`` in batches, then its end, or what it raised
    (read by :func:`received`)."""
    batch: list[Outcome | tuple[str, str]] = []
    sent = time.monotonic()
    try:
        for outcome in produce():
            plain = (
                outcome.status is _PASS
                and not outcome.drifts
                and not outcome.note
                and not outcome.rules_fired
            )
            batch.append((outcome.oracle, outcome.case_id) if plain else outcome)
            if len(batch) >= BATCH_CASES or time.monotonic() - sent > BATCH_SECONDS:
                _send(out, "cases", batch)
                batch, sent = [], time.monotonic()
    except BaseException as e:  # raised where the outcomes are read
        if batch:
            _send(out, "cases", batch)
        _send(out, "raise", _picklable(e))
    else:
        if batch:
            _send(out, "cases", batch)
        _send(out, "end", None)


def send_text(out: IO[bytes], text: str) -> None:
    """One text after a replay's end (what it printed, :mod:`.keeper`)."""
    _send(out, "text", text)


def received_text(pipe: IO[bytes]) -> str | None:
    """The text :func:`send_text` sent next; None if none came."""
    message = _receive(pipe)
    if message is None or message[0] != "text" or not isinstance(message[1], str):
        return None
    return message[1]


def received(pipe: IO[bytes], ended: list[bool]) -> Iterator[Outcome]:
    """The outcomes :func:`stream_outcomes` sent through ``pipe``, up to its end (then
    ``ended`` holds True); what the producer raised is raised here."""
    while (message := _receive(pipe)) is not None:
        what, payload = message
        if what == "end":
            ended.append(True)
            return
        if what == "raise":
            ended.append(True)
            raise payload
        for item in payload:  # a passing case comes as its oracle and id
            yield _passed(*item) if type(item) is tuple else item


def _picklable(error: BaseException) -> BaseException:
    """``error`` itself when it survives pickling, else a :class:`LockstepError` saying it."""
    try:
        again = pickle.loads(pickle.dumps(error))  # our own bytes
    except Exception:
        return LockstepError(f"{type(error).__name__}: {error}")
    return again if isinstance(again, BaseException) else error


__all__ = ["forks", "in_fork", "received", "received_text", "send_text", "stream_outcomes"]
