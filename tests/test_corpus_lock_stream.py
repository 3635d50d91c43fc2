"""Corpus locks are read a batch of entries at a time (memory flat in their number): the
streamed entries are the written ones, other layouts are still read, and a bad entry is
named as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import GitRepo, run_cli
from lockstep import canon
from lockstep.errors import DataError
from lockstep.oracles.corpus.lock import (
    LOCK_VERSION,
    Entry,
    Lock,
    LockEntries,
    read_lock,
    write_lock,
)

GOOD = "0123456789abcdef" * 4


def _lock(entries: list[Entry]) -> Lock:
    return Lock(version=LOCK_VERSION, oracle="rows", render="m:f", entries=entries)


@given(
    st.lists(st.text(min_size=1, max_size=5), unique=True, max_size=20),
    st.sets(st.integers(0, 19)),
)
@settings(max_examples=100)
def test_streamed_entries_are_the_written_ones(
    tmp_path_factory: pytest.TempPathFactory, ids: list[str], raising: set[int]
) -> None:
    path = tmp_path_factory.mktemp("lock") / "rows.lock.json"
    boom = canon.FrozenException("ValueError", "bad {\n  } ]")
    entries = [Entry(i, GOOD, n, boom if n in raising else None) for n, i in enumerate(sorted(ids))]
    write_lock(path, _lock(entries))
    lock = read_lock(path)
    assert isinstance(lock.entries, LockEntries)
    assert list(lock.entries) == entries and list(lock.entries) == entries  # walked twice
    assert len(lock.entries) == len(entries)


def test_many_entries_cross_batches_and_another_layout_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "rows.lock.json"
    entries = [Entry(f"f{i:06}.json", GOOD, i) for i in range(10_000)]
    write_lock(path, _lock(entries))
    lock = read_lock(path)
    assert isinstance(lock.entries, LockEntries)
    assert len(lock.entries) == 10_000 and lock.entries[4096] == entries[4096]
    assert list(lock.entries) == entries
    compact = json.dumps(json.loads(path.read_text()))  # re-indented by hand: one line
    path.write_text(compact)
    assert list(read_lock(path).entries) == entries


def test_a_bad_entry_deep_in_a_streamed_lock_is_named(tmp_path: Path) -> None:
    path = tmp_path / "rows.lock.json"
    entries = [Entry(f"f{i:06}.json", GOOD, i) for i in range(9000)]
    write_lock(path, _lock(entries))
    text = path.read_text().replace('"f008500.json"', '"f000001.json"', 1)
    path.write_text(text)
    try:
        read_lock(path)
    except DataError as e:
        assert "entries[8500]: duplicate fixture id 'f000001.json'" in str(e)
    else:
        raise AssertionError("an out-of-order id was read")


def test_replay_reads_a_streamed_lock_in_a_real_repository(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "p")
    files: dict[str, str | bytes] = {
        "lockstep.toml": '[[corpus]]\nname = "n"\nfixtures = "fx/*.txt"\nrender = "r:render"\n',
        "r.py": "def render(path):\n    return path.read_text().upper()\n",
    }
    files.update({f"fx/{i:05}.txt": f"fixture {i}\n" for i in range(300)})
    repo.commit("corpus", files)
    assert run_cli("record", cwd=repo.root).code == 0
    assert run_cli("replay", cwd=repo.root).code == 0
    (repo.root / "r.py").write_text("def render(path):\n    return path.read_text()\n")
    drift = run_cli("replay", "-q", cwd=repo.root)
    assert drift.code == 1 and drift.stdout.count("DRIFT n::") == 300, drift.output
