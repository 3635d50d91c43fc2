"""``lockstep init``: survey the repository, ask (or take flags), write a first lockstep.toml.

With no flags it asks about each candidate the survey found; ``--yes`` takes
the proposals without asking (functions that a script drives, fixture folders
with a render function, every script); ``--ledger``, ``--pins`` and
``--corpus GLOB --render MOD:FUNC`` name the oracles instead of the survey.
An existing configuration is never overwritten (exit 2).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Final

import click
from rich.console import Console

from lockstep.cli.app import console, main
from lockstep.errors import UsageError
from lockstep.oracles.pins.spec import PinsSpec
from lockstep.scaffold.config_text import (
    CONFIG_NAME,
    PinsChoice,
    Plan,
    check_no_config,
    config_text,
    ledger_name,
    next_commands,
    starter_cases,
    starter_cases_path,
)
from lockstep.scaffold.pins_rules import case_env_keys, probe_rules
from lockstep.scaffold.suite_calls import (
    DEFAULT_TIMEOUT,
    SuiteCalls,
    member_list,
    rank_by_suite,
    suite_command_shown,
)
from lockstep.scaffold.survey import (
    CorpusCandidate,
    LedgerCandidate,
    ScriptCandidate,
    Survey,
    fan_in,
    survey,
)
from lockstep.store import atomic_write
from lockstep.suite_files import proposed_test_modules

ASKED_LEDGERS: Final = 5
"""Ledger candidates offered (the best ranked); the others are listed in the file as comments."""


def _ledger_line(c: LedgerCandidate) -> str:
    driver = f"driven by {c.driver}" if c.driver else "no script calls it"
    shown = str(c.fan_in) if c.fan_in >= 0 else "unknown"
    return f"{c.target}: returns {', '.join(c.kinds)}; fan-in {shown}; {driver}"


def _choose(yes: bool, question: str, default: bool) -> bool:
    if yes:
        return default
    return click.confirm(question, default=default)


def _chosen_scripts(found: Survey, plan: Plan, yes: bool) -> list[ScriptCandidate]:
    """The scripts to freeze as pins; the others go to ``plan.left_out``."""
    scripts: list[ScriptCandidate] = []
    for script in found.scripts:
        line = f"{' '.join(script.command)} (cases: {script.cases or 'a starter file'})"
        # init runs each chosen script to probe what varies.  Beside a package surface a
        # loose script is a maintenance tool, a CI helper or a docs example (dateutil's
        # updatezinfo.py downloads and rebuilds its zone files): proposed, never run
        # unless chosen.  A package's own ``__main__`` is its command line: proposed.
        own_cli = not plan.packages or script.command[:2] == ("python", "-m")
        if _choose(yes, f"pins {line}. Freeze its runs?", own_cli):
            scripts.append(script)
        elif own_cli:
            plan.left_out.append(f"pins {line}")
        else:
            plan.left_out.append(
                f"pins {line} (a script beside the package: not run unless chosen)"
            )
    return scripts


def _from_survey(out: Console, found: Survey, plan: Plan, yes: bool) -> list[ScriptCandidate]:
    for package in found.packages:
        ranked = plan.suite.ranked.get(package.name) if plan.suite else None
        called = (
            f", {len(plan.suite.called(package.name))} of them called by the suite"
            if ranked is not None and plan.suite is not None
            else ""
        )
        line = (
            f"package {package.name} ({package.path}: {package.members} public functions, "
            f"methods and properties{called})"
        )
        suite = "the test modules at the root" if found.tests == "." else f"{found.tests}/"
        if found.tests is None:
            plan.left_out.append(f"ledger {line}: no tests folder to record its calls from")
        elif ranked is not None and plan.suite and not plan.suite.called(package.name):
            plan.left_out.append(
                f"ledger {line}: the suite calls none of them from outside the package, "
                "so recording would freeze nothing"
            )
        elif _choose(yes, f"ledger {line}. Freeze its public surface from {suite}?", True):
            plan.packages.append(package)
        else:
            plan.left_out.append(f"ledger {line}")
    covered = tuple(f"{p.name}." for p in plan.packages)
    asked = 0
    for c in found.ledgers:
        line = _ledger_line(c)
        if f"{c.target.partition(':')[0]}.".startswith(covered):
            plan.left_out.append(f"ledger {line} (part of the package surface above)")
            continue
        asked += 1
        if asked <= ASKED_LEDGERS and _choose(
            yes, f"ledger {line}. Freeze its calls?", c.driver is not None
        ):
            plan.ledgers.append(c)
        else:
            plan.left_out.append(f"ledger {line}")
    for corpus in found.corpora:
        line = f"{corpus.fixtures} ({corpus.count} files, render {corpus.render or 'not found'})"
        if _choose(yes, f"corpus {line}. Freeze its rendering?", corpus.render is not None):
            plan.corpora.append(corpus)
        else:
            plan.left_out.append(f"corpus {line}")
    scripts = _chosen_scripts(found, plan, yes)
    if not (plan.packages or plan.ledgers or plan.corpora or scripts):
        out.print("nothing chosen: the configuration lists what was found, as comments")
    return scripts


def _from_flags(
    root: Path,
    found: Survey,
    plan: Plan,
    ledgers: tuple[str, ...],
    pins: tuple[str, ...],
    corpora: list[tuple[str, str]],
) -> list[ScriptCandidate]:
    known = {c.target: c for c in found.ledgers}
    for target in ledgers:
        if ":" not in target:
            raise UsageError(f"--ledger {target}: expected pkg.mod:func")
        module = target.partition(":")[0]
        plan.ledgers.append(
            known.get(target) or LedgerCandidate(target, (), _fan_in_or_unknown(root, module), None)
        )
    for glob, render in corpora:
        name = Path(glob).parent.name or Path(glob).stem
        plan.corpora.append(CorpusCandidate(name, glob, 0, render))
    scripts = []
    by_path = {s.path: s for s in found.scripts}
    for script in pins:
        rel = Path(script).as_posix().removeprefix("./")
        if not (root / rel).is_file():
            raise UsageError(f"--pins {script}: no such file in {root}")
        scripts.append(
            by_path.get(rel) or ScriptCandidate(Path(rel).stem, ("python", rel), None, rel)
        )
    return scripts


SHOWN_MEMBERS: Final = 10
"""Members of a ranked surface printed (the most called); the file lists more."""


def _run_suite(out: Console, root: Path, found: Survey, timeout: float) -> SuiteCalls:
    """Run the suite once and print each surface ranked by its calls."""
    names = [p.name for p in found.packages]
    out.print(
        f"running the suite once ({' '.join(suite_command_shown())}) to rank "
        f"{', '.join(names)} by its calls (--no-suite skips this) ...",
        markup=False,
        highlight=False,
    )
    suite = rank_by_suite(root, names, timeout=timeout)
    for note in suite.notes:
        out.print(f"note: {note}", markup=False, highlight=False)
    for name in names:
        if name not in suite.ranked:
            continue
        called, never = suite.called(name), suite.never_called(name)
        total = len(called) + len(never)
        out.print(
            f"{name}: the suite calls {len(called)} of {total} public member(s) from outside "
            "the package (most called first):",
            markup=False,
            highlight=False,
        )
        width = len(str(called[0].calls)) if called else 1
        for member in called[:SHOWN_MEMBERS]:
            shown = member.calls if member.calls > 0 else "?"  # a wrapper's shared code
            out.print(f"  {shown:>{width}}  {member.short}", markup=False, highlight=False)
        if len(called) > SHOWN_MEMBERS:
            out.print(f"  … {len(called) - SHOWN_MEMBERS} more (listed in {CONFIG_NAME})")
        if never:
            out.print(
                f"  never called by the suite ({len(never)}; a ledger records nothing for "
                f"them): {member_list(never)}",
                markup=False,
                highlight=False,
            )
    return suite


def _fan_in_or_unknown(root: Path, module: str) -> int:
    count = fan_in(root, module)
    return -1 if count is None else count


def _unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name-2``... when another oracle has it already (``taken`` grows)."""
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}-{n}", n + 1
    taken.add(candidate)
    return candidate


@main.command()
@click.option("--yes", "-y", is_flag=True, help="Take the survey's proposals without asking.")
@click.option("--ledger", "ledgers", multiple=True, metavar="PKG.MOD:FUNC", help="Freeze calls.")
@click.option("--pins", "pins", multiple=True, metavar="SCRIPT.py", help="Freeze process runs.")
@click.option("--corpus", "corpora", multiple=True, metavar="GLOB", help="Fixture files.")
@click.option(
    "--render", "renders", multiple=True, metavar="MOD:FUNC", help="Each --corpus's render."
)
@click.option("--dir", "oracle_dir", default="lockstep", show_default=True, help="Oracle folder.")
@click.option(
    "--no-suite",
    is_flag=True,
    help="Do not run the test suite to rank a package's surface by its calls.",
)
@click.option(
    "--suite-timeout",
    type=click.FloatRange(min=1),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Stop the suite's run after this long (no ranking then).",
)
def init(
    yes: bool,
    ledgers: tuple[str, ...],
    pins: tuple[str, ...],
    corpora: tuple[str, ...],
    renders: tuple[str, ...],
    oracle_dir: str,
    no_suite: bool,
    suite_timeout: float,
) -> None:
    """Survey this repository and write a commented lockstep.toml that the printed commands
    record and replay.

    For a library with a tests folder it proposes the public surface of each package (one
    [[ledger]] package = ..., recorded by 'pytest --lockstep-record'), after running the
    suite once (python -m pytest, offline, time-limited; --no-suite skips it) to rank the
    members by the suite's calls and name those it never calls; ledgers for functions
    with mixed return types outside it (ranked by fan-in),
    corpora for fixture folders, and pins for scripts with a __main__ entry point
    (probed, so volatile output gets rules). Never overwrites a configuration.
    """
    root = Path.cwd()
    check_no_config(root)
    if len(corpora) != len(renders):
        raise UsageError("--corpus and --render go in pairs: one render per fixture glob")
    out = console()
    found = survey(root)
    plan = Plan(oracle_dir=oracle_dir)
    if ledgers or pins or corpora:
        scripts = _from_flags(
            root, found, plan, ledgers, pins, list(zip(corpora, renders, strict=True))
        )
    else:
        if found.packages and found.tests is not None and not no_suite:
            plan.suite = _run_suite(out, root, found, suite_timeout)
        scripts = _from_survey(out, found, plan, yes)
    if plan.packages and found.tests is not None:
        plan.test_modules = proposed_test_modules(root, [p.name for p in plan.packages])
    taken = {p.name for p in plan.packages} | {ledger_name(c) for c in plan.ledgers}
    plan.corpora = [replace(c, name=_unique(c.name, taken)) for c in plan.corpora]
    scripts = [replace(s, name=_unique(s.name, taken)) for s in scripts]
    written: list[Path] = []
    try:
        for script in scripts:
            cases = script.cases
            if cases is None:
                cases = starter_cases_path(script, root)
                atomic_write(root / cases, starter_cases(script).encode("utf-8"))
                written.append(root / cases)
                out.print(f"wrote {cases} (one run without arguments; add the runs that matter)")
            env_keys = case_env_keys(root, cases)
            out.print(f"probing {' '.join(script.command)} ...")
            spec = PinsSpec(
                name=script.name, command=list(script.command), cases=cases, env_keys=list(env_keys)
            )
            plan.pins.append(PinsChoice(script, cases, env_keys, probe_rules(root, spec)))
        atomic_write(root / CONFIG_NAME, config_text(plan).encode("utf-8"))
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    counts = (
        f"{len(plan.packages)} package surface(s), {len(plan.ledgers)} ledger(s), "
        f"{len(plan.corpora)} corpus, {len(plan.pins)} pins"
    )
    commands = next_commands(plan)
    if not commands:
        out.print(f"wrote {CONFIG_NAME}: {counts}; nothing to record yet: edit it first")
        return
    out.print(f"wrote {CONFIG_NAME}: {counts}; review it, then run:")
    for command in commands:
        out.print(f"  {command}", markup=False, highlight=False)
