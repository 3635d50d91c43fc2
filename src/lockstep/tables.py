"""The bases of the configuration's tables, and the value types they share.

Every table of ``lockstep.toml`` is a closed :class:`msgspec.Struct` (:class:`Table`):
an unknown or mistyped key is an error naming the key.  An oracle kind's table
(``[[corpus]]``...) derives from :class:`OracleSpec` and lives in the kind's own
package (``lockstep.oracles.<kind>.spec``), with the checks msgspec cannot express
(:meth:`OracleSpec.validated`); :mod:`lockstep.config` builds the configuration from
the registry of kinds (:mod:`lockstep.kinds`) and names none of them.

This module imports nothing of lockstep: the kinds' specs and the configuration
both build on it without an import cycle.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path
from typing import Final, Self

import msgspec

DEFAULT_MAX_OUTPUT: Final = 32 * 1024 * 1024
"""Bytes kept of each of a pinned run's stdout and stderr unless ``max_output`` says otherwise
(:data:`lockstep.process.DEFAULT_OUTPUT_CAP` is this value)."""
MAX_OUTPUT_LIMIT: Final = 4 * 1024**3
_SIZE: Final = re.compile(r"^\s*([0-9]{1,13})\s*(B|KiB|MiB|GiB)?\s*$")
_UNITS: Final[dict[str | None, int]] = {
    None: 1,
    "B": 1,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
}


def parse_size(value: int | str) -> int:
    """A byte count from an int or a string such as ``"64MiB"`` (units B, KiB, MiB, GiB).

    Raises :class:`ValueError` saying what is accepted: 1 byte up to 4 GiB.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    elif isinstance(value, str) and (match := _SIZE.match(value)):
        size = int(match[1]) * _UNITS[match[2]]
    else:
        raise ValueError(
            f"{value!r} is not a size: give bytes as an integer or a string such as '64MiB' "
            "(units B, KiB, MiB, GiB)"
        )
    if not 1 <= size <= MAX_OUTPUT_LIMIT:
        raise ValueError(f"{value!r} is out of range: from 1 byte to 4 GiB")
    return size


class Table(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """Base of every config table: closed, immutable."""


class OracleSpec(Table, frozen=True):
    """Base of every oracle kind's table: what the code shared by all kinds may read.

    A kind's spec (``lockstep.oracles.<kind>.spec.SPEC``) adds its own keys and fixes
    ``kind`` to its name with a default (``kind: Literal["corpus"] = "corpus"``), so the
    spec of a decoded table says which kind it is.
    """

    name: str
    """Unique name of the oracle: the stem of its file (``<dir>/<name>.*``) and what commands take."""
    rules: list[str] = []
    """Normalization rules (built-in or ``[[rule]]`` names) applied before hashing and comparing."""
    kind: str = ""
    """The kind's name (each kind's spec fixes it)."""

    def validated(self, where: str) -> Self:
        """This table after the checks msgspec's types cannot say (a range, one key or
        another, a default taken from another key), raising
        :class:`lockstep.errors.ConfigError` naming ``where`` (``lockstep.toml: pins[0]``)
        and the key.  By default the table itself: the types said everything."""
        return self

    def expanded(self, root: Path, where: str) -> tuple[Self, ...] | None:
        """The oracles this table stands for when it names several (a ``package`` ledger:
        one per member of the package's surface), read from the sources under ``root``;
        None (the default) when it is one oracle, itself.  ``where``: ``lockstep.toml:
        ledger[0]``, for errors."""
        return None

    def tested_members(self, root: Path, where: str) -> tuple[tuple[Self, str], ...]:
        """With :meth:`expanded`: more oracles this table stands for that exist only once
        recorded (a ``package`` ledger's members beyond its public surface, which the
        tests may call directly), each with its file's name in the oracle folder; none by
        default."""
        return ()

    def former_members(
        self, entries: Collection[str], listed: Collection[str], taken: Collection[str]
    ) -> tuple[Self, ...]:
        """With :meth:`expanded`: the oracles of members recorded once that today's sources
        no longer have, told by the files of the oracle folder (``entries``: their names)
        and the names its list of recorded members holds (``listed``), less every name
        configured now (``taken``); none by default.  Such an oracle replays as an error on
        each of its cases, never calling anything (see ``Project.former``)."""
        return ()

    def expansion_sources(self, root: Path) -> object:
        """What :meth:`expanded` and :meth:`tested_members` read under ``root``, as a value
        to compare: equal values give the same oracles (and the same errors), so a reading
        of them can be reused while the value stays the same.  None (the default) when they
        read nothing."""
        return None

    def expansion_stamp(self, root: Path) -> object:
        """:meth:`expansion_sources` told by the files' metadata alone, without reading them
        (:mod:`lockstep.source_stamps`): equal stamps taken long enough after the files were
        last written (:func:`~lockstep.source_stamps.settled`) mean equal sources.  None
        when nothing is read; :data:`UNSTAMPED` when it cannot be told that way."""
        return None


UNSTAMPED: Final = "<unstamped>"
""":meth:`OracleSpec.expansion_stamp` of sources that can only be compared by their bytes."""
