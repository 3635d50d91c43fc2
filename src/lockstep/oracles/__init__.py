"""The oracle kinds and the one protocol they all implement in full.

A kind (corpus, ledger, pins, tape) is a package under ``oracles/`` whose
``kind`` module exposes ``KIND``, an object with every member of
:class:`OracleKind`.  The command line, the pytest plugin, the gates and the
reporters go through this protocol only: nothing outside a kind's package knows
its file format, its suffix or how its cases run, and nothing switches on
kinds.  Kinds are imported lazily: replaying a corpus never imports the pins
machinery.

What every kind shares lives beside this module: :mod:`.lifecycle` (the record
modes and the one merge of old and new cases), :mod:`.status` (one line of
``lockstep status``).
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar, cast

from lockstep.config import CorpusSpec, LedgerSpec, OracleSpec, PinsSpec, Project, TapeSpec
from lockstep.errors import TargetError, UsageError
from lockstep.model import (
    OracleStatus,
    Outcome,
    RecordMode,
    RecordReport,
    ReplayOptions,
    Status,
)
from lockstep.store import display_path

if TYPE_CHECKING:
    from lockstep.oracles.mining import MiningSubject
    from lockstep.probe.runs import ProbeTarget

CaseRunner = Callable[[str], Outcome]
"""Replays one case by id; prepared once so that running N cases one at a time stays O(N)."""


@dataclass(frozen=True)
class OracleInput:
    """A file or glob, named by the configuration, that an oracle's cases come from.

    Changing one re-records the oracle as surely as editing its file, so the
    guard and the review count it on the oracle's side.
    """

    pattern: str
    """Relative to the project root (a glob for corpus fixtures, a path for pins cases)."""
    reason: str
    """Why it is the oracle's: ``fixtures of corpus 'transform'``."""


@dataclass(frozen=True)
class CaseInput:
    """What one recorded case feeds the code, for people and for matching mutants to cases."""

    case_id: str
    text: str
    """One line a user recognizes: the recorded call, the fixture, the argv."""
    strings: tuple[str, ...] = ()
    """The text values the input is made of (a mutated string constant is first judged by
    the cases whose input it matches)."""


@dataclass(frozen=True)
class StrengthScope:
    """The source an oracle's cases exercise: what ``lockstep strength`` measures and mutates."""

    files: tuple[Path, ...]
    """Python source files under the project root (the target's, render's or program's)."""
    in_process: bool
    """True when :meth:`OracleKind.case_runner` runs the code in lockstep's own interpreter
    (so a mutant can be switched in place); False when every case is a process, measured
    through :meth:`OracleKind.probe_targets` (one target per case, labelled ``NAME::id``)."""


class OracleKind(Protocol):
    """What every oracle kind provides; every member is required."""

    @property
    def name(self) -> str:
        """The kind's name, as in ``[[corpus]]``."""
        ...

    @property
    def suffix(self) -> str:
        """The oracle file's suffix (``.lock.json``): ``<dir>/<oracle name><suffix>``."""
        ...

    @property
    def parallel_by_default(self) -> bool:
        """Whether replay uses one worker per core unless told otherwise.

        True for kinds whose cases are processes anyway (a waiting child costs
        nothing); False for in-process kinds, where a pool's start-up outweighs
        small replays.
        """
        ...

    def oracle_path(self, project: Project, spec: OracleSpec, /) -> Path:
        """The committed file that holds this oracle."""
        ...

    def inputs(self, project: Project, spec: OracleSpec, /) -> tuple[OracleInput, ...]:
        """The configured files the cases come from (fixtures, cases file); may be empty."""
        ...

    def record(self, project: Project, spec: OracleSpec, mode: RecordMode, /) -> RecordReport:
        """Freeze today's behaviour; never half-writes, refuses a plain record over an oracle."""
        ...

    def accept(self, project: Project, spec: OracleSpec, cases: frozenset[str], /) -> RecordReport:
        """Re-record only ``cases`` of an existing oracle through the record path (verified in a
        fresh interpreter, like every record); every other case stays exactly as recorded.

        What ``lockstep accept`` calls for the drifts a reviewer accepts, so an accepted
        case is frozen the one way any case is, never copied in through a side door.
        """
        ...

    def replay(
        self, project: Project, spec: OracleSpec, options: ReplayOptions, /
    ) -> Iterator[Outcome]:
        """Re-run the recorded cases (streaming) and yield one outcome per case."""
        ...

    def case_ids(self, project: Project, spec: OracleSpec, /) -> Iterator[str]:
        """The recorded case ids, streaming (pytest collects one item per id)."""
        ...

    def case_runner(self, project: Project, spec: OracleSpec, /) -> CaseRunner:
        """Load the oracle and import its target once; then replay one case per call."""
        ...

    def status(self, project: Project, spec: OracleSpec, /) -> OracleStatus:
        """Whether the oracle file is present and readable, and how many cases it holds."""
        ...

    def probe_targets(self, project: Project, spec: OracleSpec, /) -> tuple[ProbeTarget, ...]:
        """How each configured case runs as a whole process, for ``lockstep probe NAME``.

        Pins give one target per case; the in-process kinds one target that replays the
        whole recorded oracle in a fresh interpreter (so every run may use another hash seed).
        """
        ...

    def mining(self, project: Project, spec: OracleSpec, /) -> MiningSubject:
        """The target as a subject ``lockstep mine`` and ``replay --against`` call directly
        (:mod:`.mining`); a usage error for a kind that has none."""
        ...

    def strength_scope(self, project: Project, spec: OracleSpec, /) -> StrengthScope:
        """The source files the cases run, for coverage by case and mutants."""
        ...

    def case_inputs(self, project: Project, spec: OracleSpec, /) -> Iterator[CaseInput]:
        """Each recorded case's input, streaming (strength names the input to vary)."""
        ...


_MEMBERS: Final = (
    "oracle_path",
    "inputs",
    "record",
    "accept",
    "replay",
    "case_ids",
    "case_runner",
    "status",
    "probe_targets",
    "mining",
    "strength_scope",
    "case_inputs",
)


@dataclass(frozen=True)
class ModuleKind:
    """A kind made of its ``kind`` module's functions: the form every kind takes."""

    name: str
    suffix: str
    parallel_by_default: bool
    oracle_path: Callable[[Project, OracleSpec], Path]
    inputs: Callable[[Project, OracleSpec], tuple[OracleInput, ...]]
    record: Callable[[Project, OracleSpec, RecordMode], RecordReport]
    accept: Callable[[Project, OracleSpec, frozenset[str]], RecordReport]
    replay: Callable[[Project, OracleSpec, ReplayOptions], Iterator[Outcome]]
    case_ids: Callable[[Project, OracleSpec], Iterator[str]]
    case_runner: Callable[[Project, OracleSpec], CaseRunner]
    status: Callable[[Project, OracleSpec], OracleStatus]
    probe_targets: Callable[[Project, OracleSpec], tuple[ProbeTarget, ...]]
    mining: Callable[[Project, OracleSpec], MiningSubject]
    strength_scope: Callable[[Project, OracleSpec], StrengthScope]
    case_inputs: Callable[[Project, OracleSpec], Iterator[CaseInput]]


def kind_from(
    namespace: Mapping[str, Any], *, name: str, suffix: str, parallel_by_default: bool
) -> ModuleKind:
    """The kind a ``kind`` module defines (``kind_from(globals(), ...)``): every member of
    the protocol must be one of its functions, so a kind that misses one fails on import."""
    missing = [member for member in _MEMBERS if not callable(namespace.get(member))]
    if missing:
        raise TypeError(f"oracle kind {name!r} does not define {', '.join(missing)}")
    functions = {member: namespace[member] for member in _MEMBERS}
    return ModuleKind(
        name=name, suffix=suffix, parallel_by_default=parallel_by_default, **functions
    )


S = TypeVar("S", CorpusSpec, LedgerSpec, PinsSpec, TapeSpec)


def spec_as(spec: OracleSpec, cls: type[S], kind: str) -> S:
    """``spec`` as its kind's own table; another kind's oracle is a usage error."""
    if not isinstance(spec, cls):
        raise UsageError(f"oracle {spec.name!r} is a {spec.kind} oracle, not a {kind}")
    return spec


def no_inputs(project: Project, spec: OracleSpec) -> tuple[OracleInput, ...]:
    """For a kind whose cases come from code or its own file, not from configured files."""
    return ()


def source_scope(project: Project, *objects: object) -> StrengthScope:
    """The in-process scope of ``objects`` (a target, a render, a driver): the source files of
    their modules that lie under the project root (library code is not the user's to mutate)."""
    root = project.root.resolve()
    files: list[Path] = []
    for obj in objects:
        module = inspect.getmodule(inspect.unwrap(obj))  # type: ignore[arg-type]
        source = inspect.getsourcefile(module) if module is not None else None
        if source is None:
            continue
        path = Path(source).resolve()
        if root in path.parents and path not in files:
            files.append(path)
    return StrengthScope(tuple(files), in_process=True)


def used_scope(project: Project, fn: object, *, own: bool = True) -> StrengthScope:
    """The project modules a harness function's module uses (the code it exists to run):
    every project module, function or class in its globals; with ``own``, its module too."""
    module = inspect.getmodule(inspect.unwrap(fn))  # type: ignore[arg-type]
    used = [
        value
        for value in (vars(module).values() if module is not None else ())
        if value is not module
        and (inspect.ismodule(value) or inspect.isroutine(value) or inspect.isclass(value))
    ]
    around = source_scope(project, *used)
    mine = source_scope(project, fn)
    if own:
        return StrengthScope((*mine.files, *(f for f in around.files if f not in mine.files)), True)
    return StrengthScope(tuple(f for f in around.files if f not in mine.files) or mine.files, True)


KINDS: Final = ("corpus", "ledger", "pins", "tape")
"""The registry: each name is a package ``lockstep.oracles.<name>`` with a ``kind.KIND``."""


def kind_named(name: str) -> OracleKind:
    """The kind called ``name`` (imported on first use)."""
    if name not in KINDS:
        raise KeyError(name)
    module = importlib.import_module(f"lockstep.oracles.{name}.kind")
    return cast(OracleKind, module.KIND)


def kind_of(spec: OracleSpec) -> OracleKind:
    """The kind implementing ``spec``."""
    return kind_named(spec.kind)


def all_kinds() -> tuple[OracleKind, ...]:
    """Every registered kind (imports them all: for the few callers that need every suffix)."""
    return tuple(kind_named(name) for name in KINDS)


NOT_RECORDED: Final = "(not recorded)"
"""The case id of the one outcome an oracle that was never recorded replays as."""


def replay(project: Project, spec: OracleSpec, options: ReplayOptions) -> Iterator[Outcome]:
    """Replay one oracle of any kind, with the two verdicts that are the same for every kind.

    * An oracle that was never recorded replays as one ERROR outcome that names the
      command recording it: the other oracles still replay, and the run is not green.
    * A target, render or driver that no longer imports (the change broke module-level
      code, or moved the function) is the change's failure, not bad configuration: the
      oracle's remaining cases are ERROR outcomes carrying the reason.
    """
    kind = kind_of(spec)
    path = kind.oracle_path(project, spec)
    if not path.exists():
        yield Outcome(
            spec.name,
            NOT_RECORDED,
            Status.ERROR,
            note=f"{display_path(path, project.root)} is not recorded yet: run "
            f"'lockstep record {spec.name}' on the trusted commit and commit the file",
        )
        return
    replayed = 0
    last = ""
    try:
        for outcome in kind.replay(project, spec, options):
            replayed += 1
            last = outcome.case_id
            yield outcome
    except TargetError as e:
        note = f"cannot run: {e}"
        failed = _not_replayed(kind.case_ids(project, spec), options, replayed, last)
        if failed is None:  # replayed out of the listing's order: not told apart
            yield Outcome(spec.name, spec.name, Status.ERROR, note=note)
            return
        for case_id in failed or [spec.name]:
            yield Outcome(spec.name, case_id, Status.ERROR, note=note)


def _not_replayed(
    case_ids: Iterator[str], options: ReplayOptions, replayed: int, last: str
) -> list[str] | None:
    """The selected cases after the first ``replayed``, when replay yielded them in the
    listing's order (checked on ``last``), else None.

    Counting instead of keeping every replayed id keeps a million-case replay flat.
    """
    selected = (case_id for case_id in case_ids if options.selects(case_id))
    if replayed == 0:
        return list(selected)
    for index, case_id in enumerate(selected, start=1):
        if index == replayed:
            return list(selected) if case_id == last else None
    return None


def case_runner(project: Project, spec: OracleSpec) -> CaseRunner:
    """A prepared single-case replayer (the pytest plugin runs one item at a time)."""
    return kind_of(spec).case_runner(project, spec)


def default_jobs(spec: OracleSpec, configured: int) -> int:
    """Workers for a replay that did not say ``--jobs``.

    ``configured`` (``[lockstep] jobs``) wins when above 0; otherwise the kind
    chooses (:attr:`OracleKind.parallel_by_default`).
    """
    if configured > 0:
        return configured
    if kind_of(spec).parallel_by_default:
        return max(1, os.cpu_count() or 1)
    return 1
