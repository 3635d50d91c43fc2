"""The ledgers a recording wrote beyond a package's public surface, listed in the oracle
folder so that one deleted is missed.

A ``package`` ledger's members beyond its public surface (``private = true``: private
functions, ``__init__``, members of private modules) are oracles only once the suite
called them: their ledger file is what makes them one.  Told by the file alone, deleting
it (or putting a folder in its place) removed the oracle with it, and ``lockstep replay``
went on green with its cases gone -- on packaging 24.2 such ledgers held four rows in five.
So a recording lists the ones it leaves in :data:`FILE_NAME`; a member listed there is an
oracle whether its file is there or not (a missing one is red, as a public member's is),
and dropping one is an edit of that file, which a reviewer reads and the guard counts as
an oracle change.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final

import msgspec

from lockstep.errors import DataError
from lockstep.store.atomic import atomic_write
from lockstep.store.formats import pretty_json, read_json
from lockstep.store.paths import display_path

FILE_NAME: Final = "beyond-surface.json"
"""In the oracle folder: ``{"lockstep_beyond_surface": 1, "ledgers": [names, sorted]}``."""
VERSION: Final = 1
MAX_BYTES: Final = 16 * 2**20
"""Largest list read (a hundred thousand names take a few MB): a file grown past it in a
pull request is refused before it is read, not parsed for a minute into a gigabyte."""


class BeyondSurface(msgspec.Struct, forbid_unknown_fields=True):
    lockstep_beyond_surface: int
    ledgers: list[str]


def listed(oracle_dir: Path) -> frozenset[str]:
    """The names the oracle folder's list holds (none without one); a list that cannot be
    read is an error naming the file, as any oracle file's is."""
    path = oracle_dir / FILE_NAME
    try:
        size = os.lstat(path).st_size
    except FileNotFoundError:
        return frozenset()
    except OSError as e:
        raise DataError(f"{display_path(path)}: cannot read: {e.strerror}") from None
    if size > MAX_BYTES:
        raise DataError(
            f"{display_path(path)}: {size:,} bytes, more than a list of ledger names takes "
            f"({MAX_BYTES:,} at most)"
        )
    found = read_json(path, BeyondSurface)
    if found.lockstep_beyond_surface != VERSION:
        raise DataError(
            f"{display_path(path)}: lockstep_beyond_surface: {found.lockstep_beyond_surface} "
            f"is not a version this lockstep reads ({VERSION})"
        )
    for index, name in enumerate(found.ledgers):
        if not _LEDGER_NAME.match(name):  # a recording writes ledger names only
            raise DataError(
                f"{display_path(path)}: ledgers[{index}]: {name[:80]!r} is not a ledger's name "
                "(letters, digits, '.', '_' and '-')"
            )
    return frozenset(found.ledgers)


_LEDGER_NAME: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
"""An oracle's name, as the configuration allows one (``lockstep.config.NAME_PATTERN``,
not imported: the configuration reads this module)."""


def write_listed(oracle_dir: Path, names: Iterable[str]) -> bool:
    """Make the list hold ``names``, written only when it differs (no file is made for an
    empty list); whether the file changed."""
    wanted = sorted(set(names))
    path = oracle_dir / FILE_NAME
    if not wanted and not os.path.lexists(path):
        return False
    if os.path.lexists(path) and sorted(listed(oracle_dir)) == wanted:
        return False
    atomic_write(path, pretty_json(BeyondSurface(VERSION, wanted)))
    return True


def list_present(oracle_dir: Path, members: Mapping[str, str]) -> bool:
    """At the end of a recording: list every one of ``members`` (name -> its file in
    ``oracle_dir``) whose ledger is there now.  One the suite no longer calls and that was
    deleted leaves the list here, an edit the diff shows."""
    if not members and not os.path.lexists(oracle_dir / FILE_NAME):
        return False
    return write_listed(
        oracle_dir, (n for n, f in members.items() if os.path.lexists(oracle_dir / f))
    )
