"""The corpus oracle: fixture files → render callable → canonical bytes → sha256 lock.

The lock (``<dir>/<name>.lock.json``) is small and reviewable: a version, the
render callable and rules it was made with, and one entry per fixture sorted by
id with the sha256 and size of the rendered bytes.  The rendered bytes
themselves go to the content-addressed blob store (``<dir>/blobs/``) so that a
drift can print both documents, not two hashes.

A render that raises is behaviour like any other: the exception is frozen as
its type and message stem (and replayed as such), and one failing fixture never
stops the others.  A render that returns a value the codec cannot freeze is a
usage error (exit 2), because no honest oracle can be written for it.

Case ids are fixture paths relative to the folder part of the glob, so
``fixtures/transform/*.json`` gives ids like ``basic.json``.
"""

from __future__ import annotations

import glob as globlib
import os
import stat
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Final

import msgspec

from lockstep import canon
from lockstep.config import CorpusSpec, OracleSpec, Project
from lockstep.diff import document_diff
from lockstep.errors import CanonError, ConfigError, DataError, UsageError
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
from lockstep.oracles.status import file_status
from lockstep.rules import RuleRecord, RuleSet, resolve_rules, rules_from_records
from lockstep.store import (
    BlobBatch,
    BlobStore,
    atomic_write,
    display_path,
    pretty_json,
    read_json,
    sha256_hex,
)
from lockstep.targets import resolve_callable

LOCK_VERSION: Final = 1
_MODE_WORDS: Final = ModeWords(
    new_only="add new fixtures", force="re-record all", trim="drop vanished fixtures"
)
_CHUNK: Final = 256


class Entry(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """One fixture's frozen output."""

    id: str
    sha256: str
    nbytes: int
    raised: canon.FrozenException | None = None
    """Set when the render raised: the frozen exception is the behaviour."""


class Lock(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The whole ``*.lock.json`` document."""

    version: int
    oracle: str
    render: str
    loose: bool = False
    rules: list[RuleRecord] = []
    entries: list[Entry]


class _Header(msgspec.Struct):
    """Just enough of a lock to check its version before trusting the rest."""

    version: Any = None


def oracle_path(project: Project, spec: OracleSpec) -> Path:
    return project.oracle_dir / f"{spec.name}.lock.json"


def _blobs(project: Project) -> BlobStore:
    return BlobStore(project.oracle_dir / "blobs")


def _spec(spec: OracleSpec) -> CorpusSpec:
    assert isinstance(spec, CorpusSpec)
    return spec


def _where(project: Project, spec: CorpusSpec) -> str:
    index = next(i for i, s in enumerate(project.config.corpus) if s.name == spec.name)
    return f"{project.config_name}: corpus[{index}]"


# ---------------------------------------------------------------- fixtures


def _glob_base(pattern: str) -> str:
    """The folder part of a glob before its first wildcard."""
    parts = Path(pattern).parts
    fixed: list[str] = []
    for part in parts[:-1]:
        if globlib.has_magic(part):
            break
        fixed.append(part)
    return str(Path(*fixed)) if fixed else "."


def fixtures(project: Project, spec: CorpusSpec) -> dict[str, Path]:
    """Fixture id → path, for every file the glob matches; config errors name the key.

    Each match costs one ``lstat``: a regular file resolves to its folder's
    resolved path (looked up once per folder) plus its name, and only a symlink
    pays a full ``realpath``.  Resolving every match outright cost more than
    rendering a ten-thousand-fixture corpus.
    """
    where = _where(project, spec)
    base_rel = _glob_base(spec.fixtures)
    base = project.resolve(base_rel, key=f"{where.split(': ')[1]}.fixtures")
    if not base.is_dir():
        raise ConfigError(f"{where}.fixtures: folder {base_rel!r} does not exist")
    root = os.path.realpath(project.root)
    inside = root if root.endswith(os.sep) else root + os.sep
    base_dir = project.root / base_rel
    prefix = str(base_dir) + os.sep
    real_folders: dict[str, str] = {}
    found: dict[str, Path] = {}
    for match in globlib.iglob(str(project.root / spec.fixtures), recursive=True):
        try:
            mode = os.lstat(match).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode):
            folder, name = os.path.split(match)
            real_folder = real_folders.get(folder)
            if real_folder is None:
                real_folder = real_folders[folder] = os.path.realpath(folder)
            resolved = os.path.join(real_folder, name)
        elif stat.S_ISLNK(mode) and os.path.isfile(match):
            resolved = os.path.realpath(match)
        else:
            continue
        if not resolved.startswith(inside):
            raise ConfigError(f"{where}.fixtures: {match!r} escapes the project root")
        path = Path(match)
        shown = str(path)
        if shown.startswith(prefix):
            found[shown[len(prefix) :].replace(os.sep, "/")] = path
        else:
            found[path.relative_to(base_dir).as_posix()] = path
    if not found:
        raise ConfigError(f"{where}.fixtures: {spec.fixtures!r} matches no files")
    return dict(sorted(found.items()))


# ---------------------------------------------------------------- rendering


class Rendered(msgspec.Struct, frozen=True):
    """The normalized bytes one fixture rendered to (or the exception it raised)."""

    data: bytes
    raised: canon.FrozenException | None = None
    fired: tuple[tuple[str, int], ...] = ()
    """Spans each rule replaced while normalizing this output."""


def _to_bytes(value: Any, *, loose: bool, fixture_id: str) -> bytes:
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    try:
        return canon.dumps(value, loose=loose, path=f"render({fixture_id!r})")
    except CanonError as e:
        raise UsageError(f"render returned a value that cannot be frozen: {e}") from None


class Renderer:
    """Calls the user's render function and turns what it returns into normalized bytes."""

    def __init__(
        self, func: Callable[[Path], Any], *, loose: bool, rules: RuleSet, stem_length: int
    ) -> None:
        self.func = func
        self.loose = loose
        self.rules = rules
        self.stem_length = stem_length

    def __call__(self, fixture_id: str, path: Path) -> Rendered:
        try:
            value = self.func(path)
        except Exception as exc:
            frozen = canon.freeze_exception(exc, stem_length=self.stem_length)
            text = f"raised {frozen.exc_type}: {frozen.exc_stem}\n"
            return Rendered(text.encode("utf-8"), frozen)
        data = _to_bytes(value, loose=self.loose, fixture_id=fixture_id)
        if not self.rules.rules:
            return Rendered(data)
        local = self.rules.fresh()
        return Rendered(local.apply_bytes(data), fired=local.counts())


def _renderer(project: Project, spec: CorpusSpec, rules: RuleSet, loose: bool) -> Renderer:
    where = _where(project, spec)
    func = resolve_callable(spec.render, project.root, where=f"{where}.render")
    return Renderer(func, loose=loose, rules=rules, stem_length=project.config.lockstep.stem_length)


# Worker-side state for parallel replay: the renderer is built once per process.
_worker_renderer: Renderer | None = None


def _worker_init(
    root: str, render: str, loose: bool, rules: list[RuleRecord], stem_length: int
) -> None:
    global _worker_renderer
    func = resolve_callable(render, Path(root), where="render")
    rule_set = rules_from_records(rules, where="lock")
    _worker_renderer = Renderer(func, loose=loose, rules=rule_set, stem_length=stem_length)


def _worker_render(batch: list[tuple[str, str]]) -> list[tuple[str, Rendered]]:
    assert _worker_renderer is not None
    return [(fid, _worker_renderer(fid, Path(p))) for fid, p in batch]


# ---------------------------------------------------------------- lock I/O


def read_lock(path: Path) -> Lock:
    """Read and validate a lock: version, sorted unique ids; errors name the file."""
    shown = display_path(path)
    header = read_json(path, _Header)
    if header.version != LOCK_VERSION:
        raise DataError(
            f"{shown}: unknown lock version {header.version!r} (this lockstep reads {LOCK_VERSION})"
        )
    lock = read_json(path, Lock)
    seen: set[str] = set()
    for entry in lock.entries:
        if entry.id in seen:
            raise DataError(f"{shown}: duplicate fixture id {entry.id!r}")
        seen.add(entry.id)
    return lock


def _write_lock(path: Path, lock: Lock) -> None:
    entries = sorted(lock.entries, key=lambda e: e.id)
    atomic_write(path, pretty_json(msgspec.structs.replace(lock, entries=entries)))


# ---------------------------------------------------------------- record


def record(project: Project, spec: OracleSpec, mode: RecordMode) -> RecordReport:
    """Render fixtures and write the lock, in the explicit ``mode`` asked for."""
    corpus = _spec(spec)
    path = oracle_path(project, corpus)
    report = RecordReport(corpus.name, path, mode)
    exists = check_record_mode(path, project.root, corpus.name, mode, _MODE_WORDS)
    old = read_lock(path) if exists else None
    where = _where(project, corpus)
    found = fixtures(project, corpus)
    blobs = _blobs(project)

    if mode is RecordMode.TRIM:
        assert old is not None
        kept = [e for e in old.entries if e.id in found]
        report.trimmed = [e.id for e in old.entries if e.id not in found]
        report.unchanged = [e.id for e in kept]
        if report.trimmed:
            _write_lock(path, msgspec.structs.replace(old, entries=kept))
        return report

    if mode is RecordMode.NEW_ONLY:
        assert old is not None
        rules = rules_from_records(old.rules, where=display_path(path, project.root))
        config_rules = resolve_rules(corpus.rules, project, where=where.split(": ")[1])
        if config_rules.records() != old.rules or old.loose != corpus.loose:
            raise UsageError(
                f"{corpus.name}: the configured rules or loose mode differ from the lock's; "
                "adding cases under other rules would mix two contracts: use --force"
            )
        loose = old.loose
    else:
        rules = resolve_rules(corpus.rules, project, where=where.split(": ")[1])
        loose = corpus.loose

    renderer = _renderer(project, corpus, rules, loose)
    old_by_id = {e.id: e for e in old.entries} if old else {}
    with blobs.batch() as batch:
        entries = _render_entries(found, renderer, batch, old_by_id, mode, report)
        if mode is RecordMode.FORCE:
            report.trimmed = [fid for fid in old_by_id if fid not in found]
        if mode is RecordMode.NEW_ONLY and old is not None:
            # Keep entries whose fixture vanished: only --trim drops them.
            entries.extend(e for e in old.entries if e.id not in found)
        lock = Lock(
            version=LOCK_VERSION,
            oracle=corpus.name,
            render=corpus.render,
            loose=loose,
            rules=rules.records(),
            entries=entries,
        )
        if old is None or lock != old:
            _write_lock(path, lock)
    return report


def _render_entries(
    found: dict[str, Path],
    renderer: Renderer,
    batch: BlobBatch,
    old_by_id: dict[str, Entry],
    mode: RecordMode,
    report: RecordReport,
) -> list[Entry]:
    """Render each fixture the mode asks for, store its bytes, and sort it into the report."""
    entries: list[Entry] = []
    for fixture_id, fixture_path in found.items():
        if mode is RecordMode.NEW_ONLY and fixture_id in old_by_id:
            entries.append(old_by_id[fixture_id])
            report.unchanged.append(fixture_id)
            continue
        rendered = renderer(fixture_id, fixture_path)
        digest = batch.put(rendered.data)
        entries.append(Entry(fixture_id, digest, len(rendered.data), rendered.raised))
        if rendered.raised is not None:
            report.notes.append(
                f"{fixture_id}: render raised {rendered.raised.exc_type}: "
                f"{rendered.raised.exc_stem} (frozen as behaviour)"
            )
        previous = old_by_id.get(fixture_id)
        if previous is None:
            report.added.append(fixture_id)
        elif previous.sha256 != digest:
            report.replaced.append(fixture_id)
        else:
            report.unchanged.append(fixture_id)
    return entries


# ---------------------------------------------------------------- replay


def _compare(oracle: str, entry: Entry, rendered: Rendered, blobs: BlobStore) -> Outcome:
    actual_sha = sha256_hex(rendered.data)
    if actual_sha == entry.sha256:
        return Outcome(oracle, entry.id, Status.PASS, rules_fired=rendered.fired)
    expected = blobs.get(entry.sha256)
    summary_exp = _summary(entry.raised, entry.nbytes, entry.sha256)
    summary_act = _summary(rendered.raised, len(rendered.data), actual_sha)
    if expected is None:
        diff = "(the recorded document is not in the blob store; only hashes can be compared)\n"
    else:
        diff = document_diff(
            expected,
            rendered.data,
            label_expected=f"{entry.id} (recorded)",
            label_actual=f"{entry.id} (now)",
        )
    aspect = "exception" if (entry.raised or rendered.raised) else "output"
    return Outcome(
        oracle,
        entry.id,
        Status.DRIFT,
        (Drift(aspect, summary_exp, summary_act, diff),),
        rules_fired=rendered.fired,
    )


def _new_fixture(oracle: str, fixture_id: str) -> Outcome:
    return Outcome(
        oracle, fixture_id, Status.NEW, note="not in the lock; 'lockstep record --new-only' adds it"
    )


def _vanished_fixture(oracle: str, fixture_id: str) -> Outcome:
    return Outcome(
        oracle,
        fixture_id,
        Status.MISSING,
        note="the fixture is gone; 'lockstep record --trim' drops it from the lock",
    )


def _summary(raised: canon.FrozenException | None, nbytes: int, sha: str) -> str:
    if raised is not None:
        return f"raised {raised.exc_type}: {raised.exc_stem}"
    return f"{nbytes} bytes, sha256 {sha[:12]}"


def replay(project: Project, spec: OracleSpec, options: ReplayOptions) -> Iterator[Outcome]:
    """Re-render every locked fixture and compare; also report new and vanished fixtures."""
    corpus = _spec(spec)
    path = oracle_path(project, corpus)
    if not path.exists():
        raise UsageError(
            f"{display_path(path, project.root)} does not exist; run 'lockstep record {corpus.name}'"
        )
    lock = read_lock(path)
    found = fixtures(project, corpus)
    shown = display_path(path, project.root)
    rules = rules_from_records(lock.rules, where=shown)
    blobs = _blobs(project)
    todo: list[tuple[Entry, Path]] = []
    for entry in lock.entries:
        if not options.selects(entry.id):
            continue
        fixture_path = found.get(entry.id)
        if fixture_path is None:
            yield _vanished_fixture(corpus.name, entry.id)
            continue
        todo.append((entry, fixture_path))
    locked = {e.id for e in lock.entries}
    for fixture_id in found:
        if fixture_id not in locked and options.selects(fixture_id):
            yield _new_fixture(corpus.name, fixture_id)
    if not todo:
        return
    if options.jobs > 1 and len(todo) >= 2 * _CHUNK:
        yield from _replay_parallel(project, corpus, lock, todo, blobs, options.jobs)
        return
    renderer = _renderer(project, corpus, rules, lock.loose)
    for entry, fixture_path in todo:
        yield _compare(corpus.name, entry, renderer(entry.id, fixture_path), blobs)


def _replay_parallel(
    project: Project,
    corpus: CorpusSpec,
    lock: Lock,
    todo: list[tuple[Entry, Path]],
    blobs: BlobStore,
    jobs: int,
) -> Iterator[Outcome]:
    by_id = {entry.id: entry for entry, _ in todo}
    batches = [
        [(entry.id, str(p)) for entry, p in todo[i : i + _CHUNK]]
        for i in range(0, len(todo), _CHUNK)
    ]
    init_args = (
        str(project.root),
        lock.render if lock.render == corpus.render else corpus.render,
        lock.loose,
        list(lock.rules),
        project.config.lockstep.stem_length,
    )
    with ProcessPoolExecutor(
        max_workers=jobs, initializer=_worker_init, initargs=init_args
    ) as pool:
        for results in pool.map(_worker_render, batches):
            for fixture_id, rendered in results:
                yield _compare(corpus.name, by_id[fixture_id], rendered, blobs)


def case_runner(project: Project, spec: OracleSpec) -> Callable[[str], Outcome]:
    """Load the lock, glob the fixtures and import render once; then replay case by case."""
    corpus = _spec(spec)
    path = oracle_path(project, corpus)
    lock = read_lock(path)
    found = fixtures(project, corpus)
    by_id = {e.id: e for e in lock.entries}
    blobs = _blobs(project)
    renderer = _renderer(
        project, corpus, rules_from_records(lock.rules, where=display_path(path)), lock.loose
    )

    def run(case_id: str) -> Outcome:
        entry = by_id.get(case_id)
        fixture_path = found.get(case_id)
        if entry is None:
            return _new_fixture(corpus.name, case_id)
        if fixture_path is None:
            return _vanished_fixture(corpus.name, case_id)
        return _compare(corpus.name, entry, renderer(case_id, fixture_path), blobs)

    return run


def case_ids(project: Project, spec: OracleSpec) -> Iterator[str]:
    """Locked fixture ids, plus new fixtures on disk (so pytest shows them too)."""
    corpus = _spec(spec)
    lock = read_lock(oracle_path(project, corpus))
    locked = [e.id for e in lock.entries]
    yield from locked
    try:
        on_disk = fixtures(project, corpus)
    except ConfigError:
        return
    known = set(locked)
    yield from (fid for fid in on_disk if fid not in known)


def status(project: Project, spec: OracleSpec) -> OracleStatus:
    """Present, readable, how many fixtures, and whether their documents are all kept."""
    corpus = _spec(spec)
    path = oracle_path(project, corpus)

    def read() -> tuple[int, str]:
        lock = read_lock(path)
        blobs = _blobs(project)
        missing = sum(1 for e in lock.entries if not blobs.has(e.sha256))
        remark = f"{missing} blobs missing (diffs will show hashes only)" if missing else ""
        return len(lock.entries), remark

    return file_status(corpus, path, read)
