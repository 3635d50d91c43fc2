"""What every part of the codec shares: the limits, the JSON writer and reader, the
refusal raised inside the encoder, and how a path inside a value is written.

The limits are documented in :mod:`lockstep.canon.codec`'s docstring.
"""

from __future__ import annotations

import base64
import enum
import functools
import json
import pathlib
import re
from decimal import Decimal
from typing import Any, Final, TypeAlias

import msgspec

JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None
"""A value made only of JSON types: what the tagged form is built from."""

MAX_DEPTH: Final = 200
"""Most levels of JSON arrays and objects a frozen value may nest (encode and decode)."""

MAX_INT_DIGITS: Final = 4300
"""Most characters of a frozen integer's decimal text, sign included: what the JSON parser
reads (and Python's default ``int_max_str_digits``), so a negative int has one digit less."""

_INT_HIGH: Final = 10**MAX_INT_DIGITS
_INT_LOW: Final = -(10 ** (MAX_INT_DIGITS - 1))
_LONG_DIGITS: Final = re.compile(b"(?<![0-9])[0-9]{%d}" % (MAX_INT_DIGITS - 1))
"""A run of digits that may be an int past the limit: the fast path then checks slowly.
(The lookbehind starts a match only where a run starts, so the search stays linear.)"""

_TOO_DEEP: Final = f"nested more than {MAX_DEPTH} levels deep, or holds a reference cycle"

_PATH_CLASSES: Final = {
    cls.__name__: cls
    for cls in (
        pathlib.Path,
        pathlib.PosixPath,
        pathlib.WindowsPath,
        pathlib.PurePath,
        pathlib.PurePosixPath,
        pathlib.PureWindowsPath,
    )
}

_encoder = msgspec.json.Encoder(order="sorted")
_checker = msgspec.json.Encoder()  # writes nothing kept: only proves a value can be written
_decoder = msgspec.json.Decoder()

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class Unfreezable(Exception):
    """Raised inside the encoder (by a fallback encoder too, to refuse a value with a reason);
    carries the path segments back up to the caller."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.segments: list[str] = []


class TooLarge(Unfreezable):
    """A value holding more objects than a row may (:data:`~.objects.MAX_OBJECTS`): raised
    at once to the caller, never walked again to name a path (babel's ``Locale``, its whole
    locale data, took four walks of 20,000 objects on each call that passed one)."""


class _TooDeep(Unfreezable):
    """More than :data:`MAX_DEPTH` levels: reported at the value's root, not 200 segments down."""

    def __init__(self) -> None:
        super().__init__(_TOO_DEEP)


def qualified_name(cls: type[Any]) -> str:
    """``module:QualName`` for a class: importable, unlike ``repr``."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@functools.cache
def _stable_repr() -> frozenset[type[Any]]:
    """Key types whose ``repr`` is the same text in every process (for error messages)."""
    import datetime as dt
    import uuid

    return frozenset(
        {
            int,
            float,
            bool,
            type(None),
            bytes,
            Decimal,
            complex,
            uuid.UUID,
            dt.date,
            dt.datetime,
            dt.time,
            dt.timedelta,
            *_PATH_CLASSES.values(),
        }
    )


def _key_text(key: Any) -> str:
    """A dict key as a path segment shows it: the same text in every process."""
    t = type(key)
    if t is str:
        if key.isidentifier():  # an attribute's name, most keys: what json.dumps writes
            return f'"{key}"'
        text = json.dumps(key, ensure_ascii=False)
        return json.dumps(key) if _SURROGATE.search(text) else text  # a message must be UTF-8
    if t is int:
        try:
            return repr(key)
        except ValueError:  # more digits than this process turns into text
            return f"<int of {key.bit_length()} bits>"
    if t in _stable_repr():
        return repr(key)
    if t is tuple:
        inner = ", ".join(_key_text(k) for k in key)
        return f"({inner}{',' if len(key) == 1 else ''})"
    if t is frozenset:
        return "frozenset({" + ", ".join(sorted(_key_text(k) for k in key)) + "})"
    if isinstance(key, enum.Enum):
        return f"{t.__qualname__}.{key.name}"
    if isinstance(key, type):  # a class as a key (an evaluator's table by node class): its name
        return f"<class {key.__module__}.{key.__qualname__}>"
    return f"<{t.__module__}.{t.__qualname__}>"


def _key_segment(key: Any) -> str:
    return f"[{_key_text(key)}]"


def _short(text: str, limit: int = 80) -> str:
    """``repr`` of a string from a file, cut: an error message stays one readable line."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _check_text(s: str) -> str:
    if not s.isascii():
        bad = _SURROGATE.search(s)
        if bad is not None:
            raise Unfreezable(
                f"a string with a lone surrogate (U+{ord(bad.group()):04X} at index "
                f"{bad.start()}) cannot be written as UTF-8; encode such text to bytes first"
            )
    return s


def text_form(s: str) -> JSON:
    """A string as a row holds it: itself, or, holding a lone surrogate (what
    ``os.fsdecode`` and ``surrogateescape`` make of undecodable bytes, what a tokenizer's
    test feeds it) which UTF-8 cannot write, ``{"$str": escaped}``: each ``\\`` doubled
    and each lone surrogate written ``\\udcXX`` (lowercase hex), so the line stays UTF-8
    and the text comes back exactly.  tinycss2's ``test_bad_unicode`` was the one test of
    its identifiers' fallback for such text, and its calls were skipped."""
    if s.isascii() or _SURROGATE.search(s) is None:
        return s
    return {"$str": escaped_text(s)}


def escaped_text(s: str) -> str:
    """``s`` as ``$str`` writes it (see :func:`text_form`)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", s.replace("\\", "\\\\"))


def _check_int(v: int) -> int:
    if _INT_LOW < v < _INT_HIGH:
        return v
    raise Unfreezable(
        f"an int of more than {MAX_INT_DIGITS} characters (sign included) cannot be frozen"
    )


def check_level(level: int) -> None:
    """Refuse a container the encoder would make at ``level`` past :data:`MAX_DEPTH`."""
    if level > MAX_DEPTH:
        raise _TooDeep
