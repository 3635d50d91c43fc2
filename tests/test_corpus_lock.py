"""The corpus lock's checks: the column-at-a-time test agrees with the walk that names a fault."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lockstep.oracles.corpus.lock import MAX_NBYTES, Entry, _well_formed, first_fault

GOOD_SHA = "0123456789abcdef" * 4
shas = st.sampled_from(
    [GOOD_SHA, "f" * 64, "F" * 64, "0" * 63, "0" * 65, "g" * 64, "", "0" * 63 + "\n", "٠" * 64]
)
sizes = st.sampled_from([0, 1, 1093, MAX_NBYTES, MAX_NBYTES + 1, -1])
entries = st.lists(st.builds(Entry, st.text(alphabet="ab.", max_size=3), shas, sizes), max_size=6)


@given(entries)
@settings(max_examples=600)
def test_well_formed_exactly_when_no_entry_is_at_fault(listed: list[Entry]) -> None:
    assert _well_formed(listed) == (first_fault("rows.lock.json", listed) is None)


@given(st.lists(st.text(alphabet="abc", min_size=1, max_size=4), unique=True, max_size=8))
def test_a_lock_written_sorted_is_well_formed(ids: list[str]) -> None:
    listed = [Entry(i, GOOD_SHA, 10) for i in sorted(ids)]
    assert _well_formed(listed)
    assert first_fault("rows.lock.json", listed) is None
