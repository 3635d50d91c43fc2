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
program read but ``env_keys`` does not declare.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from lockstep.config import OracleSpec, PinsSpec, Project
from lockstep.diff import document_diff
from lockstep.errors import Rejected, TargetError, UsageError
from lockstep.model import (
    Drift,
    OracleStatus,
    Outcome,
    RecordMode,
    RecordReport,
    ReplayOptions,
    Status,
)
from lockstep.oracles import CaseRunner, OracleInput
from lockstep.oracles.lifecycle import (
    ModeWords,
    check_contract,
    check_record_mode,
    merge,
    wanted,
)
from lockstep.oracles.pins.cases import PinCase, cases_path, read_cases, resolve_cwd
from lockstep.oracles.pins.format import (
    FORMAT,
    VERSION,
    Header,
    Pin,
    PinsFile,
    TaggedBytes,
    encode,
    from_stream,
    open_pins,
    to_stream,
)
from lockstep.oracles.status import file_status
from lockstep.parallel import run_parallel
from lockstep.probe.envspy import discover
from lockstep.probe.runs import ProbeReport, ProbeTarget, normalize, probe_many
from lockstep.process import ENV_BASE, ENV_INHERIT, RunResult, build_env, is_python, run
from lockstep.rules import RuleSet, resolve_rules, rule_counts_text
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


# ---------------------------------------------------------------- helpers


def oracle_path(project: Project, spec: OracleSpec) -> Path:
    return project.oracle_dir / f"{spec.name}{SUFFIX}"


def _spec(spec: OracleSpec) -> PinsSpec:
    if not isinstance(spec, PinsSpec):
        raise TypeError(f"{spec.name} is a {spec.kind} oracle, not pins")
    return spec


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
) -> ProbeTarget:
    """How one case runs (labelled by its id): what record probes and ``lockstep probe NAME`` runs."""
    shown = display_path(cases_path(project, spec), project.root)
    return ProbeTarget(
        label=case.id,
        argv=(*spec.command, *case.argv),
        env=build_env(case.env, base=env_base, inherit=tuple(env_inherit)),
        cwd=resolve_cwd(project, case.cwd_rel, where=f"{shown}: case {case.id!r}: cwd_rel"),
        stdin=case.stdin.encode("utf-8"),
        timeout=spec.timeout,
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
        f"{shown}; name the volatile field with a rule ('lockstep probe {spec.name} --suggest')"
        f"{_also(varying)}; nothing was written"
    )


def _pin(case: PinCase, target: ProbeTarget, result: RunResult) -> Pin:
    return Pin(
        id=case.id,
        argv=list(target.argv),
        env=dict(case.env),
        stdin=to_stream(target.stdin),
        exit_code=result.exit_code,
        stdout=to_stream(result.stdout),
        stderr=to_stream(result.stderr),
        cwd_rel=case.cwd_rel,
    )


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


def record(project: Project, spec: OracleSpec, mode: RecordMode) -> RecordReport:
    """Probe every case, refuse a varying one, then write the pins file whole (or nothing)."""
    pins_spec = _spec(spec)
    _check_spec(project, pins_spec)
    path = oracle_path(project, pins_spec)
    report = RecordReport(pins_spec.name, path, mode)
    exists = check_record_mode(path, project.root, pins_spec.name, mode, _MODE_WORDS)
    old = open_pins(path, project.root) if exists else None
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
        check_contract(pins_spec.name, mode, old.header, header, what="rules or environment base")
    old_lines = {pin.id: encode(pin) for pin in old.pins()} if old is not None else {}
    todo = [cases[case_id] for case_id in wanted(mode, cases, old_lines)]
    fresh = {
        case_id: encode(pin)
        for case_id, pin in _freeze(project, pins_spec, todo, header, rules, report).items()
    }
    lines = merge(report, old_lines, fresh, cases, same=lambda a, b: a == b)
    if old is None or old.header != header or report.added or report.replaced or report.trimmed:
        with AtomicLines(path) as out:
            out.write(encode(header))
            for line in lines.values():
                out.write(line)
    return report


def _freeze(
    project: Project,
    spec: PinsSpec,
    cases: list[PinCase],
    header: Header,
    rules: RuleSet,
    report: RecordReport,
) -> dict[str, Pin]:
    """Probe ``cases`` (``runs`` times each) and freeze each as a pin; refuse hung or varying."""
    if not cases:
        return {}
    runs = max(MIN_RUNS, spec.runs)
    jobs = _jobs()
    targets = [
        case_target(project, spec, c, env_base=header.env_base, env_inherit=header.env_inherit)
        for c in cases
    ]
    reports = probe_many(targets, runs=runs, jobs=jobs, rules=rules)
    hung = [r for r in reports if r.timed_out]
    if hung:
        raise _timed_out(spec, hung)
    varying = [r for r in reports if not r.deterministic]
    if varying:
        raise _varies(spec, varying, runs)
    fresh = {
        c.id: _pin(c, t, normalize(r.raw[0].example, rules.fresh()))
        for c, t, r in zip(cases, targets, reports, strict=True)
    }
    total: Counter[str] = Counter()
    for r in reports:
        total.update(r.fired)
    report.notes.extend(_discover_notes(spec, targets, jobs))
    if rules.rules:
        report.notes.append(
            f"{rule_counts_text(total, rules.names)} (over {runs} runs of "
            f"{len(cases)} case{'' if len(cases) == 1 else 's'})"
        )
    return fresh


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
                )
            )
    notes = [
        n
        for n in (
            result.killed_note and f"{result.killed_note} ({result.seconds:.0f} s)",
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


def _run_pin(project: Project, spec: PinsSpec, pins_file: PinsFile, pin: Pin) -> _Ran:
    header = pins_file.header
    cwd = resolve_cwd(project, pin.cwd_rel, where=f"{pins_file.shown}: pin {pin.id!r}: cwd_rel")
    env = build_env(pin.env, base=header.env_base, inherit=header.env_inherit)
    try:
        result = run(pin.argv, env=env, stdin=from_stream(pin.stdin), cwd=cwd, timeout=spec.timeout)
    except TargetError as e:
        return _Ran(pin, None, str(e))
    return _Ran(pin, result)


def _outcome(oracle: str, ran: _Ran, rules: RuleSet) -> Outcome:
    if ran.result is None:
        return Outcome(oracle, ran.pin.id, Status.ERROR, note=ran.error)
    return _compare(oracle, ran.pin, ran.result, rules)


def _missing(oracle: str, case_id: str, cases_shown: str) -> Outcome:
    return Outcome(
        oracle,
        case_id,
        Status.MISSING,
        note=f"case no longer in {cases_shown}; 'lockstep record {oracle} --trim' drops it",
    )


def replay(project: Project, spec: OracleSpec, options: ReplayOptions) -> Iterator[Outcome]:
    """Re-run every selected pin (``options.jobs`` at a time) and compare strictly."""
    pins_spec = _spec(spec)
    _check_spec(project, pins_spec)
    pins_file = open_pins(oracle_path(project, pins_spec), project.root, name=pins_spec.name)
    rules = pins_file.rules()
    cases = read_cases(project, pins_spec)
    known = {c.id for c in cases}
    cases_shown = display_path(cases_path(project, pins_spec), project.root)
    pinned: set[str] = set()
    missing: list[Pin] = []

    def selected() -> Iterator[Pin]:
        for pin in pins_file.pins():
            pinned.add(pin.id)
            if not options.selects(pin.id):
                continue
            if pin.id not in known:
                missing.append(pin)
                continue
            yield pin

    def task(pin: Pin) -> Callable[[], _Ran]:
        return lambda: _run_pin(project, pins_spec, pins_file, pin)

    for ran in run_parallel((task(p) for p in selected()), jobs=max(1, options.jobs)):
        yield _outcome(pins_spec.name, ran, rules)
    for pin in missing:
        yield _missing(pins_spec.name, pin.id, cases_shown)
    for case in cases:
        if case.id not in pinned and options.selects(case.id):
            yield Outcome(
                pins_spec.name,
                case.id,
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
    rules = pins_file.rules()
    known = {c.id for c in read_cases(project, pins_spec)}
    cases_shown = display_path(cases_path(project, pins_spec), project.root)
    offsets = pins_file.offsets()

    def replay_one(case_id: str) -> Outcome:
        if case_id not in offsets:
            if case_id in known:
                return Outcome(pins_spec.name, case_id, Status.NEW, note="not pinned")
            return Outcome(pins_spec.name, case_id, Status.MISSING, note="no such pin")
        if case_id not in known:
            return _missing(pins_spec.name, case_id, cases_shown)
        pin = pins_file.pin_at(*offsets[case_id])
        return _outcome(pins_spec.name, _run_pin(project, pins_spec, pins_file, pin), rules)

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
        count = sum(1 for _ in pins_file.pins())
        recorded = [r.name for r in pins_file.header.rules]
        if recorded == list(pins_spec.rules):
            return count, ""
        return count, (
            f"recorded with rules [{', '.join(recorded)}], "
            f"configured [{', '.join(pins_spec.rules)}]; "
            "'lockstep record --force' applies the configured ones"
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


def inputs(project: Project, spec: OracleSpec) -> tuple[OracleInput, ...]:
    """The cases file: changing a case re-records the pins."""
    pins_spec = _spec(spec)
    return (OracleInput(pins_spec.cases, f"cases of pins {pins_spec.name!r}"),)


class PinsKind:
    """The pins kind, as the :class:`~lockstep.oracles.OracleKind` protocol sees it."""

    name: Final = "pins"
    suffix: Final = SUFFIX
    parallel_by_default: Final = True
    """Replay runs one case per core unless told otherwise: each case is its own process."""

    oracle_path = staticmethod(oracle_path)
    inputs = staticmethod(inputs)
    record = staticmethod(record)
    replay = staticmethod(replay)
    case_ids = staticmethod(case_ids)
    case_runner = staticmethod(case_runner)
    status = staticmethod(status)
    probe_targets = staticmethod(probe_targets)


KIND: Final = PinsKind()
