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

The protocol, on the server's pipes: the parent writes one JSON line per candidate (an
id, the child's command-line arguments and its timeout); the server forks for it at once,
and writes an end line when that fork ends, carrying the id, the fork's verdict lines (its
stdout, a scratch file of its own), exit code and last line of stderr (or that it killed
the fork at the timeout), tagged with a token only this session knows
(:mod:`lockstep.oracles.verify_forks`).  Candidates sent together replay side by side:
:func:`in_turns` runs several ledgers' writes in threads that take turns, each giving its
turn up only while it waits for its verdicts, so the next ledger's candidate is prepared
and replayed meanwhile, and everything else runs one thread at a time, as before.  The
server and its forks stay in the recording's process group: a Ctrl-C or a ``kill`` of
the job reaches them as it reached a per-ledger interpreter.

Where ``os.fork`` does not exist, or the candidate needs another environment (a
``@record_io`` candidate names its target on the command line and adds to the
environment), :func:`~lockstep.oracles.verify.verify` starts an interpreter per candidate
as before.  A server is started again when the environment changed since it started
(a verdict must not depend on when the server started).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import itertools
import json
import os
import secrets
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, TypeVar

import msgspec

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

WARM_KEY: Final = "warm"
"""A request carrying it is replayed nowhere and never answered: the server only prepares
for its ``argv`` and starts its package's sub-server, so the package is imported there
while the tests run (:meth:`VerifySession.warm`), not when its first candidate comes."""


class SessionError(Exception):
    """The server could not replay a candidate: it died, or took longer than allowed."""

    def __init__(self, tail: str, *, timed_out: bool = False) -> None:
        super().__init__(tail)
        self.tail = tail
        self.timed_out = timed_out


class Replayed(msgspec.Struct, frozen=True):
    """What one fork wrote: its stdout (verdict lines), exit code, last stderr line."""

    stdout: bytes
    code: int
    tail: str


def forks() -> bool:
    """Whether this platform can verify candidates in forks of one interpreter."""
    return hasattr(os, "fork") and sys.platform != "win32"


def verifying_seed() -> int:
    """A fixed hash seed other than this process's, so set and dict-of-str order can differ.

    Fixed rather than random so that record's report is the same on every run; this
    process's seed is random unless ``PYTHONHASHSEED`` pins it, and then it is avoided.
    (Here, beside the session, so a recording can start its server before it imports the
    rest of the verification machinery.)
    """
    current = os.environ.get("PYTHONHASHSEED", "")
    return 2 if current == "1" else 1


def fresh_interpreter_env(seed: int, second_zone: bool = False) -> dict[str, str]:
    """What a verifying interpreter's environment sets over the recording's: another hash
    seed, no bytecode written, another local time zone (:mod:`.verify_zone`)."""
    return {
        "PYTHONHASHSEED": str(seed),
        "PYTHONDONTWRITEBYTECODE": "1",
        **verifying_env(second_zone),
    }


UNMEASURED: Final = ("COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG")
"""What starts coverage.py in every interpreter that inherits it (its ``.pth`` file reads
them; ``[run] patch = subprocess`` sets the second): a verifying interpreter replays
lockstep's candidates, not the suite, so it is never measured (traced, it replayed slower;
with ``patch = _exit`` each fork would have written the replay's lines as the suite's)."""


def verifying_environ(
    base: Mapping[str, str], seed: int, second_zone: bool = False
) -> dict[str, str]:
    """A verifying interpreter's whole environment: ``base`` (the recording's) without
    :data:`UNMEASURED`, and :func:`fresh_interpreter_env` over it."""
    env = {name: value for name, value in base.items() if name not in UNMEASURED}
    env.update(fresh_interpreter_env(seed, second_zone))
    return env


def _environment() -> dict[str, str]:
    return dict(os.environ)


class _Tools(msgspec.Struct, frozen=True):
    """What starting an interpreter uses, as it was when the session first started one."""

    popen: type[subprocess.Popen[bytes]]
    pipe: Callable[[], tuple[int, int]]
    select: Callable[..., tuple[list[Any], list[Any], list[Any]]]
    executable: str


@functools.cache
def _tools() -> _Tools:
    """``subprocess.Popen``, ``os.pipe``, ``select.select`` and ``sys.executable``, taken
    once, at the first start (a recording's configure): an interpreter queued by
    :meth:`VerifySession.warm_in_turn` starts between two tests, while a module's fixture
    may have patched any of them (``mock.patch("subprocess.Popen")``).  What ``Popen``
    itself calls may be patched too: :meth:`VerifySession.pump` then leaves the rest
    queued for the session's end."""
    import select
    import subprocess

    return _Tools(subprocess.Popen, os.pipe, select.select, sys.executable)


class _Answer(msgspec.Struct):
    """One candidate sent: its end line's fields once they come, or why none will."""

    done: threading.Event = msgspec.field(default_factory=threading.Event)
    fields: dict[str, Any] | None = None
    failed: str = ""


class Sent(msgspec.Struct):
    """Candidates sent to their forks (:meth:`VerifySession.sent`), not yet awaited."""

    session: VerifySession
    requests: list[tuple[tuple[int, bool], _Server, _Answer]]
    deadline: float

    def answers(self) -> list[Replayed]:
        """Each fork's answer, in the order sent, once every one came; the first that
        cannot answer raises.  Other threads of :func:`in_turns` run while this one waits."""
        with self.session.turns.given_up():
            answered = [
                answer.done.wait(max(0.0, self.deadline - time.monotonic()))
                for _, _, answer in self.requests
            ]
        return [
            self.session.replayed(key, server, answer, done)
            for (key, server, answer), done in zip(self.requests, answered, strict=True)
        ]


class _Server(msgspec.Struct):
    proc: subprocess.Popen[bytes]
    stderr: IO[bytes]
    env: dict[str, str]
    """``os.environ`` when the server started (a changed one starts a new server)."""
    token: str
    lock: threading.Lock = msgspec.field(default_factory=threading.Lock)
    """Held to send a request and to add or take an answer."""
    answers: dict[int, _Answer] = msgspec.field(default_factory=dict)
    """The candidates sent and not answered, by id."""
    reader: threading.Thread | None = None
    """Reads the end lines; started with the first request (no thread runs while the tests
    do: a test that forks a process must not meet one)."""
    ended: str | None = None
    """Why the server can answer no more (its last stderr line), once it has ended."""
    ready: int | None = None
    """The read end of a pipe whose write end the server closes once its imports are done
    (:meth:`is_ready`); None once that was seen."""

    def is_ready(self) -> bool:
        """Whether the server has done its imports (or ended): a look, never a wait."""
        if self.ready is None:
            return True
        try:
            readable = bool(_tools().select([self.ready], [], [], 0)[0])
        except (OSError, ValueError):
            readable = True
        if readable:
            self._forget_ready()
        return readable

    def _forget_ready(self) -> None:
        if self.ready is not None:
            with contextlib.suppress(OSError):
                os.close(self.ready)
            self.ready = None

    def send(self, request_id: int, argv: Sequence[str], timeout: float) -> _Answer:
        answer = _Answer()
        request = {"id": request_id, "argv": list(argv), "timeout": timeout}
        with self.lock:
            if self.ended is not None:
                raise SessionError(self.ended or "no output")
            self.answers[request_id] = answer
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write(json.dumps(request).encode() + b"\n")
                self.proc.stdin.flush()
            except OSError:
                del self.answers[request_id]
                raise SessionError(self.stderr_tail() or "no output") from None
            if self.reader is None:
                self.reader = threading.Thread(
                    target=self._read, name="lockstep-verify", daemon=True
                )
                self.reader.start()
        return answer

    def warm(self, argv: Sequence[str]) -> None:
        """Have the server prepare for ``argv`` and start its package's sub-server now
        (:data:`WARM_KEY`): nothing is answered, so no
        reader thread starts.  A server that cannot take it is met by the first candidate."""
        request = {"id": None, "argv": list(argv), "timeout": 0, WARM_KEY: True}
        with self.lock, contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()

    def _read(self) -> None:
        """The end lines, each to its candidate's answer, until the server's output ends;
        then every answer still awaited fails with the server's last words."""
        assert self.proc.stdout is not None
        marker = f'{{"{END_KEY}":"{self.token}",'.encode()
        fd = self.proc.stdout.fileno()
        buf = bytearray()
        while chunk := _read_some(fd):
            buf += chunk
            end = buf.rfind(b"\n")
            if end < 0:
                continue
            lines = bytes(buf[:end]).split(b"\n")
            del buf[: end + 1]
            for line in lines:
                if line.startswith(marker):
                    self._answer(json.loads(line))
        self.proc.wait()
        with self.lock:
            self.ended = self.stderr_tail()
            waiting, self.answers = self.answers, {}
        for answer in waiting.values():
            answer.failed = self.ended or "no output"
            answer.done.set()

    def _answer(self, fields: dict[str, Any]) -> None:
        with self.lock:
            answer = self.answers.pop(int(fields.get("id", -1)), None)
        if answer is not None:
            answer.fields = fields
            answer.done.set()

    def stop(self) -> None:
        """End the server (closing its stdin ends its loop); kill it if it lingers."""
        self.ending()
        try:
            self.proc.wait(timeout=5)
        except Exception:
            self.kill()
        if self.reader is not None:
            self.reader.join(timeout=5)
        with contextlib.suppress(OSError):
            if self.proc.stdout is not None:
                self.proc.stdout.close()
        self.stderr.close()
        self._forget_ready()

    def ending(self) -> None:
        """Tell the server to end (its stdin closed), without waiting for it: several end
        side by side, then :meth:`stop` waits for each."""
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()

    def kill(self) -> None:
        """The server (its forks end with it: they hold none of its pipes)."""
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


def _read_some(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 16)
    except OSError:  # closed by stop() after a kill
        return b""


class Turns:
    """Threads that run one at a time, each giving its turn up only while it waits for a
    verifying fork (:meth:`VerifySession.replay`).

    So ledgers are written as they were one after another -- no two threads ever run
    lockstep's code at once, and a thread is only ever switched away from at that one
    wait -- while the server replays several ledgers' candidates side by side."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._mine = threading.local()

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Hold the turn for the block."""
        with self._lock:
            self._mine.held = True
            try:
                yield
            finally:
                self._mine.held = False

    @contextmanager
    def given_up(self) -> Iterator[None]:
        """Within the block, another thread may run (when this one holds the turn)."""
        if not getattr(self._mine, "held", False):
            yield
            return
        self._mine.held = False
        self._lock.release()
        try:
            yield
        finally:
            self._lock.acquire()
            self._mine.held = True


class VerifySession(msgspec.Struct):
    """The verifying interpreters of one recording run: one per hash seed (and zone), started
    once each.

    Use as ``with session.active(): ...``; :meth:`close` ends the interpreters.
    """

    root: Path
    token: str = msgspec.field(default_factory=lambda: secrets.token_hex(8))
    _servers: dict[tuple[int, bool], _Server] = msgspec.field(default_factory=dict)
    """By hash seed, and whether in the second verifying zone."""
    _retired: list[_Server] = msgspec.field(default_factory=list)
    """Servers replaced (the environment changed) while answers were awaited: stopped at
    :meth:`close`."""
    _lock: threading.Lock = msgspec.field(default_factory=threading.Lock)
    _ids: Iterator[int] = msgspec.field(default_factory=itertools.count)
    turns: Turns = msgspec.field(default_factory=Turns)
    """What :func:`in_turns` threads share: a replay gives the turn up while it waits."""
    _queued: dict[int, tuple[list[Sequence[str]], dict[str, str]]] = msgspec.field(
        default_factory=dict
    )
    """Hash seeds whose interpreters start one after another (:meth:`warm_in_turn`), with
    what each is to import and the environment when they were queued (a test may have
    changed ``os.environ`` when one starts)."""
    _newest: _Server | None = None
    """The interpreter started last: the next queued one starts once it is ready."""
    _pump_failed: bool = False
    """A start between tests failed: what is queued waits for :meth:`start_queued`."""
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

    def warm(self, seed: int, argvs: Iterable[Sequence[str]]) -> None:
        """Start the interpreter for ``seed`` and have it import, in a sub-server per
        package, the targets' modules of ``argvs`` (candidates' arguments but their
        folder) while the tests run, rather than when the first candidate of each comes."""
        if forks():
            server = self._server((seed, False))
            for argv in argvs:
                server.warm(argv)

    def warm_in_turn(self, seeds: Iterable[int], argvs: Iterable[Sequence[str]]) -> None:
        """As :meth:`warm` for each of ``seeds``, but one interpreter after another: the next
        starts (at a :meth:`pump`) once the one started before it has done its imports.

        Each interpreter's start is a tenth of a second of CPU or more; five started at
        once while pytest configures and collects take both cores from it (semver's
        collection took twice its plain time), while one at a time they run on the core
        the tests leave idle.  Any still waiting when a candidate needs it starts then."""
        if not forks():
            return
        wanted = [list(argv) for argv in argvs]
        env = _environment()
        with self._lock:
            for seed in seeds:
                if (seed, False) not in self._servers:
                    self._queued.setdefault(seed, ([], env))[0].extend(wanted)
        self.pump()

    def pump(self) -> None:
        """Start the next interpreter :meth:`warm_in_turn` queued, if the one started before
        it is ready.  Cheap enough to call after every test: a dict's truth when nothing
        waits, one ``select`` with no timeout when something does."""
        if not self._queued or self._pump_failed:
            return
        newest = self._newest
        if newest is not None and not newest.is_ready():
            return
        with self._lock:
            seed = next(iter(self._queued), None)
        if seed is None:
            return
        try:
            self._server((seed, False))
        except Exception:  # a test's patch reached the start: the rest start at the end
            self._pump_failed = True

    def start_queued(self) -> None:
        """Start every interpreter still queued, now (the candidates are about to come)."""
        while self._queued:
            with self._lock:
                seed = next(iter(self._queued), None)
            if seed is None:
                return
            self._server((seed, False))

    def _server(self, key: tuple[int, bool]) -> _Server:
        with self._lock:
            server = self._servers.get(key)
            env = _environment()
            if server is not None and (
                server.ended is not None or server.proc.poll() is not None or server.env != env
            ):
                del self._servers[key]
                if server.answers:
                    self._retired.append(server)
                else:
                    server.stop()
                server = None
            if server is None:
                queued = self._queued.get(key[0]) if not key[1] else None
                # a queued interpreter starts in the environment it was queued in: one
                # started while a test had changed it would be started again at the end
                server = self._spawn(key, queued[1] if queued is not None else env)
                if queued is not None:
                    del self._queued[key[0]]
                self._servers[key] = server
                self._newest = server
                for argv in queued[0] if queued is not None else []:
                    server.warm(argv)
            return server

    def _spawn(self, key: tuple[int, bool], env: dict[str, str]) -> _Server:
        import subprocess

        tools = _tools()
        child_env = verifying_environ(env, *key)
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _Server.stop
        ready, done = tools.pipe()
        try:
            proc = tools.popen(
                [tools.executable, "-m", CHILD_MODULE, "--serve", self.token, str(done)],
                cwd=self.root,
                env=child_env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                pass_fds=(done,),
            )
        except BaseException:
            os.close(ready)
            stderr.close()
            raise
        finally:
            os.close(done)
        self.starts += 1
        return _Server(proc, stderr, env, self.token, ready=ready)

    def replay(
        self, seed: int, argv: Sequence[str], timeout: float, second_zone: bool = False
    ) -> Replayed:
        """Replay one candidate (``argv``: the child's arguments) in a fork of the server
        for ``seed`` (``second_zone``: the one in the second verifying zone).  Other
        threads of :func:`in_turns` run while this one waits."""
        return self.sent([seed], [argv], timeout, second_zone).answers()[0]

    def sent(
        self,
        seeds: Sequence[int],
        argvs: Sequence[Sequence[str]],
        timeout: float,
        second_zone: bool = False,
    ) -> Sent:
        """The candidate sent to be replayed under each hash seed of ``seeds`` at once, each
        in a fork of that seed's server, with the child's arguments ``argvs`` of that seed
        (which may name the cases it replays); :meth:`Sent.answers` awaits them, so the
        forks replay while this thread prepares what it needs only after their answer."""
        requests: list[tuple[tuple[int, bool], _Server, _Answer]] = []
        for seed, seed_argv in zip(seeds, argvs, strict=True):
            key = (seed, second_zone)
            server = self._server(key)
            with self._lock:
                request_id = next(self._ids)
                self.forked += 1
            requests.append((key, server, server.send(request_id, list(seed_argv), timeout)))
        return Sent(self, requests, time.monotonic() + timeout + SERVER_GRACE)

    def replayed(
        self, key: tuple[int, bool], server: _Server, answer: _Answer, answered: bool
    ) -> Replayed:
        """What one sent candidate's fork answered (see :meth:`Sent.answers`)."""
        if not answered:
            server.kill()
            self._drop(key, server)
            raise SessionError("timed out", timed_out=True)
        if answer.fields is None:
            self._drop(key, server)
            raise SessionError(answer.failed)
        if answer.fields.get("timeout"):
            raise SessionError("timed out", timed_out=True)
        out = str(answer.fields.get("out", "")).encode("latin-1")
        return Replayed(out, int(answer.fields["code"]), str(answer.fields["tail"]))

    def _drop(self, key: tuple[int, bool], server: _Server) -> None:
        with self._lock:
            if self._servers.get(key) is server:
                del self._servers[key]
        server.stop()

    def close(self) -> None:
        """End every interpreter of the session, and wait for each to end."""
        with self._lock:
            servers = [*self._servers.values(), *self._retired]
            self._servers.clear()
            self._retired.clear()
        for server in servers:
            server.ending()  # every server winds down at once
        for server in servers:
            server.stop()

    def ending(self) -> None:
        """Tell every interpreter of the session to end, without waiting for any: a
        recording's servers wind down while pytest writes its summary, and :meth:`close`
        (at pytest's unconfigure) then finds them ended instead of waiting ~7 ms here."""
        with self._lock:
            servers = [*self._servers.values(), *self._retired]
        for server in servers:
            server.ending()

    @contextmanager
    def active(self) -> Iterator[VerifySession]:
        """Candidates verified inside this block go to this session."""
        reset = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(reset)


T = TypeVar("T")

HANDOFF_SECONDS: Final = 0.0005
"""The interpreter's switch interval while :func:`in_turns` runs (Python's is 5 ms): a
thread whose verdict came (the reader thread, then the ledger's own) waits at most this
long for the thread preparing the next candidate to let it run, instead of 5 ms per
hand-over, several per ledger."""


def in_turns(session: VerifySession | None, jobs: int, work: Sequence[Callable[[], T]]) -> list[T]:
    """Run each of ``work`` and return their results in order: in ``jobs`` threads taking
    :class:`Turns` under ``session`` (one at a time, switched only while a verdict is
    awaited), or one after another here when there is no session or one job.

    Each thread runs in a copy of this thread's context (the active session) and within
    its own :func:`~lockstep.store.atomic.folder_syncs_batched` block; meanwhile the
    interpreter switches threads every :data:`HANDOFF_SECONDS`.  What a call raises
    is raised here, after every thread has ended (the first in ``work``'s order).
    """
    from lockstep.store.atomic import folder_syncs_batched

    if session is None or jobs <= 1 or len(work) <= 1:
        return [job() for job in work]
    results: list[Any] = [None] * len(work)
    raised: dict[int, BaseException] = {}
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, HANDOFF_SECONDS))
    queue = iter(range(len(work)))
    taking = threading.Lock()

    def worker() -> None:
        with folder_syncs_batched(meanwhile=session.turns.given_up):
            while True:
                with taking:
                    index = next(queue, None)
                if index is None:
                    return
                with session.turns.turn():
                    try:
                        results[index] = work[index]()
                    except BaseException as e:  # raised in the caller's thread
                        raised[index] = e

    threads = [
        threading.Thread(target=contextvars.copy_context().run, args=(worker,), daemon=True)
        for _ in range(min(jobs, len(work)))
    ]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except BaseException:  # a Ctrl-C: end the servers, so no thread waits on them
        session.close()
        raise
    finally:
        sys.setswitchinterval(interval)
    if raised:
        raise raised[min(raised)]
    return results


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


VERIFYING_JOBS_MOST: Final = 4
"""Ledgers verified side by side at most when ``[lockstep] jobs`` does not say."""


def verifying_jobs(configured: int) -> int:
    """How many ledgers a recording session verifies side by side: ``[lockstep] jobs`` when
    set (1: one after another), else two per core the process may run on, at most
    :data:`VERIFYING_JOBS_MOST`: while one ledger's fork replays, the recording prepares
    the next candidate, so a core is not left idle between them."""
    if configured > 0:
        return configured
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min(VERIFYING_JOBS_MOST, 2 * (cores or 1))
