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
  category by category into the :class:`~lockstep.model.RecordReport`: the one merge,
  :func:`merged`, streamed (old cases walked from the file, the merged ones handed to the
  writer as they pass, unchanged ones counted where a file may hold millions), with
  :func:`merge` its form over two mappings;
* what an accept's reason must be (:func:`check_why`), whichever kind and door
  (``lockstep accept``, the tape's reviewed accept, ``pytest --lockstep-why``).

:func:`record` is that sequence in order -- check the mode, read the old file, check
the contract, pick the wanted cases, freeze them, merge, write -- with the kind's hooks
for what only it knows: :class:`RecordHooks` for a file held whole (pins, tape),
:class:`StreamHooks` for one walked (the corpus lock, the ledger; its ``lockstep
accept``, pytest recording and ``@record_io`` writes too).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Container, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Final, Generic, TypeVar

import msgspec

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


class ModeWords(msgspec.Struct, frozen=True, kw_only=True):
    """What ``--new-only``, ``--force`` and ``--trim`` do for one oracle kind.

    Here and below, a :class:`msgspec.Struct` rather than a dataclass: it is made in
    microseconds, where each dataclass costs every process that records half a
    millisecond to import."""

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
    only: Container[str] | None = None,
) -> list[str]:
    """The cases to freeze now: all present ones, only new ones (``--new-only``), none (trim).

    ``only`` (``lockstep accept``) narrows them to the cases being accepted.
    """
    if mode is RecordMode.TRIM:
        return []
    if mode is RecordMode.NEW_ONLY:
        return [case_id for case_id in present if case_id not in old]
    return [case_id for case_id in present if only is None or case_id in only]


def _wanted_streamed(
    mode: RecordMode,
    present: Iterable[str],
    old_ids: Callable[[], Iterable[str]],
    only: Container[str] | None,
) -> Iterator[str]:
    """:func:`wanted`, lazily, against a file walked rather than held: ``--new-only`` walks
    the old ids (sorted) once beside the present ones sorted.  Nothing is computed until the
    kind's freeze asks (the ledger freezes from its recording, and never does)."""
    if mode is RecordMode.TRIM:
        return
    if mode is RecordMode.NEW_ONLY:
        yield from new_ids(sorted(present), old_ids())
        return
    yield from (case_id for case_id in present if only is None or case_id in only)


def new_ids(present: Iterable[str], old: Iterable[str]) -> list[str]:
    """The ids of ``present`` (sorted) that ``old`` (sorted ids) does not hold, in one walk
    of each: what ``--new-only`` freezes, without a set of a large file's ids."""
    missing: list[str] = []
    ids = iter(present)
    pending = next(ids, None)
    for old_id in old:
        while pending is not None and pending < old_id:
            missing.append(pending)
            pending = next(ids, None)
        if pending == old_id:
            pending = next(ids, None)
    if pending is not None:
        missing.append(pending)
        missing.extend(ids)
    return missing


def merged(
    report: RecordReport,
    old: Iterable[E],
    fresh: Mapping[str, E] | Iterable[E],
    present: Container[str],
    *,
    key: Callable[[E], str],
    same: Callable[[E, E], bool] = operator.eq,
    kept: Callable[[str, E, E], str] | None = None,
    only: Container[str] | None = None,
    unfrozen_dropped: bool = False,
    listed: bool = True,
) -> Iterator[E]:
    """The one merge of old and fresh cases: the cases the oracle holds after
    ``report.mode``, in id order, each sorted into the report as it passes (the report is
    complete once the iterator is exhausted).  Neither side is held: a file of a million
    cases streams through.

    ``old``: the cases on disk, sorted by id (``key``) with no id twice; ``fresh``: the
    cases frozen now, a mapping by id (sorted here) or an iterable sorted by id; ``present``:
    the ids whose input exists now.  ``--new-only`` keeps every old case (also those whose
    input vanished: only ``--trim`` drops them) and, when a fresh case differs from the one
    kept (``same``), says so through ``kept``.  ``--force`` (and a first recording) writes
    what was frozen now.  ``--trim`` keeps the old cases whose input is present.  ``only``
    (an accept: ``--force`` narrowed to some cases) replaces the cases frozen now and keeps
    every other old case as it is; ``unfrozen_dropped``: a case of ``only`` not frozen now
    (refused, or no longer made) is dropped, reported trimmed, rather than kept (the
    ledger's rows are the calls made again: one not made or refused now is gone).
    ``listed``: unchanged cases are listed in ``report.unchanged``; otherwise only counted
    (``unchanged_unlisted``), the one list that would grow with the file.
    """
    if listed:
        unchanged: Callable[[str], None] = report.unchanged.append
    else:

        def unchanged(case_id: str) -> None:
            report.unchanged_unlisted += 1

    if only is None and report.mode is RecordMode.TRIM:
        return _present_kept(report, old, present, key, unchanged)
    ordered: Iterable[E]
    if isinstance(fresh, Mapping):
        by_id: Mapping[str, E] = fresh
        ordered = (by_id[case_id] for case_id in sorted(by_id))
    else:
        ordered = fresh
    pairs = _join(iter(old), iter(ordered), key)
    dropped = only if unfrozen_dropped else None
    return _sort_pairs(report, pairs, same, kept, only, dropped, unchanged)


def _present_kept(
    report: RecordReport,
    old: Iterable[E],
    present: Container[str],
    key: Callable[[E], str],
    unchanged: Callable[[str], None],
) -> Iterator[E]:
    """``--trim``: the old cases whose input is present, the others trimmed."""
    for entry in old:
        case_id = key(entry)
        if case_id in present:
            unchanged(case_id)
            yield entry
        else:
            report.trimmed.append(case_id)


def _sort_pairs(
    report: RecordReport,
    pairs: Iterator[tuple[str, E | None, E | None]],
    same: Callable[[E, E], bool],
    kept: Callable[[str, E, E], str] | None,
    only: Container[str] | None,
    dropped: Container[str] | None,
    unchanged: Callable[[str], None],
) -> Iterator[E]:
    """Every other mode, over the old and fresh cases paired by id; ``dropped``: the old
    cases trimmed when not frozen now, though ``only`` keeps the others."""
    new_only = only is None and report.mode is RecordMode.NEW_ONLY
    keeps_old = only is not None or new_only
    for case_id, was, now in pairs:
        if now is None:
            assert was is not None
            if keeps_old and (dropped is None or case_id not in dropped):
                unchanged(case_id)
                yield was
            else:
                report.trimmed.append(case_id)
        elif was is None:
            report.added.append(case_id)
            yield now
        elif new_only:
            unchanged(case_id)
            if kept is not None and not same(was, now):
                report.notes.append(kept(case_id, was, now))
            yield was
        elif same(was, now):
            unchanged(case_id)
            yield now
        else:
            report.replaced.append(case_id)
            yield now


def _join(
    old: Iterator[E], fresh: Iterator[E], key: Callable[[E], str]
) -> Iterator[tuple[str, E | None, E | None]]:
    """Two id-ordered streams walked together: ``(id, old case or None, fresh case or None)``
    (each case's id taken once)."""
    was: E | None = next(old, None)
    now: E | None = next(fresh, None)
    was_id = "" if was is None else key(was)
    now_id = "" if now is None else key(now)
    while was is not None or now is not None:
        if now is None or (was is not None and was_id < now_id):
            yield was_id, was, None
            was = next(old, None)
            was_id = "" if was is None else key(was)
        elif was is None or now_id < was_id:
            yield now_id, None, now
            now = next(fresh, None)
            now_id = "" if now is None else key(now)
        else:
            yield was_id, was, now
            was, now = next(old, None), next(fresh, None)
            was_id = "" if was is None else key(was)
            now_id = "" if now is None else key(now)


def merge(
    report: RecordReport,
    old: Mapping[str, E],
    fresh: Mapping[str, E],
    present: Collection[str],
    *,
    same: Callable[[E, E], bool],
    kept: Callable[[str, E, E], str] | None = None,
    only: Container[str] | None = None,
) -> dict[str, E]:
    """:func:`merged` of two mappings by id, held: the cases sorted by id, unchanged ones
    listed (what pins and tape write, a file small enough to hold)."""

    def pairs(cases: Mapping[str, E]) -> Iterator[tuple[str, E]]:
        return ((case_id, cases[case_id]) for case_id in sorted(cases))

    def kept_pair(case_id: str, was: tuple[str, E], now: tuple[str, E]) -> str:
        assert kept is not None
        return kept(case_id, was[1], now[1])

    return dict(
        merged(
            report,
            pairs(old),
            pairs(fresh),
            present,
            key=operator.itemgetter(0),
            same=lambda was, now: same(was[1], now[1]),
            kept=None if kept is None else kept_pair,
            only=only,
        )
    )


class _Hooks(msgspec.Struct, Generic[F, E], frozen=True, kw_only=True):
    """What every kind supplies to :func:`record`, held or streamed."""

    read: Callable[[], F]
    """The oracle on disk (:class:`~lockstep.errors.DataError` when unreadable)."""
    present: Callable[[], Collection[str]]
    """The ids of the cases whose input exists now (read after the old file)."""
    contract: Callable[[F], tuple[object, object]] | None = None
    """The contract a file was recorded under and the configured one, for
    :func:`check_contract` (computed after :attr:`present`)."""
    what: str = ""
    """What the contract is, for the user (``rules or environment base``)."""
    same: Callable[[E, E], bool] = operator.eq
    """Whether an old case and the one frozen now are the same behaviour."""
    kept: Callable[[str, E, E], str] | None = None
    """The note when ``--new-only`` keeps an old case that differs from the one frozen now."""


class RecordHooks(_Hooks[F, E], frozen=True, kw_only=True):
    """What a kind whose file is small enough to hold supplies to :func:`record`: ``F`` is
    its file as read, ``E`` one case as frozen (what the merge compares and the kind
    writes)."""

    cases: Callable[[F], Mapping[str, E]]
    """The cases a file on disk holds, by id."""
    freeze: Callable[[list[str], F | None, RecordReport], Mapping[str, E]]
    """Freeze these cases now; what cannot be frozen is refused into the report."""
    write: Callable[[F | None, dict[str, E], RecordReport], None]
    """Write the merged cases, or nothing when the kind finds nothing changed (or refuses)."""
    unreadable_replaced: bool = False
    """Whether a ``--force`` over an unreadable file reports its cases as replaced rather
    than added."""


class StreamHooks(_Hooks[F, E], frozen=True, kw_only=True):
    """What a kind whose file may hold millions of cases supplies to :func:`record`: the
    old cases are walked from the file and the merged ones handed to the writer as they
    pass, so neither is held."""

    cases: Callable[[F], Iterable[E]]
    """The cases a file on disk holds, sorted by id (called again for each walk)."""
    key: Callable[[E], str]
    """A case's id."""
    freeze: Callable[[Iterable[str], F | None, RecordReport], Mapping[str, E] | Iterable[E]]
    """Freeze these cases now (a mapping by id, or an iterable sorted by id); what cannot be
    frozen is refused into the report."""
    write: Callable[[F | None, Iterator[E], RecordReport], None]
    """Write the merged cases as they come (the report is complete once they are all
    taken), or nothing when the kind finds nothing changed."""
    listed: bool = False
    """Whether unchanged cases are listed in the report (else counted)."""
    unfrozen_dropped: bool = False
    """Whether an accepted case not frozen now is dropped rather than kept (see
    :func:`merged`)."""


def record(
    name: str,
    path: Path,
    root: Path,
    mode: RecordMode,
    words: ModeWords,
    hooks: RecordHooks[F, E] | StreamHooks[F, E],
    *,
    only: Container[str] | None = None,
    report: RecordReport | None = None,
) -> RecordReport:
    """The record sequence of one oracle, the same for every kind that goes through it:
    the mode checked against the file, the old file read (an unreadable one replaced only
    by a whole ``--force``), the contract checked, the wanted cases frozen, old and fresh
    merged into the report (:func:`merged`, the one merge), and the result handed to the
    kind to write.  ``only``: an accept (``--force`` narrowed to those cases).  ``report``:
    one the kind began with what it did before (the ledger runs its driver and verifies
    the calls first); a new one otherwise."""
    if report is None:
        report = RecordReport(name, path, mode)
    exists = check_record_mode(path, root, name, mode, words)
    old = read_existing(hooks.read, exists, report, narrowed=only is not None)
    if isinstance(hooks, StreamHooks):
        _record_streamed(name, report, old, hooks, only)
        return report
    old_cases: Mapping[str, E] = hooks.cases(old) if old is not None else {}
    present = _present(name, mode, old, hooks)
    fresh = hooks.freeze(wanted(mode, present, old_cases, only), old, report)
    cases = merge(report, old_cases, fresh, present, same=hooks.same, kept=hooks.kept, only=only)
    if hooks.unreadable_replaced and exists and old is None:
        report.replaced, report.added = report.added, []
    hooks.write(old, cases, report)
    return report


def _present(name: str, mode: RecordMode, old: F | None, hooks: _Hooks[F, E]) -> Collection[str]:
    """The ids present now, once the old file's contract is found to be the configured one."""
    present = hooks.present()
    if old is not None and hooks.contract is not None:
        recorded, configured = hooks.contract(old)
        check_contract(name, mode, recorded, configured, what=hooks.what)
    return present


def _record_streamed(
    name: str,
    report: RecordReport,
    old: F | None,
    hooks: StreamHooks[F, E],
    only: Container[str] | None,
) -> None:
    """:func:`record` past the old file's read, for a file walked rather than held."""
    mode = report.mode

    def walk() -> Iterable[E]:
        return hooks.cases(old) if old is not None else ()

    present = _present(name, mode, old, hooks)
    todo = _wanted_streamed(mode, present, lambda: map(hooks.key, walk()), only)
    fresh = hooks.freeze(todo, old, report)
    cases = merged(
        report,
        walk(),
        fresh,
        present,
        key=hooks.key,
        same=hooks.same,
        kept=hooks.kept,
        only=only,
        unfrozen_dropped=hooks.unfrozen_dropped,
        listed=hooks.listed,
    )
    hooks.write(old, cases, report)
