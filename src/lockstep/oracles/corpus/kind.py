"""The corpus oracle: fixture files → render callable → canonical bytes → sha256 lock.

The file format is :mod:`.lock`, which fixtures exist is :mod:`.fixtures`, and
how one renders is :mod:`.render`; this module records and replays through the
shared lifecycle (:mod:`lockstep.oracles.lifecycle`).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from lockstep.config import Project
from lockstep.errors import ConfigError, DataError, UsageError
from lockstep.model import (
    OracleStatus,
    Outcome,
    RecordMode,
    RecordReport,
    Refusal,
    RefusalReason,
    ReplayOptions,
    Status,
)
from lockstep.oracles import (
    CaseInput,
    CaseRunner,
    OracleInput,
    OracleKind,
    StrengthScope,
    used_scope,
)
from lockstep.oracles.corpus.cursor import EntryCursor
from lockstep.oracles.corpus.fixtures import fixtures
from lockstep.oracles.corpus.lock import (
    LOCK_VERSION,
    Entry,
    Lock,
    read_lock,
    write_lock,
    write_lock_streaming,
)
from lockstep.oracles.corpus.render import Rendered, Renderer, renderer_for
from lockstep.oracles.corpus.spec import CorpusSpec
from lockstep.oracles.lifecycle import ModeWords, StreamHooks, new_ids, record
from lockstep.oracles.stale import Mismatch, mismatches, rules_mismatch, stale_outcome
from lockstep.oracles.status import file_status
from lockstep.rules import RuleRecord, resolve_rules, secret_env_of
from lockstep.store import BlobBatch, BlobStore, display_path, sha256_hex
from lockstep.store.reading import open_file
from lockstep.targets import resolve_callable

if TYPE_CHECKING:
    # Loaded where they are used, not here: a green replay needs none of them (the diff of
    # a drift, recording's secret scan and verification, the process pool, mining).
    from lockstep.oracles.mining import MiningSubject
    from lockstep.secrets import SecretPolicy

SUFFIX: Final = ".lock.json"
_MODE_WORDS: Final = ModeWords(
    new_only="add new fixtures", force="re-record all", trim="drop vanished fixtures"
)
_CHUNK: Final = 256
"""Fixtures per work unit when replaying with several processes."""


def _blobs(project: Project) -> BlobStore:
    return BlobStore(project.oracle_dir / "blobs")


# ---------------------------------------------------------------- record


PENDING_FIXTURES: Final = "LOCKSTEP_PENDING_FIXTURES"
"""Set only for record's verification child: the folder (relative to the project root) of
the fixtures being recorded before they are moved into the fixture folder."""


def _with_pending(
    found: dict[str, Path], project: Project, pending: Path | None
) -> dict[str, Path]:
    """``found`` and the regular files of ``pending`` (by name), sorted by id."""
    if pending is None:
        named = os.environ.get(PENDING_FIXTURES)
        if not named:
            return found
        pending = project.root / named
    extra = {
        entry.name: Path(entry.path)
        for entry in os.scandir(pending)
        if entry.is_file(follow_symlinks=False)
    }
    return dict(sorted({**found, **extra}.items()))


def _record(
    project: Project,
    corpus: CorpusSpec,
    mode: RecordMode,
    only: frozenset[str] | None,
    pending: Path | None = None,
) -> RecordReport:
    """Render fixtures and write the lock, in the explicit ``mode`` asked for, through
    :func:`~lockstep.oracles.lifecycle.record` (the lock streamed: never held).

    ``only`` narrows ``--force`` to the cases being accepted (``lockstep accept``).
    ``pending``: a folder of fixtures not in the fixture folder yet, each recorded by its
    name there (what ``lockstep mine`` adds: moved in only once recorded).
    """
    path = KIND.oracle_path(project, corpus)
    found: dict[str, Path] = {}
    rules = functools.cache(lambda: resolve_rules(corpus.rules, project, where=project.key(corpus)))
    blobs = _blobs(project)
    written = False

    def present() -> dict[str, Path]:
        found.update(_with_pending(fixtures(project, corpus), project, pending))
        return found

    def contract(old: Lock) -> tuple[object, object]:
        return (old.rules, old.loose), (rules().records(), corpus.loose)

    def freeze(todo: Iterable[str], old: Lock | None, report: RecordReport) -> dict[str, Entry]:
        wanted = list(todo)
        if not wanted:
            return {}
        from lockstep.secrets import policy_for

        renderer = renderer_for(project, corpus, rules(), corpus.loose)
        policy = policy_for(project)
        frozen = (
            (fid, _freeze(fid, found[fid], renderer, batch, report, policy)) for fid in wanted
        )
        fresh = {fid: entry for fid, entry in frozen if entry is not None}
        return _reproducible(project, corpus, rules().records(), fresh, report, pending)

    def write(old: Lock | None, entries: Iterator[Entry], report: RecordReport) -> None:
        nonlocal written
        header = Lock(
            version=LOCK_VERSION,
            oracle=corpus.name,
            render=corpus.render,
            loose=corpus.loose,
            rules=rules().records(),
            entries=[],
        )

        def changed() -> bool:
            """Whether the lock differs from the one on disk (asked once the merge is walked)."""
            if old is None or report.added or report.replaced or report.trimmed:
                return True
            return msgspec.structs.replace(old, entries=[]) != header

        written = write_lock_streaming(path, header, entries, keep=changed)

    hooks: StreamHooks[Lock, Entry] = StreamHooks(
        read=lambda: read_lock(path),
        cases=lambda old: old.entries,
        key=_entry_id,
        present=present,
        freeze=freeze,
        write=write,
        contract=contract,
        what="rules or loose mode",
    )
    with blobs.batch() as batch:
        report = record(corpus.name, path, project.root, mode, _MODE_WORDS, hooks, only=only)
    if written and (report.trimmed or report.replaced):
        _discard_unreferenced(project, blobs)
    return report


def _entry_id(entry: Entry) -> str:
    return entry.id


class _UnreadableLock(Exception):
    """A lock in the oracle folder could not be read: no blob is removed."""


def _discard_unreferenced(project: Project, blobs: BlobStore) -> None:
    """Remove the blobs no corpus lock in the oracle folder refers to any more (those of
    trimmed or re-recorded fixtures).  The folder is shared by every corpus, so each lock
    in it is walked (streamed: the store groups what they name by blob folder, on disk
    past a bound); when one cannot be read, nothing is removed."""

    def referenced() -> Iterator[str]:
        for lock_path in sorted(project.oracle_dir.glob(f"*{SUFFIX}")):
            try:
                lock = read_lock(lock_path)
            except DataError:
                raise _UnreadableLock from None
            for entry in lock.entries:
                yield entry.sha256

    with contextlib.suppress(_UnreadableLock):
        blobs.discard_unreferenced(referenced())


def _reproducible(
    project: Project,
    corpus: CorpusSpec,
    rules: list[RuleRecord],
    fresh: dict[str, Entry],
    report: RecordReport,
    pending: Path | None = None,
) -> dict[str, Entry]:
    """The fixtures whose rendering reproduces in a fresh interpreter with another hash seed.

    A render that iterates a set of strings, reads a clock or depends on state the
    recording process built would drift on the next replay: it is refused now instead.
    """

    from lockstep.oracles.verify import verify

    def candidate(folder: Path) -> list[str]:
        lock = Lock(
            version=LOCK_VERSION,
            oracle=corpus.name,
            render=corpus.render,
            loose=corpus.loose,
            rules=rules,
            entries=list(fresh.values()),
        )
        write_lock(folder / f"{corpus.name}{SUFFIX}", lock)
        return list(fresh)

    env = None
    if pending is not None:
        env = {PENDING_FIXTURES: pending.relative_to(project.root).as_posix()}
    checked = verify(project, corpus, candidate, env=env)
    report.notes.append(checked.note(len(fresh)))
    failed = {v.case_id: v for v in checked.failed()}
    report.refused.extend(
        Refusal(corpus.name, fid, RefusalReason.NOT_REPRODUCED, detail=v.reason, cause=v.cause)
        for fid, v in failed.items()
    )
    return {fid: entry for fid, entry in fresh.items() if fid not in failed}


def _freeze(
    fixture_id: str,
    fixture_path: Path,
    renderer: Renderer,
    batch: BlobBatch,
    report: RecordReport,
    policy: SecretPolicy,
) -> Entry | None:
    """Render one fixture and store its bytes; a render that raised is noted as behaviour.

    A rendering that holds a secret is refused before its bytes reach the blob store.
    """
    rendered = renderer(fixture_id, fixture_path)
    raised = rendered.raised
    refusal = policy.refusal(
        report.oracle,
        fixture_id,
        {"id": fixture_id, "output": rendered.data, "exception": raised and raised.exc_stem},
    )
    if refusal is not None:
        report.refused.append(refusal)
        return None
    digest = batch.put(rendered.data)
    if rendered.raised is not None:
        report.notes.append(
            f"{fixture_id}: render raised {rendered.raised.exc_type}: "
            f"{rendered.raised.exc_stem} (frozen as behaviour)"
        )
    return Entry(fixture_id, digest, len(rendered.data), rendered.raised)


# ---------------------------------------------------------------- replay


def _compare(oracle: str, entry: Entry, rendered: Rendered, blobs: BlobStore) -> Outcome:
    actual_sha = sha256_hex(rendered.data)
    if (
        actual_sha == entry.sha256
        and len(rendered.data) == entry.nbytes
        and rendered.raised == entry.raised
    ):
        return Outcome(oracle, entry.id, Status.PASS, rules_fired=rendered.fired)
    from lockstep.oracles.corpus.compare import rendering_drift, summary

    drift = rendering_drift(
        blobs.get(entry.sha256),
        summary(entry.raised, entry.nbytes, entry.sha256),
        entry.raised,
        rendered,
        label_expected=f"{entry.id} (recorded)",
        label_actual=f"{entry.id} (now)",
    )
    return Outcome(oracle, entry.id, Status.DRIFT, (drift,), rules_fired=rendered.fired)


def _new_fixture(oracle: str, fixture_id: str) -> Outcome:
    return Outcome(
        oracle,
        fixture_id,
        Status.NEW,
        note=f"not in the lock; 'lockstep record {oracle} --new-only' adds it",
    )


def _vanished_fixture(oracle: str, fixture_id: str) -> Outcome:
    return Outcome(
        oracle,
        fixture_id,
        Status.MISSING,
        note="the fixture is gone; 'lockstep record --trim' drops it from the lock",
    )


def _pair(
    oracle: str, lock: Lock, found: dict[str, Path], options: ReplayOptions
) -> tuple[list[tuple[Entry, Path]], list[Outcome]]:
    """The selected locked entries with their fixture, and the outcomes of the selected
    entries whose fixture is gone and of the fixtures the lock does not know.

    One walk of the lock, joined with the sorted fixture ids (no set of the lock's ids)."""
    every = options.only is None and options.shard is None
    todo: list[tuple[Entry, Path]] = []
    unmatched: list[Outcome] = []
    new: list[Outcome] = []
    on_disk = iter(sorted(found))
    fixture_id = next(on_disk, None)
    for entry in lock.entries:
        while fixture_id is not None and fixture_id < entry.id:
            if options.selects(fixture_id):
                new.append(_new_fixture(oracle, fixture_id))
            fixture_id = next(on_disk, None)
        if fixture_id == entry.id:
            fixture_id = next(on_disk, None)
        if not every and not options.selects(entry.id):
            continue
        fixture_path = found.get(entry.id)
        if fixture_path is None:
            unmatched.append(_vanished_fixture(oracle, entry.id))
            continue
        todo.append((entry, fixture_path))
    while fixture_id is not None:
        if options.selects(fixture_id):
            new.append(_new_fixture(oracle, fixture_id))
        fixture_id = next(on_disk, None)
    unmatched.extend(new)
    return todo, unmatched


def _stale(corpus: CorpusSpec, lock: Lock, rules: list[RuleRecord]) -> list[Mismatch]:
    """How the lock was made against how the configuration renders now.

    The lock's copy of the render callable, loose mode and rules is a record,
    never obeyed: replay renders with the configuration's, and a difference
    makes every case stale rather than loosening the comparison.
    """
    found = mismatches(
        [
            ("render", lock.render, corpus.render),
            ("loose", lock.loose, corpus.loose),
            ("oracle", lock.oracle, corpus.name),
        ]
    )
    return found + rules_mismatch(lock.rules, rules)


def _replay_parallel(
    project: Project,
    corpus: CorpusSpec,
    todo: list[tuple[Entry, Path]],
    blobs: BlobStore,
    jobs: int,
) -> Iterator[Outcome]:
    """Batches of fixtures to ``jobs`` processes through the one bounded executor."""
    from lockstep.oracles.corpus.render import worker_init, worker_render
    from lockstep.parallel import batched, map_processes

    by_id = {entry.id: entry for entry, _ in todo}
    init_args = (
        str(project.root),
        corpus.render,
        corpus.loose,
        resolve_rules(corpus.rules, project, where=project.key(corpus)).records(),
        project.config.lockstep.stem_length,
        secret_env_of(project),
    )
    batches = batched(((entry.id, str(p)) for entry, p in todo), _CHUNK)
    for results in map_processes(
        worker_render, batches, jobs=jobs, initializer=worker_init, initargs=init_args
    ):
        for fixture_id, rendered in results:
            yield _compare(corpus.name, by_id[fixture_id], rendered, blobs)


class CorpusKind(OracleKind[CorpusSpec]):
    """Fixture files → render callable → canonical bytes → sha256 lock."""

    name = "corpus"
    suffix = SUFFIX

    def record_cases(
        self, project: Project, spec: CorpusSpec, mode: RecordMode, only: frozenset[str] | None
    ) -> RecordReport:
        return _record(project, spec, mode, only)

    def replay(
        self, project: Project, corpus: CorpusSpec, options: ReplayOptions
    ) -> Iterator[Outcome]:
        """Re-render every locked fixture and compare; also report new and vanished fixtures."""
        path = self.oracle_path(project, corpus)
        if not path.exists():
            raise UsageError(
                f"{display_path(path, project.root)} does not exist; run 'lockstep record {corpus.name}'"
            )
        lock = read_lock(path)
        found = _with_pending(fixtures(project, corpus), project, None)
        blobs = _blobs(project)
        todo, unmatched = _pair(corpus.name, lock, found, options)
        yield from unmatched
        if not todo:
            return
        rules = resolve_rules(corpus.rules, project, where=project.key(corpus))
        stale = _stale(corpus, lock, rules.records())
        if stale:
            for entry, _ in todo:
                yield stale_outcome(corpus.name, entry.id, stale, config_name=project.config_name)
            return
        if options.jobs > 1 and len(todo) >= 2 * _CHUNK:
            yield from _replay_parallel(project, corpus, todo, blobs, options.jobs)
            return
        renderer = renderer_for(project, corpus, rules, corpus.loose)
        for entry, fixture_path in todo:
            yield _compare(corpus.name, entry, renderer(entry.id, fixture_path), blobs)

    def case_runner(self, project: Project, corpus: CorpusSpec) -> CaseRunner:
        """Load the lock, glob the fixtures and import render once; then replay case by case."""
        path = self.oracle_path(project, corpus)
        lock = read_lock(path)
        found = fixtures(project, corpus)
        new = set(new_ids(sorted(found), (e.id for e in lock.entries)))
        entries = EntryCursor(lock.entries)
        blobs = _blobs(project)
        rules = resolve_rules(corpus.rules, project, where=project.key(corpus))
        stale = _stale(corpus, lock, rules.records())
        renderer = renderer_for(project, corpus, rules, corpus.loose)

        def run(case_id: str) -> Outcome:
            entry = None if case_id in new else entries.get(case_id)
            fixture_path = found.get(case_id)
            if entry is None:
                return _new_fixture(corpus.name, case_id)
            if fixture_path is None:
                return _vanished_fixture(corpus.name, case_id)
            if stale:
                return stale_outcome(corpus.name, case_id, stale, config_name=project.config_name)
            return _compare(corpus.name, entry, renderer(case_id, fixture_path), blobs)

        return run

    def case_ids(self, project: Project, corpus: CorpusSpec) -> Iterator[str]:
        """Locked fixture ids, plus new fixtures on disk (so pytest shows them too)."""
        lock = read_lock(self.oracle_path(project, corpus))
        yield from (e.id for e in lock.entries)
        try:
            on_disk = fixtures(project, corpus)
        except ConfigError:
            return
        yield from new_ids(sorted(on_disk), (e.id for e in lock.entries))

    def status(self, project: Project, corpus: CorpusSpec) -> OracleStatus:
        """Present, readable, how many fixtures, and whether their documents are all kept."""
        path = self.oracle_path(project, corpus)

        def read() -> tuple[int, str]:
            lock = read_lock(path)
            blobs = _blobs(project)
            missing = sum(1 for e in lock.entries if not blobs.has(e.sha256))
            remark = f"{missing} blobs missing (diffs will show hashes only)" if missing else ""
            return len(lock.entries), remark

        return file_status(corpus, path, read)

    def inputs(self, project: Project, corpus: CorpusSpec) -> tuple[OracleInput, ...]:
        """The fixture glob: changing a fixture re-records the corpus."""
        return (OracleInput(corpus.fixtures, f"fixtures of corpus {corpus.name!r}"),)

    def mining(self, project: Project, corpus: CorpusSpec) -> MiningSubject:
        """The render, imported once, with this kind's rendering, comparison and record path."""
        from lockstep.oracles.corpus.mining import CorpusSubject

        rules = resolve_rules(corpus.rules, project, where=project.key(corpus))
        renderer = renderer_for(project, corpus, rules, corpus.loose)

        def record_new(pending: Path) -> RecordReport:
            return _record(project, corpus, RecordMode.NEW_ONLY, None, pending)

        sources = used_scope(project, renderer.func).files
        return CorpusSubject(
            project, corpus, renderer, self.oracle_path(project, corpus), record_new, sources
        )

    def case_inputs(self, project: Project, corpus: CorpusSpec) -> Iterator[CaseInput]:
        """Each fixture: its path, and its text (the first 4 KiB) for matching."""
        for fixture_id, path in sorted(fixtures(project, corpus).items()):
            try:
                with open_file(path, through_links=True) as fh:  # not a pipe's endless stream
                    head = fh.read(4096).decode("utf-8", "replace")
            except OSError:
                head = ""
            yield CaseInput(fixture_id, display_path(path, project.root), (head,))

    def strength_scope(self, project: Project, corpus: CorpusSpec) -> StrengthScope:
        """The render callable's module and the project modules it uses (a render is often a thin
        harness around the code under freeze)."""
        render = resolve_callable(
            corpus.render, project.root, where=project.where(corpus, "render")
        )
        return used_scope(project, render)


KIND: Final = CorpusKind()
