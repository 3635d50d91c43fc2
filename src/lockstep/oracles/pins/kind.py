"""The pins oracle: whole process runs — argv, env, stdin → exit code, stdout, stderr.

A billing export script's contract is its process boundary.  A ``[[pins]]``
oracle names the program (``command``), a cases file (see
:mod:`lockstep.oracles.pins.cases`), the environment keys that matter, rules and
a timeout; ``record`` freezes each case's run, ``replay`` re-runs every pin and
compares strictly.

File format: ``<dir>/<name>.pins.jsonl``
----------------------------------------
Line 1 is a header; every further line is one pin, sorted by id::

    {"env_base": {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0", "TZ": "UTC"},
     "env_inherit": ["PATH"], "format": "lockstep-pins",
     "rules": [{"builtin": true, "name": "uuid", "pattern": "...", "replace": "<UUID>", ...}],
     "version": 1}
    {"argv": ["python", "export.py", "--empty"], "cwd_rel": ".", "env": {"CURRENCY": "EUR"},
     "exit_code": 0, "id": "empty", "stderr": "", "stdin": "", "stdout": "id,total\\n"}

* The header records the *environment base* (fixed keys, and the keys whose
  value is inherited, only ``PATH``) and the *rules*, each in full, so a replay
  runs in exactly the environment and normalizes with exactly the rules the
  freeze used, and a change of either is a visible line in review.
* A pin has exactly the fields ``id, argv, env, stdin, exit_code, stdout,
  stderr, cwd_rel``; a missing or unknown field is an error naming ``FILE:LINE``.
  ``argv`` is the whole command as run (the oracle's ``command`` then the
  case's arguments); ``env`` holds only the case's keys (the base is in the
  header).
* ``stdout`` and ``stderr`` are stored *after* the rules.  Text that is valid
  UTF-8 is a JSON string; anything else is kept losslessly as the tagged form
  ``{"$bytes": "<base64>"}`` (the same tag the canonical codec uses for bytes).
  ``stdin`` uses the same form.

Record probes first: each case runs ``runs`` times (at least 2) and a case
whose normalized signature varies is refused, naming the case and the first
difference, and nothing is written.  For Python programs, record also runs
each case once under :mod:`lockstep.probe.envspy` and notes environment keys the
program read but ``env_keys`` does not declare.
"""

from __future__ import annotations

import base64
import binascii
import heapq
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import msgspec

from lockstep.config import OracleSpec, PinsSpec, Project
from lockstep.diff import document_diff
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
from lockstep.oracles.modes import ModeWords, check_record_mode
from lockstep.oracles.pins.cases import PinCase, cases_path, read_cases, resolve_cwd
from lockstep.oracles.status import file_status
from lockstep.probe.envspy import discover
from lockstep.probe.runs import ProbeReport, ProbeTarget, normalize, probe_many, run_parallel
from lockstep.process import ENV_BASE, ENV_INHERIT, RunResult, build_env, is_python, run
from lockstep.rules import RuleRecord, RuleSet, resolve_rules, rules_from_records
from lockstep.store import AtomicLines, display_path, iter_lines, sha256_hex

FORMAT: Final = "lockstep-pins"
VERSION: Final = 1
PARALLEL_BY_DEFAULT: Final = True
"""Replay runs one case per core unless told otherwise: each case is its own process."""
MIN_RUNS: Final = 2
_MODE_WORDS: Final = ModeWords(
    new_only="add new cases", force="re-record all", trim="drop vanished cases"
)


class NondeterministicCase(Rejected):
    """Recording refused: a case's normalized output varies from run to run (a finding, exit 1)."""


class CaseTimedOut(TargetError):
    """Recording refused: a case did not finish within the timeout (bad input, exit 2)."""


# ---------------------------------------------------------------- file format


class TaggedBytes(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Bytes that are not UTF-8 text, as ``{"$bytes": "<base64>"}``."""

    data: str = msgspec.field(name="$bytes")


Stream = str | TaggedBytes


def to_stream(data: bytes) -> Stream:
    """Text stays readable text; anything else is tagged, losslessly."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return TaggedBytes(base64.b64encode(data).decode("ascii"))


def from_stream(value: Stream) -> bytes:
    if isinstance(value, TaggedBytes):
        return base64.b64decode(value.data, validate=True)
    return value.encode("utf-8")


class Header(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Line 1 of a pins file: the environment base and the rules of the freeze."""

    format: Literal["lockstep-pins"]
    version: int
    env_base: dict[str, str]
    env_inherit: list[str]
    rules: list[RuleRecord]


class Pin(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """One frozen run; exactly the documented fields."""

    id: str
    argv: list[str]
    env: dict[str, str]
    stdin: Stream
    exit_code: int
    stdout: Stream
    stderr: Stream
    cwd_rel: str


_encoder = msgspec.json.Encoder(order="sorted")
_header_decoder = msgspec.json.Decoder(Header)
_pin_decoder = msgspec.json.Decoder(Pin)


def _reason(err: msgspec.MsgspecError) -> str:
    text = str(err)
    if isinstance(err, msgspec.ValidationError):
        return text.replace("Object contains unknown field", "unknown field").replace(
            "Object missing required field", "missing field"
        )
    return f"not valid JSON ({text})"


@dataclass(frozen=True)
class PinsFile:
    """A validated header and the path its pins stream from."""

    path: Path
    header: Header
    shown: str

    def rules(self) -> RuleSet:
        return rules_from_records(self.header.rules, where=f"{self.shown}:1")

    def offsets(self) -> dict[str, tuple[int, int]]:
        """Each pin's ``(line number, byte offset)``, after validating the whole file once."""
        found: dict[str, tuple[int, int]] = {}
        with self.path.open("rb") as fh:
            offset = 0
            for lineno, raw in enumerate(fh, start=1):
                line = raw.strip()
                if lineno > 1 and line:
                    pin_id = self._decode(lineno, line).id
                    if pin_id in found:
                        raise DataError(f"{self.shown}:{lineno}: duplicate pin id {pin_id!r}")
                    found[pin_id] = (lineno, offset)
                offset += len(raw)
        return found

    def pin_at(self, lineno: int, offset: int) -> Pin:
        with self.path.open("rb") as fh:
            fh.seek(offset)
            return self._decode(lineno, fh.readline().strip())

    def _decode(self, lineno: int, line: bytes) -> Pin:
        try:
            pin = _pin_decoder.decode(line)
        except msgspec.MsgspecError as e:
            raise DataError(f"{self.shown}:{lineno}: {_reason(e)}") from None
        for name in ("stdin", "stdout", "stderr"):
            value = getattr(pin, name)
            if isinstance(value, TaggedBytes):
                try:
                    base64.b64decode(value.data, validate=True)
                except (binascii.Error, ValueError):
                    raise DataError(
                        f"{self.shown}:{lineno}: {name}: $bytes is not valid base64"
                    ) from None
        return pin

    def pins(self) -> Iterator[Pin]:
        """Stream the pins (line 2 on), validating each; memory stays flat."""
        seen: set[str] = set()
        for lineno, line in iter_lines(self.path):
            if lineno == 1:
                continue
            pin = self._decode(lineno, line)
            if pin.id in seen:
                raise DataError(f"{self.shown}:{lineno}: duplicate pin id {pin.id!r}")
            seen.add(pin.id)
            yield pin


def open_pins(path: Path, root: Path | None = None, *, name: str = "") -> PinsFile:
    """Read and check the header of a pins file (the pins themselves stream later)."""
    shown = display_path(path, root)
    if name and not path.exists():
        raise UsageError(f"{shown}: not recorded yet; run 'lockstep record {name}' first")
    for lineno, line in iter_lines(path):
        try:
            header = _header_decoder.decode(line)
        except msgspec.MsgspecError as e:
            raise DataError(
                f"{shown}:{lineno}: not a pins header ({_reason(e)}); the first line of a "
                f"pins file must be its header"
            ) from None
        if header.version != VERSION:
            raise DataError(
                f"{shown}:{lineno}: pins file version {header.version} is not supported "
                f"(this lockstep reads version {VERSION})"
            )
        return PinsFile(path, header, shown)
    raise DataError(f"{shown}: empty pins file (no header line)")


def _encode(obj: Header | Pin) -> bytes:
    return _encoder.encode(obj)


# ---------------------------------------------------------------- helpers


def oracle_path(project: Project, spec: OracleSpec) -> Path:
    return project.oracle_dir / f"{spec.name}.pins.jsonl"


def _spec(spec: OracleSpec) -> PinsSpec:
    if not isinstance(spec, PinsSpec):
        raise TypeError(f"{spec.name} is a {spec.kind} oracle, not pins")
    return spec


def _where(project: Project, spec: PinsSpec) -> str:
    index = next(i for i, s in enumerate(project.config.pins) if s.name == spec.name)
    return f"pins[{index}]"


def _check_spec(project: Project, spec: PinsSpec) -> None:
    where = f"{project.config_name}: {_where(project, spec)}"
    if not spec.command:
        raise UsageError(f"{where}.command: give the program to run (an argv prefix)")
    if spec.timeout <= 0:
        raise UsageError(f"{where}.timeout: must be more than 0 seconds")


def _jobs() -> int:
    return max(1, os.cpu_count() or 1)


def rule_counts_text(fired: Mapping[str, int], names: Iterable[str]) -> str:
    """``rules fired: uuid×2, iso-timestamp×0`` — every rule listed, zero counts too."""
    parts = [f"{name}×{fired.get(name, 0)}" for name in names]
    return "rules fired: " + ", ".join(parts) if parts else ""


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
    old_ids = {p.id for p in old.pins()} if old is not None else set()
    cases = sorted(read_cases(project, pins_spec), key=lambda c: c.id)
    case_ids = {c.id for c in cases}

    if mode is RecordMode.TRIM:
        assert old is not None
        report.trimmed = sorted(old_ids - case_ids)
        report.unchanged = sorted(old_ids & case_ids)
        if report.trimmed:
            with AtomicLines(path) as out:
                out.write(_encode(old.header))
                for pin in old.pins():
                    if pin.id in case_ids:
                        out.write(_encode(pin))
        return report

    if mode is RecordMode.NEW_ONLY:
        assert old is not None
        header = old.header
        rules = old.rules()
        wanted = [c for c in cases if c.id not in old_ids]
        configured = [r.name for r in header.rules]
        if configured != list(pins_spec.rules):
            report.notes.append(
                "new cases use the rules recorded in the file "
                f"({', '.join(configured) or 'none'}), "
                "not the configured ones; re-record with --force to change rules"
            )
    else:
        where = f"{_where(project, pins_spec)}"
        rules = resolve_rules(pins_spec.rules, project, where=where)
        header = Header(
            format=FORMAT,
            version=VERSION,
            env_base=dict(ENV_BASE),
            env_inherit=list(ENV_INHERIT),
            rules=rules.records(),
        )
        wanted = cases

    runs = max(MIN_RUNS, pins_spec.runs)
    jobs = _jobs()
    targets = [
        case_target(project, pins_spec, c, env_base=header.env_base, env_inherit=header.env_inherit)
        for c in wanted
    ]
    reports = probe_many(targets, runs=runs, jobs=jobs, rules=rules)
    hung = [r for r in reports if r.timed_out]
    if hung:
        raise _timed_out(pins_spec, hung)
    varying = [r for r in reports if not r.deterministic]
    if varying:
        raise _varies(pins_spec, varying, runs)

    fresh = {
        c.id: _pin(c, t, normalize(r.raw[0].example, rules.fresh()))
        for c, t, r in zip(wanted, targets, reports, strict=True)
    }
    total: Counter[str] = Counter()
    for r in reports:
        total.update(r.fired)
    report.notes.extend(_discover_notes(pins_spec, targets, jobs))

    old_pins: Iterable[Pin] = old.pins() if old is not None else ()
    old_by_id: dict[str, bytes] = {}
    with AtomicLines(path) as out:
        out.write(_encode(header))
        if mode is RecordMode.NEW_ONLY:
            merged = heapq.merge(old_pins, fresh.values(), key=lambda p: p.id)
            for pin in merged:
                out.write(_encode(pin))
            report.added = sorted(fresh)
            report.unchanged = sorted(old_ids)
        else:
            for pin in old_pins:
                old_by_id[pin.id] = _encode(pin)
            for case_id, pin in fresh.items():
                line = _encode(pin)
                out.write(line)
                if case_id not in old_by_id:
                    report.added.append(case_id)
                elif old_by_id[case_id] != line:
                    report.replaced.append(case_id)
                else:
                    report.unchanged.append(case_id)
            report.trimmed = sorted(set(old_by_id) - set(fresh))
    if rules.rules:
        report.notes.append(
            f"{rule_counts_text(total, rules.names)} (over {runs} runs of "
            f"{len(wanted)} case{'' if len(wanted) == 1 else 's'})"
        )
    return report


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


def case_runner(project: Project, spec: OracleSpec) -> Callable[[str], Outcome]:
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
