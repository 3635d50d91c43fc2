"""The HTML report, read as a file: `replay --report`, `lockstep report`, the side-by-side
rows it draws, and that nothing a project or an oracle file holds becomes markup."""

from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import GitRepo, invoke_cli
from lockstep.model import Drift, Outcome, Status
from lockstep.report.html import (
    Extras,
    ReportRun,
    ReviewLine,
    ReviewSection,
    SignatureSection,
    SourceFile,
    SourceLine,
    StrengthSection,
    render_html,
)
from lockstep.report.sidebyside import (
    MAX_FOLD_ROWS,
    Fold,
    Row,
    drift_rows,
    rows_from_texts,
    rows_from_unified,
)
from lockstep.report.summary import Tally
from report_projects import HOSTILE_ID, LONG_LINES, hostile_red_project

# ------------------------------------------------------------------ side by side


def _changed(items: list[Row | Fold]) -> list[Row]:
    return [i for i in items if isinstance(i, Row) and i.kind != "equal"]


def test_one_changed_line_in_forty_folds_both_equal_stretches() -> None:
    old = "".join(f"line {i}\n" for i in range(40))
    new = old.replace("line 20\n", "line 20!\n")
    items = rows_from_texts(old, new)
    folds = [i for i in items if isinstance(i, Fold)]
    assert [f.count for f in folds] == [17, 16]  # 3 lines of context kept open on each side
    (change,) = _changed(items)
    assert change.kind == "change" and change.left_no == 21 and change.right_no == 21
    assert [s.text for s in change.right if s.changed] == ["!"]


def test_a_long_fold_draws_its_first_lines_and_counts_the_rest() -> None:
    old = "".join(f"line {i}\n" for i in range(1000))
    folds = [i for i in rows_from_texts(old, old + "one more\n") if isinstance(i, Fold)]
    (fold,) = folds
    assert fold.count == 997  # 1000 equal lines, 3 kept open next to the added one
    assert len(fold.rows) == MAX_FOLD_ROWS + 1
    assert fold.rows[-1].note == f"{997 - MAX_FOLD_ROWS} more equal lines not drawn"


def test_short_equal_stretches_stay_open() -> None:
    items = rows_from_texts("a\nb\nc\n", "a\nB\nc\n")
    assert not any(isinstance(i, Fold) for i in items)
    assert [i.kind for i in items if isinstance(i, Row)] == ["equal", "change", "equal"]


def test_a_unified_diff_reads_back_as_rows_with_a_gap_between_hunks() -> None:
    diff = (
        "--- a (recorded)\n+++ a (now)\n"
        "@@ -1,2 +1,2 @@\n x\n-total 0.13\n+total 0.12\n"
        "@@ -30,1 +30,2 @@\n-old\n+new\n+extra\n"
    )
    items = rows_from_unified(diff)
    kinds = [i.kind for i in items if isinstance(i, Row)]
    assert kinds == ["equal", "change", "gap", "change", "insert"]
    change = next(i for i in items if isinstance(i, Row) and i.kind == "change")
    assert (change.left_no, change.right_no) == (2, 2)
    assert [s.text for s in change.left if s.changed] == ["3"]


def test_a_one_line_value_drift_is_one_changed_row() -> None:
    drift = Drift(
        "result", "returned (Decimal('9.99'), 'USD')", "returned [Decimal('9.99'), 'USD']"
    )
    (row,) = drift_rows(drift)
    assert isinstance(row, Row) and row.kind == "change"
    assert [s.text for s in row.left if s.changed] == ["(", ")"]


def test_a_tape_drift_shows_its_explanation_and_its_call_listing_side_by_side() -> None:
    diff = (
        "call 3: expected rates.rate('EUR'), got nothing\n"
        "--- recorded tape\n+++ this run\n@@ -1,3 +1,2 @@\n"
        " rates.rate('EUR')\n fees.late_fee(442.0, 45)\n-rates.rate('EUR')\n"
    )
    drift = Drift("calls", "3 calls (ordered)", "2 calls", diff)
    kinds = [i.kind for i in drift_rows(drift) if isinstance(i, Row)]
    assert kinds == ["equal", "equal", "delete"]
    page = _page([Outcome("invoice_summary", "run", Status.DRIFT, (drift,))])
    assert '<pre class="explain">call 3: expected rates.rate(&#39;EUR&#39;), got nothing' in page


@settings(deadline=None)
@given(st.lists(st.text(max_size=8), max_size=30), st.lists(st.text(max_size=8), max_size=30))
def test_side_by_side_keeps_every_line_of_both_documents(old: list[str], new: list[str]) -> None:
    clean = [[s.replace("\r", "").replace("\n", "") for s in doc] for doc in (old, new)]
    expected, actual = ("".join(line + "\n" for line in doc) for doc in clean)
    rows: list[Row] = []
    for item in rows_from_texts(expected, actual):
        rows += item.rows if isinstance(item, Fold) else [item]
    left = ["".join(s.text for s in r.left) for r in rows if r.left_no is not None]
    right = ["".join(s.text for s in r.right) for r in rows if r.right_no is not None]
    assert left == expected.splitlines()
    assert right == actual.splitlines()


# ------------------------------------------------------------------ the page


def _page(outcomes: list[Outcome], extras: Extras | None = None) -> str:
    tally = Tally()
    for outcome in outcomes:
        tally.add(outcome)
    run = ReportRun("project", tally, tuple(o for o in outcomes if not o.ok), 0.5, "2026-01-01")
    return render_html(run, extras)


def _visible_markup(page: str) -> Counter[str]:
    """The tags of the page; a hostile value may add none."""
    return Counter(m.group(1).lower() for m in re.finditer(r"<([a-zA-Z][a-zA-Z0-9]*)", page))


EVIL = "<script>window.__pwned=1</script><img src=x onerror=alert(1)>&amp;\"'"


def test_every_field_a_project_controls_is_escaped_text() -> None:
    benign = Outcome(
        "o", "id", Status.DRIFT, (Drift("output", "a", "b", "", ("ab\n", "abx\n")),), note="n"
    )
    hostile = Outcome(
        EVIL,
        EVIL,
        Status.DRIFT,
        (Drift(EVIL, EVIL, EVIL + "!", "", (f"{EVIL}\n", f"{EVIL}x\n")),),
        note=EVIL,
    )
    extras = Extras(
        review=ReviewSection(EVIL, (ReviewLine(EVIL, False, (EVIL, EVIL)),)),
        signatures=(SignatureSection(EVIL, 3, ((2, EVIL), (1, "x"))),),
        strength=StrengthSection(EVIL, (SourceFile(EVIL, (SourceLine(1, EVIL, True, (EVIL,)),)),)),
    )
    page = _page([hostile], extras)
    shape = _page(
        [benign],
        Extras(
            review=ReviewSection("t", (ReviewLine("c", False, ("e", "e")),)),
            signatures=(SignatureSection("l", 3, ((2, "s"), (1, "x"))),),
            strength=StrengthSection("s", (SourceFile("p", (SourceLine(1, "x", True, ("m",)),)),)),
        ),
    )
    assert "<script>window" not in page and "<img" not in page
    assert html.escape(EVIL, quote=False) in page or "&lt;script&gt;window.__pwned=1" in page
    assert _visible_markup(page) == _visible_markup(shape)


def test_optional_sections_appear_only_when_given() -> None:
    outcome = Outcome("o", "id", Status.DRIFT, (Drift("output", "a", "b"),))
    bare = _page([outcome])
    assert 'id="review"' not in bare and 'id="signatures"' not in bare
    assert 'id="strength"' not in bare
    full = _page(
        [outcome],
        Extras(
            review=ReviewSection("lockstep review a..b", (ReviewLine("one seam", True, ()),)),
            signatures=(SignatureSection("export", 10, ((10, "exit 0 stdout abc"),)),),
            strength=StrengthSection("2 lines no case runs", (SourceFile("m.py", ()),)),
        ),
    )
    for anchor in ("review", "signatures", "strength"):
        assert f'id="{anchor}"' in full


def test_the_page_loads_nothing_and_runs_nothing() -> None:
    page = _page([Outcome("o", "id", Status.DRIFT, (Drift("output", "a", "b"),))])
    assert "default-src 'none'" in page
    assert not re.search(r"<(script|link|iframe|object|embed)\b", page)
    assert not re.search(r"(src|href)=\"?(https?:|//)", page)


# ------------------------------------------------------------------ the commands


def test_replay_report_of_a_hostile_project_shows_what_moved_as_text(tmp_path: Path) -> None:
    root = hostile_red_project(tmp_path / "p")
    result = invoke_cli("replay", "--report", "out/report.html", cwd=root)
    assert result.code == 1, result.output
    assert "report: out/report.html" in result.stdout
    page = (root / "out" / "report.html").read_text(encoding="utf-8")
    assert "DRIFT: 2 cases: 0 passed, 2 drifted" in page
    assert html.escape(HOSTILE_ID, quote=False) in page
    assert "<svg" not in page and "<script>window" not in page and "<img" not in page
    assert "&lt;script&gt;window.__pwned=2;alert(" in page  # the fixture's text, shown as text
    assert page.count("<details>") == 4  # per case: lines 1-17 and 25-40 folded
    assert f"{17} equal lines" in page and f"{LONG_LINES - 24} equal lines" in page
    assert "<mark>0</mark>" in page  # the character that moved: 12.35 → 12.350


def test_report_command_writes_the_page_and_exits_0_unless_asked(tmp_path: Path) -> None:
    root = hostile_red_project(tmp_path / "p")
    result = invoke_cli("report", cwd=root)
    assert result.code == 0, result.output
    assert "report: lockstep-report.html" in result.stdout
    assert "not green: 2 cases: 0 passed, 2 drifted" in result.stdout
    assert (root / "lockstep-report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    strict = invoke_cli("report", "--out", "r.html", "--fail-on-drift", cwd=root)
    assert strict.code == 1 and (root / "r.html").exists()


def test_a_green_replay_report_says_green_and_draws_no_case(tmp_path: Path) -> None:
    root = hostile_red_project(tmp_path / "p")
    invoke_cli("record", "--force", cwd=root)
    result = invoke_cli("replay", "--report", "r.html", cwd=root)
    assert result.code == 0, result.output
    page = (root / "r.html").read_text(encoding="utf-8")
    assert "green: 2 cases: 2 passed" in page and 'id="cases"' not in page


def test_report_adds_the_probe_signatures_and_the_review_table(tmp_path: Path) -> None:
    root = hostile_red_project(tmp_path / "p")
    repo = GitRepo(root)
    repo.commit("legacy renderer and its frozen output")
    (root / "legacy" / "harness.py").write_text(
        (root / "legacy" / "harness.py").read_text().replace("'0'", "'00'")
    )
    repo.commit("pad the totals")
    result = invoke_cli("report", "--probe", "2", "--review", "HEAD~1..HEAD", cwd=root)
    assert result.code == 0, result.output
    page = (root / "lockstep-report.html").read_text(encoding="utf-8")
    signatures = page[page.index('id="signatures"') : page.index('id="review"')]
    assert "ledger_lines (every case, in a fresh interpreter)</code>: 2 run(s), 1 signature(s)" in (
        signatures
    )
    review = page[page.index('id="review"') :]
    assert "lockstep review HEAD~1..HEAD (1 commit(s))" in review
    row = re.search(r"<tr><td>every oracle replays green at HEAD</td><td class=\"(\w+)\">", review)
    assert row is not None and row.group(1) == "fail"


def test_whole_documents_are_kept_only_for_the_cases_the_page_draws(tmp_path: Path) -> None:
    from lockstep.cli.report_command import ReportFiles
    from lockstep.report.html import MAX_CASES

    files = ReportFiles(html=tmp_path / "r.html", junit=tmp_path / "j.xml")
    drift = Drift("output", "a", "b", "", ("x\n" * 1000, "y\n" * 1000))
    for n in range(MAX_CASES + 5):
        files.keep(Outcome("o", f"c{n}", Status.DRIFT, (drift,)))
        files.keep(Outcome("o", f"p{n}", Status.PASS))
    whole = [o for o in files.outcomes if o.drifts and o.drifts[0].texts is not None]
    assert len(whole) == MAX_CASES
    assert len(files.outcomes) == 2 * (MAX_CASES + 5)  # JUnit has one testcase per case


# ------------------------------------------------------------------ groups, revision, accept hints


def _drift(old: str, new: str, at: int) -> Drift:
    diff = f"--- recorded\n+++ now\n@@ -{at},1 +{at},1 @@\n-{old}\n+{new}\n"
    return Drift("output", f"sha {at}", f"sha {at + 1}", diff)


def test_drifts_that_share_one_change_are_one_group_under_an_index() -> None:
    same = [
        Outcome("rows", f"case-{n}.json", Status.DRIFT, (_drift("total 1.5", "total 1.50", n),))
        for n in range(3)
    ]
    other = Outcome("rows", "odd.json", Status.DRIFT, (_drift("name x", "name y", 7),))
    new = Outcome("rows", "fresh.json", Status.NEW)
    page = _page([same[0], other, same[1], same[2], new])
    index = page[page.index('<nav id="index">') : page.index("</nav>")]
    assert index.count("<li>") == 3  # one change in three cases, another, the new case
    assert '<a href="#group-1">' in index and "3 case(s)" in index
    assert "total 1.5 → total 1.50" in index
    group = page[page.index('id="group-1"') : page.index('id="group-2"')]
    assert group.count('<article class="case drift"') == 3
    assert "2 more case(s) with the same change" in group
    assert (
        "lockstep accept rows --case case-0.json --case case-1.json --case case-2.json "
        "--why &#34;…&#34;" in group
    )
    assert "lockstep replay rows --keep-pending" in group
    assert "lockstep record rows --new-only" in page[page.index('id="group-3"') :]
    assert not re.search(r"<script\b", page)


def test_a_big_group_spells_out_ten_cases_and_counts_the_rest() -> None:
    cases = [Outcome("rows", f"c{n:02d}", Status.DRIFT, (_drift("a", "b", n),)) for n in range(29)]
    page = _page(cases)
    assert page.count('<li><a href="#group-') == 1
    assert "29 case(s) with one change" in page
    assert "--case c09 --why" in page and "--case c10" not in page
    assert "and 19 more --case (lockstep pending rows lists them)" in page


def test_the_page_names_the_commit_replayed_and_the_working_tree(tmp_path: Path) -> None:
    root = hostile_red_project(tmp_path / "p")
    repo = GitRepo(root)
    sha = repo.commit("totals padded with a zero")
    out = tmp_path / "r.html"  # outside the repository: the page is no change of it
    result = invoke_cli("replay", "--report", str(out), cwd=root)
    assert result.code == 1, result.output
    page = out.read_text(encoding="utf-8")
    revision = page[page.index('id="revision"') :].split("</p>")[0]
    assert f'<code title="{sha}">{sha[:12]}</code> totals padded with a zero' in revision
    assert "working tree clean" in revision
    (root / "legacy" / "harness.py").write_text("# edited\n", encoding="utf-8")
    invoke_cli("replay", "--report", str(out), cwd=root)
    assert "working tree: 1 file(s) changed" in out.read_text(encoding="utf-8")


def test_outside_git_the_page_says_so(tmp_path: Path) -> None:
    root = hostile_red_project(tmp_path / "p")
    invoke_cli("report", "--out", "r.html", cwd=root)
    page = (root / "r.html").read_text(encoding="utf-8")
    assert "not a git repository (or no commit yet)" in page
