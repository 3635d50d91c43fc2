"""Recording pins: every case probed ``runs`` times as a whole process; a case whose
normalized output varies, hangs or prints past the cap is refused; with ``warm``, each
case proves its warm run identical to its cold one."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Final

from msgspec.structs import replace as replace_struct

from lockstep.config import Project
from lockstep.errors import Rejected, TargetError
from lockstep.model import (
    RecordMode,
    RecordReport,
)
from lockstep.oracles.lifecycle import ModeWords, RecordHooks, record
from lockstep.oracles.pins.cases import PinCase, read_cases
from lockstep.oracles.pins.format import (
    FORMAT,
    VERSION,
    Header,
    Pin,
    PinsFile,
    WarmRecord,
    encode,
    from_stream,
    open_pins,
    to_stream,
)
from lockstep.oracles.pins.replay import (
    _check_spec,
    _jobs,
    _pin_stale,
    _plan,
    _recorded_inputs,
    _warm_pool,
    case_target,
)
from lockstep.oracles.pins.spec import PinsSpec
from lockstep.oracles.pins.warm import Inference, WarmUnavailable, infer_imports
from lockstep.parallel import run_parallel
from lockstep.probe.envspy import discover
from lockstep.probe.runs import ProbeReport, ProbeTarget, normalize, probe_many
from lockstep.process import ENV_BASE, ENV_INHERIT, RunResult, is_python
from lockstep.pyentry import PythonEntry, python_entry
from lockstep.rules import RuleSet, resolve_rules, rule_counts_text
from lockstep.secrets import Scrubber, policy_for
from lockstep.store import AtomicLines

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


# ---------------------------------------------------------------- record


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
    project: Project,
    pins_spec: PinsSpec,
    path: Path,
    mode: RecordMode,
    only: frozenset[str] | None,
) -> RecordReport:
    """Probe every case, refuse a varying one, then write the pins file whole (or nothing),
    through :func:`~lockstep.oracles.lifecycle.record`.

    ``only`` narrows ``--force`` to the cases being accepted (``lockstep accept``).
    """
    _check_spec(project, pins_spec)
    cases: dict[str, PinCase] = {}
    header: Header | None = None

    def read() -> tuple[PinsFile, dict[str, bytes]]:
        pins = open_pins(path, project.root)
        return pins, {pin.id: encode(pin) for pin in pins.pins()}

    def present() -> list[str]:
        nonlocal header
        found = sorted(read_cases(project, pins_spec), key=lambda c: c.id)
        cases.update((c.id, c) for c in found)
        header = Header(
            format=FORMAT,
            version=VERSION,
            env_base=dict(ENV_BASE),
            env_inherit=list(ENV_INHERIT),
            rules=rules().records(),
        )
        return list(cases)

    rules = functools.cache(
        lambda: resolve_rules(pins_spec.rules, project, where=project.key(pins_spec))
    )

    def contract(old: tuple[PinsFile, dict[str, bytes]]) -> tuple[object, object]:
        return replace_struct(old[0].header, warm=None), header

    def freeze(
        todo: list[str], found: tuple[PinsFile, dict[str, bytes]] | None, report: RecordReport
    ) -> dict[str, bytes]:
        nonlocal header
        assert header is not None  # made by present(), which record calls first
        old = found[0] if found is not None else None
        # Cases added to a file are proven warm with the file's own preload; --force proves anew.
        proven = old.header.warm if old is not None and pins_spec.warm else None
        anew = old is None or (mode is RecordMode.FORCE and only is None)
        frozen, warm = _freeze(
            project,
            pins_spec,
            [cases[case_id] for case_id in todo],
            header,
            rules(),
            report,
            None if anew else proven,
        )
        # A file whose kept pins were proven without a recorded preload keeps none: they run cold.
        header = replace_struct(header, warm=warm if anew else proven)
        return {case_id: encode(pin) for case_id, pin in frozen.items()}

    def write(
        found: tuple[PinsFile, dict[str, bytes]] | None,
        lines: dict[str, bytes],
        report: RecordReport,
    ) -> None:
        assert header is not None  # made by present(), which record calls first
        old = found[0] if found is not None else None
        if mode is not RecordMode.FORCE and old is not None:
            report.notes.extend(_stale_notes(project, pins_spec, old))
        changed = report.added or report.replaced or report.trimmed
        if old is None or old.header != header or changed:
            with AtomicLines(path) as out:
                out.write(encode(header))
                for line in lines.values():
                    out.write(line)

    hooks = RecordHooks(
        read=read,
        cases=lambda found: found[1],
        present=present,
        freeze=freeze,
        write=write,
        contract=contract,
        what="rules or environment base",
    )
    return record(pins_spec.name, path, project.root, mode, _MODE_WORDS, hooks, only=only)


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
        refusal = policy.refusal(spec.name, c.id, _secret_fields(pin))
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
