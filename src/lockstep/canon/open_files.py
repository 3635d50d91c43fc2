"""A file open for reading freezes as the in-memory file that reads the same.

A parser is handed a file: ``PatchSet(open(path))``, ``PatchSet(codecs.open(path, "r",
"utf-8"))``, ``parse(open(path, "rb"))``.  Such calls were skipped ("cannot freeze a
_io.TextIOWrapper"): unidiff's suite passes a file to ``PatchSet`` in 33 of its 35 calls,
and two one-line changes of its parser that its suite caught replayed green.

A regular file open for reading only, that can seek, freezes as what reading it gives:
``{"$stringio": [text, "\\n", position]}`` for a text file (``open(path)``,
``codecs.open(path, "r", encoding)``), ``{"$bytesio": [data, position]}`` for a binary
one (``open(path, "rb")``, unbuffered too) -- the whole file from its start, and how far
it has been read (characters or bytes).  It thaws as that ``StringIO`` or ``BytesIO``:
read from there, it gives the target the very text or bytes the file gave it.  Frozen
again after the call, the file's position says how far the target read it (a mutation
of the argument, as for a ``StringIO``), and a file a result keeps reads the same.

Reading it to freeze it puts it back where it was (``tell``, read, ``seek``): the
target reads it as unrecorded.  What is refused, the call skipped as before:

* a file open for writing, a pipe, a socket, a terminal (nothing to seek back to);
* a text file whose reading was left midway through ``next()`` (Python cannot tell where
  it is), or a ``codecs`` reader holding text it read ahead;
* a text holding a line break other than ``\\n`` (``\\r``, and for a ``codecs`` reader
  the breaks ``str.splitlines`` knows): its lines depend on a newline mode the frozen
  form does not keep;
* one longer than :data:`FILE_MOST`, or one that cannot be decoded.

What the in-memory file does not have -- the file's ``name``, ``fileno()``, its
``encoding`` -- a target that asks for it meets at verification, and that row is refused
there; what it reads is the file's content.
"""

from __future__ import annotations

import codecs
import contextlib
import io
from typing import Any, Final

from lockstep.canon._core import JSON, Unfreezable, check_level
from lockstep.canon.encoding import Encoder

FILE_MOST: Final = 1 << 20
"""Characters (or bytes) of a file frozen at most: past this, the call is skipped."""

_TEXT: Final = (io.TextIOWrapper, codecs.StreamReaderWriter)
_BINARY: Final = (io.BufferedReader, io.FileIO)
OPEN_FILE_TYPES: Final = frozenset({*_TEXT, *_BINARY})
"""The exact classes of the files frozen here."""

_OTHER_BREAKS: Final = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""What ``str.splitlines`` (a ``codecs`` reader's ``readline``) breaks a line at besides
``\\n``."""


def freeze_open_file(encoder: Encoder, v: Any, t: type[Any], depth: int) -> JSON:
    """The in-memory file that reads as the file ``v`` of class ``t`` (see the module)."""
    name = f"{t.__module__}.{t.__qualname__}"
    if v.closed:
        raise Unfreezable(f"cannot freeze a closed {name}")
    try:
        readable_only = v.readable() and not v.writable() and v.seekable()
    except (OSError, ValueError):
        readable_only = False
    if not readable_only:
        raise Unfreezable(
            f"cannot freeze a {name} that is not open for reading alone, or cannot seek back"
        )
    whole, position = _read_around(v, name, "" if t in _TEXT else b"")
    check_level(depth + 2)
    if isinstance(whole, str):
        breaks = _OTHER_BREAKS if t is codecs.StreamReaderWriter else "\r"
        if any(c in whole for c in breaks):
            raise Unfreezable(
                f"cannot freeze a {name} whose text breaks lines other than at \\n "
                "(its newline mode is not kept)"
            )
        return {"$stringio": [encoder.child(whole, ".read()", depth + 2), "\n", position]}
    return {"$bytesio": [encoder.child(whole, ".read()", depth + 2), position]}


def _read_around(v: Any, name: str, empty: str | bytes) -> tuple[str | bytes, int]:
    """The whole file and how far it has been read, ``v`` left where it was."""
    try:
        here = v.tell()
    except (OSError, ValueError) as e:  # "telling position disabled by next() call"
        raise Unfreezable(f"cannot freeze a {name}: where it is read is not known ({e})") from None
    reader = getattr(v, "reader", None)
    if reader is not None and (reader.bytebuffer or reader.charbuffer or reader.linebuffer):
        raise Unfreezable(f"cannot freeze a {name} holding text it read ahead")
    try:
        v.seek(0)
        whole = _read(v, empty)
        v.seek(here)
        rest = _read(v, empty)
    except (OSError, ValueError, UnicodeError) as e:
        raise Unfreezable(f"cannot freeze a {name}: reading it failed ({e})") from None
    finally:
        with contextlib.suppress(OSError, ValueError):
            v.seek(here)
    if not whole.endswith(rest):  # type: ignore[arg-type]  # written to since it was opened, as it was read here
        raise Unfreezable(f"cannot freeze a {name} that changed while it was read")
    return whole, len(whole) - len(rest)


def _read(v: Any, empty: str | bytes) -> str | bytes:
    """What is left to read in ``v``, at most :data:`FILE_MOST` (an unbuffered file may
    give less than asked a read: read until its end)."""
    parts: list[Any] = []
    size = 0
    while size <= FILE_MOST:
        part = v.read(FILE_MOST + 1 - size)
        if not part:
            break
        parts.append(part)
        size += len(part)
    if size > FILE_MOST:
        raise Unfreezable(f"cannot freeze a file of more than {FILE_MOST} characters or bytes")
    return empty.join(parts)
