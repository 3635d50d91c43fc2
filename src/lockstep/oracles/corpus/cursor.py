"""A corpus lock's entries looked up by id while they are walked from the file
(:class:`EntryCursor`).  Record's merge of a lock with the fixtures frozen now is the one
merge of every kind (:func:`lockstep.oracles.lifecycle.merged`), streamed there.
"""

from __future__ import annotations

from collections.abc import Sequence

from lockstep.oracles.corpus.lock import Entry


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
