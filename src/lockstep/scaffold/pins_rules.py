"""Probe a proposed script before proposing it: volatile output gets rules, or a warning.

A script whose output carries a timestamp or a run id would be refused by
``lockstep record`` (its runs differ).  ``lockstep init`` runs each case a few
times the way the pins kind will (:meth:`~lockstep.oracles.OracleKind.probe_targets`)
and takes the probe's verified rule suggestions, so the configuration it writes
records as is.  A few runs can all fall within one second, so a timestamp, a UUID or a
temporary path the output carries is given its built-in rule even when the runs agreed:
those values differ on the next day's replay.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lockstep.config import Config, Project
from lockstep.oracles import kind_named
from lockstep.oracles.pins.spec import PinsSpec
from lockstep.probe.runs import ProbeReport, probe_many
from lockstep.probe.suggest import Suggestion, suggest_and_verify
from lockstep.rules import BUILTIN_PATTERNS, RuleSet

PROBE_RUNS: Final = 4
VOLATILE_BY_NATURE: Final = ("iso-timestamp", "uuid", "tmp-path", "hex-address")
"""Built-in rules given whenever their pattern appears in the output, varying or not."""


@dataclass(frozen=True)
class ProbedRules:
    """What probing one script found: rule names for its table, and the user rules they need."""

    names: tuple[str, ...]
    user_rules: tuple[Suggestion, ...]
    deterministic: bool
    """False when the output still varies with the suggested rules."""
    crashed: str = ""
    """Why every run ended before the script ran at all (an import that fails: the
    traceback's last line), or "": frozen, that crash would be its contract."""


def probe_rules(root: Path, spec: PinsSpec, *, jobs: int = 2) -> ProbedRules:
    """Run every case of ``spec`` (its cases file must exist) :data:`PROBE_RUNS` times."""
    project = Project(root=root, config_path=root / "lockstep.toml", config=Config(pins=[spec]))
    targets = list(kind_named("pins").probe_targets(project, spec))
    reports = probe_many(targets, runs=PROBE_RUNS, jobs=jobs, rules=RuleSet())
    crashed = _crashed_at_start(reports)
    if crashed:
        return ProbedRules((), (), False, crashed)
    seen = _volatile_in(reports)
    flaky = [r for r in reports if not r.deterministic]
    if not flaky:
        return ProbedRules(seen, (), True)
    verified = suggest_and_verify(flaky, rules=RuleSet(), runs=PROBE_RUNS, jobs=jobs)
    names = [s.name for s in verified.suggestions]
    return ProbedRules(
        (*names, *(name for name in seen if name not in names)),
        tuple(s for s in verified.suggestions if not s.builtin),
        verified.working,
    )


_START_FAILURES: Final = re.compile(
    rb"^(?:ImportError|ModuleNotFoundError|SyntaxError|IndentationError)\b.*$", re.M
)
"""The last line of a traceback that ended a script before it ran: its imports (a module
of a package run as a file, ``attempted relative import with no known parent package``;
a Windows-only module) or its source."""


def _crashed_at_start(reports: Iterable[ProbeReport]) -> str:
    """The failure every run of every case ended with before the script ran (vobject's
    ``icalendar.py`` run as a file: ``ImportError: attempted relative import with no
    known parent package``), or "" when any run got further."""
    reasons = set()
    for report in reports:
        for variant in report.raw:
            example = variant.example
            lines = example.stderr.rstrip().splitlines()
            last = lines[-1] if lines else b""
            if example.exit_code == 0 or not _START_FAILURES.match(last):
                return ""
            reasons.add(last.decode("utf-8", "replace")[:160])
    return sorted(reasons)[0] if reasons else ""


def _volatile_in(reports: Iterable[ProbeReport]) -> tuple[str, ...]:
    """The :data:`VOLATILE_BY_NATURE` rules whose pattern occurs in any run's output."""
    texts = [
        stream.decode("utf-8", "replace")
        for report in reports
        for variant in report.raw
        for stream in (variant.example.stdout, variant.example.stderr)
    ]
    return tuple(
        name
        for name in VOLATILE_BY_NATURE
        if any(re.search(BUILTIN_PATTERNS[name][0], text) for text in texts)
    )


def case_env_keys(root: Path, cases: str) -> tuple[str, ...]:
    """The env keys the cases file's runs set: the pins table declares them (``env_keys``)."""
    try:
        data = tomllib.loads((root / cases).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ()
    keys: set[str] = set()
    for case in data.get("case", []):
        env = case.get("env") if isinstance(case, dict) else None
        if isinstance(env, dict):
            keys.update(str(k) for k in env)
    return tuple(sorted(keys))
