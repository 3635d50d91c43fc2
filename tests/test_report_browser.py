"""The HTML report in a real browser: headless Chromium (the system's `chromium`, driven by
Playwright's Python client) opens the page from disk, reads the summary and the diff,
opens a folded stretch, and proves that hostile content stays text.

Each test saves a screenshot under its tmp folder, copied to $LOCKSTEP_ARTIFACTS when set.
The tests skip, saying why, only when Playwright or Chromium is not installed
(`.ci/run` installs both: the `test` extra and `apt-get install chromium`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import invoke_cli
from report_projects import HOSTILE_ID, demo_red_project, hostile_red_project

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = [pytest.mark.xdist_group("browser"), pytest.mark.slow]

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def _missing_browser() -> str:
    """Why the browser tests cannot run here ("" when they can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]' installs it)"
    if _chromium() is None:
        return "no Chromium executable on PATH or at /usr/bin/chromium (Debian: apt-get install -y chromium)"
    return ""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # .ci/run sets LOCKSTEP_REQUIRE_BROWSER once chromium is on the machine: then a missing
    # piece is a failure, never a skip. Elsewhere the reason and the fix are said instead.
    missing = _missing_browser()
    if missing:
        if os.environ.get("LOCKSTEP_REQUIRE_BROWSER"):
            pytest.fail(f"LOCKSTEP_REQUIRE_BROWSER is set, but {missing}")
        pytest.skip(f"the browser tests need Playwright driving Chromium: {missing}")
    from playwright.sync_api import sync_playwright

    executable = _chromium()
    assert executable is not None
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def _keep_screenshot(page: Any, tmp_path: Path, name: str) -> Path:
    shot = tmp_path / f"{name}.png"
    page.screenshot(path=str(shot), full_page=True)
    artifacts = os.environ.get("LOCKSTEP_ARTIFACTS")
    if artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, Path(artifacts) / shot.name)
    return shot


def _changed_rows(page: Any) -> list[tuple[str, str]]:
    rows = page.locator("table.sbs tr.change, table.sbs tr.delete, table.sbs tr.insert")
    return [
        (rows.nth(i).locator("td.left").inner_text(), rows.nth(i).locator("td.right").inner_text())
        for i in range(rows.count())
    ]


def test_the_demos_red_run_shows_exactly_what_moved_without_javascript(
    browser: Any, tmp_path: Path
) -> None:
    root = demo_red_project(tmp_path / "demo")
    result = invoke_cli("replay", "transform", "--report", "report.html", cwd=root)
    assert result.code == 1, result.output
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    page = context.new_page()
    page.goto((root / "report.html").as_uri())
    assert page.locator("#verdict").inner_text() == "DRIFT: 6 cases: 5 passed, 1 drifted"
    counts = page.locator("#counts tbody tr").first.locator("td").all_inner_texts()
    assert counts == ["transform", "5", "1", "·", "·", "·"]
    assert page.locator("article.case").count() == 1
    assert page.locator("article.case code.case-id").inner_text() == "transform::half_cent.json"
    assert _changed_rows(page) == [
        ('    "subtotal": "0.13",', '    "subtotal": "0.12",'),
        ('    "total": "0.13"', '    "total": "0.12"'),
        ('    "subtotal": "1.01",', '    "subtotal": "1.00",'),
    ]
    assert page.locator("td.left mark").all_inner_texts() == ["3", "3", "1"]
    assert page.locator("td.right mark").all_inner_texts() == ["2", "2", "0"]
    assert _keep_screenshot(page, tmp_path, "report-demo-red").stat().st_size > 0
    context.close()


def test_hostile_content_stays_inert_and_folds_open_on_click(browser: Any, tmp_path: Path) -> None:
    root = hostile_red_project(tmp_path / "p")
    assert invoke_cli("replay", "--report", "report.html", cwd=root).code == 1
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto((root / "report.html").as_uri())
    page.wait_for_load_state("load")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert dialogs == []
    for tag in ("script", "img", "svg", "iframe"):
        assert page.locator(tag).count() == 0, tag
    # The only links are the report's own index to its groups of drifts, in-page anchors.
    hrefs = page.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert all(h and h.startswith("#") and "<" not in h for h in hrefs), hrefs
    ids = page.locator("article.case code.case-id").all_inner_texts()
    assert f"ledger_lines::{HOSTILE_ID}" in ids
    hostile = page.locator("article.case").filter(has_text=HOSTILE_ID)
    context_line = hostile.locator("tr.equal >> visible=true").first.inner_text()
    assert '<script>window.__pwned=2;alert("pwned")</script>' in context_line  # shown as text

    fold = hostile.locator("tr.fold details").first
    assert fold.locator("summary").inner_text() == "17 equal lines"
    hidden_line = fold.locator("tr.equal").nth(4)  # line 05, inside the fold
    assert not hidden_line.is_visible()
    fold.locator("summary").click()
    assert hidden_line.is_visible()
    assert hidden_line.locator("td.no").first.inner_text() == "5"
    changed = hostile.locator("tr.change")
    assert changed.count() == 1
    assert changed.locator("td.right mark").inner_text() == "0"
    _keep_screenshot(page, tmp_path, "report-hostile-unfolded")
    assert page.evaluate("typeof window.__pwned") == "undefined" and dialogs == []
    context.close()
