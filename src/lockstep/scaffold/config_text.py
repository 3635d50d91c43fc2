"""The first ``lockstep.toml``, written as a reviewer would want to read it: commented.

Each oracle table says why it was proposed (the return kinds and fan-in of a
function, the fixture count of a folder, how a script's cases are found), and
what was found but not chosen is listed at the end as comments, so the file is
also the survey's report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from lockstep.errors import UsageError
from lockstep.probe.suggest import Suggestion
from lockstep.scaffold.pins_rules import ProbedRules
from lockstep.scaffold.suite_calls import SuiteCalls
from lockstep.scaffold.survey import (
    CorpusCandidate,
    LedgerCandidate,
    PackageCandidate,
    ScriptCandidate,
)

CONFIG_NAME: Final = "lockstep.toml"
STARTER_CASE: Final = "no-arguments"


@dataclass(frozen=True)
class PinsChoice:
    """A script chosen for pins: its cases file, the env keys its cases set, its rules."""

    script: ScriptCandidate
    cases: str
    env_keys: tuple[str, ...]
    rules: ProbedRules


@dataclass
class Plan:
    """The oracles chosen, and what was found but left out (listed as comments)."""

    oracle_dir: str = "lockstep"
    packages: list[PackageCandidate] = field(default_factory=list)
    """Package surfaces, recorded from the test suite."""
    ledgers: list[LedgerCandidate] = field(default_factory=list)
    corpora: list[CorpusCandidate] = field(default_factory=list)
    pins: list[PinsChoice] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    suite: SuiteCalls | None = None
    """The suite's calls of each package's surface, when init ran it."""
    test_modules: list[str] = field(default_factory=list)
    """The suite's modules whose classes or functions the packages' code is handed
    (``[lockstep] test_modules``)."""


def _s(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


def _list(items: Sequence[str]) -> str:
    return "[" + ", ".join(_s(i) for i in items) + "]"


def starter_cases(script: ScriptCandidate) -> str:
    """A cases file with one run of the script without arguments, to be extended.  A
    package under ``src/`` run as ``python -m`` gets ``PYTHONPATH = "src"``: from the
    project's root it imports only once installed, and the run froze its
    ``No module named ...`` (mistune's, Python-Markdown's)."""
    under_src = script.command[:2] == ("python", "-m") and script.path.startswith("src/")
    env = '\nenv = { PYTHONPATH = "src" }  # the package sits under src/' if under_src else ""
    return (
        f"# The runs of {script.path} that pins oracle {script.name!r} freezes: one [[case]]\n"
        "# per run, with id, argv (after the command), env and stdin. 'lockstep init' wrote\n"
        "# one run without arguments; add the runs your users make.\n\n"
        f"[[case]]\nid = {_s(STARTER_CASE)}\nargv = []{env}\n"
    )


CASES_FOLDER: Final = "lockstep-cases"
"""Where a starter cases file goes when beside its script would be inside a package."""


def starter_cases_path(script: ScriptCandidate, root: Path) -> str:
    """Where a script without a cases file gets its starter one: beside it, unless that is
    a package's folder (shipped with it): then ``lockstep-cases/<name>.cases.toml``."""
    path = Path(script.path)
    if (root / path.parent / "__init__.py").is_file():
        return f"{CASES_FOLDER}/{script.name}.cases.toml"
    return path.with_name(f"{path.stem}.cases.toml").as_posix()


def ledger_name(c: LedgerCandidate) -> str:
    return c.target.rsplit(":", 1)[-1]


def _fan_in(c: LedgerCandidate) -> str:
    return f"imported by {c.fan_in} module(s)" if c.fan_in >= 0 else "fan-in unknown"


LISTED_MEMBERS: Final = 30
"""Members of a ranked surface the suite never calls listed in the file's comments (every
member it calls is listed: ``lockstep init`` prints the first few and points here)."""


def _ranking(p: PackageCandidate, suite: SuiteCalls | None) -> list[str]:
    """Comment lines: the members the suite calls, most called first, and those it never
    calls (their ledger rows stay empty)."""
    if suite is None or p.name not in suite.ranked:
        return []
    called, never = suite.called(p.name), suite.never_called(p.name)
    lines = [
        f"# Run once by init ({' '.join(suite.command)}), the suite called {len(called)} of "
        f"{len(called) + len(never)} of them",
        "# from outside the package (the calls recorded); most called first:",
    ]
    lines += [f"#   {m.calls if m.calls > 0 else '?':>7}  {m.short}" for m in called]
    if any(m.calls < 0 for m in called):
        lines.append(
            "#   (?: its code is a wrapper other members run too, a decorator without "
            "functools.wraps: their calls are not told apart)"
        )
    if never:
        lines.append(
            f"# Never called by the suite ({len(never)}): a ledger records nothing for them; "
            "a test that calls them gives them rows:"
        )
        lines += [f"#   {m.short}" for m in never[:LISTED_MEMBERS]]
        if len(never) > LISTED_MEMBERS:
            lines.append(f"#   … {len(never) - LISTED_MEMBERS} more")
    return lines


def _package(p: PackageCandidate, suite: SuiteCalls | None = None) -> list[str]:
    return [
        f"# The public surface of {p.path}: {p.members} public functions, methods and",
        "# properties, each its own ledger, recorded at the package boundary from the tests.",
        *_ranking(p, suite),
        "[[ledger]]",
        f"package = {_s(p.name)}",
    ]


def _ledger(c: LedgerCandidate) -> list[str]:
    why = f"returns {', '.join(c.kinds)}" if c.kinds else "named on the command line"
    lines = [f"# {c.target} {why}; {_fan_in(c)}."]
    table = ["[[ledger]]", f"name = {_s(ledger_name(c))}", f"target = {_s(c.target)}"]
    if c.driver is None:
        lines.append(
            f"# No script calls it: its calls are recorded from your tests (pytest "
            f"--lockstep-record={ledger_name(c)}), or give it a driver (a script or "
            "pkg.mod:func that calls it)."
        )
        return lines + table
    lines.append("# The driver calls it the way its callers do; every distinct call is frozen.")
    return [*lines, *table, f"driver = {_s(c.driver)}"]


def next_commands(plan: Plan) -> list[str]:
    """The commands that record every oracle ``plan`` configures, then replay them."""
    from_tests = [p.name for p in plan.packages] + [
        ledger_name(c) for c in plan.ledgers if c.driver is None
    ]
    recorded = [ledger_name(c) for c in plan.ledgers if c.driver is not None]
    recorded += [c.name for c in plan.corpora if c.render is not None]
    recorded += [p.script.name for p in plan.pins if p.rules.deterministic]
    commands: list[str] = []
    if from_tests:
        if not recorded and len(from_tests) == len(plan.packages) + len(plan.ledgers):
            commands.append("pytest --lockstep-record")
        else:
            commands.append("pytest " + " ".join(f"--lockstep-record={n}" for n in from_tests))
    if recorded:
        commands.append("lockstep record " + " ".join(recorded))
    if commands:
        commands.append("lockstep replay")
    return commands


def _corpus(c: CorpusCandidate) -> list[str]:
    lines = [f"# {c.count} fixture files; render is called with each one's Path."]
    table = [
        "[[corpus]]",
        f"name = {_s(c.name)}",
        f"fixtures = {_s(c.fixtures)}",
        f"render = {_s(c.render or 'pkg.mod:render')}",
    ]
    if c.render is None:
        lines.append(
            "# No render function found: write one (path -> bytes/str/JSON) and uncomment:"
        )
        return lines + ["# " + line for line in table]
    return lines + table


def _pins(p: PinsChoice) -> list[str]:
    lines = [f"# {p.script.path} runs as a whole process; its runs are listed in {p.cases}."]
    if p.rules.crashed:
        lines.append(
            f"# Every run ended before it ran ({p.rules.crashed}): frozen, that would be its "
            "contract. Uncomment once it runs:"
        )
    elif p.rules.names:
        lines.append("# Its output varied between runs; the probe's verified rules hide that:")
    if not p.rules.deterministic and not p.rules.crashed:
        lines.append(
            "# Its output still varies with those rules: run 'lockstep probe "
            f"{p.script.name} --suggest' and uncomment once it is deterministic:"
        )
    table = [
        "[[pins]]",
        f"name = {_s(p.script.name)}",
        f"command = {_list(p.script.command)}",
        f"cases = {_s(p.cases)}",
    ]
    if p.env_keys:
        table.append(f"env_keys = {_list(p.env_keys)}")
    if p.rules.names:
        table.append(f"rules = {_list(p.rules.names)}")
    if not p.rules.deterministic:
        return lines + ["# " + line for line in table]
    return lines + table


def _user_rules(plan: Plan) -> list[Suggestion]:
    seen: dict[str, Suggestion] = {}
    for choice in plan.pins:
        if choice.rules.deterministic:
            for rule in choice.rules.user_rules:
                seen.setdefault(rule.name, rule)
    return list(seen.values())


def config_text(plan: Plan) -> str:
    """The commented configuration for ``plan``."""
    commands = next_commands(plan)
    out = [
        "# lockstep configuration, proposed by 'lockstep init' from the source.",
        "# Review it, then freeze today's behaviour and check it replays:",
        *(f"#   {command}" for command in commands),
        "# and commit the oracle folder before any refactor.  (Reference: README.)",
        "",
        "[lockstep]",
        f"dir = {_s(plan.oracle_dir)}  # where oracle files live: commit them",
    ]
    if plan.test_modules:
        out += [
            "# Test modules that subclass the package's classes or hand it their own functions:",
            "# calls given them are recorded, and the verifying interpreter and replay import",
            "# these modules.",
            f"test_modules = {_list(plan.test_modules)}",
        ]
    sections = (
        [_package(p, plan.suite) for p in plan.packages]
        + [_ledger(c) for c in plan.ledgers]
        + [_corpus(c) for c in plan.corpora]
        + [_pins(p) for p in plan.pins]
    )
    for section in sections:
        out += ["", *section]
    rules = _user_rules(plan)
    if rules:
        out += ["", "# Rules the probe suggested and verified for the scripts above."]
        for rule in rules:
            out += ["", rule.toml().rstrip("\n")]
    if plan.left_out:
        out += ["", "# Also found, not configured:"]
        out += [f"#   {line}" for line in plan.left_out]
    return "\n".join(out) + "\n"


def check_no_config(root: Path) -> None:
    """``lockstep init`` never overwrites a configuration: refuse when one is there."""
    existing = root / CONFIG_NAME
    if existing.exists():
        raise UsageError(
            f"{existing}: a configuration already exists; lockstep init never overwrites one "
            "(edit it, or move it away to start again)"
        )
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and "[tool.lockstep" in pyproject.read_text(
        encoding="utf-8", errors="replace"
    ):
        raise UsageError(
            f"{pyproject}: [tool.lockstep] already configures lockstep; "
            "lockstep init never overwrites a configuration"
        )
