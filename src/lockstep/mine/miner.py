"""``lockstep mine``: grow a recorded oracle with generated inputs until it saturates.

Recorded calls encode what callers happened to do; the branches no caller reached
are where a refactor slips through unseen.  Mining draws inputs shaped like the
recorded ones (:mod:`.strategies`, seeded with the source's constants), runs each
under the arc collector (:mod:`.coverage`: every project file the call runs, not only
the target's), and keeps an input when it

* takes an arc of the project's code no kept input took, or
* gives an outcome class (result type and shape, exception type) not seen yet, or
* kills a mutant that neither the recorded inputs nor a kept input kill
  (:mod:`.mutants`: ``strength``'s mutants, switched on in place): a value-level
  difference on a path already taken, which no new arc shows, or
* takes a path already kept but gives a result not seen on it yet (at most
  :data:`PER_PATH` per path: ``"0%"`` and ``"5%"`` take one path, and only the
  second one shows that ``/ 100`` became ``/ 1000``).

Every source constant in every slot of its type is tried first, and the literals the
target itself uses (in its body, or in the module-level assignment of a name it
reads) are each kept: a set of sentinel words gives one path for all of them, yet
each member is its own behaviour.
Rounds of :data:`ROUND` draws follow until the budget is spent or
:data:`SATURATED` rounds in a row add no arc, no outcome class and kill no mutant
(the survivors stopped falling); the kept inputs then go through the kind's record
path (fresh-interpreter verification, dedup by input), like any other recorded call.
Inputs whose outcome could not be frozen cannot be kept, nor inputs the code did not
return from in time (:func:`generated_limit`; stopped there: a generated ``0`` that a
``while n != 1`` loops on hung mining for good): the report counts them by reason, with
an example.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from lockstep.errors import UsageError
from lockstep.mine import require_hypothesis
from lockstep.mine.constants import Constants, harvest_files, harvest_near
from lockstep.mine.coverage import Arc, ArcCollector, executable_lines, lines_of
from lockstep.mine.limits import TooSlow, time_limit
from lockstep.mine.mutants import MutantPool, MutantTally, each_file, entered_lines
from lockstep.mine.search import draw_each
from lockstep.model import RecordReport
from lockstep.oracles.mining import Call, MiningSubject, Ran
from lockstep.strength.coverage import project_file

ROUND: Final = 100
"""Draws per round: the unit of the saturation curve."""
SATURATED: Final = 3
"""Rounds in a row adding no arc, no outcome class and killing no mutant that end mining."""

PER_PATH: Final = 3
"""Most kept inputs per (path, outcome class), each with a result not kept on that path."""


@dataclass(frozen=True)
class Coverage:
    """Lines of the target's body hit, of its executable lines, and arcs taken in its files."""

    lines_hit: int
    lines_total: int
    arcs: int
    outcome_classes: int

    def text(self) -> str:
        return (
            f"{self.lines_hit}/{self.lines_total} lines, {self.arcs} arcs, "
            f"{self.outcome_classes} outcome class(es)"
        )


@dataclass(frozen=True)
class RoundPoint:
    """One point of the saturation curve."""

    round: int
    seconds: float
    tried: int
    arcs: int
    outcome_classes: int
    kept: int


@dataclass(frozen=True)
class Unkept:
    """Inputs that could not be kept for one reason (their outcome cannot be frozen)."""

    reason: str
    count: int
    example: str


@dataclass(frozen=True)
class MineReport:
    """What one ``lockstep mine`` did: a plain data object (for the terminal and the HTML report)."""

    oracle: str
    seed: int
    constants: int
    before: Coverage
    after: Coverage
    tried: int
    kept: int
    curve: tuple[RoundPoint, ...]
    stopped: str
    """``saturated after N rounds`` or ``budget of S s spent``."""
    record: RecordReport | None
    """The record path's report on the kept inputs (None when none were kept)."""
    unit: str = "row"
    """What one added case is called: ``row``, ``fixture``."""
    mutants: MutantTally | None = None
    """What the mutants said: killed by the recorded inputs, by the mined ones, surviving."""
    unkept: tuple[Unkept, ...] = ()
    """Generated inputs that could not be kept, by reason (most first)."""

    @property
    def added(self) -> int:
        return len(self.record.added) if self.record else 0


def _shown(call: Call) -> str:
    parts = [repr(a) for a in call.args] + [f"{k}={v!r}" for k, v in call.kwargs.items()]
    text = ", ".join(parts)
    return f"({text})" if len(text) <= 80 else f"({text[:79]}…)"


@dataclass
class _State:
    collector: ArcCollector
    subject: MiningSubject
    pool: MutantPool | None = None
    arcs: set[Arc] = field(default_factory=set)
    classes: set[str] = field(default_factory=set)
    per_path: dict[tuple[frozenset[Arc], str], set[bytes]] = field(default_factory=dict)
    kept: list[Call] = field(default_factory=list)
    tried: int = 0
    kills: int = 0
    unkept: dict[str, list[Any]] = field(default_factory=dict)
    """Reason -> [count, an example input]."""
    limit: float | None = None
    """Seconds a generated input may run (:func:`generated_limit`); None while the recorded
    inputs run (they get the oracle's whole ``timeout``)."""
    slowest: float = 0.0
    """The longest an input that returned took, in seconds."""

    def run(self, call: Call) -> tuple[Ran, frozenset[Arc]] | None:
        """What ``call`` gave and the arcs it ran; None (counted in :attr:`unkept`) when no
        row could hold it, or when it ran past the oracle's timeout: a generated input the
        code loops on would otherwise stop mining there for good (the time limit is only
        looked at between inputs)."""
        self.tried += 1
        limit = self.limit if self.limit is not None else self.subject.timeout
        started = time.monotonic()
        try:
            with time_limit(limit):
                ran = self.collector.run(lambda: self.subject.run(call))
        except TooSlow:
            reason = f"did not return within {limit:g} s"
        except Exception as e:  # an input or outcome the kind cannot freeze: no row could hold it
            reason = f"{type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}"
        else:
            self.slowest = max(self.slowest, time.monotonic() - started)
            return ran
        entry = self.unkept.setdefault(reason.rstrip(": "), [0, _shown(call)])
        entry[0] += 1
        return None

    def learn(self, call: Call, *, always: bool = False) -> bool:
        """Run ``call``; keep it when it adds an arc, a class, kills a surviving mutant or
        gives a result not seen on its path."""
        ran = self.run(call)
        if ran is None:
            return False
        outcome, arcs = ran
        new_arcs, new_class, new_result = self.absorb(outcome, arcs)
        killed = 0
        if self.pool is not None and self.pool.alive:
            killed = self.pool.kills(self.subject, call, outcome.result_key, arcs)
            self.kills += killed
        if always or new_arcs or new_class or new_result or killed:
            self.kept.append(call)
        return new_arcs or new_class or bool(killed)

    def absorb(self, outcome: Ran, arcs: frozenset[Arc]) -> tuple[bool, bool, bool]:
        """Note what a run took; whether it was a new arc, a new class, a new result."""
        new_arcs = not arcs <= self.arcs
        new_class = outcome.outcome_class not in self.classes
        results = self.per_path.setdefault((arcs, outcome.outcome_class), set())
        new_result = len(results) < PER_PATH and outcome.result_key not in results
        self.arcs |= arcs
        self.classes.add(outcome.outcome_class)
        results.add(outcome.result_key)
        return new_arcs, new_class, new_result

    def coverage(self, arcs: set[Arc], body: set[tuple[str, int]]) -> Coverage:
        hit = len(lines_of(arcs) & body)
        return Coverage(hit, len(body), len(arcs), len(self.classes))

    def unkept_report(self) -> tuple[Unkept, ...]:
        ranked = sorted(self.unkept.items(), key=lambda kv: (-kv[1][0], kv[0]))
        return tuple(Unkept(reason, n, example) for reason, (n, example) in ranked)


GENERATED_FLOOR: Final = 1.0
GENERATED_TIMES: Final = 20
"""A generated input may run :data:`GENERATED_TIMES` times as long as the slowest recorded
one, and at least :data:`GENERATED_FLOOR` seconds (:func:`generated_limit`)."""


def generated_limit(timeout: float, slowest_recorded: float) -> float:
    """Seconds one generated input may run: 20 times the slowest recorded input, at least a
    second, at most the oracle's ``timeout``.  The recorded inputs show how long a call of
    this code takes; one that takes twenty times longer is one the code loops on (a
    generated ``0`` for ``while n != 1``), and waiting the whole ``timeout`` for each such
    input would spend a minute's budget on two of them."""
    return min(timeout, max(GENERATED_FLOOR, GENERATED_TIMES * slowest_recorded))


def mine(
    subject: MiningSubject,
    name: str,
    *,
    budget: float,
    seed: int,
    clock: Callable[[], float] = time.monotonic,
    extra_sources: Constants | None = None,
    root: Path | None = None,
    mutants: bool = True,
) -> MineReport:
    """Grow ``subject``'s oracle for at most ``budget`` seconds (see the module docstring).

    ``root``: the project's root, so coverage counts every project file a call runs;
    ``mutants``: keep inputs that kill a surviving mutant (needs ``root``)."""
    require_hypothesis("lockstep mine")
    from lockstep.mine.strategies import constant_calls, inputs_like, near_constant

    start = clock()
    seeds = subject.seeds()
    if not seeds:
        raise UsageError(f"{name}: the oracle holds no case to start from; record some first")
    target = subject.target
    files = list(subject.sources)
    pool = harvest_files(files)
    if extra_sources is not None:
        pool = pool.merged(extra_sources)
    collector = ArcCollector.for_paths(files, root)
    state = _State(collector, subject)
    recorded: list[tuple[Call, bytes, frozenset[Arc]]] = []
    for call in seeds:
        given = copy.deepcopy(call)  # the target may change its input
        ran = state.run(call)
        if ran is not None:
            state.absorb(*ran)
            recorded.append((given, ran[0].result_key, ran[1]))
    state.unkept.clear()
    state.limit = generated_limit(subject.timeout, state.slowest)
    seed_arcs = set(state.arcs)
    seed_classes = len(state.classes)
    if mutants and root is not None:
        run_files = {p for _, _, arcs in recorded for p in each_file(arcs)} | {
            str(p) for p in files
        }
        entered = {line for _, _, arcs in recorded for line in entered_lines(arcs)}
        own = [Path(f) for f in run_files if project_file(root, Path(f))]  # never a library's
        state.pool = MutantPool.build(own, entered)
        state.pool.judge_recorded(subject, recorded)

    near = harvest_near(target)
    for call, constant in constant_calls(seeds, pool):
        state.learn(call, always=near_constant(constant, near))
    strategy = inputs_like(seeds, pool, target, hinted=subject.typed)
    curve = [
        RoundPoint(
            0, clock() - start, state.tried, len(state.arcs), len(state.classes), len(state.kept)
        )
    ]

    idle = 0
    rounds = 0
    stopped = ""
    deadline = start + budget
    while True:
        if clock() >= deadline:
            stopped = f"budget of {budget:g} s spent"
            break
        rounds += 1
        arcs_before, classes_before, kills_before = len(state.arcs), len(state.classes), state.kills

        def each(call: Call) -> None:
            if clock() < deadline:
                state.learn(call)

        draw_each(strategy, each, examples=ROUND, seed_value=seed * 1_000_003 + rounds)
        grew = (len(state.arcs), len(state.classes), state.kills) != (
            arcs_before,
            classes_before,
            kills_before,
        )
        curve.append(
            RoundPoint(
                rounds,
                clock() - start,
                state.tried,
                len(state.arcs),
                len(state.classes),
                len(state.kept),
            )
        )
        idle = 0 if grew else idle + 1
        if idle >= SATURATED:
            stopped = (
                f"saturated: {SATURATED} rounds of {ROUND} added no arc and no outcome class"
                + (" and killed no mutant" if state.pool is not None else "")
            )
            break
    body = executable_lines(target) | collector.total_lines()
    before_cov = state.coverage(seed_arcs, body)
    before = Coverage(before_cov.lines_hit, before_cov.lines_total, before_cov.arcs, seed_classes)
    after = state.coverage(state.arcs, body)
    record = subject.add(state.kept) if state.kept else None
    return MineReport(
        oracle=name,
        seed=seed,
        constants=pool.count,
        before=before,
        after=after,
        tried=state.tried,
        kept=len(state.kept),
        curve=tuple(curve),
        stopped=stopped,
        record=record,
        unit=subject.unit,
        mutants=state.pool.tally() if state.pool is not None else None,
        unkept=state.unkept_report(),
    )
