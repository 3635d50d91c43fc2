"""The spool a ``pytest --lockstep-record`` run appends to: one line per process and target.

Its own module so that :mod:`.ledger_recording`, which pytest loads with the plugin in
every run, imports msgspec only when a run records.
"""

from __future__ import annotations

import msgspec


class SpoolLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """One process's recording of one target, as appended to the spool."""

    part: msgspec.Raw
    """The :class:`~lockstep.oracles.ledger.recorder.RecordingPart` (decoded by the controller)."""
    first_test: dict[str, str] = {}
    """Row id -> node id of the test during which this process first produced it."""
    skipped: dict[str, int] = {}
    """Node id of each kept-out test -> calls of the target it made (unrecorded)."""
    matched: list[str] = []
    """``record_exclude`` entries that named at least one test of this process."""
    starts: list[int] = []
    tests: list[str] = []
    """A part whose rows were spilled to disk (:mod:`lockstep.oracles.ledger.spool`) has no
    ``first_test`` map as large as its rows: its process's call count at each test's start
    and the tests, so the controller names the tests of the rows it refuses."""


class PartRuns(msgspec.Struct):
    """Just the scratch files of a recording part (its other fields are ignored)."""

    runs: list[str] = []
