"""A command's stdout: plain writes for plain lines off a terminal, rich for everything else.

Importing rich's Console costs about 20 ms, a tenth of a whole green replay of a few
thousand fixtures, which prints one line into a pipe or CI log.  Off a terminal, the
console of :func:`lockstep.cli.app.console` (no colour, ``soft_wrap``) writes such a
line as its characters and a newline, so :class:`Lines` writes it itself and hands
anything else to a real Console, built on first need: styled text and tables, strings
that rich would read as markup (``[``) or emoji codes (``:name:``), tabs, control
characters and trailing spaces.  The plain path is taken only when rich's own checks
(``TTY_COMPATIBLE``, ``FORCE_COLOR``, ``isatty``) would call stdout no terminal;
``tests/test_cli_output.py`` checks by property that both write the same bytes.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from rich.console import Console

_NOT_PLAIN: Final = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]| \n| $")
"""What rich does not write as it is: control characters (it drops some and expands tabs)
and trailing spaces (trimmed from a line longer than the console is wide)."""
_MARKUP: Final = re.compile(r"\[|:\S*?:")
"""What a ``str`` printed with markup may hold that rich would rewrite: a markup tag, or an
emoji code (rich replaces ``:name:``, also with ``markup=False``)."""


def _plain_stream(stream: Any) -> bool:
    """Whether rich would call ``stream`` no terminal (checked the way rich checks it)."""
    if os.environ.get("TTY_COMPATIBLE") or os.environ.get("FORCE_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return isatty is not None and not isatty()
    except ValueError:  # a closed stream: let rich decide
        return False


class Lines:
    """stdout for a command that prints mostly plain lines (``print`` as a Console's)."""

    def __init__(self) -> None:
        self._console: Console | None = None
        self._plain = _plain_stream(sys.stdout)
        self._closed = False

    @property
    def console(self) -> Console:
        """The rich console (see :func:`lockstep.cli.app.console`), built on first use."""
        if self._console is None:
            from lockstep.cli.app import console

            self._console = console()
        return self._console

    @property
    def is_terminal(self) -> bool:
        return False if self._plain else self.console.is_terminal

    def print(self, obj: Any = "", *, end: str = "\n", markup: bool | None = None) -> None:
        """As ``Console.print(obj, end=end, markup=markup)`` prints it."""
        if (
            self._plain
            and type(obj) is str
            and _MARKUP.search(obj) is None
            and _NOT_PLAIN.search(obj) is None
        ):
            self._write(obj + end)
        else:
            self.console.print(obj, end=end, markup=markup)

    def literal(self, text: str, *, end: str = "\n") -> None:
        """As printing ``rich.text.Text(text)`` prints it: no markup, no emoji codes."""
        if self._plain and _NOT_PLAIN.search(text) is None:
            self._write(text + end)
            return
        from rich.text import Text

        self.console.print(Text(text), end=end)

    def _write(self, text: str) -> None:
        if self._closed:
            return
        out = sys.stdout
        try:
            out.write(text)
            out.flush()
        except BrokenPipeError:
            from lockstep.cli.app import stdout_closed

            stdout_closed()
            self._closed = True


def lines() -> Lines:
    """stdout for this command; see :class:`Lines`."""
    return Lines()


@contextlib.contextmanager
def descriptor_one_to_stderr() -> Iterator[None]:
    """For a command that replays targets: descriptor 1 points at stderr, and
    ``sys.stdout`` at a copy of the real stdout, which only lockstep writes through.

    A replayed target that prints through ``sys.stdout`` is caught by
    :func:`lockstep.oracles.printing_to_stderr`; one that writes to descriptor 1 itself
    (``os.write(1, ...)``, a C extension, a child process inheriting it) is caught here,
    so ``lockstep replay --json`` is one JSON document whatever the code prints.  A
    stdout that is no file (a test's runner capturing it) is left as it is."""
    stream = sys.stdout
    try:
        stream.flush()
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        fd = -1
    if fd != 1:
        yield
        return
    saved = os.dup(1)
    report = open(  # noqa: SIM115 - closed below
        os.dup(1),
        "w",
        encoding=getattr(stream, "encoding", None) or "utf-8",
        errors=getattr(stream, "errors", None) or "strict",
        buffering=1 if getattr(stream, "line_buffering", False) else -1,
    )
    os.dup2(2, 1)
    sys.stdout = report
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            report.flush()
        sys.stdout = stream
        os.dup2(saved, 1)
        os.close(saved)
        with contextlib.suppress(Exception):
            report.close()
