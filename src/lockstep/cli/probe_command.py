"""``lockstep probe``: measure nondeterminism before freezing anything.

``lockstep probe [--runs N] [--rules R] [--jobs J] [--suggest] -- CMD...`` runs a
command N times; ``lockstep probe NAME`` runs every case of a ``[[pins]]``
oracle N times.  Exit 0 when every probed case gives one signature after the
rules, 1 when any gives several, 2 for usage errors.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import click

from lockstep.cli.app import (
    EXIT_FAIL,
    EXIT_OK,
    console,
    jobs_option,
    main,
    project_from,
    replay_options,
)
from lockstep.cli.progress import progress
from lockstep.config import Project, find_config
from lockstep.errors import UsageError
from lockstep.oracles import kind_of
from lockstep.probe.runs import ProbeTarget, probe_many
from lockstep.probe.suggest import suggest_and_verify
from lockstep.process import build_env
from lockstep.report.probe import report_text, suggestion_text, summary_text
from lockstep.rules import BUILTIN_NAMES, RuleSet, builtin_rule, resolve_rules


def _rule_names(values: tuple[str, ...]) -> list[str]:
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def _env_pairs(values: tuple[str, ...]) -> dict[str, str]:
    env: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}", param_hint="--env")
        env[key] = val
    return env


def _rules(names: list[str], project: Project | None) -> RuleSet:
    if project is not None:
        return resolve_rules(names, project, where="--rules")
    rules = []
    for name in names:
        rule = builtin_rule(name)
        if rule is None:
            raise UsageError(
                f"--rules: unknown rule {name!r} (built-ins: {', '.join(BUILTIN_NAMES)}; "
                "user rules need a lockstep.toml)"
            )
        rules.append(rule)
    return RuleSet(tuple(rules))


@main.command()
@click.argument("command", nargs=-1, required=True, metavar="NAME | -- CMD...")
@click.option("--runs", "-n", type=click.IntRange(min=1), default=10, show_default=True)
@click.option(
    "--rules",
    "rules_opt",
    multiple=True,
    metavar="R[,R...]",
    help="Rules to apply (built-ins or [[rule]] names); default: the oracle's rules.",
)
@jobs_option
@click.option(
    "--suggest", is_flag=True, help="Propose rules for what varies, verified by re-probing."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Seconds per run before its process group is killed (default 30).",
)
@click.option(
    "--env",
    "env_opt",
    multiple=True,
    metavar="KEY=VALUE",
    help="Environment key for the command (besides the fixed base).",
)
@click.pass_context
def probe(
    ctx: click.Context,
    command: tuple[str, ...],
    runs: int,
    rules_opt: tuple[str, ...],
    jobs: int,
    suggest: bool,
    timeout: float | None,
    env_opt: tuple[str, ...],
) -> None:
    """Run a command (or every case of a pins oracle) N times; count distinct outputs.

    \b
    Each distinct signature (exit code, sha256 of stdout, sha256 of stderr) is
    shown with its count, before and after the rules.  The environment is the
    fixed base (PATH, LC_ALL/LANG=C.UTF-8, TZ=UTC, PYTHONHASHSEED=0) plus --env;
    stdin is empty.  Exit 0: one signature; 1: several.
    """
    has_config = ctx.find_root().obj.get("config_path") or find_config() is not None
    project = project_from(ctx) if has_config else None
    jobs = replay_options(jobs, None).jobs  # 0: one per core; below 0: a usage error
    names = _rule_names(rules_opt)
    spec = None
    if project is not None and len(command) == 1:
        spec = next((s for s in project.oracles() if s.name == command[0]), None)
    if spec is not None:
        assert project is not None
        # The kind says how its cases run as processes; a kind whose cases do not is refused.
        targets = list(kind_of(spec).probe_targets(project, spec))
        if env_opt:
            raise UsageError("--env applies to a command; a pins oracle's cases set their env")
        if timeout is not None:
            targets = [replace(t, timeout=timeout) for t in targets]
        rules = _rules(names or list(spec.rules), project)
    else:
        rules = _rules(names, project)
        targets = [
            ProbeTarget(
                label=" ".join(command),
                argv=command,
                env=build_env(_env_pairs(env_opt)),
                cwd=Path.cwd(),
                timeout=30.0 if timeout is None else timeout,
            )
        ]
    out = console()
    with progress(out, f"probe × {runs} runs", total=len(targets) * runs) as tick:
        reports = probe_many(targets, runs=runs, jobs=jobs, rules=rules, on_run=tick)
    for report in reports:
        out.print(report_text(report, jobs), end="")
    flaky = [r for r in reports if not r.deterministic]
    if suggest and flaky:
        verified = suggest_and_verify(flaky, rules=rules, runs=runs, jobs=jobs)
        out.print()
        out.print(suggestion_text(verified, rules.names), end="")
    out.print(summary_text(reports))
    sys.exit(EXIT_FAIL if flaky else EXIT_OK)
