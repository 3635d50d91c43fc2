"""The pins oracle: whole process runs — argv, env, stdin → exit code, stdout, stderr.

A billing export script's contract is its process boundary.  A ``[[pins]]``
oracle names the program (``command``), a cases file (see
:mod:`lockstep.oracles.pins.cases`), the environment keys that matter, rules and
a timeout; ``record`` freezes each case's run, ``replay`` re-runs every pin and
compares strictly.  The file format is :mod:`lockstep.oracles.pins.format`.

Record probes first: each case runs ``runs`` times (at least 2) and a case
whose normalized signature varies is refused, naming the case and the first
difference, and nothing is written.  For Python programs, record also runs
each case once under :mod:`lockstep.probe.envspy` and notes environment keys the
program read but ``env_keys`` does not declare.  With ``warm = true``
(:mod:`lockstep.oracles.pins.warm`) record also runs each case once warm and
marks the pin ``warm`` only where that run matches the cold one exactly.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shlex
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from msgspec.structs import replace as replace_struct

from lockstep.config import OracleSpec, PinsSpec, Project
from lockstep.diff import document_diff, shown_texts
from lockstep.errors import DataError, Rejected, TargetError, UsageError
from lockstep.model import (
    Drift,
    OracleStatus,
    Outcome,
    RecordMode,
    RecordReport,
    ReplayOptions,
    Status,
)
from lockstep.oracles import (
    CaseInput,
    CaseRunner,
    OracleInput,
    StrengthScope,
    kind_from,
    spec_as,
)
from lockstep.oracles.lifecycle import (
    ModeWords,
    check_contract,
    check_record_mode,
    merge,
    record_entry_points,
    wanted,
)
from lockstep.oracles.mining import MINABLE_KINDS, MiningSubject
from lockstep.oracles.pins.cases import PinCase, cases_path, read_cases, resolve_cwd
from lockstep.oracles.pins.format import (
    FORMAT,
    VERSION,
    Header,
    Pin,
    PinsFile,
    TaggedBytes,
    WarmRecord,
    encode,
    from_stream,
    open_pins,
    to_stream,
)
from lockstep.oracles.pins.program import program_files
from lockstep.oracles.pins.warm import Inference, WarmPool, WarmUnavailable, infer_imports
from lockstep.oracles.stale import Mismatch, mismatches, rules_mismatch, stale_outcome
from lockstep.oracles.status import file_status
from lockstep.parallel import run_parallel
from lockstep.probe.envspy import discover
from lockstep.probe.runs import ProbeReport, ProbeTarget, normalize, probe_many
from lockstep.process import ENV_BASE, ENV_INHERIT, RunResult, build_env, is_python, run
from lockstep.pyentry import PythonEntry, python_entry
from lockstep.rules import RuleSet, resolve_rules, rule_counts_text
from lockstep.secrets import Scrubber, SecretMissing, policy_for, scrubber_for
from lockstep.store import AtomicLines, display_path, sha256_hex

SUFFIX: Final = ".pins.jsonl"
MIN_RUNS: Final = 2
_MODE_WORDS: Final = ModeWords(
    new_only="add new cases", force="re-record all", trim="drop vanished cases"
)


class NondeterministicCase(Rejected):
    """Recording refused: a case's normalized output varies from run to run (a finding, exit 1)."""


class CaseTimedOut(TargetError):
    """Recording refused: a case did not finish within the timeout (bad input, exit 2)."""


class CaseTooLoud(TargetError):
    """Recording refused: a case printed more than the output cap (bad input, exit 2)."""


# ---------------------------------------------------------------- helpers


def oracle_path(project: Project, spec: OracleSpec) -> Path:
    return project.oracle_dir / f"{spec.name}{SUFFIX}"


def _spec(spec: OracleSpec) -> PinsSpec:
    return spec_as(spec, PinsSpec, "pins")


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


# ---------------------------------------------------------------- record


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


def _also(bad: list[ProbeReport]) -> str:
    if len(bad) < 2:
        return ""
    others = ", ".join(r.target.label for r in bad[1:4])
    return f" (also: {others}{', …' if len(bad) > 4 else ''})"


def _timed_out(spec: PinsSpec, hung: list[ProbeReport]) -> CaseTimedOut:
    first = hung[0]
    partial = next((v.example for v in first.raw if v.example.timed_out), first.raw[0].example)
    tail = partial.stdout[-80:].decode("utf-8", "backslashreplace").strip()
    return CaseTimedOut(
        f"pins {spec.name!r}: case {first.target.label!r} did not finish within "
        f"{spec.timeout:g} s and was killed (output so far: {tail!r}); raise 'timeout' or fix "
        f"the case{_also(hung)}; nothing was written"
    )


def _too_loud(project: Project, spec: PinsSpec, loud: list[ProbeReport]) -> CaseTooLoud:
    first = loud[0]
    example = next(v.example for v in first.raw if v.example.truncated_stream)
    return CaseTooLoud(
        f"pins {spec.name!r}: case {first.target.label!r}: {example.killed_note}; raise "
        f"'max_output' ({project.where(spec, 'max_output')}) or make the case print less"
        f"{_also(loud)}; nothing was written"
    )


def _varies(spec: PinsSpec, varying: list[ProbeReport], runs: int) -> NondeterministicCase:
    first = varying[0]
    shown = "; ".join(
        f"{d.stream} differs ({d.left!r} vs {d.right!r})"
        if d.stream == "exit_code"
        else f"{d.stream} line {d.line}: {d.left!r} vs {d.right!r}"
        for d in first.differences()[:2]
    )
    rules = ", ".join(first.rules) or "none"
    return NondeterministicCase(
        f"pins {spec.name!r}: case {first.target.label!r} is not deterministic: "
        f"{len(first.normalized)} different outputs in {runs} runs after rules [{rules}]: "
        f"{shown}; name the volatile field with a rule ('lockstep probe {spec.name} --suggest'), "
        "or, if it is set or dict order under another PYTHONHASHSEED (the runs after the first "
        "use one), fix the order or pin PYTHONHASHSEED in the case's env"
        f"{_also(varying)}; nothing was written"
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


def _pin(
    case: PinCase, target: ProbeTarget, result: RunResult, scrubber: Scrubber, warm: bool | None
) -> Pin:
    argv, env, stdin = _recorded_inputs(case, target, scrubber)
    return Pin(
        id=case.id,
        argv=argv,
        env=env,
        stdin=to_stream(stdin),
        exit_code=result.exit_code,
        stdout=to_stream(result.stdout),
        stderr=to_stream(result.stderr),
        cwd_rel=case.cwd_rel,
        warm=warm,
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


def _same(a: RunResult, b: RunResult) -> str:
    """The first stream in which two normalized runs differ, or ``""``."""
    for name in ("exit_code", "stdout", "stderr"):
        if getattr(a, name) != getattr(b, name):
            return name
    return ""


def _warm_verdicts(
    project: Project,
    spec: PinsSpec,
    header: Header,
    targets: list[ProbeTarget],
    cold: list[RunResult],
    rules: RuleSet,
    report: RecordReport,
    proven: WarmRecord | None,
) -> tuple[list[bool], WarmRecord]:
    """Run each case once warm; warm is allowed only where it matches the cold run exactly.

    ``proven`` is the file's warm record when cases are added to it (``--new-only``,
    ``accept``): they are proven with the same preload, kept as is.  Otherwise the
    preload is ``warm_imports`` or inferred from the cases (:func:`infer_imports`).
    """
    if proven is not None:
        pool = _warm_pool(project, spec, replace_struct(header, warm=proven))
    elif spec.warm_imports:
        pool = _warm_pool(project, spec, header, list(spec.warm_imports))
    else:
        inference = infer_imports(targets, project.root, jobs=_jobs())
        pool = _warm_pool(project, spec, header, list(inference.imports))
        entry = python_entry(spec.command)
        dropped = pool.settle(entry) if isinstance(entry, PythonEntry) else []
        report.notes.extend(
            _inference_notes(inference, pool.imports, [*inference.left_out, *dropped])
        )
    refused: list[str] = []

    def task(t: ProbeTarget, c: RunResult) -> Callable[[], bool]:
        def go() -> bool:
            reason = pool.cold_reason(t)
            if reason:
                refused.append(f"{t.label} ({reason})")
                return False
            try:
                warm = normalize(pool.run(t), rules.fresh())
            except WarmUnavailable as e:
                refused.append(f"{t.label} ({e})")
                return False
            differs = _same(c, warm)
            if differs:
                refused.append(f"{t.label} ({differs} differs warm)")
            return not differs

        return go

    try:
        verdicts = list(
            run_parallel((task(t, c) for t, c in zip(targets, cold, strict=True)), jobs=_jobs())
        )
    finally:
        pool.close()
    if pool.failure and not any(verdicts):
        report.notes.append(f"warm: {pool.failure}; every case runs cold")
    elif refused:
        shown = ", ".join(sorted(refused)[:5]) + (", …" if len(refused) > 5 else "")
        report.notes.append(f"warm refused for {len(refused)} case(s), replayed cold: {shown}")
    if proven is not None:
        return verdicts, proven
    inferred = not spec.warm_imports
    return verdicts, WarmRecord(imports=pool.imports, inferred=inferred, digest=pool.digest)


def _inference_notes(inference: Inference, imports: list[str], left_out: list[str]) -> list[str]:
    """What record tells the configuration's owner about an inferred preload."""
    notes = [
        f"warm: preloads {', '.join(imports) or 'nothing'} (inferred from the modules the "
        f"cases imported; kept in the pins file's header; 'warm_imports' overrides)"
    ]
    if not inference.reported:
        notes.append("warm: the program did not report its imports (started with -I or -E?)")
    if left_out:
        shown = ", ".join(left_out[:6]) + (", …" if len(left_out) > 6 else "")
        notes.append(f"warm: not preloaded: {shown}")
    return notes


def _discover_notes(spec: PinsSpec, targets: list[ProbeTarget], jobs: int) -> list[str]:
    if not targets or not is_python(spec.command):
        return []

    def task(t: ProbeTarget) -> Callable[[], tuple[str, tuple[str, ...], tuple[str, ...]] | None]:
        def go() -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
            found = discover(
                t.argv,
                env=t.env,
                stdin=t.stdin,
                cwd=t.cwd,
                timeout=spec.timeout,
                declared=spec.env_keys,
            )
            return None if found is None else (t.label, found.read, found.undeclared)

        return go

    undeclared: dict[str, list[str]] = {}
    read_any: set[str] = set()
    reported = 0
    for item in run_parallel((task(t) for t in targets), jobs=jobs):
        if item is None:
            continue
        reported += 1
        label, read, missing = item
        read_any.update(read)
        for key in missing:
            undeclared.setdefault(key, []).append(label)
    if not reported:
        return ["env discovery: the program did not report (started with -I or -E?)"]
    notes = []
    for key, labels in sorted(undeclared.items()):
        cases = ", ".join(labels[:3]) + (f", … (+{len(labels) - 3})" if len(labels) > 3 else "")
        notes.append(
            f"env discovery: the program reads {key} but env_keys does not declare it "
            f"(cases: {cases}); declare it so the pin's env is what the program depends on"
        )
    unread = [k for k in spec.env_keys if k not in read_any]
    if unread:
        notes.append(f"env discovery: declared but never read: {', '.join(unread)}")
    return notes


def _record(
    project: Project, spec: OracleSpec, mode: RecordMode, only: frozenset[str] | None
) -> RecordReport:
    """Probe every case, refuse a varying one, then write the pins file whole (or nothing).

    ``only`` narrows ``--force`` to the cases being accepted (``lockstep accept``).
    """
    pins_spec = _spec(spec)
    _check_spec(project, pins_spec)
    path = oracle_path(project, pins_spec)
    report = RecordReport(pins_spec.name, path, mode)
    exists = check_record_mode(path, project.root, pins_spec.name, mode, _MODE_WORDS)
    old: PinsFile | None = None
    old_lines: dict[str, bytes] = {}
    if exists:
        try:
            old = open_pins(path, project.root)
            old_lines = {pin.id: encode(pin) for pin in old.pins()}
        except DataError as e:
            if mode is not RecordMode.FORCE or only is not None:
                raise
            old = None
            report.notes.append(f"replaced an unreadable file ({e})")
    cases = {c.id: c for c in sorted(read_cases(project, pins_spec), key=lambda c: c.id)}
    rules = resolve_rules(pins_spec.rules, project, where=project.key(pins_spec))
    header = Header(
        format=FORMAT,
        version=VERSION,
        env_base=dict(ENV_BASE),
        env_inherit=list(ENV_INHERIT),
        rules=rules.records(),
    )
    if old is not None:
        check_contract(
            pins_spec.name,
            mode,
            replace_struct(old.header, warm=None),
            header,
            what="rules or environment base",
        )
    # Cases added to a file are proven warm with the file's own preload; --force proves anew.
    proven = old.header.warm if old is not None and pins_spec.warm else None
    anew = old is None or (mode is RecordMode.FORCE and only is None)
    todo = [cases[case_id] for case_id in wanted(mode, cases, old_lines, only)]
    frozen, warm = _freeze(
        project, pins_spec, todo, header, rules, report, None if anew else proven
    )
    # A file whose kept pins were proven without a recorded preload keeps none: they run cold.
    header = replace_struct(header, warm=warm if anew else proven)
    fresh = {case_id: encode(pin) for case_id, pin in frozen.items()}
    lines = merge(report, old_lines, fresh, cases, same=lambda a, b: a == b, only=only)
    if mode is not RecordMode.FORCE and old is not None:
        report.notes.extend(_stale_notes(project, pins_spec, old))
    if old is None or old.header != header or report.added or report.replaced or report.trimmed:
        with AtomicLines(path) as out:
            out.write(encode(header))
            for line in lines.values():
                out.write(line)
    return report


def _stale_notes(project: Project, spec: PinsSpec, old: PinsFile) -> list[str]:
    """Kept pins whose case changed in the cases file since they were recorded."""
    plan = _plan(project, spec, old)
    stale = [
        pin.id
        for pin in old.pins()
        if pin.id in plan.cases
        and _pin_stale(
            pin, plan.cases[pin.id], plan.target(project, plan.cases[pin.id]), plan.scrubber
        )
    ]
    if not stale:
        return []
    shown = ", ".join(stale[:5]) + (", …" if len(stale) > 5 else "")
    return [
        f"{len(stale)} kept case(s) changed in the cases file since they were recorded "
        f"(stale: {shown}); 'lockstep record {spec.name} --force' re-records them"
    ]


def _freeze(
    project: Project,
    spec: PinsSpec,
    cases: list[PinCase],
    header: Header,
    rules: RuleSet,
    report: RecordReport,
    proven: WarmRecord | None,
) -> tuple[dict[str, Pin], WarmRecord | None]:
    """Probe ``cases`` (``runs`` times each) and freeze each as a pin; refuse hung or varying.

    With ``warm = true``, also what the warm verdicts were proven with."""
    if not cases:
        return {}, None
    runs = max(MIN_RUNS, spec.runs)
    jobs = _jobs()
    policy = policy_for(project)
    targets = [
        case_target(
            project,
            spec,
            c,
            env_base=header.env_base,
            env_inherit=header.env_inherit,
            scrubber=policy.scrubber,
        )
        for c in cases
    ]
    reports = probe_many(targets, runs=runs, jobs=jobs, rules=rules)
    hung = [r for r in reports if r.timed_out]
    if hung:
        raise _timed_out(spec, hung)
    loud = [r for r in reports if r.truncated]
    if loud:
        raise _too_loud(project, spec, loud)
    varying = [r for r in reports if not r.deterministic]
    if varying:
        raise _varies(spec, varying, runs)
    cold = [normalize(r.raw[0].example, rules.fresh()) for r in reports]
    warm: list[bool | None] = [None] * len(cases)
    warm_record = None
    if spec.warm:
        verdicts, warm_record = _warm_verdicts(
            project, spec, header, targets, cold, rules, report, proven
        )
        warm = list(verdicts)
    fresh: dict[str, Pin] = {}
    for c, t, result, w in zip(cases, targets, cold, warm, strict=True):
        pin = _pin(c, t, result, policy.scrubber, w)
        refusal = policy.refusal(c.id, _secret_fields(pin))
        if refusal is not None:
            report.refused.append(refusal)
        else:
            fresh[c.id] = pin
    total: Counter[str] = Counter()
    for r in reports:
        total.update(r.fired)
    report.notes.extend(_discover_notes(spec, targets, jobs))
    if rules.rules:
        report.notes.append(
            f"{rule_counts_text(total, rules.names)} (over {runs} runs of "
            f"{len(cases)} case{'' if len(cases) == 1 else 's'})"
        )
    return fresh, warm_record


def _secret_fields(pin: Pin) -> dict[str, object]:
    """Every field of a pin a secret could sit in, as text (what the scan reads)."""
    return {
        "id": pin.id,
        "argv": pin.argv,
        "env": pin.env,
        "stdin": from_stream(pin.stdin),
        "stdout": from_stream(pin.stdout),
        "stderr": from_stream(pin.stderr),
        "cwd_rel": pin.cwd_rel,
    }


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


def replay(project: Project, spec: OracleSpec, options: ReplayOptions) -> Iterator[Outcome]:
    """Re-run every selected case (``options.jobs`` at a time) and compare strictly.

    Each case runs exactly as ``command`` and the cases file say now; a pin whose
    recorded argv, env, stdin or folder differs from that, or a file recorded
    under other rules or another environment base, is stale: reported, not run.
    """
    pins_spec = _spec(spec)
    _check_spec(project, pins_spec)
    pins_file = open_pins(oracle_path(project, pins_spec), project.root, name=pins_spec.name)
    plan = _plan(project, pins_spec, pins_file, warm=True)
    pinned: set[str] = set()

    def tasks() -> Iterator[Callable[[], Outcome]]:
        for pin in pins_file.pins():
            pinned.add(pin.id)
            if not options.selects(pin.id):
                continue
            verdict = _judge(project, plan, pin)
            yield verdict if callable(verdict) else _given(verdict)

    try:
        yield from run_parallel(tasks(), jobs=max(1, options.jobs))
    finally:
        if plan.pool is not None:
            plan.pool.close()
    for case_id in plan.cases:
        if case_id not in pinned and options.selects(case_id):
            yield Outcome(
                pins_spec.name,
                case_id,
                Status.NEW,
                note=f"not pinned; 'lockstep record {pins_spec.name} --new-only' adds it",
            )


def case_runner(project: Project, spec: OracleSpec) -> CaseRunner:
    """Replay one pin by id (a pytest item): the file is indexed once, each pin read on demand.

    The index holds byte offsets, not pins, so memory stays flat however large
    the recorded outputs are.
    """
    pins_spec = _spec(spec)
    _check_spec(project, pins_spec)
    pins_file = open_pins(oracle_path(project, pins_spec), project.root, name=pins_spec.name)
    plan = _plan(project, pins_spec, pins_file, warm=True)
    if plan.pool is not None:
        atexit.register(plan.pool.close)
    offsets = pins_file.offsets()

    def replay_one(case_id: str) -> Outcome:
        if case_id not in offsets:
            if case_id in plan.cases:
                return Outcome(pins_spec.name, case_id, Status.NEW, note="not pinned")
            return Outcome(pins_spec.name, case_id, Status.MISSING, note="no such pin")
        verdict = _judge(project, plan, pins_file.pin_at(*offsets[case_id]))
        return verdict() if callable(verdict) else verdict

    return replay_one


def case_ids(project: Project, spec: OracleSpec) -> Iterator[str]:
    """The pinned ids, streaming (one pytest item each)."""
    pins_file = open_pins(oracle_path(project, _spec(spec)), project.root, name=spec.name)
    for pin in pins_file.pins():
        yield pin.id


def status(project: Project, spec: OracleSpec) -> OracleStatus:
    """Present, readable, how many pins, and whether the config's rules still match the file's."""
    pins_spec = _spec(spec)
    path = oracle_path(project, pins_spec)

    def read() -> tuple[int, str]:
        pins_file = open_pins(path, project.root)
        plan = _plan(project, pins_spec, pins_file)
        count = 0
        stale: list[str] = []
        for pin in pins_file.pins():
            count += 1
            verdict = _judge(project, plan, pin)
            if not callable(verdict) and verdict.status is Status.STALE:
                stale.append(pin.id)
        if not stale:
            return count, ""
        fields = ", ".join(sorted({m.field for m in plan.header_stale})) or "cases"
        return count, (
            f"{len(stale)} stale (recorded {fields} differ from the configuration and cases "
            f"now: {', '.join(stale[:3])}{', …' if len(stale) > 3 else ''}); "
            "'lockstep record --force' re-records them"
        )

    return file_status(pins_spec, path, read)


def probe_targets(project: Project, spec: OracleSpec) -> tuple[ProbeTarget, ...]:
    """Every configured case as ``lockstep probe NAME`` runs it, labelled ``NAME::id``."""
    pins_spec = _spec(spec)
    _check_spec(project, pins_spec)
    targets = tuple(
        replace(case_target(project, pins_spec, case), label=f"{pins_spec.name}::{case.id}")
        for case in read_cases(project, pins_spec)
    )
    if not targets:
        raise UsageError(f"{pins_spec.name}: the cases file has no [[case]]")
    return targets


def case_inputs(project: Project, spec: OracleSpec) -> Iterator[CaseInput]:
    """Each configured case: its argv (and stdin), as the cases file gives them."""
    pins_spec = _spec(spec)
    for case in read_cases(project, pins_spec):
        argv = shlex.join([*pins_spec.command, *case.argv])
        stdin = f" < {len(case.stdin)} bytes of stdin" if case.stdin else ""
        yield CaseInput(case.id, f"{argv}{stdin}", (*case.argv, case.stdin))


def strength_scope(project: Project, spec: OracleSpec) -> StrengthScope:
    """The program's Python: a ``script.py`` or ``-m module`` of the command, and the project's
    modules it imports (found from its import statements, without running it)."""
    return StrengthScope(
        program_files(project.root, spec_as(spec, PinsSpec, "pins").command), False
    )


def inputs(project: Project, spec: OracleSpec) -> tuple[OracleInput, ...]:
    """The cases file: changing a case re-records the pins."""
    pins_spec = _spec(spec)
    return (OracleInput(pins_spec.cases, f"cases of pins {pins_spec.name!r}"),)


record, accept = record_entry_points(_record)


def mining(project: Project, spec: OracleSpec) -> MiningSubject:
    """Refused, with the reason: a pins case is a whole program run, and its argv and stdin
    are free text whose meaning only the program's own parser knows -- variants drawn
    from them would mostly test the argument parser.  Generating them is out of scope."""
    raise UsageError(
        f"oracle {spec.name!r} is a pins oracle: 'lockstep mine' and 'replay --against' work "
        f"on {MINABLE_KINDS} (argv/stdin variants of whole programs are not generated)"
    )


KIND: Final = kind_from(globals(), name="pins", suffix=SUFFIX, parallel_by_default=True)
