"""The demo's ledger chapter runs as its story says: recorded, green rewrite, red rewrite."""

from __future__ import annotations

from pathlib import Path

from lockstep.demo.chapters import ORDER, ledger
from lockstep.demo.runner import prepare, run_story
from lockstep.demo.steps import Run


def test_ledger_chapter_plays_out(tmp_path: Path) -> None:
    assert ORDER.index("ledger") == ORDER.index("corpus") + 1
    story = prepare(tmp_path / "demo", [ledger.CHAPTER])
    events = list(run_story(tmp_path / "demo", story))
    # each code change is a `cp` of a variant the demo folder holds (.variants/)
    runs = [e for e in events if isinstance(e.step, Run) and e.step.argv[0] != "cp"]
    copies = [e for e in events if isinstance(e.step, Run) and e.step.argv[0] == "cp"]
    assert [e.step.argv[1] for e in copies] == [
        ".variants/messy_faithful.py",
        ".variants/messy_list.py",
        ".variants/messy_faithful.py",
    ]
    assert [e.exit_code for e in runs] == [0, 0, 1, 0]
    assert not any(e.unexpected for e in events)
    red = runs[2].output
    assert "parse_amount('20', False, 'USD')" in red
    assert "expected returned (Decimal('20.00'), 'USD')" in red
    assert "got returned [Decimal('20.00'), 'USD']" in red
    assert "19 more failing cases of parse_amount not shown" in red
