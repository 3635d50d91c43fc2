"""The review: the decision table a reviewer of a refactor fills in by hand, made of checks.

Each row passes or fails with its evidence (file:line, the old and new
signature, the read that appeared), and the table fails if any row fails.
The rows:

1. every oracle replays green at HEAD (no oracle configured is a *fail*: the
   review fails closed when nothing proves the behaviour unchanged);
2. oracle files unchanged, or changed alone in their own commit;
3. the changed code is run by recorded cases, as it was at BASE (:mod:`.reach`): a
   green replay says nothing of a line no case runs;
4. public signatures unchanged;
5. one seam: at most ``[gates] seam_limit`` new functions, classes or modules;
6. no new reads of the clock, randomness, environment, network, locale or time zone;
7. logging and printing unchanged;
8. within the change budget for the fan-in of the module under change;
9. when ``lockstep replay --against`` ran: its last result (the old and the new code
   compared on recorded and generated inputs), as long as it ran on the reviewed HEAD.

A file that does not parse at BASE or HEAD fails the rows that read code,
naming the file and line, instead of stopping the review.

Every row judges with lockstep's settings as they were at BASE (rules, gates, oracle
tables: :mod:`.base_config`), so a change cannot loosen its own judge; a change of those
settings shows in row 2 as an oracle-side change.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

import msgspec

from lockstep.config import Project
from lockstep.errors import LockstepError, UsageError
from lockstep.gates.base_config import judged_by_base
from lockstep.gates.budget import check_budget
from lockstep.gates.code_changes import CodeChanges, code_changes
from lockstep.gates.git import Change, Git
from lockstep.gates.guard import guard_commits
from lockstep.gates.reach import ask, touched_by
from lockstep.gates.replay_all import project_at, replay_all
from lockstep.mine import last_run
from lockstep.model import ReplayOptions

MAX_EVIDENCE: Final = 12


class Verdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"


@dataclass(frozen=True)
class Row:
    check: str
    verdict: Verdict
    evidence: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.verdict is Verdict.PASS


@dataclass(frozen=True)
class Review:
    range_label: str
    base: str
    head: str
    commits: int
    rows: tuple[Row, ...]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows)


def parse_range(git: Git, text: str | None) -> Change:
    """``BASE..HEAD``, ``BASE...HEAD`` (from their merge base), ``BASE`` (to HEAD), or none:
    the current branch against its upstream."""
    if text is None:
        base = git.upstream_base()
        return Change(base, git.resolve("HEAD"), f"{git.short(base)}..HEAD")
    if "..." in text:
        left, _, right = text.partition("...")
        head = git.resolve(right or "HEAD")
        base = git.run("merge-base", git.resolve(left or "HEAD"), head).strip()
        return Change(base, head, text)
    left, sep, right = text.partition("..")
    if sep and not left:
        raise UsageError(f"range {text!r}: name the base, as in BASE..HEAD")
    base = git.resolve(left)
    head = git.resolve(right or "HEAD") if sep else git.resolve("HEAD")
    return Change(base, head, text if sep else f"{text}..HEAD")


def _row(check: str, failures: list[str] | tuple[str, ...], passing: str) -> Row:
    if failures:
        return Row(check, Verdict.FAIL, _cap(failures))
    return Row(check, Verdict.PASS, (passing,))


def _cap(lines: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    if len(lines) <= MAX_EVIDENCE:
        return tuple(lines)
    return (*lines[:MAX_EVIDENCE], f"… and {len(lines) - MAX_EVIDENCE} more")


def _code_rows(project: Project, code: CodeChanges) -> list[Row]:
    broken = [str(f) for f in code.parse_failures]
    limit = project.config.gates.seam_limit
    seams = [str(d) for d in code.new_definitions]
    seam_fail = broken + (
        [f"{len(seams)} new definitions, limit {limit}:", *seams] if len(seams) > limit else []
    )
    seam_pass = (
        f"{len(seams)} new (limit {limit}): " + "; ".join(seams)
        if seams
        else f"no new function, class or module (limit {limit})"
    )
    scanned = f"{len(code.files)} changed production file(s) compared"
    return [
        _row(
            "public signatures unchanged",
            broken + [str(s) for s in code.signature_changes],
            f"{scanned}; no public signature changed",
        ),
        _row("one seam", seam_fail, seam_pass),
        _row(
            "no new reads (clock, randomness, environment, network, locale, time zone)",
            broken + [f"new read {r}" for r in code.new_reads],
            f"{scanned}; no new read",
        ),
        _row(
            "logging and printing unchanged",
            broken + [str(o) for o in code.output_changes],
            f"{scanned}; print/logging/stdout/stderr calls unchanged",
        ),
    ]


def differential_row(project: Project, head: str) -> Row | None:
    """The last ``replay --against`` result, or None when it never ran here.

    A result from another HEAD vouches for other code: it fails, asking for a re-run.
    """
    stored = last_run.load(project)
    if stored is None:
        return None
    check = "differential (replay --against): old and new code agree"
    where = f"against {stored.rev} ({stored.base[:12]})"
    if stored.head != head:
        return Row(
            check,
            Verdict.FAIL,
            (
                f"the last run {where} was made on {stored.head[:12]}, not on the reviewed "
                f"HEAD {head[:12]}: run 'lockstep replay --against {stored.rev}' again",
            ),
        )
    if stored.differences:
        return Row(
            check,
            Verdict.FAIL,
            (
                f"differential {where}: {stored.inputs} inputs, the versions differ in "
                f"{stored.differences} oracle(s); smallest: {stored.smallest}",
            ),
        )
    return Row(
        check, Verdict.PASS, (f"differential: {stored.inputs} inputs, no difference ({where})",)
    )


REACH_CHECK: Final = "the changed code is run by recorded cases (at BASE)"


def reach_row(
    project: Project, judged: Project, git: Git, change: Change, files: tuple[str, ...]
) -> Row:
    """Whether a recorded case runs every line the change touches, as it was at BASE: a
    green replay says nothing of code no case runs (:mod:`lockstep.gates.reach`)."""
    if not judged.config.gates.reach:
        return Row(REACH_CHECK, Verdict.PASS, ("not asked: [gates] reach = false at BASE",))
    touched = touched_by(git, change, files)
    if not touched:
        return Row(REACH_CHECK, Verdict.PASS, ("no line of production code at BASE changed",))
    rel = project.config_path.resolve().relative_to(git.root.resolve())
    try:
        with project_at(project, git, change.base) as at_base:
            tree = at_base.config_path
            for _ in rel.parts:
                tree = tree.parent
            answer = ask(at_base.config_path, at_base.root, tree, touched)
    except LockstepError as e:
        return Row(REACH_CHECK, Verdict.FAIL, (str(e),))
    if answer.unreached:
        return Row(REACH_CHECK, Verdict.FAIL, _cap([str(u) for u in answer.unreached]))
    if not answer.checked:
        return Row(REACH_CHECK, Verdict.PASS, ("no changed statement at BASE needs a case",))
    return Row(
        REACH_CHECK,
        Verdict.PASS,
        (
            f"{answer.checked} changed statement(s) or function(s) at BASE, each run by one "
            f"of {answer.cases} recorded cases",
        ),
    )


def _replayed_by(judged: Project, at_head: Project) -> Project:
    """The project row 1 replays: HEAD's files with the base's oracles, rules and options.

    HEAD with no oracle at all still fails closed (nothing will guard the next change),
    and a base with none (the range brings the first oracles) has no settings to keep."""
    if not any(at_head.oracles()) or not any(judged.oracles()):
        return at_head
    return msgspec.structs.replace(at_head, config=judged.config)


def review(
    project: Project,
    git: Git,
    change: Change,
    options: ReplayOptions | None = None,
    *,
    jobs_given: bool = True,
) -> Review:
    """Fill in the decision table for ``change`` (``base`` and ``head`` are commits)."""
    assert isinstance(change.head, str)
    head = change.head
    commits = git.commits(change.base, head)
    if not commits:
        raise UsageError(
            f"review {change.label}: the range holds no commits, so there is no change to judge; "
            "name a range whose HEAD is ahead of its BASE (e.g. main..HEAD)"
        )
    rows: list[Row] = []
    # every row judges by the base revision's settings, never by the change's own
    judged = judged_by_base(project, git, change.base)

    with project_at(project, git, head) as at_head:
        summary = replay_all(_replayed_by(judged, at_head), options, jobs_given=jobs_given)
    rows.append(
        Row(
            "every oracle replays green at HEAD",
            Verdict.PASS if summary.ok else Verdict.FAIL,
            _cap(summary.evidence()),
        )
    )

    guard = guard_commits(project, git, change.base, head, change.label)
    mixed = [
        f"{f.where} changes oracle files ({', '.join(f.sides.oracle_shown())}) "
        f"together with production code ({', '.join(f.sides.production)})"
        for f in guard.violations
    ]
    alone = [f.where for f in guard.oracle_only]
    rows.append(
        _row(
            "oracle files unchanged (or changed alone, in their own commit)",
            mixed,
            f"oracle files changed alone in {', '.join(alone)}"
            if alone
            else "no oracle file changed",
        )
    )

    code = code_changes(judged, git, change)
    rows.append(reach_row(project, judged, git, change, code.files))
    rows += _code_rows(judged, code)

    try:
        budget = check_budget(project, git, change)
    except LockstepError as e:
        rows.append(Row("within budget", Verdict.FAIL, (str(e),)))
    else:
        # the summary names the limiting module; the others only matter when there are several
        detail = (
            [f"{m.module}: fan-in {m.fan_in} → {m.allowed} lines allowed" for m in budget.modules]
            if len(budget.modules) > 1
            else []
        )
        rows.append(
            Row(
                "within budget",
                Verdict.PASS if budget.ok else Verdict.FAIL,
                _cap([budget.summary(), *detail]),
            )
        )
    differential = differential_row(project, head)
    if differential is not None:
        rows.append(differential)
    return Review(change.label, change.base, head, len(commits), _masked(project, rows))


def _masked(project: Project, rows: list[Row]) -> tuple[Row, ...]:
    """The rows as a pull request may show them: a code line that prints a token or reads
    an environment secret's value is evidence with the secret masked (the table is pasted
    where the repository's readers, not only its writers, see it)."""
    from lockstep.secrets import policy_for

    mask = policy_for(project).mask
    return tuple(Row(r.check, r.verdict, tuple(mask(e) for e in r.evidence)) for r in rows)
