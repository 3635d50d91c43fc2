"""The ``*.tape.json`` document: a versioned, closed schema a reviewer can read in a diff.

One file holds one tape: whose it is (``name``: the ``[[tape]]`` oracle's name,
or the pytest node id of the test that recorded it), how it is compared
(``mode``), the rules its values went through (so a replay normalizes exactly
as the freeze did), the events in call order, the output of the run that
produced them, and the ``history`` of drifts accepted on purpose, each with its
``why``.  Keys are sorted and indented so ``git diff`` of a tape reads as a
list of calls that changed.

Reading is strict: a file that is not JSON, has an unknown field, has another
version, or belongs to another oracle or test is a :class:`DataError` naming
the file; it is never "repaired" by a rewrite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import msgspec

from lockstep.canon import FrozenException
from lockstep.errors import DataError
from lockstep.model import Refusal
from lockstep.oracles.tape.compare import compare, setting_changes
from lockstep.oracles.tape.recorder import CompareMode, Event
from lockstep.rules import RuleRecord
from lockstep.secrets import SecretPolicy
from lockstep.store import atomic_write, display_path, pretty_json, read_json

VERSION: Final = 1
SUFFIX: Final = ".tape.json"


class Output(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True, kw_only=True
):
    """What the driver (the run that made the calls) produced: a value or an exception."""

    returned: Any = None
    raised: FrozenException | None = None


class Acceptance(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A drift accepted on purpose: the reviewer's three signals, kept in the file."""

    why: str
    """The one-sentence delta the user gave with ``--why``."""
    test: str
    """The new test that pins the intended behaviour (path relative to the project root)."""
    outputs_identical: bool
    changes: list[str]
    """The drift lines that were accepted, as the reviewer saw them."""


class TapeDocument(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A whole ``*.tape.json`` file."""

    version: int
    name: str
    """The ``[[tape]]`` oracle's name, or the node id of the test that recorded this tape."""
    mode: CompareMode
    rules: list[RuleRecord]
    events: list[Event]
    output: Output
    history: list[Acceptance] = []


def secret_refusal(policy: SecretPolicy, doc: TapeDocument) -> Refusal | None:
    """Why ``doc`` may not be written (a secret in its events or output), or None.

    Every path that writes a tape (``lockstep record``, the pytest fixture, accept) asks.
    """
    fields = {
        "events": msgspec.to_builtins(doc.events),
        "output": msgspec.to_builtins(doc.output),
    }
    return policy.refusal(doc.name, doc.name, fields)


def read_document(path: Path, *, owner: str, owner_kind: str) -> TapeDocument:
    """Read and check a tape file; ``owner`` must be the name recorded in it.

    ``owner_kind`` ("oracle" or "test") only shapes the message when another
    oracle's or test's tape is found at this path (a copied or renamed file).
    """
    doc = read_json(path, TapeDocument)
    shown = display_path(path)
    if doc.version != VERSION:
        raise DataError(
            f"{shown}: version {doc.version} is not supported (this lockstep reads {VERSION})"
        )
    if doc.name != owner:
        raise DataError(
            f"{shown}: was recorded by another {owner_kind} ({doc.name!r}), not {owner!r}; "
            "re-record it or restore the right file"
        )
    return doc


def change_lines(
    old: TapeDocument,
    mode: CompareMode,
    rules: list[RuleRecord],
    events: list[Event],
    *,
    asked_by: str,
    compare_mode: CompareMode | None = None,
) -> list[str]:
    """What differs between a recorded tape and a run: its settings, then its calls.

    Calls are compared under ``compare_mode`` (default: the ``mode`` asked for now).
    """
    settings = setting_changes(old.mode, old.rules, mode, rules, asked_by=asked_by)
    calls = compare(old.events, events, compare_mode or mode)
    return [c.line for c in settings] + calls


def successor(
    old: TapeDocument | None,
    *,
    name: str,
    mode: CompareMode,
    rules: list[RuleRecord],
    events: list[Event],
    output: Output,
    accepted: Acceptance | None = None,
) -> TapeDocument:
    """The document that replaces ``old``: the run now, ``old``'s history, plus ``accepted``."""
    history = list(old.history) if old is not None else []
    if accepted is not None:
        history.append(accepted)
    return TapeDocument(
        version=VERSION,
        name=name,
        mode=mode,
        rules=rules,
        events=events,
        output=output,
        history=history,
    )


def write_document(path: Path, doc: TapeDocument) -> None:
    """Write the file whole or not at all."""
    atomic_write(path, pretty_json(doc))
