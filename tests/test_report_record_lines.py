"""The pytest session's summary of a ledger is the CLI's, without rich.

``pytest --lockstep-record`` prints each ledger's report as plain lines built by
:mod:`lockstep.report.record_lines` (rich is not imported for it); ``lockstep record``
prints the same through rich.  The two must say the same, for every report.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lockstep.model import RecordMode, RecordReport, Refusal, RefusalReason
from lockstep.report.record_lines import record_plain
from lockstep.report.terminal import record_text

ids = st.lists(st.text(min_size=1, max_size=12), max_size=12)
refusals = st.lists(
    st.builds(
        Refusal,
        oracle=st.just("f"),
        case_id=st.text(min_size=1, max_size=8),
        reason=st.sampled_from(list(RefusalReason)),
        detail=st.text(max_size=20),
        cause=st.text(max_size=20),
    ),
    max_size=4,
)
reports = st.builds(
    RecordReport,
    oracle=st.text(min_size=1, max_size=10),
    path=st.just(Path("/project/lockstep/f.ledger.jsonl")),
    mode=st.sampled_from(list(RecordMode)),
    added=ids,
    replaced=ids,
    unchanged=ids,
    unchanged_unlisted=st.integers(0, 5),
    trimmed=ids,
    refused=refusals,
    notes=st.lists(st.text(max_size=30), max_size=3),
)


@given(report=reports, masked=st.booleans())
def test_the_plain_summary_is_the_terminals_text(report: RecordReport, masked: bool) -> None:
    mask = (lambda text: text.replace("a", "*")) if masked else None
    root = Path("/project")
    assert record_plain(report, root, mask) == record_text(report, root, mask).plain
