"""Replaying pins: each recorded case run again as a whole process and compared strictly
(exit code, stdout, stderr, after the rules); a case whose recorded inputs no longer
match the cases file is stale."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from lockstep.config import Project
from lockstep.diff import document_diff, shown_texts
from lockstep.errors import TargetError, UsageError
from lockstep.model import (
    Drift,
    Outcome,
    Status,
)
from lockstep.oracles.pins.cases import PinCase, cases_path, read_cases, resolve_cwd
from lockstep.oracles.pins.format import (
    Header,
    Pin,
    PinsFile,
    TaggedBytes,
    from_stream,
    to_stream,
)
from lockstep.oracles.pins.spec import PinsSpec

# ---------------------------------------------------------------- helpers
from lockstep.oracles.pins.warm import WarmPool, WarmUnavailable
from lockstep.oracles.stale import Mismatch, mismatches, rules_mismatch, stale_outcome
from lockstep.probe.runs import ProbeTarget, normalize
from lockstep.process import ENV_BASE, ENV_INHERIT, RunResult, build_env, run
from lockstep.rules import RuleSet, resolve_rules, rule_counts_text
from lockstep.secrets import Scrubber, SecretMissing, scrubber_for
from lockstep.store import display_path, sha256_hex


def _check_spec(project: Project, spec: PinsSpec) -> None:
    where = project.where(spec)
    if not spec.command:
        raise UsageError(f"{where}.command: give the program to run (an argv prefix)")
    if spec.timeout <= 0:
        raise UsageError(f"{where}.timeout: must be more than 0 seconds")


def _jobs() -> int:
    return max(1, os.cpu_count() or 1)


def _summary(data: bytes) -> str:
    if not data:
        return "empty"
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    kind = "binary, " if isinstance(to_stream(data), TaggedBytes) else ""
    return f"{kind}{len(data)} bytes, {lines} lines (sha256 {sha256_hex(data)[:12]})"


# ---------------------------------------------------------------- replay


@dataclass(frozen=True)
class _Ran:
    pin: Pin
    result: RunResult | None
    error: str = ""


def _compare(spec_name: str, pin: Pin, result: RunResult, rules: RuleSet) -> Outcome:
    local = rules.fresh()
    actual = normalize(result, local)
    drifts: list[Drift] = []
    if actual.exit_code != pin.exit_code:
        drifts.append(Drift("exit_code", str(pin.exit_code), str(actual.exit_code)))
    for stream in ("stdout", "stderr"):
        expected = from_stream(getattr(pin, stream))
        got: bytes = getattr(actual, stream)
        if expected != got:
            drifts.append(
                Drift(
                    stream,
                    _summary(expected),
                    _summary(got),
                    document_diff(
                        expected,
                        got,
                        label_expected=f"{stream} (pinned)",
                        label_actual=f"{stream} (now)",
                    ),
                    shown_texts(expected, got),
                )
            )
    notes = [
        n
        for n in (
            result.timed_out and f"{result.killed_note} ({result.seconds:.0f} s)",
            result.leftover_note,
            rule_counts_text(local.fired, rules.names),
        )
        if n
    ]
    return Outcome(
        spec_name,
        pin.id,
        Status.DRIFT if drifts else Status.PASS,
        tuple(drifts),
        note="; ".join(notes),
        rules_fired=local.counts(),
    )


def _run_case(spec: PinsSpec, pin: Pin, target: ProbeTarget, pool: WarmPool | None = None) -> _Ran:
    """Run the case as the configuration and the cases file say (never as the pin says).

    Warm only where record proved it the same as cold (``pin.warm``); cold if the
    server cannot run it.
    """
    if pool is not None and pin.warm and not pool.cold_reason(target):
        with contextlib.suppress(WarmUnavailable):
            return _Ran(pin, pool.run(target))
    try:
        result = run(
            target.argv,
            env=target.env,
            stdin=target.stdin,
            cwd=target.cwd,
            timeout=spec.timeout,
            max_output=target.max_output,
        )
    except TargetError as e:
        return _Ran(pin, None, str(e))
    return _Ran(pin, result)


def _outcome(oracle: str, ran: _Ran, rules: RuleSet) -> Outcome:
    if ran.result is None:
        return Outcome(oracle, ran.pin.id, Status.ERROR, note=ran.error)
    if ran.result.truncated_stream:
        return Outcome(
            oracle,
            ran.pin.id,
            Status.ERROR,
            note=f"{ran.result.killed_note}; raise 'max_output' or make the case print less",
        )
    return _compare(oracle, ran.pin, ran.result, rules)


def _missing(oracle: str, case_id: str, cases_shown: str) -> Outcome:
    return Outcome(
        oracle,
        case_id,
        Status.MISSING,
        note=f"case no longer in {cases_shown}; 'lockstep record {oracle} --trim' drops it",
    )


@dataclass(frozen=True)
class _Plan:
    """What replay runs, built from the configuration and the cases file only."""

    spec: PinsSpec
    rules: RuleSet
    scrubber: Scrubber
    cases: dict[str, PinCase]
    cases_shown: str
    header_stale: list[Mismatch]
    """How the file's header (rules, environment base) differs from the configuration."""

    pool: WarmPool | None = None
    """The warm servers when the oracle has ``warm = true``."""

    def target(self, project: Project, case: PinCase) -> ProbeTarget:
        return case_target(project, self.spec, case, scrubber=self.scrubber)


def _plan(
    project: Project, pins_spec: PinsSpec, pins_file: PinsFile, *, warm: bool = False
) -> _Plan:
    rules = resolve_rules(pins_spec.rules, project, where=project.key(pins_spec))
    header = pins_file.header
    header_stale = rules_mismatch(header.rules, rules.records()) + mismatches(
        [
            ("env_base", header.env_base, dict(ENV_BASE)),
            ("env_inherit", header.env_inherit, list(ENV_INHERIT)),
        ]
    )
    return _Plan(
        spec=pins_spec,
        rules=rules,
        scrubber=scrubber_for(project),
        cases={c.id: c for c in read_cases(project, pins_spec)},
        cases_shown=display_path(cases_path(project, pins_spec), project.root),
        header_stale=header_stale,
        pool=_warm_pool(project, pins_spec, header) if warm and pins_spec.warm else None,
    )


def _pin_stale(pin: Pin, case: PinCase, target: ProbeTarget, scrubber: Scrubber) -> list[Mismatch]:
    """How a pin's record of its run differs from the case as configured now."""
    argv, env, stdin = _recorded_inputs(case, target, scrubber)
    return mismatches(
        [
            ("argv", pin.argv, argv),
            ("env", pin.env, env),
            ("stdin", from_stream(pin.stdin), stdin),
            ("cwd_rel", pin.cwd_rel, case.cwd_rel),
        ]
    )


def _judge(project: Project, plan: _Plan, pin: Pin) -> Outcome | Callable[[], Outcome]:
    """A verdict without running (missing or stale), or the run to make for one."""
    case = plan.cases.get(pin.id)
    if case is None:
        return _missing(plan.spec.name, pin.id, plan.cases_shown)
    try:
        target = plan.target(project, case)
    except SecretMissing as e:
        return Outcome(plan.spec.name, pin.id, Status.ERROR, note=str(e))
    stale = plan.header_stale + _pin_stale(pin, case, target, plan.scrubber)
    if stale:
        return stale_outcome(plan.spec.name, pin.id, stale, config_name=project.config_name)
    return lambda: _outcome(
        plan.spec.name, _run_case(plan.spec, pin, target, plan.pool), plan.rules
    )


def _given(outcome: Outcome) -> Callable[[], Outcome]:
    return lambda: outcome


def case_target(
    project: Project,
    spec: PinsSpec,
    case: PinCase,
    *,
    env_base: Mapping[str, str] = ENV_BASE,
    env_inherit: Iterable[str] = ENV_INHERIT,
    scrubber: Scrubber | None = None,
) -> ProbeTarget:
    """How one case runs (labelled by its id): what record probes and ``lockstep probe NAME`` runs.

    A ``<NAME>`` placeholder of a ``[[secret]]`` in the command, the case's argv, env or
    stdin is handed to the program as the real value from the environment
    (:class:`~lockstep.secrets.SecretMissing` when it is not set).
    """
    shown = display_path(cases_path(project, spec), project.root)
    reveal = (scrubber if scrubber is not None else scrubber_for(project)).reveal
    return ProbeTarget(
        label=case.id,
        argv=tuple(reveal(a) for a in (*spec.command, *case.argv)),
        env=build_env(
            {k: reveal(v) for k, v in case.env.items()}, base=env_base, inherit=tuple(env_inherit)
        ),
        cwd=resolve_cwd(project, case.cwd_rel, where=f"{shown}: case {case.id!r}: cwd_rel"),
        stdin=reveal(case.stdin).encode("utf-8"),
        timeout=spec.timeout,
        max_output=spec.max_output_bytes,
        # Runs after the first use another hash seed unless the case pins one itself.
        vary_hash_seed="PYTHONHASHSEED" not in case.env,
    )


def _recorded_inputs(
    case: PinCase, target: ProbeTarget, scrubber: Scrubber
) -> tuple[list[str], dict[str, str], bytes]:
    """argv, env and stdin as a pin records them: every ``[[secret]]`` value scrubbed."""
    scrub = scrubber.scrub
    return (
        [scrub(a) for a in target.argv],
        {k: scrub(v) for k, v in case.env.items()},
        scrub(case.stdin).encode("utf-8"),
    )


def _warm_pool(
    project: Project, spec: PinsSpec, header: Header, imports: list[str] | None = None
) -> WarmPool:
    """The warm servers of one record or replay (started lazily, one per worker thread).

    Replay preloads ``warm_imports``, else the list record inferred (the header's), and
    forks only from a preload whose digest is the one record proved its pins with.
    """
    env = build_env({}, base=header.env_base, inherit=tuple(header.env_inherit))
    if imports is not None:
        return WarmPool(list(spec.command), imports, env, project.root)
    proven = header.warm
    return WarmPool(
        list(spec.command),
        list(spec.warm_imports or (proven.imports if proven else [])),
        env,
        project.root,
        expected=proven.digest if proven else "",
    )
