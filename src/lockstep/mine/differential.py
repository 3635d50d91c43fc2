"""``lockstep replay --against REV``: the old and the new code, side by side, on the same inputs.

A replay trusts the outputs stored in the oracle; this gate trusts no stored
output at all.  REV is checked out in a temporary ``git worktree`` (removed
afterwards); one fresh interpreter runs the target as it is at REV, another as
it is in the working tree (:mod:`.sides`).  Every input -- the recorded ones,
then ``--generate N`` drawn like them (:mod:`.strategies`, with the constants of
*both* versions' sources) -- is frozen by the old side as a case of the oracle
and checked by the new side with the oracle's own comparison (types,
exceptions, mutated arguments, tolerance and loose mode as configured).

When the versions differ, Hypothesis shrinks the generated input to the
smallest one that still shows a difference (the difference is a failing
property), and the result names it with both outcomes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from lockstep import canon
from lockstep.cancel import raise_pending
from lockstep.canon import JSON
from lockstep.config import OracleSpec, Project
from lockstep.errors import CanonError, LockstepError, UsageError
from lockstep.gates.git import Git
from lockstep.mine import require_hypothesis
from lockstep.mine.constants import harvest_files
from lockstep.mine.last_run import StoredRun
from lockstep.mine.search import draw_each, smallest_failure
from lockstep.mine.sides import Side, Unanswerable, outcome_from, pipeline, side
from lockstep.model import Outcome
from lockstep.oracles import kind_of, minable_kinds
from lockstep.oracles.mining import Call, MiningSubject

if TYPE_CHECKING:  # Hypothesis is the 'mine' extra (see lockstep.mine.require_hypothesis)
    from hypothesis.strategies import SearchStrategy

DEFAULT_GENERATE: Final = 200
UNFROZEN_SHOWN: Final = 5
"""Inputs not compared named per oracle before ``… (+N)``."""


@dataclass(frozen=True)
class Difference:
    """The smallest input found on which the two versions differ, with both outcomes."""

    oracle: str
    origin: str
    """``recorded input`` or ``generated input, shrunk``."""
    call: str
    """The input written as a call."""
    explanation: tuple[str, ...]
    """Per aspect: the outcome at REV, then the outcome in the working tree."""


@dataclass(frozen=True)
class DifferentialResult:
    """One ``replay --against`` run: a plain data object (for the terminal and HTML report)."""

    rev: str
    base: str
    oracles: tuple[str, ...]
    recorded: int
    generated: int
    differing_recorded: int
    differences: tuple[Difference, ...]
    skipped: tuple[str, ...] = ()
    """Oracles left out because their kind cannot be compared this way."""
    notes: tuple[str, ...] = ()
    """Why an oracle's inputs were compared without generated ones, and which inputs were
    not compared (their outcome at REV could not be frozen) and why."""
    uncompared: int = 0
    """Inputs not compared: REV's outcome for them could not be frozen (not in
    :attr:`recorded` or :attr:`generated`, which count compared inputs only)."""

    @property
    def inputs(self) -> int:
        return self.recorded + self.generated

    @property
    def ok(self) -> bool:
        """No difference, and at least one input compared: inputs that could only be
        skipped prove nothing."""
        return not self.differences and (self.inputs > 0 or not self.uncompared)

    def summary(self) -> str:
        where = f"against {self.rev} ({self.base[:12]})"
        counted = (
            f"{self.inputs} input(s) compared ({self.recorded} recorded, "
            f"{self.generated} generated)"
        )
        if self.uncompared:
            counted += f", {self.uncompared} not compared (listed below)"
        if not self.differences and not self.ok:
            return f"differential {where}: {counted}: nothing compared, so nothing is proven"
        if self.ok:
            return f"differential {where}: {counted}, no difference"
        return (
            f"differential {where}: {counted}; the versions differ in "
            f"{len(self.differences)} oracle(s) ({self.differing_recorded} recorded input(s) "
            "differ); the smallest input for each:"
        )

    def stored(self, head: str) -> StoredRun:
        return StoredRun(
            rev=self.rev,
            base=self.base,
            head=head,
            oracles=list(self.oracles),
            inputs=self.inputs,
            differences=len(self.differences),
            smallest=self.differences[0].call if self.differences else "",
        )


def _explain(outcome: Outcome, rev: str) -> tuple[str, ...]:
    """Per aspect both outcomes, and the readable diff of the two when there is one."""
    lines: list[str] = []
    for drift in outcome.drifts:
        lines.append(f"{drift.aspect}: at {rev}: {drift.expected}")
        lines.append(f"{' ' * len(drift.aspect)}  now: {drift.actual}")
        lines += [f"  {line}" for line in drift.diff.rstrip("\n").splitlines()]
    return tuple(lines) or (outcome.note or outcome.status.value,)


def _size(value: JSON) -> int:
    return len(canon.canonical_json(value))


@dataclass
class _Comparison:
    """One oracle's two sides, the inputs compared so far, and the differences found."""

    name: str
    subject: MiningSubject
    old: Side
    new: Side
    rev: str
    found: list[tuple[int, JSON, Outcome]] = field(default_factory=list)
    unfrozen: list[tuple[str, str]] = field(default_factory=list)
    """Each input whose outcome at REV could not be frozen (so was not compared): the
    input written as a call, and the old side's reason."""

    def encoded(self, call: Call) -> JSON | None:
        try:
            return self.subject.encode_input(call)
        except CanonError:
            return None

    def batch(self, values: list[JSON]) -> int:
        """Compare ``values`` (both interpreters busy at once); note each difference and
        each input the old side could not freeze.  Returns how many were compared."""
        compared = 0
        for value, reply in zip(values, pipeline(self.old, self.new, values), strict=True):
            raise_pending()
            if isinstance(reply, str):  # the old side cannot freeze this input
                self.unfrozen.append((self.subject.describe(value), reply))
                continue
            compared += 1
            if not reply.ok:
                raise LockstepError(f"{self.new.label}: cannot check a case: {reply.error}")
            outcome = outcome_from(reply.value)
            if not outcome.ok:
                self.found.append((_size(value), value, outcome))
        return compared

    def differs(self, value: JSON) -> Outcome | None:
        """One input, one round trip per side: the new side's outcome when not a pass."""
        try:
            case = self.old.ask("freeze", value)
        except Unanswerable:
            return None
        try:
            reply = self.new.ask("check", case)
        except Unanswerable as e:
            raise LockstepError(f"{self.new.label}: cannot check a case: {e}") from None
        outcome = outcome_from(reply)
        return None if outcome.ok else outcome

    def shrunk(self, strategy: SearchStrategy[Call], examples: int, seed: int) -> Difference | None:
        """The same draws again, as a property failing on a difference, so Hypothesis shrinks it."""

        def fails(call: Call) -> bool:
            value = self.encoded(call)
            return value is not None and self.differs(value) is not None

        smallest = smallest_failure(strategy, fails, examples=examples, seed_value=seed)
        value = self.encoded(smallest) if smallest is not None else None
        outcome = self.differs(value) if value is not None else None
        if value is None or outcome is None:
            return None
        return self.difference("generated input, shrunk", value, outcome)

    def difference(self, origin: str, value: JSON, outcome: Outcome) -> Difference:
        return Difference(
            self.name, origin, self.subject.describe(value), _explain(outcome, self.rev)
        )


def compare_oracle(
    project: Project,
    spec: OracleSpec,
    subject: MiningSubject,
    git: Git,
    tree: Path,
    rev: str,
    *,
    generate: int,
    seed: int,
) -> tuple[int, int, int, Difference | None, list[str], int]:
    """``(recorded, generated, differing recorded, smallest difference, notes, not
    compared)`` for one oracle; the counts are of inputs compared.

    The recorded and the generated inputs are compared in batches with both sides busy at
    once; only when a generated input differs are the draws replayed one by one, as a
    property Hypothesis shrinks.  Recorded inputs that cannot be varied (a corpus of
    fixtures that are not JSON) are compared as they are, and the note says why none
    were generated.
    """
    recorded = subject.recorded()
    note = ""
    seeds: list[Call] = []
    if generate > 0:
        try:
            seeds = subject.seeds()
        except UsageError as e:
            note = f"{spec.name}: no input generated ({e})"
    rel = project.root.resolve().relative_to(git.root.resolve())
    files: list[Path] = []
    for path in subject.sources:
        files.append(path)
        with contextlib.suppress(ValueError):
            files.append(tree / path.resolve().relative_to(git.root.resolve()))
    from lockstep.mine.strategies import inputs_like

    strategy = inputs_like(seeds, harvest_files(files), subject.target, hinted=subject.typed)
    config = project.config_path
    with (
        side(f"{spec.name} at {rev}", config, tree / rel, spec.name) as old,
        side(f"{spec.name} in the working tree", config, project.root, spec.name) as new,
    ):
        comparison = _Comparison(spec.name, subject, old, new, rev)
        recorded_compared = comparison.batch(recorded)
        differing_recorded = len(comparison.found)
        drawn: list[JSON] = []

        def keep(call: Call) -> None:
            value = comparison.encoded(call)
            if value is not None:
                drawn.append(value)

        if seeds:
            draw_each(strategy, keep, examples=generate, seed_value=seed)
        generated_compared = comparison.batch(drawn)
        difference = None
        if len(comparison.found) > differing_recorded:
            difference = comparison.shrunk(strategy, generate, seed)
        if difference is None and comparison.found:
            _, value, outcome = min(comparison.found, key=lambda f: f[0])
            origin = "recorded input" if differing_recorded else "generated input"
            difference = comparison.difference(origin, value, outcome)
    notes = [note] if note else []
    if comparison.unfrozen:
        notes.append(
            f"{spec.name}: {len(comparison.unfrozen)} input(s) not compared: their outcome at "
            f"{rev} could not be frozen:"
        )
        notes += [f"  {call}: {why}" for call, why in comparison.unfrozen[:UNFROZEN_SHOWN]]
        if len(comparison.unfrozen) > UNFROZEN_SHOWN:
            notes.append(f"  … (+{len(comparison.unfrozen) - UNFROZEN_SHOWN})")
    return (
        recorded_compared,
        generated_compared,
        differing_recorded,
        difference,
        notes,
        len(comparison.unfrozen),
    )


def replay_against(
    project: Project,
    specs: Sequence[OracleSpec],
    rev: str,
    *,
    generate: int = DEFAULT_GENERATE,
    seed: int = 0,
    skip_unsupported: bool = False,
) -> DifferentialResult:
    """Compare every oracle in ``specs`` between REV and the working tree.

    ``skip_unsupported``: leave out (and name) oracles whose kind has no subject to
    call directly, instead of refusing -- for a run over every configured oracle.
    """
    require_hypothesis("replay --against")
    git = Git(project.root)
    base = git.resolve(rev)
    subjects: list[tuple[OracleSpec, MiningSubject]] = []
    skipped: list[str] = []
    for spec in specs:
        try:
            subjects.append((spec, kind_of(spec).mining(project, spec)))
        except UsageError:
            if not skip_unsupported:
                raise
            skipped.append(spec.name)
    if not subjects:
        raise UsageError(
            f"replay --against: no configured oracle can be compared ({minable_kinds()} can)"
        )
    recorded = generated = differing = uncompared = 0
    differences: list[Difference] = []
    notes: list[str] = []
    with git.worktree(base, "lockstep-against-") as tree:
        generated_files = git.copy_generated(tree)
        if generated_files:
            notes.append(
                f"copied {len(generated_files)} file(s) git ignores from the working tree into "
                f"the worktree of {rev}, which lacks them (generated, never committed): "
                + ", ".join(generated_files)
            )
        for spec, subject in subjects:
            r, g, d, difference, oracle_notes, u = compare_oracle(
                project, spec, subject, git, tree, rev, generate=generate, seed=seed
            )
            recorded += r
            generated += g
            differing += d
            uncompared += u
            notes += oracle_notes
            if difference is not None:
                differences.append(difference)
    return DifferentialResult(
        rev=rev,
        base=base,
        oracles=tuple(spec.name for spec, _ in subjects),
        skipped=tuple(skipped),
        recorded=recorded,
        generated=generated,
        differing_recorded=differing,
        differences=tuple(differences),
        notes=tuple(notes),
        uncompared=uncompared,
    )
