"""The mutation run: plan which cases can judge each mutant, evaluate, report honestly.

Speed comes from not doing work, not from doing it faster:

* a mutant is judged only by the cases whose coverage reaches its lines
  (:mod:`.coverage`), and the first case that sees a difference ends it;
* a mutant no case reaches is not run at all: it survives, and the report says
  which line a new case must reach;
* in-process oracles (ledger, corpus, tape) evaluate mutants in warm worker
  processes forked after the target is imported: each mutant is switched on in
  place (:mod:`.switch`), never by starting an interpreter or re-importing;
* programs (pins) run the reaching cases in parallel against a copy of the
  project with the mutant written in;
* verdicts are cached (:mod:`.cache`), so a second run evaluates only what changed.

A worker that does not answer within the mutant's timeout (derived from the
baseline replay) is killed and replaced, and the mutant counts as a timeout.
``budget`` stops dispatching when the time is up; what was not evaluated is
reported as not run, and the score counts only what was judged.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import multiprocessing
import multiprocessing.connection
import os
import re
import tempfile
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

import msgspec

from lockstep.config import OracleSpec, Project
from lockstep.model import Outcome, Shard, Status
from lockstep.oracles import CaseInput, CaseRunner, StrengthScope, kind_of
from lockstep.parallel import run_parallel
from lockstep.safe_paths import copy_inside
from lockstep.strength.cache import CachedVerdict, VerdictCache, digest, file_digest
from lockstep.strength.coverage import AT_IMPORT, CaseCoverage, headers, split_ref
from lockstep.strength.dataflow import ModuleFlow, flows
from lockstep.strength.mutants import MutableFile, Mutant
from lockstep.strength.switch import CannotSwitch, MutantBroke, Switchboard
from lockstep.targets import root_on_path

TIMEOUT_FLOOR: Final = 2.0
"""Seconds every mutant may take, however fast the baseline was (a loaded machine stalls)."""
TIMEOUT_FACTOR: Final = 10.0
"""A mutant may take this many times the baseline replay of all its oracles' cases."""


class Verdict(StrEnum):
    KILLED = "killed"
    """A case that reaches the mutant replayed red: the gate catches this bug."""
    SURVIVED = "survived"
    """Every case that reaches it replayed green, or no case reaches it."""
    TIMEOUT = "timeout"
    """The replay did not finish in time (a loop): caught, as a hung gate fails."""
    ERROR = "error"
    """The mutant could not be installed; no verdict."""
    NOT_RUN = "not run"
    """The budget ran out first."""


@dataclass(frozen=True)
class MutantResult:
    mutant: Mutant
    verdict: Verdict
    reached_by: tuple[str, ...]
    """Cases that run the mutated code: those whose coverage reaches its lines, or every case
    for module-level code and functions run at import (empty: no case reaches it)."""
    killed_by: str = ""
    note: str = ""
    cached: bool = False


@dataclass(frozen=True)
class MutationOptions:
    jobs: int = 1
    shard: Shard | None = None
    budget: float | None = None
    """Seconds; None runs every mutant."""
    cache: bool = True


@dataclass
class MutationRun:
    results: list[MutantResult]
    seconds: float
    evaluated: int
    """Mutants actually run this time (not cached, not unreached)."""
    budget_hit: bool = False
    notes: list[str] = field(default_factory=list)

    def count(self, verdict: Verdict) -> int:
        return sum(1 for r in self.results if r.verdict is verdict)

    @property
    def judged(self) -> int:
        return sum(
            1
            for r in self.results
            if r.verdict in (Verdict.KILLED, Verdict.SURVIVED, Verdict.TIMEOUT)
        )

    @property
    def score(self) -> float:
        caught = self.count(Verdict.KILLED) + self.count(Verdict.TIMEOUT)
        return caught / self.judged if self.judged else 1.0

    def survivors(self) -> list[MutantResult]:
        return [r for r in self.results if r.verdict is Verdict.SURVIVED]


@dataclass(frozen=True)
class _Task:
    slot: int
    mutant: Mutant
    cases: tuple[str, ...]
    rerun: tuple[int, ...] | None
    timeout: float
    key: str
    lead: int = 0
    """How many of ``cases`` come first because their input matches the mutant's strings."""


def program_files(scope_of: Mapping[str, StrengthScope]) -> frozenset[Path]:
    """Files some program runs: their ``if __name__ == "__main__":`` blocks get mutants too."""
    return frozenset(f for s in scope_of.values() if not s.in_process for f in s.files)


class LiteralMatches:
    """Which cases' inputs a string constant matches (as a regular expression, or as text)."""

    def __init__(self, inputs: Mapping[str, CaseInput]) -> None:
        self.inputs = inputs
        self.cache: dict[str, frozenset[str]] = {}
        # Every input's strings in one text, one line each, so a literal costs one scan in C
        # (a Python loop over 700 inputs per literal was a third of the planning).  This only
        # orders cases, so a pattern that matches across two strings, or anchors at a newline
        # inside one, costs nothing but a worse order.
        self.refs: list[str] = []
        self.starts: list[int] = []
        parts: list[str] = []
        at = 0
        for ref, given in inputs.items():
            if not given.strings:
                continue
            text = "\n".join(given.strings) + "\n"
            self.refs.append(ref)
            self.starts.append(at)
            parts.append(text)
            at += len(text)
        self.text = "".join(parts)

    def _owner(self, at: int) -> int:
        return bisect.bisect_right(self.starts, at) - 1

    def cases(self, literal: str) -> frozenset[str]:
        found = self.cache.get(literal)
        if found is not None:
            return found
        try:
            pattern: re.Pattern[str] | None = re.compile(literal, re.MULTILINE)
        except (re.error, RecursionError, OverflowError):
            pattern = None
        hits: set[int] = set()
        for search in (
            (lambda at: self.text.find(literal, at)),
            None
            if pattern is None
            else (lambda at: -1 if (m := pattern.search(self.text, at)) is None else m.start()),
        ):
            if search is None:
                continue
            at = 0
            while at < len(self.text) and (at := search(at)) >= 0:
                owner = self._owner(at)
                hits.add(owner)
                at = self.starts[owner + 1] if owner + 1 < len(self.starts) else len(self.text)
        found = self.cache[literal] = frozenset(self.refs[i] for i in hits)
        return found

    def first(self, mutant: Mutant, cases: Sequence[str]) -> tuple[tuple[str, ...], int]:
        """``cases`` with those whose input matches the mutated line's strings first, and
        how many those are."""
        wanted = [lit for lit in mutant.literals if len(lit) > 1]
        if not wanted or len(cases) < 2:
            return tuple(cases), 0
        hits = frozenset().union(*(self.cases(lit) for lit in wanted))
        first = [ref for ref in cases if ref in hits]
        return (*first, *(ref for ref in cases if ref not in hits)), len(first)


class KillersFirst:
    """Cases that caught an earlier mutant of the same function are tried early.

    Mutants of one function tend to be caught by the same few cases: of the 107
    mutants of inflection's ``_irregular`` (the function its import calls to fill
    the rule tables), each reached by ~550 cases in id order, the killer came on
    average 245 cases in.  Each worker keeps, per function, the last few cases
    that killed one, and tries them right after the cases whose input matches the
    mutated line's strings.  Only the order changes: a mutant is killed exactly
    when some reaching case is red, so the verdict is the same; which killer is
    named may differ between runs with more than one worker.
    """

    KEEP: Final = 8

    def __init__(self) -> None:
        self.recent: dict[tuple[Path, str], list[str]] = {}

    def order(self, mutant: Mutant, cases: tuple[str, ...], lead: int) -> tuple[str, ...]:
        recent = self.recent.get((mutant.file, mutant.scope))
        if not recent or len(cases) - lead < 2:
            return cases
        rest = set(cases[lead:])
        early = [ref for ref in recent if ref in rest]
        if not early:
            return cases
        moved = set(early)
        return (*cases[:lead], *early, *(ref for ref in cases[lead:] if ref not in moved))

    def killed(self, mutant: Mutant, ref: str) -> None:
        recent = self.recent.setdefault((mutant.file, mutant.scope), [])
        if ref in recent:
            recent.remove(ref)
        recent.insert(0, ref)
        del recent[self.KEEP :]


@functools.lru_cache(maxsize=1 << 16)
def _oracle_of(ref: str) -> str:
    return split_ref(ref)[0]


def _plan(
    mutant: Mutant,
    coverage: CaseCoverage,
    flow: ModuleFlow,
    judges: set[str],
    usable: Sequence[str],
) -> tuple[tuple[str, ...], tuple[int, ...] | None]:
    """The cases that can see ``mutant`` (those reaching it first), and the module-level
    statements to run again for it (module-level code, or a function the import calls).

    Code that runs at import is judged by the cases reaching a function that reads
    what it defines (:mod:`.dataflow`), or by every case when no function does.
    """
    fc = coverage.files[mutant.file]
    failing = set(coverage.failing)
    reached = tuple(c for c in fc.cases_reaching(mutant.lines) if c not in failing)
    at_import = any(line in fc.at_import for line in mutant.lines)
    if not at_import:
        return reached, None  # module-level code no case reaches: nothing will run it
    also = set() if mutant.module_level else {*flow.function_names(mutant.line), mutant.scope}
    readers = flow.readers(flow.affected(mutant.line, also))
    pool = usable if readers is None else readers
    seen = set(reached) | failing
    rest = [c for c in pool if c not in seen and _oracle_of(c) in judges]
    return (*reached, *rest), flow.rerun(mutant.line, also)


@dataclass
class _Planned:
    mutant: Mutant
    cases: tuple[str, ...]
    key: str
    in_proc: _Task | None = None
    program: _Task | None = None


def run_mutants(
    project: Project,
    specs: Sequence[OracleSpec],
    coverage: CaseCoverage,
    scope_of: Mapping[str, StrengthScope],
    options: MutationOptions,
    inputs: Mapping[str, CaseInput] | None = None,
    *,
    guarded: frozenset[Path] | None = None,
) -> MutationRun:
    """Generate, plan and evaluate the mutants of what ``specs`` reach.

    ``guarded``: the files whose ``if __name__ == "__main__":`` block runs (programs'
    own files; by default every file a program's cases reach)."""
    started = time.monotonic()
    deadline = None if options.budget is None else started + options.budget
    cache = VerdictCache(project.root, enabled=options.cache)
    guarded = program_files(scope_of) if guarded is None else guarded
    files = {path: MutableFile(path, main_guard=path in guarded) for path in coverage.files}
    mutants = [m for mf in files.values() for m in mf.mutants()]
    # the code the oracles reach: module-level code and the functions some case enters; a
    # function's defaults and decorators count as its own (they matter only when it is called)
    owner = {m: _owner(m) for m in mutants}
    entered = {m: not owner[m] or coverage.files[m.file].enters(owner[m]) for m in mutants}
    skipped = sorted({f"{_rel(project, m.file)}:{owner[m]}" for m in mutants if not entered[m]})
    mutants = [m for m in mutants if entered[m]]
    if options.shard is not None:
        shard = options.shard
        mutants = [m for m in mutants if shard.holds(f"{_rel(project, m.file)}|{m.key}")]
    oracle_digest = {
        s.name: file_digest(kind_of(s).oracle_path(project, s)) + msgspec.json.encode(s).decode()
        for s in specs
    }
    failing = set(coverage.failing)
    usable = [c for c in coverage.cases if c not in failing]
    flow = flows(coverage.files)
    in_process = {c: coverage.in_process.get(split_ref(c)[0], True) for c in coverage.cases}
    matches = LiteralMatches(inputs or {})
    results: list[MutantResult | None] = [None] * len(mutants)
    planned: dict[int, _Planned] = {}
    for slot, mutant in enumerate(mutants):
        judges = {s.name for s in specs if mutant.file in scope_of[s.name].files}
        cases, rerun = _plan(mutant, coverage, flow[mutant.file], judges, usable)
        cases, lead = matches.first(mutant, cases)
        if not cases:
            note = f"no case reaches line {mutant.line}"
            results[slot] = MutantResult(mutant, Verdict.SURVIVED, (), note=note)
            continue
        key = digest(
            [
                _rel(project, mutant.file),
                files[mutant.file].scope_source(mutant),
                mutant.key,
                repr(rerun),
                *sorted(oracle_digest[name] for name in judges),
            ]
        )
        hit = cache.get(key)
        if hit is not None:
            verdict = Verdict(hit.verdict)
            results[slot] = MutantResult(mutant, verdict, cases, hit.killed_by, hit.note, True)
            continue
        plan = planned[slot] = _Planned(mutant, cases, key)
        in_cases = tuple(c for c in cases if in_process[c])
        out_cases = (
            () if len(in_cases) == len(cases) else tuple(c for c in cases if c not in set(in_cases))
        )
        baseline = sum(coverage.seconds.get(name, 0.0) for name in judges)
        timeout = TIMEOUT_FLOOR + TIMEOUT_FACTOR * baseline
        if in_cases:
            in_lead = sum(1 for c in cases[:lead] if in_process[c])
            plan.in_proc = _Task(slot, mutant, in_cases, rerun, timeout, key, in_lead)
        if out_cases:
            plan.program = _Task(slot, mutant, out_cases, rerun, timeout, key)
    done = _evaluate(project, specs, scope_of, planned, guarded, options, deadline)
    for slot, plan in planned.items():
        verdict, by, note = done.get(slot, (Verdict.NOT_RUN, "", ""))
        results[slot] = MutantResult(plan.mutant, verdict, plan.cases, by, note)
        if verdict is not Verdict.NOT_RUN:
            cache.put(plan.key, CachedVerdict(verdict.value, by, note))
    cache.save()
    notes = list(cache.notes)
    if skipped:
        shown = ", ".join(skipped[:8]) + (", …" if len(skipped) > 8 else "")
        notes.append(
            f"no case enters {len(skipped)} function(s), so they get no mutants: {shown} "
            "(record calls that reach them to have them judged)"
        )
    return MutationRun(
        results=[r for r in results if r is not None],
        seconds=time.monotonic() - started,
        evaluated=sum(
            1 for slot in planned if done.get(slot, (Verdict.NOT_RUN,))[0] is not Verdict.NOT_RUN
        ),
        budget_hit=any(r is not None and r.verdict is Verdict.NOT_RUN for r in results),
        notes=notes,
    )


def _evaluate(
    project: Project,
    specs: Sequence[OracleSpec],
    scope_of: Mapping[str, StrengthScope],
    planned: Mapping[int, _Planned],
    guarded: frozenset[Path],
    options: MutationOptions,
    deadline: float | None,
) -> dict[int, tuple[Verdict, str, str]]:
    """In-process cases first (cheap); the program cases only of mutants they did not catch."""
    done: dict[int, tuple[Verdict, str, str]] = {}
    in_tasks = [p.in_proc for p in planned.values() if p.in_proc is not None]
    if in_tasks:
        in_specs = [s for s in specs if scope_of[s.name].in_process]
        in_files = {f: f in guarded for f in sorted({t.mutant.file for t in in_tasks})}
        done.update(_evaluate_in_process(project, in_specs, in_files, in_tasks, options, deadline))
    caught = (Verdict.KILLED, Verdict.TIMEOUT)
    out_tasks = [
        p.program
        for slot, p in planned.items()
        if p.program is not None and done.get(slot, (Verdict.SURVIVED,))[0] not in caught
    ]
    if out_tasks:
        out_specs = [s for s in specs if not scope_of[s.name].in_process]
        judged = _evaluate_programs(project, out_specs, out_tasks, options, deadline)
        for task in out_tasks:  # a mutant half judged when the budget ran out is not run
            done[task.slot] = judged.get(task.slot, (Verdict.NOT_RUN, "", ""))
    return done


def _owner(mutant: Mutant) -> str:
    """The function a mutant belongs to: its scope, or for module-level code in a function's
    header (a decorator, a default value) that function; ``""`` otherwise."""
    if mutant.scope:
        return mutant.scope
    for first, last, name in headers(mutant.file):
        if first <= mutant.line <= last:
            return name
    return ""


def _rel(project: Project, path: Path) -> str:
    return _relative(project.root, path)


@functools.cache
def _relative(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


# ---------------------------------------------------------------------- judging


def _why(outcome: Outcome) -> str:
    if outcome.drifts:
        drift = outcome.drifts[0]
        return f"{drift.aspect}: {drift.expected[:60]!s} → {drift.actual[:60]!s}"
    return outcome.note[:120] or outcome.status.value


def judge(
    board: Switchboard,
    runners: Mapping[str, CaseRunner],
    mutant: Mutant,
    cases: Sequence[str],
    rerun: tuple[int, ...] | None,
) -> tuple[Verdict, str, str]:
    """Switch ``mutant`` on, replay ``cases`` until one is red, switch it off."""
    try:
        with board.active(mutant, rerun=rerun):
            for ref in cases:
                oracle, case_id = split_ref(ref)
                try:
                    outcome = runners[oracle](case_id)
                except KeyboardInterrupt:
                    raise
                except BaseException as e:  # the mutant made the replay itself fail
                    return Verdict.KILLED, ref, f"replay raised {type(e).__name__}"
                if outcome.status is not Status.PASS:
                    return Verdict.KILLED, ref, _why(outcome)
    except MutantBroke as e:
        return Verdict.KILLED, AT_IMPORT, str(e)
    except CannotSwitch as e:
        return Verdict.ERROR, "", str(e)
    return Verdict.SURVIVED, "", ""


# ---------------------------------------------------------------------- in process


def _roomy_regex_cache() -> None:
    """Give ``re``'s pattern cache room for every mutant's patterns (this worker only).

    Each mutated pattern string is a new cache entry; Python 3.11's cache evicts
    the oldest entry when full, which then misses and evicts the next, so one new
    pattern recompiles the whole working set of a rule table (about 20 ms per
    mutant on a library of regular-expression rules).
    """
    if isinstance(getattr(re, "_MAXCACHE", None), int):
        re._MAXCACHE = 1 << 20  # type: ignore[attr-defined]


def _silence() -> None:
    """A worker's mutants may print or log: keep it off the user's terminal."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)


def _worker(
    conn: multiprocessing.connection.Connection,
    project: Project,
    specs: Sequence[OracleSpec],
    files: Mapping[Path, bool],
) -> None:
    _silence()
    _roomy_regex_cache()
    with root_on_path(project.root):
        runners = {spec.name: kind_of(spec).case_runner(project, spec) for spec in specs}
        board = Switchboard(files)
        killers = KillersFirst()
        while True:
            task = conn.recv()
            if task is None:
                return
            slot, mutant, cases, rerun, lead = task
            found = judge(board, runners, mutant, killers.order(mutant, cases, lead), rerun)
            if found[0] is Verdict.KILLED and found[1] != AT_IMPORT:
                killers.killed(mutant, found[1])
            conn.send((slot, *found))


def _context() -> Any:
    """Fork where it exists: a worker starts with the target already imported (warm)."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


@dataclass
class _Worker:
    process: Any
    conn: multiprocessing.connection.Connection
    task: _Task | None = None
    since: float = 0.0


class _Pool:
    """Warm workers, one mutant each at a time; a worker past its mutant's timeout is replaced."""

    def __init__(
        self, project: Project, specs: Sequence[OracleSpec], files: Mapping[Path, bool], jobs: int
    ) -> None:
        self.ctx = _context()
        self.args = (project, specs, files)
        self.workers = [self._start() for _ in range(max(1, jobs))]
        self.done: dict[int, tuple[Verdict, str, str]] = {}

    def _start(self) -> _Worker:
        parent, child = self.ctx.Pipe()
        process = self.ctx.Process(target=_worker, args=(child, *self.args), daemon=True)
        process.start()
        child.close()
        return _Worker(process, parent)

    def dispatch(self, pending: deque[_Task], now: float) -> None:
        for w in self.workers:
            if w.task is None and pending:
                w.task = t = pending.popleft()
                w.since = now
                w.conn.send((t.slot, t.mutant, t.cases, t.rerun, t.lead))

    def busy(self) -> list[_Worker]:
        return [w for w in self.workers if w.task is not None]

    def collect(self, deadline: float | None) -> None:
        """Wait for the first answer or timeout; record verdicts, replace hung workers."""
        now = time.monotonic()
        busy = self.busy()
        wait = min(w.since + w.task.timeout for w in busy if w.task) - now
        if deadline is not None:
            wait = min(wait, deadline - now)
        ready = multiprocessing.connection.wait([w.conn for w in busy], max(0.0, wait))
        for i, w in enumerate(self.workers):
            if w.task is not None and self._settle(w, w.conn in ready, deadline):
                _stop(w)
                self.workers[i] = self._start()

    def _settle(self, w: _Worker, ready: bool, deadline: float | None) -> bool:
        """Record ``w``'s verdict if it has one; whether ``w`` must be replaced."""
        assert w.task is not None
        now = time.monotonic()
        if ready:
            try:
                slot, verdict, by, note = w.conn.recv()
            except (EOFError, OSError):
                self.done[w.task.slot] = (Verdict.ERROR, "", "the worker died")
                return True
            self.done[slot] = (verdict, by, note)
            w.task = None
            return False
        if now >= w.since + w.task.timeout:
            self.done[w.task.slot] = (
                Verdict.TIMEOUT,
                "",
                f"no verdict within {w.task.timeout:.1f}s",
            )
            return True
        if deadline is not None and now >= deadline:
            w.task = None  # out of budget: not run
            return True
        return False

    def close(self) -> None:
        for w in self.workers:
            with contextlib.suppress(OSError):
                w.conn.send(None)
        for w in self.workers:
            w.process.join(1.0)
            if w.process.is_alive():
                _stop(w)


def _evaluate_in_process(
    project: Project,
    specs: Sequence[OracleSpec],
    files: Mapping[Path, bool],
    tasks: list[_Task],
    options: MutationOptions,
    deadline: float | None,
) -> dict[int, tuple[Verdict, str, str]]:
    pending = deque(tasks)
    pool = _Pool(project, specs, files, min(options.jobs, len(tasks)))
    try:
        while True:
            if deadline is None or time.monotonic() < deadline:
                pool.dispatch(pending, time.monotonic())
            if not pool.busy():
                break
            pool.collect(deadline)
    finally:
        pool.close()
    return pool.done


def _stop(worker: _Worker) -> None:
    worker.process.kill()
    worker.process.join()
    worker.conn.close()


# ---------------------------------------------------------------------- programs

_NOT_COPIED: Final = (
    ".git",
    ".hg",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    "__pycache__",
    ".lockstep-cache",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
)


def _evaluate_programs(
    project: Project,
    specs: Sequence[OracleSpec],
    tasks: list[_Task],
    options: MutationOptions,
    deadline: float | None,
) -> dict[int, tuple[Verdict, str, str]]:
    """Write each mutant into a private copy of the project and run its reaching cases there."""
    done: dict[int, tuple[Verdict, str, str]] = {}
    root = project.root.resolve()
    with tempfile.TemporaryDirectory(prefix="lockstep-mutants-") as tmp:
        copy_root = Path(tmp) / root.name
        # links that leave the project are left out, links inside stay links: the copy
        # never reaches outside the project and never loops (leak -> /, loop -> .)
        copy_inside(root, copy_root, ignore=_NOT_COPIED)
        copy = msgspec.structs.replace(
            project, root=copy_root, config_path=copy_root / project.config_path.name
        )
        runners = {s.name: kind_of(s).case_runner(copy, s) for s in specs}
        tick = int(time.time()) + 10
        parsed: dict[Path, MutableFile] = {}
        for task in tasks:
            if deadline is not None and time.monotonic() >= deadline:
                break
            mf = parsed.get(task.mutant.file) or MutableFile(task.mutant.file, main_guard=True)
            parsed[task.mutant.file] = mf
            target = copy_root / task.mutant.file.relative_to(root)
            original = target.read_bytes()
            tick += 2  # a new mtime each time, so no stale bytecode is ever used
            target.write_text(mf.spliced(task.mutant), encoding="utf-8")
            os.utime(target, (tick, tick))
            try:
                done[task.slot] = _judge_program(runners, task.cases, options.jobs)
            finally:
                target.write_bytes(original)
                os.utime(target, (tick + 1, tick + 1))
    return done


def _judge_program(
    runners: Mapping[str, CaseRunner], cases: Sequence[str], jobs: int
) -> tuple[Verdict, str, str]:
    def task(ref: str) -> tuple[str, Outcome]:
        oracle, case_id = split_ref(ref)
        return ref, runners[oracle](case_id)

    for ref, outcome in run_parallel(
        (lambda r=r: task(r) for r in cases),  # type: ignore[misc]
        jobs=max(1, jobs),
    ):
        if outcome.status is not Status.PASS:
            return Verdict.KILLED, ref, _why(outcome)
    return Verdict.SURVIVED, "", ""
