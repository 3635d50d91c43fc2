"""The oracle kinds and the one base class they all derive from.

A kind (corpus, ledger, pins, tape: :data:`lockstep.kinds.KINDS`, the one list)
is a package under ``oracles/`` whose ``kind`` module exposes ``KIND``, the one
instance of its subclass of :class:`OracleKind`.  The command line, the pytest
plugin, the gates and the reporters go through that class only: nothing outside a
kind's package knows its file format, its suffix or how its cases run, and nothing
switches on kinds.  Kinds are imported lazily: replaying a corpus never imports
the pins machinery.

What every kind shares lives beside this module: :mod:`.lifecycle` (the record
modes, the one record sequence and the merge of old and new cases), :mod:`.verify`
(record's check in a fresh interpreter), :mod:`.stale` (a record that no longer
matches the configuration), :mod:`.status` (one line of ``lockstep status``),
:mod:`.pending` (drifts kept for review) and :mod:`.mining` (the subject ``lockstep
mine`` calls).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, TypeVar

import msgspec

from lockstep.errors import ConfigError, TargetError, UnimportableTestModule, UsageError
from lockstep.model import (
    Drift,
    OracleStatus,
    Outcome,
    RecordMode,
    RecordReport,
    ReplayOptions,
    Status,
)
from lockstep.store import OracleLock, beyond_surface, display_path, lock_for
from lockstep.tables import OracleSpec

if TYPE_CHECKING:
    from lockstep.config import Project
    from lockstep.oracles.mining import MiningSubject
    from lockstep.probe.runs import ProbeTarget

SpecT = TypeVar("SpecT", bound=OracleSpec)
"""The spec type (``[[corpus]]`` table...) of one kind."""

CaseRunner = Callable[[str], Outcome]
"""Replays one case by id; prepared once so that running N cases one at a time stays O(N)."""


class OracleInput(msgspec.Struct, frozen=True):
    """A file or glob, named by the configuration, that an oracle's cases come from.

    Changing one re-records the oracle as surely as editing its file, so the
    guard and the review count it on the oracle's side.
    """

    pattern: str
    """Relative to the project root (a glob for corpus fixtures, a path for pins cases)."""
    reason: str
    """Why it is the oracle's: ``fixtures of corpus 'transform'``."""


class CaseInput(msgspec.Struct, frozen=True):
    """What one recorded case feeds the code, for people and for matching mutants to cases."""

    case_id: str
    text: str
    """One line a user recognizes: the recorded call, the fixture, the argv."""
    strings: tuple[str, ...] = ()
    """The text values the input is made of (a mutated string constant is first judged by
    the cases whose input it matches)."""


class StrengthScope(msgspec.Struct, frozen=True):
    """The source an oracle's cases exercise: what ``lockstep strength`` measures and mutates."""

    files: tuple[Path, ...]
    """Python source files under the project root (the target's, render's or program's)."""
    in_process: bool
    """True when :meth:`OracleKind.case_runner` runs the code in lockstep's own interpreter
    (so a mutant can be switched in place); False when every case is a process, measured
    through :meth:`OracleKind.probe_targets` (one target per case, labelled ``NAME::id``)."""
    harness: tuple[Path, ...] = ()
    """Files the cases run that are the oracle's own harness (a tape's driver), never judged:
    strength adds every other project file the cases execute to ``files``."""


class OracleKind(ABC, Generic[SpecT]):
    """What every oracle kind provides: one subclass per kind, one instance (``KIND``).

    The abstract members are what a kind must say; the others have defaults a kind
    overrides when it can do more (``inputs``, ``mining``, ``probe_targets``).  mypy
    checks a kind's conformance where its ``KIND`` is made (an abstract member left out
    cannot be instantiated) and its methods against these signatures.  A kind's methods
    take its own spec type: :func:`kind_of` only ever hands a kind its own oracles.
    """

    name: ClassVar[str]
    """The kind's name, as in ``[[corpus]]`` (one of :data:`lockstep.kinds.KINDS`)."""
    suffix: ClassVar[str]
    """The oracle file's suffix (``.lock.json``): ``<dir>/<oracle name><suffix>``."""
    not_minable: ClassVar[str] = ""
    """Why ``lockstep mine`` has nothing to vary here, when the kind says more than the
    default :meth:`mining` refusal."""
    parallel_by_default: ClassVar[bool] = False
    """Whether replay uses one worker per core unless told otherwise.

    True for kinds whose cases are processes anyway (a waiting child costs nothing);
    False for in-process kinds, where a pool's start-up outweighs small replays.
    """

    def oracle_path(self, project: Project, spec: SpecT, /) -> Path:
        """The committed file that holds this oracle: ``<dir>/<name><suffix>``."""
        return project.oracle_dir / f"{spec.name}{self.suffix}"

    def inputs(self, project: Project, spec: SpecT, /) -> tuple[OracleInput, ...]:
        """The configured files the cases come from (fixtures, cases file); by default none:
        the cases come from code or from the oracle's own file."""
        return ()

    def write_lock(
        self, project: Project, spec: SpecT, /
    ) -> OracleLock | contextlib.nullcontext[None]:
        """The oracle file's lock, held for a whole record or accept: read, work and write
        are one step, so an accept and a ``record --new-only`` that run at once both land
        (neither writes back a copy read before the other's write).

        None to hold while the oracle folder does not exist yet: then there is no file
        to race on, and a refused record must not leave an empty folder behind.
        """
        path = self.oracle_path(project, spec)
        if not path.parent.is_dir():
            return contextlib.nullcontext()
        return lock_for(path)

    def record(self, project: Project, spec: SpecT, mode: RecordMode, /) -> RecordReport:
        """Freeze today's behaviour; never half-writes, refuses a plain record over an oracle."""
        with self.write_lock(project, spec):
            return self.record_cases(project, spec, mode, None)

    def accept(self, project: Project, spec: SpecT, cases: frozenset[str], /) -> RecordReport:
        """Re-record only ``cases`` of an existing oracle through the record path (verified in a
        fresh interpreter, like every record); every other case stays exactly as recorded.

        What ``lockstep accept`` calls for the drifts a reviewer accepts, so an accepted
        case is frozen the one way any case is, never copied in through a side door:
        ``--force`` narrowed to the accepted cases.
        """
        with self.write_lock(project, spec):
            return self.record_cases(project, spec, RecordMode.FORCE, cases)

    @abstractmethod
    def record_cases(
        self, project: Project, spec: SpecT, mode: RecordMode, only: frozenset[str] | None, /
    ) -> RecordReport:
        """The one record path behind :meth:`record` (``only`` None) and :meth:`accept`."""

    @abstractmethod
    def replay(self, project: Project, spec: SpecT, options: ReplayOptions, /) -> Iterator[Outcome]:
        """Re-run the recorded cases (streaming) and yield one outcome per case."""

    @abstractmethod
    def case_ids(self, project: Project, spec: SpecT, /) -> Iterator[str]:
        """The recorded case ids, streaming (pytest collects one item per id)."""

    @abstractmethod
    def case_runner(self, project: Project, spec: SpecT, /) -> CaseRunner:
        """Load the oracle and import its target once; then replay one case per call."""

    @abstractmethod
    def status(self, project: Project, spec: SpecT, /) -> OracleStatus:
        """Whether the oracle file is present and readable, and how many cases it holds."""

    def prepare_replay(self) -> None:
        """Import what replaying this kind's oracles needs and its module leaves for later
        (a recording that only writes them never needs it).  A recording's verifying
        server calls it once, so no fork of it imports that again per candidate."""

    def probe_targets(self, project: Project, spec: SpecT, /) -> tuple[ProbeTarget, ...]:
        """How each configured case runs as a whole process, for ``lockstep probe NAME``.

        By default (an in-process kind) one target that replays the whole recorded oracle
        in a fresh interpreter, so every run may use another hash seed; pins give one
        target per case.
        """
        return (probe_target(project, spec, self.oracle_path(project, spec)),)

    def mining(self, project: Project, spec: SpecT, /) -> MiningSubject:
        """The target as a subject ``lockstep mine`` and ``replay --against`` call directly
        (:mod:`.mining`); by default a usage error: the kind has none."""
        why = f" ({self.not_minable})" if self.not_minable else ""
        raise UsageError(
            f"oracle {spec.name!r} is a {spec.kind} oracle: 'lockstep mine' and "
            f"'replay --against' work on {minable_kinds()}{why}"
        )

    @abstractmethod
    def strength_scope(self, project: Project, spec: SpecT, /) -> StrengthScope:
        """The source files the cases run, for coverage by case and mutants."""

    @abstractmethod
    def case_inputs(self, project: Project, spec: SpecT, /) -> Iterator[CaseInput]:
        """Each recorded case's input, streaming (strength names the input to vary)."""


CHILD_TIMEOUT: Final = 600.0
"""Seconds the verifying interpreter may take before record gives up on it (exit 2)."""

CHILD_MODULE: Final = "lockstep.cli.verify_child"
"""What the fresh interpreter runs (``python -m``): a thin command around :func:`.verify.verdict_lines`."""

TIMED_OUT: Final = "did not return within"
"""How the note of a case whose call ran past its oracle's ``timeout`` begins."""
NOT_REPLAYED: Final = "not replayed: row "
"""How the note of a ledger's case begins that was not called after one before it ran
past the timeout (:mod:`lockstep.oracles.ledger.deadline`)."""


def stopped(reason: str) -> bool:
    """Whether a case's reason (a verification's) is a call stopped at the timeout, or
    one not made after it: replaying it again takes the timeout again and says no more."""
    return reason.startswith((TIMED_OUT, NOT_REPLAYED))


def probe_target(project: Project, spec: OracleSpec, oracle_file: Path) -> ProbeTarget:
    """``lockstep probe NAME`` for a kind whose cases run in-process.

    One run is one fresh interpreter replaying the whole recorded oracle and printing
    the cases that did not reproduce; the probe runs it N times with a different hash
    seed each time, so one signature means every case reproduces in every
    interpreter, and the lines where two runs differ name the flaky cases.
    """
    if not oracle_file.exists():
        raise UsageError(
            f"{spec.name}: not recorded yet; record it first ('lockstep record {spec.name}' "
            "verifies each case in a fresh interpreter), then probe it"
        )
    from lockstep.probe.runs import ProbeTarget

    rel = project.oracle_dir.relative_to(project.root.resolve()).as_posix()
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    argv = (sys.executable, "-m", CHILD_MODULE, "--config", str(project.config_path))
    return ProbeTarget(
        label=f"{spec.name} (every case, in a fresh interpreter)",
        argv=(*argv, "--dir", rel, spec.name),
        env=env,
        cwd=project.root,
        timeout=CHILD_TIMEOUT,
        vary_hash_seed=True,
    )


AnyKind = OracleKind[Any]
"""A kind whatever its spec (what :func:`kind_of` returns for any configured oracle)."""


S = TypeVar("S", bound=OracleSpec)


def spec_as(spec: OracleSpec, cls: type[S], kind: str) -> S:
    """``spec`` as its kind's own table, for an entry point of one kind only (``lockstep
    tape accept``); another kind's oracle is a usage error."""
    if not isinstance(spec, cls):
        raise UsageError(f"oracle {spec.name!r} is a {spec.kind} oracle, not a {kind}")
    return spec


def source_scope(project: Project, *objects: object) -> StrengthScope:
    """The in-process scope of ``objects`` (a target, a render, a driver): the source files of
    their modules that lie under the project root (library code is not the user's to mutate)."""
    root = project.root.resolve()
    files: list[Path] = []
    for obj in objects:
        module = inspect.getmodule(inspect.unwrap(obj))  # type: ignore[arg-type]
        try:
            source = inspect.getsourcefile(module) if module is not None else None
        except TypeError:  # a built-in module (time, sys): no source, never the project's
            continue
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
    others = tuple(f for f in around.files if f not in mine.files)
    return StrengthScope(others or mine.files, True, harness=mine.files if others else ())


def kind_named(name: str) -> AnyKind:
    """The kind called ``name`` (its package ``lockstep.oracles.<name>`` imported on first
    use); the names are :data:`lockstep.kinds.KINDS`, the one list of kinds."""
    from lockstep.kinds import KINDS  # the registry imports each kind's spec: this package

    if name not in KINDS:
        raise KeyError(name)
    module = importlib.import_module(f"lockstep.oracles.{name}.kind")
    kind = module.KIND
    if not isinstance(kind, OracleKind) or kind.name != name:
        raise TypeError(f"lockstep.oracles.{name}.kind.KIND is not the {name!r} oracle kind")
    return kind


def kind_of(spec: OracleSpec) -> AnyKind:
    """The kind implementing ``spec``."""
    return kind_named(spec.kind)


def all_kinds() -> tuple[AnyKind, ...]:
    """Every registered kind (imports them all: for the few callers that need every suffix)."""
    from lockstep.kinds import KINDS  # the registry imports each kind's spec: this package

    return tuple(kind_named(name) for name in KINDS)


def minable_kinds() -> str:
    """The kinds with a subject (those that override ``mining``), for the refusals of the
    others: ``corpus and ledger oracles``."""
    names = [k.name for k in all_kinds() if type(k).mining is not OracleKind.mining]
    listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)
    return f"{listed} oracles"


NOT_RECORDED: Final = "(not recorded)"
"""The case id of the one outcome an oracle that was never recorded replays as."""


def record_command(spec: OracleSpec) -> str:
    """The command that records ``spec``: a ledger without a driver records from the tests."""
    if spec.kind == "ledger" and getattr(spec, "driver", None) is None:
        return "pytest --lockstep-record"
    return f"lockstep record {spec.name}"


def not_recorded(project: Project, spec: OracleSpec, path: Path) -> Outcome:
    """The one verdict on an oracle whose file is not there: an ERROR naming what records
    it (see :func:`replay`; ``pytest --lockstep`` fails one item with it)."""
    return Outcome(spec.name, NOT_RECORDED, Status.ERROR, note=_not_there(project, spec, path))


def _not_there(project: Project, spec: OracleSpec, path: Path) -> str:
    """Why an oracle without its file replays red: never recorded, or (a member beyond a
    package's surface that the folder's list says a recording wrote) deleted since."""
    shown = display_path(path, project.root)
    if spec.name in project.tested and spec.name in project.listed_beyond():
        return (
            f"{shown} is missing, but {beyond_surface.FILE_NAME} lists it as recorded (deleted?): "
            f"restore it from the trusted commit, or run '{record_command(spec)}' there"
        )
    return (
        f"{shown} is not recorded yet: run '{record_command(spec)}' on the trusted commit "
        "and commit the file"
    )


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
    # a link to nothing is a link: reading it says so (a former member's kind says why)
    if not os.path.lexists(path) and (options.candidate or spec.name not in project.former):
        yield not_recorded(project, spec, path)
        return
    replayed = 0
    last = ""
    shown = _shown_as(project, brief=options.candidate)
    try:
        for outcome in printing_to_stderr(kind.replay(project, spec, options)):
            replayed += 1
            last = outcome.case_id
            yield shown(outcome)
    except TargetError as e:
        if options.candidate and isinstance(e, UnimportableTestModule):
            # verifying a recording: no row is refused for it, the ledger is not written
            raise ConfigError(str(e)) from None
        note = f"cannot run: {e}"
        failed = _not_replayed(kind.case_ids(project, spec), options, replayed, last)
        if failed is None:  # replayed out of the listing's order: not told apart
            yield Outcome(spec.name, spec.name, Status.ERROR, note=note)
            return
        for case_id in failed or [spec.name]:
            yield Outcome(spec.name, case_id, Status.ERROR, note=note)


def printing_to_stderr(outcomes: Iterator[Outcome]) -> Iterator[Outcome]:
    """``outcomes``, each produced with ``sys.stdout`` on stderr.

    What a replayed target prints (a command's ``main``, a debugging ``print``) landed in
    lockstep's own output: sqlparse's ``cli.main`` rows put SQL ahead of the report, and
    ``lockstep replay --json`` was no JSON.  The report itself is printed between two
    steps, on the real stdout.  (A ledger replayed in a fork points its descriptor 1 at
    stderr as well: :mod:`lockstep.oracles.ledger.isolated`.)"""
    it = iter(outcomes)
    try:
        while True:
            saved = sys.stdout
            sys.stdout = sys.stderr
            try:
                outcome = next(it)
            except StopIteration:
                return
            finally:
                sys.stdout = saved
            yield outcome
    finally:
        close = getattr(it, "close", None)
        if close is not None:
            close()


def _near_difference(expected: str, actual: str, keep: int) -> tuple[str, str]:
    """Each side's first ``keep`` characters; where they agree past those, ``keep`` from
    :data:`BRIEF_MARGIN` before their first difference on (the verdict shows the text
    around it, :func:`lockstep.canon.text.around_difference`; the margin before it
    lets the mask see a secret that starts there whole)."""
    same = next(
        (i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
        min(len(expected), len(actual)),
    )
    if same < keep - BRIEF_MARGIN:
        return expected[:keep], actual[:keep]
    start = max(0, same - BRIEF_MARGIN)  # (a difference within the margin of the start)
    return expected[start : start + keep], actual[start : start + keep]


BRIEF_MARGIN: Final = 256
"""Characters kept past what a verdict shows, so a secret that starts in the shown part
is seen whole by the detector before the cut."""


def _shown_as(project: Project, *, brief: bool = False) -> Callable[[Outcome], Outcome]:
    """How a replayed outcome leaves replay for every reporter and the pending file: its
    drifts masked, so what record would refuse to write (a token in the new output, a
    configured or environment secret in any spelling) is never printed or written.

    ``brief`` (a candidate replayed in record's verifying interpreter): what leaves is
    only what its verdict shows (:func:`lockstep.oracles.verify.reason_of`: the first
    drift's two sides, cut), masked.  Masking the whole of every drift of a parsed
    document that did not reproduce cost minutes (sqlparse: 311 such rows)."""
    from lockstep.secrets import policy_for

    masked = policy_for(project).masked
    if not brief:
        return masked
    from lockstep.canon.text import SHOWN_VALUE

    keep = SHOWN_VALUE + BRIEF_MARGIN

    def briefly(outcome: Outcome) -> Outcome:
        if not outcome.drifts and len(outcome.note) <= keep:
            return masked(outcome)
        drifts = tuple(
            Drift(d.aspect, *_near_difference(d.expected, d.actual, keep), "", None)
            for d in outcome.drifts[:1]
        )
        return masked(msgspec.structs.replace(outcome, drifts=drifts, note=outcome.note[:keep]))

    return briefly


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
