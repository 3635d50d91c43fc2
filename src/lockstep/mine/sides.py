"""One fresh interpreter per version of the code, fed inputs over pipes.

``replay --against REV`` runs the old and the new implementation side by side
with the same process model as record's verification: each side is a fresh
interpreter started in its own tree (``python -m lockstep.cli.against_child``),
with that tree first on ``sys.path`` and the same fixed hash seed, that imports
the target once and then answers requests, one JSON line each way:

* ``{"op": "freeze", "value": INPUT}`` -- run the input, answer the frozen case
  (what record would write for it);
* ``{"op": "check", "value": CASE}`` -- replay the case with the oracle's own
  comparison, answer the outcome.

Values are canonical (:mod:`lockstep.canon`) and encoded with msgspec; what the
target prints goes to the child's stderr, never into the protocol.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

import msgspec

from lockstep.canon import JSON
from lockstep.errors import LockstepError
from lockstep.mine.limits import TooSlow, time_limit
from lockstep.model import Drift, Outcome, Status
from lockstep.oracles.mining import MiningSubject

CHILD_MODULE: Final = "lockstep.cli.against_child"
HASH_SEED: Final = "0"
"""Both sides use one hash seed: a set printed in another order is not the change's doing."""


class Request(msgspec.Struct, frozen=True):
    op: str
    value: Any = None


class Reply(msgspec.Struct, frozen=True):
    ok: bool
    value: Any = None
    error: str = ""


_encode = msgspec.json.Encoder().encode
_decode_request = msgspec.json.Decoder(Request).decode
_decode_reply = msgspec.json.Decoder(Reply).decode


class Unanswerable(Exception):
    """The side could not freeze the input (a value no case can hold): skip it."""


# --------------------------------------------------------------------------- in the child


def answer(subject: MiningSubject, line: bytes) -> bytes:
    """The child's reply to one request line (never raises for a bad input or outcome).

    Each request runs under the oracle's ``timeout`` (:mod:`.limits`): a version that
    loops on an input answered nothing, and ``replay --against`` waited for it for good.
    An input the old version does not return from is skipped like one it cannot freeze;
    a case the new version does not return from is an ERROR, a difference."""
    try:
        request = _decode_request(line)
    except Exception as e:
        return _encode(Reply(False, error=f"{type(e).__name__}: {e}")) + b"\n"
    timeout = subject.timeout
    try:
        with time_limit(timeout):
            if request.op == "freeze":
                return _encode(Reply(True, subject.freeze(request.value))) + b"\n"
            if request.op == "check":
                outcome = subject.check(request.value)
                return _encode(Reply(True, msgspec.to_builtins(outcome))) + b"\n"
        return _encode(Reply(False, error=f"unknown request {request.op!r}")) + b"\n"
    except TooSlow:
        late = f"did not return within {timeout:g} s (the oracle's timeout)"
        if request.op != "check":
            return _encode(Reply(False, error=late)) + b"\n"
        case = request.value if isinstance(request.value, dict) else {}
        stopped = Outcome("", str(case.get("id", "")), Status.ERROR, note=late)
        return _encode(Reply(True, msgspec.to_builtins(stopped))) + b"\n"
    except Exception as e:  # a value no case can hold (CanonError and the like): skipped
        return _encode(Reply(False, error=f"{type(e).__name__}: {e}")) + b"\n"


READY: Final = b'{"ok":true,"value":"ready"}\n'


# --------------------------------------------------------------------------- in the parent


def outcome_from(value: Any) -> Outcome:
    """An :class:`Outcome` sent by a child (``msgspec.to_builtins`` of one)."""
    drifts = tuple(Drift(**d) for d in value.get("drifts", ()))
    return Outcome(
        value["oracle"],
        value["case_id"],
        Status(value["status"]),
        drifts,
        note=value.get("note", ""),
    )


@dataclass
class Side:
    """A running child for one version of the code."""

    label: str
    proc: subprocess.Popen[bytes]
    stderr: IO[bytes]

    def _tail(self) -> str:
        self.stderr.seek(0)
        lines = self.stderr.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else "no output"

    def send(self, op: str, value: JSON) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            stdin.write(_encode(Request(op, value)) + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError):
            raise LockstepError(f"{self.label}: the interpreter exited ({self._tail()})") from None

    def receive(self) -> Reply:
        stdout = self.proc.stdout
        assert stdout is not None
        line = stdout.readline()
        if not line:
            self.proc.wait()
            raise LockstepError(f"{self.label}: the interpreter exited ({self._tail()})")
        return _decode_reply(line)

    def ask(self, op: str, value: JSON) -> Any:
        """Send one request and read its reply; :class:`Unanswerable` when the side refused
        the input, a :class:`LockstepError` when the interpreter died."""
        self.send(op, value)
        reply = self.receive()
        if not reply.ok:
            raise Unanswerable(reply.error)
        return reply.value


def pipeline(old: Side, new: Side, values: list[JSON]) -> list[Reply | str]:
    """Freeze every value on ``old`` and check each case on ``new``, overlapped.

    Both interpreters work at once (the old one on input k+1 while the new one checks
    case k), so a batch costs about the slower side's time, not the sum.  Returns the
    new side's reply per value, or, where the old side could not freeze it, the old
    side's reason (a str).
    """
    flags: queue.Queue[str | BaseException | None] = queue.Queue()
    errors: list[BaseException] = []
    threads = [
        threading.Thread(target=_feed, args=(old, values, errors), daemon=True),
        threading.Thread(target=_relay, args=(old, new, len(values), flags), daemon=True),
    ]
    for thread in threads:
        thread.start()
    out: list[Reply | str] = []
    for _ in values:
        flag = flags.get()
        if isinstance(flag, BaseException):
            raise flag
        out.append(new.receive() if flag is None else flag)
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return out


def _feed(old: Side, values: list[JSON], errors: list[BaseException]) -> None:
    try:
        for value in values:
            old.send("freeze", value)
    except BaseException as e:
        errors.append(e)


def _relay(
    old: Side, new: Side, count: int, flags: queue.Queue[str | BaseException | None]
) -> None:
    """Each case the old side froze goes on to the new side; the flags say which did
    (None) and why the others were not (the old side's error)."""
    try:
        for _ in range(count):
            reply = old.receive()
            if reply.ok:
                new.send("check", reply.value)
                flags.put(None)
            else:
                flags.put(reply.error or "its outcome could not be frozen")
    except BaseException as e:
        flags.put(e)


@contextmanager
def side(label: str, config_path: Path, root: Path, name: str) -> Iterator[Side]:
    """Start the child for ``root`` (the project root inside one version's tree); always stopped."""
    env = {**os.environ, "PYTHONHASHSEED": HASH_SEED, "PYTHONDONTWRITEBYTECODE": "1"}
    argv = [sys.executable, "-m", CHILD_MODULE, "--config", str(config_path)]
    argv += ["--root", str(root), name]
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(
            argv, cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr
        )
        running = Side(label, proc, stderr)
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            if first != READY:
                proc.wait()
                raise LockstepError(f"{label}: cannot run the target ({running._tail()})")
            yield running
        finally:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
