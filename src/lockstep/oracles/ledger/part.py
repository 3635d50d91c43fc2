"""What one process hands over for one target: its distinct rows, the inputs it refused,
the calls it skipped and why (the unit a worker sends and :mod:`.merging` joins)."""

from __future__ import annotations

import msgspec

from lockstep.oracles.ledger.format import LedgerRow


class PartEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A distinct row as one process saw it, with when it first appeared."""

    row: LedgerRow
    first_call: int
    """1-based index of the call that first produced this row in its process."""


class RefusedInput(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """An input seen with different outcomes: nondeterministic or stateful, so not frozen."""

    id: str
    call: str
    outcomes: list[str]
    first_calls: list[int] = []
    """The call number that first produced each outcome (aligned with ``outcomes``), so a
    test run can name the test in which the input behaved differently."""


class RecordingPart(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """What one process recorded for one target (the unit workers hand to the controller)."""

    fn: str
    calls: int
    entries: list[PartEntry]
    refused: list[RefusedInput] = []
    unfreezable: dict[str, int] = {}
    """``"args[1]: cannot freeze a socket.socket ..." -> calls`` skipped for that reason."""
    skip_sites: dict[str, list[str]] = {}
    """For each reason, the first few call sites (``file:line``) of calls skipped for it."""
    faults: dict[str, int] = {}
    """Errors inside the recorder itself (the calls proceeded; only their rows are missing)."""
    contexts: dict[str, str] = {}
    """Row id -> what differed from the recording's start when the row (or an outcome of its
    input that differed) was first seen: a likely cause should the row not reproduce."""
    runs: list[str] = []
    """Scratch files (:mod:`.spool`) holding the rows of a recorder that spilled: its
    rows are there, not in ``entries``, and :func:`merge_parts` removes them."""
