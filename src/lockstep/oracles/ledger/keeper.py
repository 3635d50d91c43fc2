"""``pytest --lockstep``: ledgers replay in forks of a process kept from before the suite ran.

A ledger's items replayed its rows in a fork of the pytest process (:mod:`.isolated`), as
``lockstep replay`` forks its own.  But by then the pytest process had collected the
project's test modules and run whichever of its tests came first, and what those left
behind was in every fork: cssutils' ``test_settings`` adds a production to the
module-global ``PRODUCTIONS`` for good, and seven rows of ``CSSParser.__init__`` replayed
red on unchanged code, green under ``lockstep replay``.

So, as pytest configures, before it collects anything, the plugin forks a *keeper*: a copy
of the process that has imported no test module and run no test.  An item asks it for its
ledger by name; the keeper replays that ledger as ``lockstep replay`` does (the target
imported there, the rows in a fork of their own) and streams the outcomes back through a
pipe, in :mod:`.isolated`'s messages.  Ledgers are asked for one at a time, by one thread:
the answer to one is read whole before the next is asked.  The keeper ends when its
requests end (:meth:`Keeper.close`, or the pytest process ending); where it cannot start
(no ``os.fork``) or has ended, a ledger replays in a fork of the pytest process, as before.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Final

from lockstep.errors import TargetError
from lockstep.oracles.ledger import isolated

if TYPE_CHECKING:
    from lockstep.model import Outcome

Replay = Callable[[str], Iterator["Outcome"]]
"""What the keeper runs for a ledger's name: its outcomes, as ``lockstep replay`` gives them."""

_CURRENT: list[Keeper] = []
"""The keeper of this process's ``pytest --lockstep`` session, once started."""

ENDING_SECONDS: Final = 5.0
"""How long :meth:`Keeper.close` waits for the keeper to end before it kills it."""


class Keeper:
    """The pytest process's end of a keeper: where it sends names and reads outcomes."""

    def __init__(self, pid: int, requests: IO[bytes], answers: IO[bytes]) -> None:
        self.pid = pid
        self.requests = requests
        self.answers = answers
        self.ended = False

    def replay(self, name: str) -> Iterator[Outcome]:
        """The outcomes of ledger ``name``, replayed by the keeper; what its replay raised
        is raised here (a target that does not import, a replay cut short)."""
        try:
            self.requests.write(name.encode() + b"\n")
            self.requests.flush()
        except OSError:
            self.ended = True
            raise TargetError("the process kept for replaying ledgers has ended") from None
        done: list[bool] = []
        try:
            yield from isolated.received(self.answers, done)
        finally:
            if not done:  # it died, or its answer was left half read: none can follow
                self.ended = True
            printed = isolated.received_text(self.answers) if done else None
            if printed:  # where the item's own output goes (pytest shows it with a failure)
                sys.stderr.write(printed)
        if not done:
            raise TargetError("the process kept for replaying ledgers ended before its answer")

    def close(self) -> None:
        """End the keeper (its requests end) and reap it."""
        with contextlib.suppress(OSError):
            self.requests.close()
        with contextlib.suppress(OSError):
            self.answers.close()
        deadline = time.monotonic() + ENDING_SECONDS
        while True:
            try:
                pid, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return
            if pid or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        if not pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)


def start(replay: Replay, prepare: Callable[[], None]) -> Keeper | None:
    """Fork this process's keeper now (before the suite is collected), which runs
    ``prepare()`` once (the warning filters a fresh interpreter has) and then ``replay`` for
    each ledger asked for; None where this platform cannot fork, or one was started."""
    if not isolated.forks() or _CURRENT:
        return None
    request_read, request_write = os.pipe()
    answer_read, answer_write = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the keeper's own lines run in another process
        os.close(request_write)
        os.close(answer_read)
        _keep(replay, prepare, request_read, answer_write)
    os.close(request_read)
    os.close(answer_write)
    keeper = Keeper(pid, os.fdopen(request_write, "wb"), os.fdopen(answer_read, "rb"))
    _CURRENT.append(keeper)
    return keeper


def current() -> Keeper | None:
    """This process's keeper, while it can still answer."""
    return _CURRENT[0] if _CURRENT and not _CURRENT[0].ended else None


def stop() -> None:
    """End this process's keeper, if any."""
    while _CURRENT:
        _CURRENT.pop().close()


def _keep(
    replay: Replay, prepare: Callable[[], None], requests_fd: int, answers_fd: int
) -> None:  # pragma: no cover - runs in the keeper
    """The keeper's life: each ledger named on its requests replayed, its outcomes sent."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # a Ctrl-C ends it with pytest, quietly
        prepare()
        with os.fdopen(requests_fd, "rb") as requests, os.fdopen(answers_fd, "wb") as answers:
            for line in requests:
                with _printed() as printed:
                    produce = functools.partial(replay, line.decode().strip())
                    isolated.stream_outcomes(produce, answers)
                isolated.send_text(answers, printed())
    except BaseException:
        code = 1
    finally:
        os._exit(code)


MOST_PRINTED: Final = 1 << 20
"""Most bytes of a replay's output sent back to the item that asked for it."""


@contextlib.contextmanager
def _printed() -> Iterator[Callable[[], str]]:  # pragma: no cover - runs in the keeper
    """Within the block, what this process and its forks print goes to a file of its own
    (it went to pytest's terminal as the suite started, not to the asking item's output);
    the function given reads it, once the block has ended."""
    with tempfile.TemporaryFile() as spool:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        saved = [os.dup(1), os.dup(2)]
        streams = (sys.stdout, sys.stderr)
        os.dup2(spool.fileno(), 1)
        os.dup2(spool.fileno(), 2)
        # the streams pytest had put in place (its capture's) write elsewhere than fd 1 and 2
        printing = open(os.dup(spool.fileno()), "w", encoding="utf-8", errors="replace")  # noqa: SIM115
        sys.stdout = sys.stderr = printing
        text: list[str] = []
        try:
            yield lambda: "".join(text)
        finally:
            with contextlib.suppress(Exception):
                printing.close()  # flushed
            sys.stdout, sys.stderr = streams
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            spool.seek(0)
            text.append(spool.read(MOST_PRINTED).decode("utf-8", "replace"))


__all__ = ["Keeper", "current", "start", "stop"]
