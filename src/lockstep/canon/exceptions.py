"""Exceptions as every oracle freezes them: the type's name and a stem of the message."""

from __future__ import annotations

from typing import Final

import msgspec

DEFAULT_STEM: Final = 48
"""Default length of a frozen exception's message stem."""


class FrozenException(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An exception as an oracle keeps it: qualified type name and message stem.

    The stem is whitespace-folded and cut, so that messages embedding an id or a
    long repr do not make every replay drift, while the start of the message
    (which is what callers usually match on) is still frozen.
    """

    exc_type: str
    exc_stem: str


def exception_type_name(exc: BaseException) -> str:
    """``ValueError`` for builtins, ``pkg.mod.Qual`` otherwise."""
    t = type(exc)
    if t.__module__ == "builtins":
        return t.__qualname__
    return f"{t.__module__}.{t.__qualname__}"


def message_stem(message: str, length: int = DEFAULT_STEM) -> str:
    """Fold runs of whitespace to one space, strip, and keep the first ``length`` characters."""
    return " ".join(message.split())[:length]


def freeze_exception(exc: BaseException, *, stem_length: int = DEFAULT_STEM) -> FrozenException:
    """Freeze an exception to the form every oracle compares."""
    return FrozenException(exception_type_name(exc), message_stem(str(exc), stem_length))
