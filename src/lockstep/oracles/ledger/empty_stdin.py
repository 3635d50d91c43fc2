"""Rows replay with an empty standard input, as the fresh interpreter verified them.

A row records a call's arguments, never what it read from ``sys.stdin``: a test that
swapped in a file and called a command-line entry point with ``-`` (sqlparse's ``main``)
recorded a row the verifying interpreter, whose standard input is ``/dev/null``, also
returned 0 for.  Replayed with the real standard input, the call waited on the terminal
until Ctrl-D; under ``pytest --lockstep`` it read pytest's captured stand-in, which
refuses, and the unchanged code was red.  So replay gives each call what verification
gave it: an empty stream.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def empty_stdin() -> Iterator[None]:
    """``sys.stdin`` reads ``/dev/null`` inside the block; the caller's comes back after."""
    held = sys.stdin
    with open(os.devnull, encoding="utf-8") as empty:
        sys.stdin = empty
        try:
            yield
        finally:
            sys.stdin = held
