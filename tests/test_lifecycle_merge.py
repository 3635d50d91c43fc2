"""The one merge of old and fresh cases (``lifecycle.merged``) and the record sequence around
it (``lifecycle.record``), held to a plain model of what each record mode does.

The model below is the in-memory merge as it was written before the merge was streamed: one
dictionary operation per mode.  The streamed merge (old cases walked, fresh cases a mapping
or a sorted stream, unchanged cases listed or only counted) and its in-memory wrapper must
give the same cases and the same report for any old file, fresh cases, present inputs, mode
and accepted subset; and ``record`` must give the same file and report whether a kind hands
it its cases held (``RecordHooks``) or streamed (``StreamHooks``).
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lockstep.errors import DataError, UsageError
from lockstep.model import RecordMode, RecordReport
from lockstep.oracles.lifecycle import (
    ModeWords,
    RecordHooks,
    StreamHooks,
    merge,
    merged,
    record,
)

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


WORDS = ModeWords(new_only="add", force="all", trim="drop")
ids = st.text(alphabet="ab.-", min_size=1, max_size=3)
cases = st.dictionaries(ids, st.integers(0, 3), max_size=8)


def same(a: int, b: int) -> bool:
    """Not ``==``: a case may be the same behaviour and still be written anew."""
    return a % 2 == b % 2


def kept(case_id: str, was: int, now: int) -> str:
    return f"{case_id}: kept {was}, now {now}"


def model(
    report: RecordReport,
    old: Mapping[str, int],
    fresh: Mapping[str, int],
    present: Collection[str],
    only: Collection[str] | None,
    unfrozen_dropped: bool = False,
) -> dict[str, int]:
    """What each mode keeps, adds, replaces and trims, one dictionary operation at a time.
    ``unfrozen_dropped``: an accepted case not frozen now is dropped (the ledger's way)."""
    mode = report.mode
    if only is not None or mode in (RecordMode.FORCE, RecordMode.CREATE):
        for cid in sorted(fresh):
            if cid not in old:
                report.added.append(cid)
            elif same(old[cid], fresh[cid]):
                report.unchanged.append(cid)
            else:
                report.replaced.append(cid)
        if only is not None:
            gone = {cid for cid in old if cid not in fresh and unfrozen_dropped and cid in only}
            report.unchanged.extend(cid for cid in old if cid not in fresh and cid not in gone)
            report.trimmed.extend(sorted(gone))
            result = {cid: v for cid, v in {**old, **fresh}.items() if cid not in gone}
        else:
            report.trimmed.extend(sorted(cid for cid in old if cid not in fresh))
            result = dict(fresh)
    elif mode is RecordMode.TRIM:
        result = {cid: v for cid, v in old.items() if cid in present}
        report.unchanged.extend(result)
        report.trimmed.extend(sorted(cid for cid in old if cid not in present))
    else:
        result = dict(old)
        report.unchanged.extend(old)
        for cid in sorted(fresh):
            if cid not in old:
                result[cid] = fresh[cid]
                report.added.append(cid)
            elif not same(old[cid], fresh[cid]):
                report.notes.append(kept(cid, old[cid], fresh[cid]))
    return dict(sorted(result.items()))


def _answer(report: RecordReport) -> tuple[object, ...]:
    """A report's categories; unchanged ones as a sorted list and a count (a streamed
    merge lists them in id order, or only counts them)."""
    return (
        report.added,
        report.replaced,
        report.trimmed,
        report.notes,
        sorted(report.unchanged),
        len(report.unchanged) + report.unchanged_unlisted,
        report.refused,
    )


@st.composite
def scenarios(
    draw: st.DrawFn,
) -> tuple[dict[str, int], dict[str, int], set[str], RecordMode, frozenset[str] | None]:
    old = draw(cases)
    fresh = draw(cases)
    present = draw(st.sets(ids, max_size=8)) | set(fresh)
    mode = draw(st.sampled_from(RecordMode))
    only = None
    if draw(st.booleans()):  # an accept: the frozen cases, and maybe others asked for
        only = frozenset(fresh) | draw(st.frozensets(ids, max_size=3))
    return old, fresh, present, mode, only


Scenario = tuple[dict[str, int], dict[str, int], set[str], RecordMode, frozenset[str] | None]


def _pairs(cases: Mapping[str, int]) -> Iterator[tuple[str, int]]:
    return ((cid, cases[cid]) for cid in sorted(cases))


@given(scenarios(), st.booleans(), st.booleans(), st.booleans())
@settings(max_examples=500)
def test_the_streamed_and_the_held_merge_answer_as_the_model(
    scenario: Scenario, fresh_streamed: bool, listed: bool, unfrozen_dropped: bool
) -> None:
    old, fresh, present, mode, only = scenario
    expected = RecordReport("o", Path("o"), mode)
    wanted = model(expected, old, fresh, present, only, unfrozen_dropped)

    if not unfrozen_dropped:
        held = RecordReport("o", Path("o"), mode)
        assert merge(held, old, fresh, present, same=same, kept=kept, only=only) == wanted
        assert _answer(held) == _answer(expected)

    streamed = RecordReport("o", Path("o"), mode)
    fresh_side: Mapping[str, tuple[str, int]] | Iterable[tuple[str, int]] = (
        _pairs(fresh) if fresh_streamed else {cid: (cid, v) for cid, v in fresh.items()}
    )
    got = merged(
        streamed,
        _pairs(old),
        fresh_side,
        present,
        key=operator.itemgetter(0),
        same=lambda a, b: same(a[1], b[1]),
        kept=lambda cid, a, b: kept(cid, a[1], b[1]),
        only=only,
        unfrozen_dropped=unfrozen_dropped,
        listed=listed,
    )
    assert list(got) == list(wanted.items())  # in id order, each once
    assert _answer(streamed)[:4] == _answer(expected)[:4]
    assert _answer(streamed)[5] == _answer(expected)[5]
    if listed:
        assert streamed.unchanged == sorted(streamed.unchanged)
    else:
        assert streamed.unchanged == []


def _hooks(
    old: dict[str, int] | None,
    frozen_now: dict[str, int],
    present: list[str],
    written: list[list[tuple[str, int]]],
    streamed: bool,
) -> RecordHooks[dict[str, int], int] | StreamHooks[dict[str, int], tuple[str, int]]:
    """A toy kind: its file is ``old`` (None: unreadable), its inputs ``present``, and what
    a case freezes to now ``frozen_now`` (a present case missing there is refused)."""

    def read() -> dict[str, int]:
        if old is None:
            raise DataError("o: unreadable")
        return old

    def freeze_held(todo: Iterable[str], _old: object, report: RecordReport) -> dict[str, int]:
        frozen = {}
        for cid in todo:
            if cid in frozen_now:
                frozen[cid] = frozen_now[cid]
            else:
                report.notes.append(f"{cid}: refused")
        return frozen

    if not streamed:

        def write_held(_old: object, cases: dict[str, int], _report: RecordReport) -> None:
            written.append(list(cases.items()))

        return RecordHooks(
            read=read,
            cases=lambda f: f,
            present=lambda: present,
            freeze=freeze_held,
            write=write_held,
            same=same,
            kept=kept,
        )

    def write_streamed(
        _old: object, cases: Iterator[tuple[str, int]], _report: RecordReport
    ) -> None:
        written.append(list(cases))

    def freeze_streamed(
        todo: Iterable[str], f: dict[str, int] | None, report: RecordReport
    ) -> Iterator[tuple[str, int]]:
        return _pairs(freeze_held(todo, f, report))

    def both(a: tuple[str, int], b: tuple[str, int]) -> bool:
        return same(a[1], b[1])

    return StreamHooks(
        read=read,
        cases=_pairs,
        key=operator.itemgetter(0),
        present=lambda: present,
        freeze=freeze_streamed,
        write=write_streamed,
        same=both,
        kept=lambda cid, a, b: kept(cid, a[1], b[1]),
        listed=True,
    )


@given(
    scenarios(),
    st.dictionaries(ids, st.integers(0, 3), max_size=8),
    st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_record_writes_and_reports_alike_held_or_streamed(
    tmp_path_factory: pytest.TempPathFactory,
    scenario: Scenario,
    frozen_now: dict[str, int],
    unreadable: bool,
) -> None:
    old, _, present_set, mode, only = scenario
    present = sorted(present_set | set(frozen_now))
    path = tmp_path_factory.mktemp("o") / "o.toy"
    if mode is not RecordMode.CREATE:
        path.write_text("on disk")
    answers = []
    for streamed in (False, True):
        written: list[list[tuple[str, int]]] = []
        hooks = _hooks(None if unreadable else old, frozen_now, present, written, streamed)
        try:
            report = record("o", path, path.parent, mode, WORDS, hooks, only=only)
        except (DataError, UsageError) as e:
            answers.append((type(e), str(e)))
            continue
        answers.append((written, _answer(report)))
    assert answers[0] == answers[1]
