"""One self-contained HTML page that shows what a replay found: the reviewer's view.

Why jinja2 with autoescape on: everything the page shows -- fixture text, case ids, a
program's output, rule names, review evidence -- comes from the project under test and
from oracle files that arrive in pull requests, so none of it may ever become markup.
Escaping is the template engine's default here, never a call someone can forget.  The
page also carries a Content-Security-Policy that allows no script and no fetch at all,
so even a mistake in escaping could not run code or call out.

The page needs no JavaScript and no network: inline CSS, ``<details>`` for every fold.
Sections beyond the replay are optional and take plain data: the review table, the
probe's signatures, and source annotated with strength findings (uncovered lines,
surviving mutants), so each producer fills its own section without this module
importing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import jinja2
import markupsafe

from lockstep.model import Drift, Outcome, Status
from lockstep.report.inert import inert
from lockstep.report.revision import WorkingTree
from lockstep.report.sidebyside import Item, drift_rows, split_unified
from lockstep.report.summary import Tally

if TYPE_CHECKING:  # converters read these results; building a page runs no gate or probe
    from lockstep.gates.review import Review
    from lockstep.probe.runs import ProbeReport

MAX_CASES: Final = 200
"""Failing cases drawn in full; the rest are listed by id, so a ledger whose every row
drifted the same way still makes a page a browser opens quickly."""


@dataclass(frozen=True)
class ReportRun:
    """One replay as the page shows it."""

    title: str
    """What was replayed (the project folder, usually)."""
    tally: Tally
    failing: tuple[Outcome, ...]
    """Every case that did not pass, in replay order."""
    seconds: float
    generated: str
    """When the replay ran, ISO 8601, UTC."""
    tree: WorkingTree | None = None
    """The commit replayed and the working tree's state (None: not known)."""


@dataclass(frozen=True)
class ReviewLine:
    check: str
    ok: bool
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class ReviewSection:
    """The decision table of ``lockstep review``."""

    title: str
    lines: tuple[ReviewLine, ...]

    @classmethod
    def of(cls, review: Review) -> ReviewSection:
        return cls(
            f"lockstep review {review.range_label} ({review.commits} commit(s))",
            tuple(ReviewLine(row.check, row.ok, row.evidence) for row in review.rows),
        )


@dataclass(frozen=True)
class SignatureSection:
    """One probe: how many runs gave each distinct signature, after the rules."""

    label: str
    runs: int
    variants: tuple[tuple[int, str], ...]
    """``(count, signature)`` per distinct signature, most common first."""

    @property
    def deterministic(self) -> bool:
        return len(self.variants) == 1

    @classmethod
    def of(cls, report: ProbeReport) -> SignatureSection:
        return cls(
            report.target.label,
            report.runs,
            tuple((v.count, v.signature.short()) for v in report.normalized),
        )


@dataclass(frozen=True)
class SourceLine:
    number: int
    text: str
    uncovered: bool = False
    """No recorded case executes this line."""
    mutants: tuple[str, ...] = ()
    """Mutants of this line that survived replay, each described in a few words."""


@dataclass(frozen=True)
class SourceFile:
    path: str
    lines: tuple[SourceLine, ...]


@dataclass(frozen=True)
class StrengthSection:
    """How much the gate would catch, on the source: filled by the strength analysis."""

    summary: str
    files: tuple[SourceFile, ...] = ()


@dataclass(frozen=True)
class Extras:
    """The optional sections of a report; an empty one is left out of the page."""

    review: ReviewSection | None = None
    signatures: tuple[SignatureSection, ...] = ()
    strength: StrengthSection | None = None
    differential: DifferentialSection | None = None


@dataclass(frozen=True)
class DifferentialSection:
    """The last ``lockstep replay --against`` run: old and new code compared directly."""

    passed: bool
    text: str


@dataclass(frozen=True)
class _DriftView:
    aspect: str
    expected: str
    actual: str
    items: list[Item]
    text: str
    """The drift's own explanation when it is not a unified diff (a tape's call list)."""


@dataclass(frozen=True)
class _CaseView:
    anchor: str
    status: str
    label: str
    oracle: str
    case_id: str
    note: str
    drifts: list[_DriftView] = field(default_factory=list)


def _case_view(n: int, outcome: Outcome) -> _CaseView:
    drifts = [
        _DriftView(
            d.aspect,
            d.expected,
            d.actual,
            drift_rows(d),
            split_unified(d.diff)[0],
        )
        for d in outcome.drifts
    ]
    return _CaseView(
        f"case-{n}",
        outcome.status.value,
        outcome.status.value.upper(),
        outcome.oracle,
        outcome.case_id,
        outcome.note,
        drifts,
    )


@dataclass(frozen=True)
class _GroupView:
    """Cases of one oracle that share one change: drawn once, the others folded under it."""

    anchor: str
    oracle: str
    status: str
    label: str
    aspects: str
    edit: str
    """The change in one line (its first removed and added lines), for the index."""
    cases: list[_CaseView]
    hint: str
    """What to run about them: accept a drift, record new cases, trim missing ones..."""


HINT_CASES: Final = 10
"""``--case`` options spelled out in an accept hint; a bigger group says how many more."""


def _edit_lines(drift: Drift) -> tuple[str, ...]:
    """The drift's edit: its diff's removed and added lines without positions, or both sides."""
    lines = tuple(
        line
        for line in drift.diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )
    return lines if lines else (f"-{drift.expected}", f"+{drift.actual}")


def change_key(outcome: Outcome) -> tuple[object, ...]:
    """Outcomes with the same key show one change: the same oracle, status and, per drifted
    aspect, the same removed and added lines (the diffs are made after the rules, so a
    volatile value the rules name does not split a group; line numbers do not either)."""
    edits = tuple((d.aspect, _edit_lines(d)) for d in outcome.drifts)
    return (outcome.oracle, outcome.status.value, edits if edits else outcome.note)


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _hint(oracle: str, status: Status, cases: list[str]) -> str:
    name = _quote(oracle)
    if status is Status.DRIFT:
        chosen = " ".join(f"--case {_quote(c)}" for c in cases[:HINT_CASES])
        more = len(cases) - HINT_CASES
        tail = (
            f"  # and {more} more --case (lockstep pending {name} lists them)" if more > 0 else ""
        )
        return (
            f"lockstep replay {name} --keep-pending\n"
            f'lockstep accept {name} {chosen} --why "…"{tail}'
        )
    if status is Status.NEW:
        return f"lockstep record {name} --new-only"
    if status is Status.MISSING:
        return f"lockstep record {name} --trim"
    if status is Status.STALE:
        return f"lockstep record {name} --force"
    return f"lockstep diff {name} {_quote(cases[0])}"


def _summary_of(outcome: Outcome) -> str:
    for drift in outcome.drifts:
        lines = _edit_lines(drift)
        removed = next((x[1:] for x in lines if x.startswith("-")), "")
        added = next((x[1:] for x in lines if x.startswith("+")), "")
        text = f"{removed.strip()} → {added.strip()}"
        return text if len(text) <= 100 else text[:99] + "…"
    return outcome.note[:100]


def group_views(shown: tuple[Outcome, ...]) -> list[_GroupView]:
    """The drawn cases grouped by :func:`change_key`, groups in order of first appearance."""
    groups: dict[tuple[object, ...], list[tuple[int, Outcome]]] = {}
    for n, outcome in enumerate(shown, start=1):
        groups.setdefault(change_key(outcome), []).append((n, outcome))
    views = []
    for g, members in enumerate(groups.values(), start=1):
        first = members[0][1]
        views.append(
            _GroupView(
                f"group-{g}",
                first.oracle,
                first.status.value,
                first.status.value.upper(),
                ", ".join(dict.fromkeys(d.aspect for d in first.drifts)),
                _summary_of(first),
                [_case_view(n, o) for n, o in members],
                _hint(first.oracle, first.status, [o.case_id for _, o in members]),
            )
        )
    return views


def _inert(value: object) -> object:
    """Every string the page shows with its control characters as visible escapes (HTML
    made by the page itself, :class:`markupsafe.Markup`, is left alone)."""
    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return inert(value)
    return value


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("lockstep.report", "templates"),
        autoescape=True,
        finalize=_inert,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def verdict(tally: Tally) -> str:
    """``green``, ``DRIFT`` or ``NOT GREEN``: the words the terminal summary uses."""
    if tally.green:
        return "green"
    return "DRIFT" if tally.drifted else "NOT GREEN"


def render_html(run: ReportRun, extras: Extras | None = None) -> str:
    """The whole page, as one string of HTML."""
    extras = extras or Extras()
    shown = run.failing[:MAX_CASES]
    statuses = [s for s in Status if s is not Status.STALE or run.tally.total[s]]
    template = _environment().get_template("report.html.j2")
    return template.render(
        run=run,
        verdict=verdict(run.tally),
        statuses=statuses,
        groups=group_views(shown),
        unlisted=[
            f"{o.status.value.upper()} {o.oracle}::{o.case_id}" for o in run.failing[MAX_CASES:]
        ],
        review=extras.review,
        signatures=extras.signatures,
        strength=extras.strength,
        differential=extras.differential,
    )
