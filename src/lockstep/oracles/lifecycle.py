"""The record-mode lifecycle every oracle kind goes through, written once.

Updating an oracle is never implicit.  ``record`` with no mode only creates;
``--new-only`` adds cases the oracle does not know, ``--force`` re-records
every case, ``--trim`` drops cases whose input is gone.  Each kind says what
its cases are and how one is frozen; this module decides, the same way for
every kind:

* whether a mode can apply to the file on disk (:func:`check_record_mode`), and
  what an unreadable one means (:func:`read_existing`: only a whole ``--force``
  replaces it);
* whether ``--new-only`` may add cases at all: only under the very contract
  (rules, loose mode, stem length, compare mode...) the file was recorded
  with, since one file must not hold cases judged by two contracts
  (:func:`check_contract`);
* which cases to freeze (:func:`wanted`), and how old and fresh cases merge,
  category by category into the :class:`~lockstep.model.RecordReport`
  (:func:`merge`);
* what an accept's reason must be (:func:`check_why`), whichever kind and door
  (``lockstep accept``, the tape's reviewed accept, ``pytest --lockstep-why``).

:func:`record` is that sequence in order -- check the mode, read the old file, check
the contract, pick the wanted cases, freeze them, merge, write -- with the kind's
:class:`RecordHooks` for what only it knows (pins and tape go through it).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Generic, TypeVar

from lockstep.errors import DataError, UsageError
from lockstep.model import RecordMode, RecordReport
from lockstep.store import display_path

E = TypeVar("E")
T = TypeVar("T")
F = TypeVar("F")

WHY_LIMIT: Final = 300
"""Characters allowed in an accept's reason: one sentence, not an essay."""


def check_why(why: str, *, flag: str = "--why") -> str:
    """An accept's reason (``flag``: the option that gave it) is one sentence on one line:
    what changed and why it is intended; review shows it next to the change.  Returns it
    with its runs of spaces made one."""
    text = " ".join(why.split())
    if not text:
        raise UsageError(f"{flag}: say in one sentence why the new behaviour is intended")
    if "\n" in why.strip() or "\r" in why.strip() or len(text) > WHY_LIMIT:
        raise UsageError(f"{flag}: one sentence on one line (at most {WHY_LIMIT} characters)")
    return text


@dataclass(frozen=True)
class ModeWords:
    """What ``--new-only``, ``--force`` and ``--trim`` do for one oracle kind."""

    new_only: str
    force: str
    trim: str


def check_record_mode(
    path: Path, root: Path, name: str, mode: RecordMode, words: ModeWords
) -> bool:
    """Refuse a mode that cannot apply to the file on disk; return whether the file exists."""
    exists = path.exists()
    shown = display_path(path, root)
    if mode is RecordMode.CREATE and exists:
        raise UsageError(
            f"{shown} already exists; say what you want: --new-only ({words.new_only}), "
            f"--force ({words.force}) or --trim ({words.trim})"
        )
    if mode is not RecordMode.CREATE and not exists:
        raise UsageError(
            f"{shown} does not exist yet; run 'lockstep record {name}' without a mode first"
        )
    return exists


def read_existing(
    read: Callable[[], T], exists: bool, report: RecordReport, *, narrowed: bool = False
) -> T | None:
    """The oracle on disk as ``read`` returns it, or None when there is none.

    An unreadable file (:class:`~lockstep.errors.DataError`) is an error in every mode but
    a whole ``--force``, which replaces it and says so in the report; never when
    ``narrowed`` (an accept keeps the other cases, so it needs them readable).
    """
    if not exists:
        return None
    try:
        return read()
    except DataError as e:
        if report.mode is not RecordMode.FORCE or narrowed:
            raise
        report.notes.append(f"replaced an unreadable file ({e})")
        return None


def check_contract(
    name: str, mode: RecordMode, recorded: object, configured: object, *, what: str
) -> None:
    """``--new-only`` under another contract than the file's is refused (use ``--force``).

    ``recorded`` and ``configured`` are whatever decides how this kind's cases
    are compared (compared with ``==``); ``what`` names it for the user.
    """
    if mode is RecordMode.NEW_ONLY and recorded != configured:
        raise UsageError(
            f"{name}: the configured {what} differ from the recorded ones; adding cases "
            "under other settings would mix two contracts in one file: use --force"
        )


def wanted(
    mode: RecordMode,
    present: Iterable[str],
    old: Collection[str],
    only: Collection[str] | None = None,
) -> list[str]:
    """The cases to freeze now: all present ones, only new ones (``--new-only``), none (trim).

    ``only`` (``lockstep accept``) narrows them to the cases being accepted.
    """
    if mode is RecordMode.TRIM:
        return []
    if mode is RecordMode.NEW_ONLY:
        return [case_id for case_id in present if case_id not in old]
    return [case_id for case_id in present if only is None or case_id in only]


def merge(
    report: RecordReport,
    old: Mapping[str, E],
    fresh: Mapping[str, E],
    present: Collection[str],
    *,
    same: Callable[[E, E], bool],
    kept: Callable[[str, E, E], str] | None = None,
    only: Collection[str] | None = None,
) -> dict[str, E]:
    """The cases the oracle holds after ``report.mode``, each sorted into the report.

    ``old``: the cases on disk; ``fresh``: the cases frozen now; ``present``: the
    ids whose input exists now.  ``--new-only`` keeps every old case (also those
    whose input vanished: only ``--trim`` drops them) and, when a fresh case
    differs from the one kept, says so through ``kept``.  ``--force`` replaces
    everything with what was frozen now.  ``--trim`` keeps the old cases whose
    input is present.  ``only`` (an accept: ``--force`` narrowed to some cases)
    replaces just those and keeps every other old case as it is.  The result is
    sorted by id.
    """
    mode = report.mode
    result: dict[str, E]
    if only is not None:
        result = _replace_some(report, old, fresh, same)
    elif mode is RecordMode.TRIM:
        result = {cid: entry for cid, entry in old.items() if cid in present}
        report.unchanged.extend(sorted(result))
        report.trimmed.extend(sorted(cid for cid in old if cid not in present))
    elif mode is RecordMode.NEW_ONLY:
        result = dict(old)
        report.unchanged.extend(sorted(old))
        for cid in sorted(fresh):
            entry = fresh[cid]
            previous = old.get(cid)
            if previous is None:
                result[cid] = entry
                report.added.append(cid)
            elif kept is not None and not same(previous, entry):
                report.notes.append(kept(cid, previous, entry))
    else:
        result = dict(fresh)
        _sort_fresh(report, old, fresh, same)
        report.trimmed.extend(sorted(cid for cid in old if cid not in fresh))
    return result if _sorted(result) else dict(sorted(result.items()))


def _sorted(cases: Mapping[str, object]) -> bool:
    """True when ``cases`` are in id order already (a fresh recording usually is): a
    million cases are then not copied again."""
    return all(a < b for a, b in itertools.pairwise(cases))


def _replace_some(
    report: RecordReport, old: Mapping[str, E], fresh: Mapping[str, E], same: Callable[[E, E], bool]
) -> dict[str, E]:
    """An accept: the cases frozen now replace theirs; every other old case is kept."""
    report.unchanged.extend(sorted(cid for cid in old if cid not in fresh))
    _sort_fresh(report, old, fresh, same)
    return {**old, **fresh}


def _sort_fresh(
    report: RecordReport, old: Mapping[str, E], fresh: Mapping[str, E], same: Callable[[E, E], bool]
) -> None:
    """Each case frozen now is added, unchanged or replaced against the one on disk."""
    for cid in sorted(fresh):
        previous = old.get(cid)
        if previous is None:
            report.added.append(cid)
        elif same(previous, fresh[cid]):
            report.unchanged.append(cid)
        else:
            report.replaced.append(cid)


@dataclass(frozen=True)
class RecordHooks(Generic[F, E]):
    """What one kind supplies to :func:`record`: ``F`` is its file as read, ``E`` one case
    as frozen (what :func:`merge` compares and the kind writes)."""

    read: Callable[[], F]
    """The oracle on disk (:class:`~lockstep.errors.DataError` when unreadable)."""
    cases: Callable[[F], Mapping[str, E]]
    """The cases a file on disk holds, by id."""
    present: Callable[[], Collection[str]]
    """The ids of the cases whose input exists now (read after the old file)."""
    freeze: Callable[[list[str], F | None, RecordReport], Mapping[str, E]]
    """Freeze these cases now; what cannot be frozen is refused into the report."""
    write: Callable[[F | None, dict[str, E], RecordReport], None]
    """Write the merged cases, or nothing when the kind finds nothing changed (or refuses)."""
    contract: Callable[[F], tuple[object, object]] | None = None
    """The contract a file was recorded under and the configured one, for
    :func:`check_contract` (computed after :attr:`present`)."""
    what: str = ""
    """What the contract is, for the user (``rules or environment base``)."""
    same: Callable[[E, E], bool] = operator.eq
    unreadable_replaced: bool = False
    """Whether a ``--force`` over an unreadable file reports its cases as replaced rather
    than added."""


def record(
    name: str,
    path: Path,
    root: Path,
    mode: RecordMode,
    words: ModeWords,
    hooks: RecordHooks[F, E],
    *,
    only: frozenset[str] | None = None,
) -> RecordReport:
    """The record sequence of one oracle, the same for every kind that goes through it:
    the mode checked against the file, the old file read (an unreadable one replaced only
    by a whole ``--force``), the contract checked, the wanted cases frozen, old and fresh
    merged into the report, and the result handed to the kind to write.  ``only``: an
    accept (``--force`` narrowed to those cases)."""
    report = RecordReport(name, path, mode)
    exists = check_record_mode(path, root, name, mode, words)
    old = read_existing(hooks.read, exists, report, narrowed=only is not None)
    old_cases: Mapping[str, E] = hooks.cases(old) if old is not None else {}
    present = hooks.present()
    if old is not None and hooks.contract is not None:
        recorded, configured = hooks.contract(old)
        check_contract(name, mode, recorded, configured, what=hooks.what)
    fresh = hooks.freeze(wanted(mode, present, old_cases, only), old, report)
    merged = merge(report, old_cases, fresh, present, same=hooks.same, only=only)
    if hooks.unreadable_replaced and exists and old is None:
        report.replaced, report.added = report.added, []
    hooks.write(old, merged, report)
    return report
