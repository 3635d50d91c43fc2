"""The ``[[tape]]`` table: the collaborator calls a driver makes, in order."""

from __future__ import annotations

from typing import Final, Literal

from lockstep.tables import OracleSpec


class TapeSpec(OracleSpec, frozen=True, kw_only=True):
    """A ``[[tape]]`` oracle: the collaborator calls a driver makes, in order."""

    name: str
    """Unique name of the oracle: the stem of its file (``<dir>/<name>.*``) and what commands take."""
    driver: str
    """``pkg.mod:func`` taking a :class:`lockstep.Tape`; it wires spies and runs the target."""
    mode: Literal["ordered", "multiset", "counts"] = "ordered"
    """How calls are compared: in order, as a multiset (any order), or only counts per collaborator."""
    rules: list[str] = []
    """Normalization rules applied to the frozen call arguments and outcomes."""

    kind: Literal["tape"] = "tape"


SPEC: Final = TapeSpec
"""This kind's table, for the registry (:mod:`lockstep.kinds`)."""
