"""Corpus record and accept stream the lock: the streamed merge answers as the shared in-memory
merge does in every mode, the streamed writer writes the same bytes, blobs no lock names are
removed however many there are, and memory stays flat in the number of locked entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import GitRepo, invoke_cli, write_files
from lockstep import canon, store
from lockstep.model import RecordMode, RecordReport
from lockstep.oracles.corpus.cursor import EntryCursor
from lockstep.oracles.corpus.lock import (
    LOCK_VERSION,
    Entry,
    Lock,
    lock_chunks,
    read_lock,
    write_lock,
    write_lock_streaming,
)
from lockstep.oracles.lifecycle import merge, merged, new_ids, wanted
from lockstep.rules import RuleRecord
from lockstep.store import blobs as blob_module

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


SHAS = ["0" * 64, "1" * 64, "ab" * 32]
BOOM = canon.FrozenException("ValueError", "bad {\n    } ],")

ids = st.text(alphabet="ab.\n{", min_size=1, max_size=3)
entry_values = st.tuples(st.sampled_from(SHAS), st.integers(0, 3), st.booleans())


def _entry(case_id: str, value: tuple[str, int, bool]) -> Entry:
    sha, nbytes, raised = value
    return Entry(case_id, sha, nbytes, BOOM if raised else None)


@st.composite
def scenarios(
    draw: st.DrawFn,
) -> tuple[list[Entry], dict[str, Entry], set[str], RecordMode, frozenset[str] | None]:
    old_ids = sorted(draw(st.sets(ids, max_size=8)))
    old = [_entry(i, draw(entry_values)) for i in old_ids]
    fresh_ids = sorted(draw(st.sets(ids, max_size=8)))
    fresh = {i: _entry(i, draw(entry_values)) for i in fresh_ids}
    present = draw(st.sets(ids, max_size=8)) | set(fresh_ids)
    mode = draw(st.sampled_from(RecordMode))
    only = None
    if mode is RecordMode.FORCE and draw(st.booleans()):  # an accept
        only = frozenset(fresh_ids) | draw(st.frozensets(ids, max_size=3))
    return old, fresh, present, mode, only


@given(scenarios())
@settings(max_examples=400)
def test_the_streamed_merge_answers_as_the_shared_merge(
    scenario: tuple[list[Entry], dict[str, Entry], set[str], RecordMode, frozenset[str] | None],
) -> None:
    old, fresh, present, mode, only = scenario
    by_id = {e.id: e for e in old}
    expected = RecordReport("rows", Path("rows.lock.json"), mode)
    expected_entries = list(
        merge(expected, by_id, fresh, present, same=lambda a, b: a == b, only=only).values()
    )
    got = RecordReport("rows", Path("rows.lock.json"), mode)
    got_entries = list(
        merged(got, iter(old), fresh, present, key=lambda e: e.id, only=only, listed=False)
    )
    assert got_entries == expected_entries
    assert (got.added, got.replaced, got.trimmed, got.notes) == (
        expected.added,
        expected.replaced,
        expected.trimmed,
        expected.notes,
    )
    assert got.unchanged == [] and got.unchanged_unlisted == len(expected.unchanged)
    on_disk = sorted(present)
    assert new_ids(on_disk, (e.id for e in old)) == wanted(RecordMode.NEW_ONLY, on_disk, by_id)


@given(
    st.lists(st.tuples(ids, entry_values), max_size=12, unique_by=lambda t: t[0]),
    st.booleans(),
    st.lists(st.sampled_from(["uuid", "iso-timestamp"]), unique=True),
)
@settings(max_examples=200)
def test_the_streamed_writer_writes_write_locks_bytes(
    tmp_path_factory: pytest.TempPathFactory,
    listed: list[tuple[str, tuple[str, int, bool]]],
    loose: bool,
    rule_names: list[str],
) -> None:
    entries = [_entry(i, v) for i, v in sorted(listed)]
    rules = [
        RuleRecord(name=name, pattern=f"p{n}", replace="<X>", builtin=n > 0)
        for n, name in enumerate(rule_names)
    ]
    header = Lock(
        version=LOCK_VERSION, oracle="rows", render="m:f", loose=loose, rules=rules, entries=[]
    )
    folder = tmp_path_factory.mktemp("lock")
    write_lock(folder / "whole.lock.json", Lock(**{**_fields(header), "entries": entries}))
    expected = (folder / "whole.lock.json").read_bytes()
    assert b"".join(lock_chunks(header, iter(entries))) == expected
    assert write_lock_streaming(folder / "rows.lock.json", header, iter(entries), keep=lambda: True)
    assert (folder / "rows.lock.json").read_bytes() == expected
    assert list(read_lock(folder / "rows.lock.json").entries) == entries


def _fields(lock: Lock) -> dict[str, object]:
    return {f: getattr(lock, f) for f in lock.__struct_fields__}


def test_a_streamed_write_that_is_not_kept_leaves_the_lock_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "rows.lock.json"
    path.write_bytes(b"old bytes")
    header = Lock(version=LOCK_VERSION, oracle="rows", render="m:f", entries=[])
    entries = (Entry(f"f{i}", SHAS[0], i) for i in range(10_000))
    assert not write_lock_streaming(path, header, entries, keep=lambda: False)
    assert path.read_bytes() == b"old bytes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.lock.json"]


@pytest.mark.parametrize("bound", [3, 1 << 16])
def test_unreferenced_blobs_are_found_in_memory_or_spilled_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: int
) -> None:
    monkeypatch.setattr(blob_module, "_IN_MEMORY", bound)
    blobs = store.BlobStore(tmp_path / "lockstep" / "blobs")
    datas = [f"doc {i}".encode() for i in range(40)]
    digests = [blobs.put(d) for d in datas]
    stray = blobs.root / "zz"
    stray.mkdir()
    (stray / "not-a-blob").write_text("x")
    odd = blobs.root / "ab"
    odd.mkdir(exist_ok=True)
    (odd / ("C" * 62)).write_text("named in upper case, and kept by that name")
    (odd / ("c" * 62)).write_text("its lower-case spelling, not kept")
    kept = [d for i, d in enumerate(digests) if i % 3]
    keep = iter([*kept[:10], "ab" + "C" * 62, *kept[10:]])  # a stream, walked once
    assert blobs.discard_unreferenced(keep) == len(range(0, 40, 3)) + 2
    for i, d in enumerate(digests):
        assert blobs.has(d) == bool(i % 3)
    assert not (stray / "not-a-blob").exists()
    assert (odd / ("C" * 62)).exists() and not (odd / ("c" * 62)).exists()


# ---------------------------------------------------------------- through the command line

CONFIG = """
[[corpus]]
name = "rows"
fixtures = "fixtures/*.json"
render = "harness:render"
"""

HARNESS = """
import json


def render(path):
    return json.loads(path.read_text())
"""


def _project(root: Path) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": CONFIG,
            "harness.py": HARNESS,
            "fixtures/m_one.json": '{"a": 1}',
            "fixtures/m_two.json": '{"a": 2}',
        },
    )
    assert invoke_cli("record", "rows", cwd=root).code == 0
    return root


def _grow(root: Path, extra: int) -> list[Entry]:
    """Add ``extra`` entries whose fixtures are gone (kept by --new-only, as a big lock's)."""
    path = root / "lockstep" / "rows.lock.json"
    lock = read_lock(path)
    entries = [*lock.entries, *(Entry(f"v{i:07}.json", SHAS[i % 3], i) for i in range(extra))]
    write_lock(path, Lock(**{**_fields(lock), "entries": entries}))
    return sorted(entries, key=lambda e: e.id)


def test_record_modes_and_blobs_on_a_lock_of_many_entries(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    entries = _grow(root, 5000)
    lock_path = root / "lockstep" / "rows.lock.json"
    write_files(root, {"fixtures/a_new.json": '{"a": 0}'})
    result = invoke_cli("record", "rows", "--new-only", cwd=root)
    assert result.code == 0, result.output
    assert "added 1: a_new.json" in result.stdout and "unchanged 5002" in result.stdout
    after = read_lock(lock_path)
    assert [e.id for e in after.entries] == ["a_new.json", *(e.id for e in entries)]
    written = lock_path.read_bytes()
    write_lock(tmp_path / "check.lock.json", after)
    assert (tmp_path / "check.lock.json").read_bytes() == written

    # nothing new: the lock is left as it is (not even rewritten)
    stamp = lock_path.stat().st_mtime_ns
    result = invoke_cli("record", "rows", "--new-only", cwd=root)
    assert "nothing to change" in result.stdout and lock_path.stat().st_mtime_ns == stamp

    # --force re-records every fixture present, drops the vanished entries, and removes the
    # blob of the document it replaced
    blob_root = root / "lockstep" / "blobs"
    old_doc = json.loads(lock_path.read_text())["entries"][0]["sha256"]
    write_files(root, {"fixtures/a_new.json": '{"a": 10}'})
    result = invoke_cli("record", "rows", "--force", cwd=root)
    assert result.code == 0, result.output
    assert "replaced 1: a_new.json" in result.stdout and "trimmed 5000" in result.stdout
    assert [e.id for e in read_lock(lock_path).entries] == [
        "a_new.json",
        "m_one.json",
        "m_two.json",
    ]
    kept = {e.sha256 for e in read_lock(lock_path).entries}
    assert {p.parent.name + p.name for p in blob_root.glob("*/*")} == kept
    assert old_doc not in kept


def test_trim_drops_the_vanished_entries_of_a_big_lock(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    _grow(root, 3000)
    result = invoke_cli("record", "rows", "--trim", cwd=root)
    assert result.code == 0, result.output
    assert "trimmed 3000: v0000000.json" in result.stdout and "unchanged 2" in result.stdout
    lock_path = root / "lockstep" / "rows.lock.json"
    assert [e.id for e in read_lock(lock_path).entries] == ["m_one.json", "m_two.json"]


# ---------------------------------------------------------------- memory

PEAK = textwrap.dedent(
    """
    import contextlib, re, resource, sys
    from lockstep.cli import main
    with contextlib.suppress(SystemExit):
        main(sys.argv[1:], prog_name="lockstep")
    try:  # this program's own peak: ru_maxrss also counts the parent's pages forked before exec
        with open("/proc/self/status") as fh:
            peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", fh.read()).group(1))
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("PEAK", peak)
    """
)


def _peak_kib(root: Path, *args: str) -> tuple[int, str]:
    """Peak RSS (KiB) of one lockstep command in a process of its own, and what it printed."""
    proc = subprocess.run(
        [sys.executable, "-c", PEAK, *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**_env(), "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("PEAK ")][-1]
    return int(line.split()[1]), proc.stdout


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("LOCKSTEP_CONFIG", None)
    return env


N = 20_000
"""Large enough that the smaller lock already fills the reader's and the writer's batches
(about a megabyte of entries each): below that, memory still grows towards that bound."""


def test_record_and_accept_memory_is_flat_in_the_locked_entries(tmp_path: Path) -> None:
    """Peak RSS of ``record --new-only`` and of ``accept`` of one drifted fixture, each a
    process of its own, on a lock of N and of 5 N entries.  Reading the lock whole held
    about 400 bytes per entry (over 30 MB more for the larger lock); streamed, what grows
    is a small part of that."""
    peaks: dict[str, list[int]] = {"record --new-only": [], "accept": []}
    for size in (N, 5 * N):
        repo = GitRepo(tmp_path / f"p{size}")
        root = _project(repo.root)
        _grow(root, size)
        repo.commit("a big lock")
        write_files(root, {"fixtures/a_new.json": '{"a": 0}'})
        peak, out = _peak_kib(root, "record", "rows", "--new-only")
        assert f"unchanged {size + 2}" in out, out
        peaks["record --new-only"].append(peak)
        write_files(root, {"fixtures/m_one.json": '{"a": 11}'})
        repo.commit("a new fixture; one fixture changed")
        assert invoke_cli("replay", "rows", "--keep-pending", "-q", cwd=root).code == 1
        peak, out = _peak_kib(root, "accept", "--all", "--why", "One is eleven now.")
        assert "accepted rows::m_one.json" in out, out
        peaks["accept"].append(peak)
        lock = read_lock(root / "lockstep" / "rows.lock.json")
        assert len(lock.entries) == size + 3
    for what, (small, large) in peaks.items():
        # Streamed, the growth measured is 15-45 bytes an entry, most of it the allocator's
        # arenas landing differently from run to run; a whole read is about 400.  The bound sits
        # between, far enough from both that a noisy machine cannot cross it either way.
        growth_per_entry = (large - small) * 1024 / (4 * N)
        assert growth_per_entry < 120, (what, small, large)


@given(
    st.lists(ids, unique=True, max_size=10),
    st.lists(st.one_of(ids, st.sampled_from(["", "a", "b", "zz"])), max_size=12),
    st.booleans(),
)
@settings(max_examples=300)
def test_the_entry_cursor_answers_as_a_dict(
    locked: list[str], asked: list[str], in_order: bool
) -> None:
    entries = [Entry(i, SHAS[0], n) for n, i in enumerate(sorted(locked))]
    by_id = {e.id: e for e in entries}
    cursor = EntryCursor(entries)
    for case_id in sorted(asked) if in_order else asked:
        assert cursor.get(case_id) == by_id.get(case_id)
    if in_order:
        assert cursor._by_id is None  # never indexed whole
