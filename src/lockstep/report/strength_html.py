"""Strength findings on the source, for the HTML report: uncovered lines and surviving mutants.

The terminal report (:mod:`.strength`) lists gaps; the page shows them where they are, on the
code under freeze, so a reviewer sees at a glance which lines no case runs and which injected
bugs replay would let through.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from lockstep.report.html import SourceFile, SourceLine, StrengthSection
from lockstep.report.strength import summary_line
from lockstep.store import display_path

if TYPE_CHECKING:
    from lockstep.strength import StrengthReport


def strength_section(report: StrengthReport, root: Path) -> StrengthSection:
    """Every measured file, line by line, marked where no case reaches or a mutant survived."""
    survivors: dict[tuple[Path, int], list[str]] = defaultdict(list)
    if report.mutation is not None:
        for result in report.mutation.survivors():
            m = result.mutant
            survivors[(m.file, m.line)].append(f"{m.operator}: {' '.join(m.after.split())}")
    files: list[SourceFile] = []
    for path, cov in sorted(report.coverage.files.items()):
        unreached = set(cov.unreached())
        lines = tuple(
            SourceLine(
                number,
                text,
                uncovered=number in unreached,
                mutants=tuple(survivors.get((path, number), ())),
            )
            for number, text in enumerate(cov.lines, start=1)
        )
        files.append(SourceFile(display_path(path, root), lines))
    summary = summary_line(report).removeprefix("lockstep strength: ")
    return StrengthSection(summary, tuple(files))
