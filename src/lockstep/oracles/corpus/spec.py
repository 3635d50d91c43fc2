"""The ``[[corpus]]`` table: fixture files → render callable → canonical bytes → lock."""

from __future__ import annotations

from typing import Final, Literal

from lockstep.tables import OracleSpec


class CorpusSpec(OracleSpec, frozen=True, kw_only=True):
    """A ``[[corpus]]`` oracle: fixture files → render callable → canonical bytes → lock."""

    name: str
    """Unique name of the oracle: the stem of its file (``<dir>/<name>.*``) and what commands take."""
    fixtures: str
    """Glob, relative to the root, of the fixture files (``fixtures/*.json``)."""
    render: str
    """``pkg.mod:func`` called with each fixture's Path; returns bytes, str or a JSON value."""
    loose: bool = False
    """Freeze tuples returned by render as lists."""
    rules: list[str] = []
    """Normalization rules applied to rendered text before hashing."""

    kind: Literal["corpus"] = "corpus"


SPEC: Final = CorpusSpec
"""This kind's table, for the registry (:mod:`lockstep.kinds`)."""
