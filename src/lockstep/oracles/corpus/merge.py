"""Record's merge of a corpus lock, streamed: the lock's entries (sorted by id, walked from
the file) joined with the fixtures frozen now (sorted by id, held in memory: only as many as
were rendered), so ``record --new-only`` or an ``accept`` on a lock of ten million entries
never holds the lock.

Each mode keeps, adds, replaces and trims exactly as the shared
:func:`lockstep.oracles.lifecycle.merge` says, and sorts each case into the same category of
the :class:`~lockstep.model.RecordReport`, in the same order, except that unchanged cases are
counted (``unchanged_unlisted``), not listed: the one list that would grow with the lock.  A
property test holds the two to the same answers.
"""

from __future__ import annotations

from collections.abc import Collection, Container, Iterable, Iterator, Mapping, Sequence

from lockstep.model import RecordMode, RecordReport
from lockstep.oracles.corpus.lock import Entry


def _join(
    old: Iterable[Entry], fresh: Mapping[str, Entry]
) -> Iterator[tuple[Entry | None, Entry | None]]:
    """``(old entry, fresh entry)`` by id, in id order, None where one side has no such id.

    ``old`` is sorted by id with no id twice (as :func:`~.lock.read_lock` checks it)."""
    ids = sorted(fresh)
    i = 0
    for entry in old:
        while i < len(ids) and ids[i] < entry.id:
            yield None, fresh[ids[i]]
            i += 1
        if i < len(ids) and ids[i] == entry.id:
            yield entry, fresh[ids[i]]
            i += 1
        else:
            yield entry, None
    for fid in ids[i:]:
        yield None, fresh[fid]


def new_ids(present: Iterable[str], old: Iterable[Entry]) -> list[str]:
    """The ids of ``present`` (sorted) that the lock does not hold, in one walk of the lock:
    what ``--new-only`` renders."""
    missing: list[str] = []
    ids = iter(present)
    pending = next(ids, None)
    for entry in old:
        while pending is not None and pending < entry.id:
            missing.append(pending)
            pending = next(ids, None)
        if pending == entry.id:
            pending = next(ids, None)
    if pending is not None:
        missing.append(pending)
        missing.extend(ids)
    return missing


def merged(
    report: RecordReport,
    old: Iterable[Entry],
    fresh: Mapping[str, Entry],
    present: Container[str],
    only: Collection[str] | None = None,
) -> Iterator[Entry]:
    """The entries the lock holds after ``report.mode``, in id order, each sorted into the
    report as it passes (the report is complete once the iterator is exhausted).

    ``old``: the lock's entries; ``fresh``: the fixtures frozen now; ``present``: the ids
    whose fixture exists now; ``only``: the cases an accept re-records (every other old
    entry is kept as it is).  As :func:`lockstep.oracles.lifecycle.merge`, with the same
    entries equal when they are ``==``."""
    mode = report.mode
    if only is None and mode is RecordMode.TRIM:
        for entry in old:
            if entry.id in present:
                report.unchanged_unlisted += 1
                yield entry
            else:
                report.trimmed.append(entry.id)
    elif only is None and mode is RecordMode.NEW_ONLY:
        for was, now in _join(old, fresh):
            if was is not None:
                report.unchanged_unlisted += 1
                yield was
            elif now is not None:
                report.added.append(now.id)
                yield now
    else:  # --force (or create): what was frozen now; an accept: that, and every other old entry
        for was, now in _join(old, fresh):
            if now is not None:
                _sort_fresh(report, was, now)
                yield now
            elif only is not None:
                assert was is not None
                report.unchanged_unlisted += 1
                yield was
            else:
                assert was is not None
                report.trimmed.append(was.id)


def _sort_fresh(report: RecordReport, was: Entry | None, now: Entry) -> None:
    """A fixture frozen now is added, unchanged or replaced against the entry on disk."""
    if was is None:
        report.added.append(now.id)
    elif was == now:
        report.unchanged_unlisted += 1
    else:
        report.replaced.append(now.id)


class EntryCursor:
    """A lock's entries looked up by id, walked forward from the file while the ids asked
    come in id order (pytest runs a corpus's items in the order they were collected: the
    lock's), so replaying case by case does not hold the lock.  An id asked behind the walk
    (another order: a random-order plugin, strength's mutants) indexes the lock whole once,
    as before."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self._entries = entries
        self._walk = iter(entries)
        self._floor: str | None = None
        """The id walked before ``_last`` (None: ``_last`` is the first): no entry lies
        between the two."""
        self._last: Entry | None = None
        self._by_id: dict[str, Entry] | None = None

    def get(self, case_id: str) -> Entry | None:
        if self._by_id is not None:
            return self._by_id.get(case_id)
        last = self._last
        if last is not None and case_id <= last.id:
            if case_id == last.id:
                return last
            if self._floor is None or self._floor < case_id:
                return None  # walked past: the lock has no entry between the two
            self._by_id = {e.id: e for e in self._entries}
            return self._by_id.get(case_id)
        for entry in self._walk:
            self._floor = last.id if last is not None else None
            self._last = last = entry
            if entry.id >= case_id:
                return entry if entry.id == case_id else None
        return None
