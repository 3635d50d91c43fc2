"""What a call prints: captured while it runs, kept in its row, compared on replay.

A ledger's row freezes what a call returns, raises and changes in its arguments; a
function whose behaviour is printing (a billing export that prints its lines and returns
their count, natsort's ``__main__.sort_and_print_entries``) replayed green whatever it
printed.  While a recorded call runs, ``sys.stdout`` is a :class:`Tee`: each text written
goes on to the stream that was there (pytest's capture, a terminal, a test's
``redirect_stdout``) and is kept.  A call that printed keeps the text in its row's
``mutated`` under :data:`PRINTED` (what the call changed besides its result), so a call
printing otherwise than before varies.  A row whose printed text alone a fresh
interpreter prints otherwise (a timestamp, what the call read from a test's stdin) is
kept without it, verified again as such (:mod:`.verified_rows`): its result is still
guarded, as it was before rows kept printed text.

Replay compares printed text only where the row kept some: a row recorded before rows
kept it, or whose call printed nothing (or printed through a ``print`` a test had
patched), says nothing of it, so replaying it never drifts on it.  While a call runs the
stream is no terminal (``isatty()`` is false: a recording under pytest's capture saw a
pipe, and a replay in a terminal compares what it saw), and bytes written to its
``buffer`` are kept too.  A replay keeps what the call prints in a UTF-8 stream of its
own, and writes it where it would have gone once the call ends (a pytest item's captured
output, replay's stderr).  What is written to file descriptor 1 directly, or through a stream a module kept
before the call (a logging handler's), is not seen, alike when recording and replaying.
An ``async def`` target's printing is not captured (other tasks print meanwhile), nor
what an iterator result prints while its caller consumes it.
"""

from __future__ import annotations

import contextlib
import io
import sys
from threading import get_ident
from typing import Any, Final

PRINTED: Final = "(stdout)"
"""The key of the printed text in a row's ``mutated``: no argument, by position or by
name, is called so (a name is an identifier), and it is no tag (no ``$``)."""

PRINTED_ASPECT: Final = "printed"
"""The aspect of a drift of what a call printed (compared after every other aspect)."""

MOST_PRINTED: Final = 1 << 20
"""Characters a call may print and still be kept whole; past them the call is skipped."""


class Tee:
    """``sys.stdout`` while a call runs: what is written goes on to ``out`` and is kept
    (up to :data:`MOST_PRINTED` characters)."""

    __slots__ = ("_back", "_kept", "_open", "_out", "_sinks", "_size", "_thread")

    def __init__(self, out: Any, back: Any = None, *, sinks: bool = False) -> None:
        self._out = out
        self._back = out if back is None else back  # what sys.stdout was
        self._sinks = sinks  # out is a replay's sink: what was printed is shown at the end
        self._kept: list[str] = []
        self._size = 0
        self._open = True
        self._thread = get_ident()

    def write(self, text: str) -> int:
        if self._open and type(text) is str:
            self.keep(text)
        return self._out.write(text)  # type: ignore[no-any-return]

    def keep(self, text: str) -> None:
        self._size += len(text)
        if self._size <= MOST_PRINTED:
            self._kept.append(text)

    def isatty(self) -> bool:
        """Never a terminal: what a call prints is frozen as a pipe gets it, so a replay
        in a terminal compares what the recording saw (click leaves its colours in what
        it prints to a terminal and takes them out of what goes to a pipe)."""
        return False

    @property
    def buffer(self) -> _BufferTee:
        """The stream's bytes, kept too (decoded as UTF-8): click writes there when the
        stream's encoding cannot hold its text."""
        return _BufferTee(self, self._out.buffer)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._out.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._out, name)  # encoding, isatty(), fileno(), buffer: the stream's

    def end(self) -> str | None:
        """Put the stream back (unless the call left another in its place) and say what
        was printed: "" for nothing, None for more than :data:`MOST_PRINTED`."""
        self._open = False
        if sys.stdout is self:
            sys.stdout = _open_layer(self._back)
        kept, self._kept = self._kept, []
        if self._sinks:  # a replay's: shown where it would have gone
            _shown(self._back, kept)
        if self._size > MOST_PRINTED:
            return None
        return "".join(kept)


class _BufferTee:
    """A :class:`Tee`'s ``buffer``: bytes written go on to the stream's and are kept."""

    __slots__ = ("_raw", "_tee")

    def __init__(self, tee: Tee, raw: Any) -> None:
        self._tee = tee
        self._raw = raw

    def write(self, data: bytes) -> int:
        if self._tee._open and isinstance(data, bytes | bytearray | memoryview):
            self._tee.keep(bytes(data).decode("utf-8", "replace"))
        return self._raw.write(data)  # type: ignore[no-any-return]

    def flush(self) -> None:
        self._raw.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def teed(*, sink: bool = False) -> Tee | None:
    """A :class:`Tee` in ``sys.stdout``'s place, or None where there is no stream (a
    ``pythonw`` process: ``print`` writes nothing, and so it stays).  ``sink``: what is
    printed goes nowhere else (a replay: the stream a recording's call wrote to is the
    test's, and replay's own output is no place for it), through a UTF-8 stream of its
    own, as pytest's capture is."""
    out = sys.stdout
    if out is None:
        return None
    if type(out) is Tee and not out._open:
        out = _open_layer(out)
    tee = Tee(_sink(), out, sinks=True) if sink else Tee(_forward_to(out), out)
    sys.stdout = tee
    return tee


def _forward_to(out: Any) -> Any:
    """Where a new tee passes what is written on: the tee of a call of this thread that
    is still running (a recorded call inside another keeps what the outer one prints in
    its text too), else the stream under every tee.  Another thread's tee, or one that
    ended, is passed over: a server thread and its client both making recorded calls
    (boltons' netstring test, a thousand exchanges) stacked a tee on the other's at each
    call, and the writes went down a chain as deep as the recursion limit."""
    me = get_ident()
    while type(out) is Tee and (not out._open or out._thread != me):
        out = out._out
    return out


def _shown(stream: Any, kept: list[str]) -> None:
    """What a replayed call printed into its sink, written where it would have gone (the
    replay's stderr, a pytest item's captured output), as that stream can take it."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    for text in kept:
        with contextlib.suppress(Exception):
            stream.write(text.encode(encoding, "backslashreplace").decode(encoding))


def _sink() -> io.TextIOWrapper:
    """Where a replayed call's printing goes: a UTF-8 stream of its own, as pytest's."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)


def _open_layer(out: Any) -> Any:
    """``out`` past the tees that have ended: two threads' calls overlapping leave the
    later one's tee put back over the earlier one's, which has ended; a layer a call no
    longer reads is dropped, so the chain of layers never grows."""
    while type(out) is Tee and not out._open:
        out = out._back
    return out


__all__ = ["MOST_PRINTED", "PRINTED", "PRINTED_ASPECT", "Tee", "teed"]
