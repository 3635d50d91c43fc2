"""JSON and JSONL as oracle files hold them: streaming reads whose errors say
``FILE:LINE: reason``, and the deterministic form a reviewer reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec

from lockstep.errors import DataError
from lockstep.store.paths import display_path
from lockstep.store.reading import open_file, read_file

T = TypeVar("T")


# ---------------------------------------------------------------- reads


def iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line number, line bytes)`` for each non-blank line, streaming."""
    try:
        fh = open_file(path)
    except FileNotFoundError:
        raise DataError(f"{display_path(path)}: file not found") from None
    except OSError as e:
        raise DataError(f"{display_path(path)}: cannot read: {e.strerror}") from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            line = raw.rstrip(b"\r\n")
            if line.strip():
                yield lineno, line


_TOO_DEEP = "arrays and objects nested too deeply to read (not a file lockstep wrote)"


def _describe_decode_error(err: Exception) -> str:
    text = str(err)
    # msgspec says "Object missing required field `id`" / "Object contains unknown field `x`"
    return text.replace("Object contains", "has").replace("Object missing", "misses")


def iter_jsonl(path: Path, type_: type[T]) -> Iterator[tuple[int, T]]:
    """Stream ``path`` as JSONL, decoding each line to ``type_`` (a msgspec Struct or JSON type).

    A line that is not JSON, misses a field or has an unknown one raises
    :class:`DataError` as ``FILE:LINE: reason``.
    """
    decoder: msgspec.json.Decoder[T] = msgspec.json.Decoder(type_)
    shown = display_path(path)
    for lineno, line in iter_lines(path):
        yield lineno, decode_line(decoder, line, f"{shown}:{lineno}")


def decode_line(decoder: msgspec.json.Decoder[T], line: bytes, where: str, what: str = "") -> T:
    """One JSON line, or one ``DataError`` naming ``where`` (``FILE:LINE``) and the reason.

    ``what`` names what the line should have been (``"not a ledger header: "``) when a
    field is missing or unknown.
    """
    try:
        return decoder.decode(line)
    except msgspec.ValidationError as e:
        raise DataError(f"{where}: {what}{_describe_decode_error(e)}") from None
    except msgspec.DecodeError as e:
        if line.startswith(_BOM):
            raise DataError(f"{where}: {_BOM_SAID}") from None
        raise DataError(f"{where}: not valid JSON ({e})") from None
    except RecursionError:
        raise DataError(f"{where}: {_TOO_DEEP}") from None


_BOM: Final = b"\xef\xbb\xbf"
_BOM_SAID: Final = (
    "starts with a UTF-8 byte order mark (an editor saved it as 'UTF-8 with BOM'): "
    "lockstep writes its files without one; restore the file"
)


def read_json(path: Path, type_: type[T]) -> T:
    """Read a whole JSON document (a lock or tape file) into ``type_``; errors name the file."""
    shown = display_path(path)
    try:
        data = read_file(path)
    except FileNotFoundError:
        raise DataError(f"{shown}: file not found") from None
    except OSError as e:
        raise DataError(f"{shown}: cannot read: {e.strerror}") from None
    try:
        return msgspec.json.decode(data, type=type_)
    except msgspec.ValidationError as e:
        raise DataError(f"{shown}: {_describe_decode_error(e)}") from None
    except msgspec.DecodeError as e:
        raise DataError(f"{shown}: not valid JSON ({e})") from None
    except RecursionError:
        raise DataError(f"{shown}: {_TOO_DEEP}") from None


def pretty_json(obj: Any) -> bytes:
    """Deterministic, diff-friendly JSON for files a reviewer reads: sorted keys, 2-space indent."""
    encoded = msgspec.json.encode(obj, order="sorted")
    return msgspec.json.format(encoded, indent=2) + b"\n"
