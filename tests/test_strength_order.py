"""Killers first: the order a worker tries a mutant's cases in, never which cases."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lockstep.strength.engine import KillersFirst
from lockstep.strength.mutants import Mutant

_refs = st.lists(st.from_regex(r"f::[0-9a-f]{4}", fullmatch=True), unique=True, max_size=30)


def _mutant(scope: str) -> Mutant:
    return Mutant(
        file=Path("lib.py"),
        index=0,
        scope=scope,
        scope_line=1,
        lines=(3,),
        line=3,
        operator="number",
        before="x = 1",
        after="x = 2",
        splice=(3, 4, 3, 5, "2"),
        key="k",
    )


@given(cases=_refs, killed=_refs, lead=st.integers(0, 30), scope=st.sampled_from(["f", "g"]))
def test_order_is_a_permutation_keeping_the_lead_and_putting_recent_killers_next(
    cases: list[str], killed: list[str], lead: int, scope: str
) -> None:
    lead = min(lead, len(cases))
    killers = KillersFirst()
    for ref in killed:
        killers.killed(_mutant("f"), ref)
    ordered = killers.order(_mutant(scope), tuple(cases), lead)
    assert sorted(ordered) == sorted(cases)
    assert ordered[:lead] == tuple(cases[:lead])
    if scope == "g":  # another function's killers do not move anything
        assert ordered == tuple(cases)
        return
    recent = killed[::-1][: KillersFirst.KEEP]
    early = [ref for ref in recent if ref in cases[lead:]]
    if len(cases) - lead >= 2:
        assert list(ordered[lead : lead + len(early)]) == early
        rest = list(ordered[lead + len(early) :])
        assert rest == [ref for ref in cases[lead:] if ref not in early]
    else:
        assert ordered == tuple(cases)
