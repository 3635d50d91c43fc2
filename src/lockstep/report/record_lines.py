"""What one ``record`` did, as text segments: for the terminal (styled) and for pytest (plain).

Kept apart from :mod:`lockstep.report.terminal` so that a pytest session recording ledgers
writes its summary without importing rich (the session's summary is plain lines).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from lockstep.model import RecordReport, RefusalReason
from lockstep.report.inert import inert
from lockstep.store import display_path


def record_segments(
    report: RecordReport, root: Path | None = None, mask: Callable[[str], str] | None = None
) -> list[tuple[str, str]]:
    """What one ``record`` did, each category on its own line, as (text, style) segments
    (style empty for plain text).

    ``mask``: applied to what quotes recorded behaviour (a refusal's detail, a note:
    the two outcomes of a call that varies may hold a token), made inert after."""
    shown = display_path(report.path, root)

    def quoted(text: str) -> str:
        return inert(mask(text) if mask is not None else text)

    segments = [(f"{report.oracle}", "bold"), (f" ({report.mode.value}) → {shown}\n", "")]
    rows = [
        ("added", report.added),
        ("replaced", report.replaced),
        ("trimmed", report.trimmed),
        (
            "refused (behaviour varies between calls, not frozen)",
            [quoted(r.text()) for r in report.refused if r.reason is RefusalReason.VARIES],
        ),
        (  # a value the freeze loses, a seed, a zone, the clock: the row's text says which
            "refused (does not reproduce in a fresh interpreter, not frozen)",
            [quoted(r.text()) for r in report.refused if r.reason is RefusalReason.NOT_REPRODUCED],
        ),
    ]
    for label, ids in rows:
        if ids:
            listed = ", ".join(ids[:8]) + (f", … (+{len(ids) - 8})" if len(ids) > 8 else "")
            segments.append((f"  {label} {len(ids)}: {listed}\n", ""))
    for refusal in report.refused:  # a secret's each in full: it says field and detector
        if refusal.reason is RefusalReason.SECRET:
            segments.append((f"  refused {refusal.text()}\n", ""))
    unchanged = len(report.unchanged) + report.unchanged_unlisted
    if unchanged:
        segments.append((f"  unchanged {unchanged}\n", ""))
    if not (report.added or report.replaced or report.trimmed):
        segments.append(("  nothing to change\n", ""))
    for note in report.notes:
        segments.append((f"  note: {quoted(note)}\n", ""))
    return segments


_RICH_STRIPPED: Final = dict.fromkeys((7, 8, 11, 12, 13))
"""The control characters rich's ``Text.append`` drops (``rich.control.strip_control_codes``:
bell, backspace, vertical tab, form feed, carriage return)."""


def record_plain(
    report: RecordReport, root: Path | None = None, mask: Callable[[str], str] | None = None
) -> str:
    """:func:`record_segments` as plain text: what ``Text.plain`` of them gives."""
    return "".join(
        text.translate(_RICH_STRIPPED) for text, _ in record_segments(report, root, mask)
    )
