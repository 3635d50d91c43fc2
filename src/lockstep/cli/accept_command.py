"""``lockstep accept``: review pending drifts case by case, or accept them by script.

Interactive (no ``--all`` / ``--case``): each pending case is shown with its diff
(folded past a screenful) and one key decides it: ``a`` accept, ``r`` reject,
``s`` skip, ``d`` the whole diff, ``q`` quit (what was decided so far is applied).
On a terminal a key is enough; from a pipe, one answer per line.

Scriptable: ``--all`` or ``--case ID`` (repeatable), narrowed by ``--oracle NAME``
(repeatable); ``--reject`` removes the chosen pending entries instead.

``lockstep accept TAPE --why ... --test PATH`` is the tape's reviewed accept: the
tape is re-run now and accepted only when its output is identical.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

import click
from rich.console import Console
from rich.text import Text

from lockstep.cli.app import EXIT_FAIL, EXIT_OK, console, main, project_from
from lockstep.cli.tape_commands import accept_tape
from lockstep.config import OracleSpec, Project
from lockstep.errors import UsageError
from lockstep.gates.accept import (
    Pending,
    accept_cases,
    history_path,
    pending_cases,
    refuse_mixed,
    reject_cases,
)
from lockstep.model import Drift, Outcome, Status
from lockstep.oracles.lifecycle import check_why
from lockstep.report.terminal import outcome_text
from lockstep.store import display_path

FOLD_AT: Final = 30
"""Lines of a pending case shown before the rest is folded (``d`` shows it whole)."""
_KEYS: Final = {"a": "accept", "r": "reject", "s": "skip", "d": "diff", "q": "quit"}


def _outcome(item: Pending) -> Outcome:
    entry = item.entry
    drifts = tuple(Drift(d.aspect, d.expected, d.actual, d.diff) for d in entry.drifts)
    return Outcome(item.spec.name, entry.case, Status.DRIFT, drifts, note=entry.note)


def _folded(text: Text, limit: int) -> Text:
    lines = text.split("\n")
    if len(lines) <= limit:
        return text
    shown = Text("\n").join(lines[:limit])
    shown.append(f"\n    … {len(lines) - limit} more lines (d shows the whole diff)\n")
    return shown


def _ask(out: Console) -> str:
    """One decision: a single key on a terminal, a line otherwise (EOF means quit)."""
    prompt = "[a]ccept, [r]eject, [s]kip, [d]iff, [q]uit"
    if sys.stdin.isatty():
        out.print(f"{prompt}? ", end="")
        key = click.getchar().lower()
        out.print(key)
        return key
    try:
        answer: str = click.prompt(prompt, default="s", show_default=False)
    except click.Abort:
        answer = "q"
    out.print()  # a piped answer is not echoed: end the prompt's line
    return answer.strip().lower()[:1]


def _review(out: Console, items: list[Pending]) -> tuple[list[Pending], list[Pending], int]:
    """Ask case by case; returns the cases to accept, to reject, and how many were skipped."""
    accept: list[Pending] = []
    reject: list[Pending] = []
    skipped = 0
    for number, item in enumerate(items, 1):
        out.print(f"[{number}/{len(items)}] ", end="")
        full = outcome_text(_outcome(item))
        out.print(_folded(full, FOLD_AT), end="")
        while True:
            key = _ask(out)
            if key == "d":
                out.print(full, end="")
                continue
            if key not in _KEYS:
                out.print(f"unknown answer {key!r}: one of {', '.join(_KEYS)}")
                continue
            break
        if key == "q":
            skipped += len(items) - number + 1
            break
        if key == "a":
            accept.append(item)
        elif key == "r":
            reject.append(item)
        else:
            skipped += 1
    return accept, reject, skipped


def _ask_why(out: Console) -> str:
    """The reason for the cases a review accepted, asked once (accepting needs one)."""
    try:
        answer: str = click.prompt("why is the new behaviour intended (one sentence)")
    except click.Abort:
        raise UsageError("--why is required to accept: nothing was accepted") from None
    if not sys.stdin.isatty():
        out.print()
    return check_why(answer)


def _by_oracle(items: list[Pending]) -> dict[str, tuple[OracleSpec, list[Pending]]]:
    grouped: dict[str, tuple[OracleSpec, list[Pending]]] = {}
    for item in items:
        grouped.setdefault(item.spec.name, (item.spec, []))[1].append(item)
    return grouped


def _apply(
    out: Console, project: Project, accept: list[Pending], why: str | None
) -> tuple[int, bool]:
    """Accept through each kind's record path: how many landed, and whether all did."""
    if not accept:
        return 0, True
    assert why is not None
    clean = True
    landed = 0
    for name, (spec, items) in _by_oracle(accept).items():
        result = accept_cases(project, spec, [i.entry for i in items], why)
        history = display_path(history_path(project, spec), project.root)
        landed += len(result.accepted)
        for case_id in result.accepted:
            out.print(f"accepted {name}::{case_id} (why kept in {history})")
        for case_id in result.green:
            out.print(f"{name}::{case_id} replays green now: nothing to accept, entry dropped")
        for case_id, reason in result.stale:
            out.print(f"STALE {name}::{case_id}: {reason}; not accepted")
            clean = False
        for refusal in result.refused:
            out.print(f"refused {name}: {refusal.text()}")
            clean = False
        missed = (
            {i.entry.case for i in items}
            - set(result.accepted)
            - set(result.green)
            - {c for c, _ in result.stale}
        )
        for case_id in sorted(missed):
            out.print(f"NOT ACCEPTED {name}::{case_id}: it does not replay green after recording")
            clean = False
    return landed, clean


def _reject(out: Console, project: Project, reject: list[Pending]) -> None:
    for name, (spec, items) in _by_oracle(reject).items():
        reject_cases(project, spec, [i.entry.case for i in items])
        for item in items:
            out.print(f"rejected {name}::{item.entry.case} (the oracle keeps its case)")


@main.command()
@click.argument("names", nargs=-1)
@click.option(
    "--why",
    default=None,
    help="One sentence: why the new behaviour is intended (kept in history). Needed to "
    "accept, not to reject; asked for when a review accepts a case without it.",
)
@click.option("--all", "all_", is_flag=True, help="Accept every pending case (no questions).")
@click.option("--case", "cases", multiple=True, metavar="ID", help="Accept this case (repeatable).")
@click.option(
    "--oracle", "oracles", multiple=True, metavar="NAME", help="Only this oracle's cases."
)
@click.option("--reject", is_flag=True, help="Reject the chosen cases instead: drop them.")
@click.option(
    "--test",
    "test",
    default=None,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Tape only: the new test that pins the intended calls (the tape's reviewed accept).",
)
@click.pass_context
def accept(
    ctx: click.Context,
    names: tuple[str, ...],
    why: str | None,
    all_: bool,
    cases: tuple[str, ...],
    oracles: tuple[str, ...],
    reject: bool,
    test: Path | None,
) -> None:
    """Review the drifts 'lockstep replay --keep-pending' kept, and accept or reject them.

    An accepted case is re-recorded through its oracle's normal record path
    (verified in a fresh interpreter); the reason goes into
    <dir>/<oracle>.history.jsonl. Refused (exit 1) while the working tree changes
    production code: commit the code first, accept in a commit of its own.
    Exit 1 too when a case is stale (it changed again since it was kept).
    """
    project = project_from(ctx)
    if test is not None:
        if len(names) != 1 or why is None:
            raise UsageError(
                "--test is the tape's accept: lockstep accept TAPE --why ... --test ..."
            )
        accept_tape(project, names[0], why, test)
        return
    scripted = bool(all_ or cases)
    if not reject and (why is not None or scripted):
        if why is None:
            raise UsageError(
                "--why is required to accept: say in one sentence why the change is intended "
                "(--reject needs no reason)"
            )
        why = check_why(why)
    specs = [project.oracle(name) for name in (*names, *oracles)] or list(project.oracles())
    items = pending_cases(project, specs)
    out = console()
    if cases:
        known = {i.entry.case for i in items}
        unknown = [c for c in cases if c not in known]
        if unknown:
            raise UsageError(
                f"--case {unknown[0]}: no pending drift with that id "
                "(run 'lockstep replay --keep-pending' first)"
            )
        items = [i for i in items if i.entry.case in cases]
    if not items:
        out.print("nothing pending: 'lockstep replay --keep-pending' keeps drifts for review")
        sys.exit(EXIT_OK)
    if not reject:
        refuse_mixed(project)
    if all_ or cases:
        to_accept, to_reject, skipped = ([], items, 0) if reject else (items, [], 0)
    elif reject:
        raise UsageError("--reject needs --all or --case ID")
    else:
        to_accept, to_reject, skipped = _review(out, items)
    if to_accept and why is None:
        why = _ask_why(out)
    _reject(out, project, to_reject)
    landed, clean = _apply(out, project, to_accept, why)
    left = len(pending_cases(project, specs))
    out.print(
        f"{landed} accepted, {len(to_reject)} rejected, {skipped} skipped; {left} still pending"
    )
    sys.exit(EXIT_OK if clean else EXIT_FAIL)
