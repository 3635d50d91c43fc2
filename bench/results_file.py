"""bench/RESULTS.md: each benchmark script replaces its own ``## Section`` and leaves the others."""

from __future__ import annotations

import os
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"

RESULTS_HEADER = """\
# Benchmark results

The latest figures of each benchmark in this folder, written by the scripts
themselves (see README.md for how to run them).  Every section names the machine
and the versions it was measured with; figures from different machines are not
comparable.

"""


def write_section(heading: str, section: str) -> None:
    """Replace the section that starts with ``heading`` (``## Pins``), or append it."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else RESULTS_HEADER
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == heading), None)
    if start is None:
        if not text.endswith("\n\n"):
            text = text.rstrip("\n") + "\n\n"
        new = text + section
    else:
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        tail = "".join(lines[end:])
        new = "".join(lines[:start]) + section + ("\n" + tail if tail else "")
    tmp = RESULTS.with_name(f".{RESULTS.name}.tmp")
    tmp.write_text(new, encoding="utf-8")
    os.replace(tmp, RESULTS)
