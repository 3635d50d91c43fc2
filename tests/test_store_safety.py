"""Writes never go through a link in the oracle folder, and killed writers' leftovers are swept."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import invoke_cli
from lockstep import store
from lockstep.errors import DataError
from test_corpus_cli import make_project


def _names(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "precious.txt").write_text("keep me")
    return folder


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "lockstep").mkdir(parents=True)
    (root / "lockstep.toml").write_text("")
    return root


# ---------------------------------------------------------------- links, through the CLI


def test_a_linked_blobs_folder_stops_record_and_nothing_lands_outside(
    tmp_path: Path, outside: Path
) -> None:
    root = make_project(tmp_path / "proj")
    assert invoke_cli("record", "rows", cwd=root).code == 0
    lock_before = (root / "lockstep" / "rows.lock.json").read_bytes()
    for blob_dir in (root / "lockstep" / "blobs").iterdir():
        for blob in blob_dir.iterdir():
            blob.unlink()
        blob_dir.rmdir()
    (root / "lockstep" / "blobs").rmdir()
    (root / "lockstep" / "blobs").symlink_to(outside)

    result = invoke_cli("record", "rows", "--force", cwd=root)

    assert result.code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "lockstep/blobs: is a symbolic link" in lines[0]
    assert "nothing was written" in lines[0]
    assert _names(outside) == ["precious.txt"]
    assert (root / "lockstep" / "rows.lock.json").read_bytes() == lock_before


def test_an_oracle_folder_linking_out_of_the_project_is_refused(
    tmp_path: Path, outside: Path
) -> None:
    root = make_project(tmp_path / "proj")
    (root / "lockstep").symlink_to(outside)
    result = invoke_cli("record", "rows", cwd=root)
    assert result.code == 2, result.output
    assert "lockstep.dir: path 'lockstep' escapes the project root" in result.stderr
    assert _names(outside) == ["precious.txt"]


def test_an_oracle_folder_linking_inside_the_project_is_followed(tmp_path: Path) -> None:
    root = make_project(tmp_path / "proj")
    (root / "oracles").mkdir()
    (root / "lockstep").symlink_to(root / "oracles")
    result = invoke_cli("record", "rows", cwd=root)
    assert result.code == 0, result.output
    assert (root / "oracles" / "rows.lock.json").is_file()


# ---------------------------------------------------------------- links, writer by writer


def test_atomic_write_refuses_a_linked_folder_below_the_project(proj: Path, outside: Path) -> None:
    (proj / "lockstep" / "tapes").symlink_to(outside)
    with pytest.raises(DataError, match=r"lockstep/tapes: is a symbolic link \(to "):
        store.atomic_write(proj / "lockstep" / "tapes" / "t.tape.json", b"{}")
    with pytest.raises(DataError, match="is a symbolic link"):
        store.atomic_write(proj / "lockstep" / "tapes" / "new" / "deeper.json", b"{}")
    assert _names(outside) == ["precious.txt"]
    assert _names(proj / "lockstep") == ["tapes"]


def test_atomic_write_refuses_a_linked_file(proj: Path, outside: Path) -> None:
    target = proj / "lockstep" / "x.lock.json"
    target.symlink_to(outside / "precious.txt")
    with pytest.raises(DataError, match=r"lockstep/x.lock.json: is a symbolic link"):
        store.atomic_write(target, b"{}")
    assert (outside / "precious.txt").read_text() == "keep me"
    assert target.is_symlink()


def test_a_linked_lock_file_is_refused_and_its_target_untouched(proj: Path, outside: Path) -> None:
    target = proj / "lockstep" / "x.ledger.jsonl"
    (proj / "lockstep" / ".x.ledger.jsonl.lock").symlink_to(outside / "precious.txt")
    for write in (
        lambda: store.atomic_write(target, b"a\n"),
        lambda: store.JsonlAppender(target).append(b"a"),
        lambda: store.AtomicLines(target),
    ):
        with pytest.raises(DataError, match=r"\.x\.ledger\.jsonl\.lock: is a symbolic link"):
            write()
    assert (outside / "precious.txt").read_text() == "keep me"
    assert not target.exists()


def test_atomic_lines_and_appender_refuse_links(proj: Path, outside: Path) -> None:
    linked = proj / "lockstep" / "sub"
    linked.symlink_to(outside)
    with pytest.raises(DataError, match="lockstep/sub: is a symbolic link"):
        store.AtomicLines(linked / "a.pins.jsonl")
    with pytest.raises(DataError, match="lockstep/sub: is a symbolic link"):
        store.JsonlAppender(linked / "a.spool").append(b"{}")
    file_link = proj / "lockstep" / "b.spool"
    file_link.symlink_to(outside / "precious.txt")
    with pytest.raises(DataError, match=r"lockstep/b\.spool: is a symbolic link"):
        store.JsonlAppender(file_link).append(b"{}")
    with pytest.raises(DataError, match=r"lockstep/b\.spool: is a symbolic link"):
        store.AtomicLines(file_link)
    assert _names(outside) == ["precious.txt"]
    assert (outside / "precious.txt").read_text() == "keep me"
    assert _names(proj / "lockstep") == ["b.spool", "sub"]


def test_the_blob_store_refuses_a_linked_subfolder_and_never_deletes_through_it(
    proj: Path, outside: Path
) -> None:
    blobs = store.BlobStore(proj / "lockstep" / "blobs")
    data = b"rendered"
    digest = store.sha256_hex(data)
    (proj / "lockstep" / "blobs").mkdir()
    (proj / "lockstep" / "blobs" / digest[:2]).symlink_to(outside)
    with pytest.raises(DataError, match=f"lockstep/blobs/{digest[:2]}: is a symbolic link"):
        blobs.put(data)
    with pytest.raises(DataError, match="is a symbolic link"), blobs.batch() as batch:
        batch.put(data)
    assert blobs.discard_unreferenced(set()) == 0
    assert _names(outside) == ["precious.txt"]


def test_a_linked_blob_store_is_refused_by_a_batch(proj: Path, outside: Path) -> None:
    (proj / "lockstep" / "blobs").symlink_to(outside)
    blobs = store.BlobStore(proj / "lockstep" / "blobs")
    with pytest.raises(DataError, match="lockstep/blobs: is a symbolic link"), blobs.batch():
        pass
    with pytest.raises(DataError, match="lockstep/blobs: is a symbolic link"):
        blobs.discard_unreferenced(set())
    assert _names(outside) == ["precious.txt"]


def test_links_above_the_project_are_the_users_business(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "proj").mkdir(parents=True)
    (real / "proj" / "lockstep.toml").write_text("")
    (tmp_path / "via").symlink_to(real)
    target = tmp_path / "via" / "proj" / "lockstep" / "x.json"
    store.atomic_write(target, b"{}")
    assert (real / "proj" / "lockstep" / "x.json").read_bytes() == b"{}"


def test_a_file_in_the_way_of_a_folder_is_a_one_line_error(proj: Path) -> None:
    (proj / "lockstep" / "blobs").write_text("not a folder")
    with pytest.raises(DataError, match="lockstep/blobs: is not a folder"):
        store.atomic_write(proj / "lockstep" / "blobs" / "ab" / "x", b"1")


# ---------------------------------------------------------------- leftovers


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_temp_files_have_a_fixed_shape_with_the_writer_pid() -> None:
    name = store.temp_name("rows.lock.json")
    assert name.startswith(".rows.lock.json.")
    assert name.endswith(".tmp")
    assert f"-{os.getpid()}-" in name


def test_a_write_sweeps_leftovers_of_killed_writers(proj: Path) -> None:
    folder = proj / "lockstep"
    tag = store.temp_name("x").split(".")[2].split("-")[0]
    dead = _dead_pid()
    held_stale = [
        f".a.lock.json.{tag}-{os.getpid() + 1}-0123abcd.tmp",  # any writer: the lock is ours now
        ".a.lock.json.k3j_x9q2.tmp",  # an older lockstep's mkstemp name
    ]
    other_dead = f".b.pins.jsonl.{tag}-{dead}-0123abcd.tmp"
    other_alive = f".b.pins.jsonl.{tag}-{os.getppid()}-0123abcd.tmp"
    other_host = f".b.pins.jsonl.ffffff-{dead}-0123abcd.tmp"
    not_ours = ".notes.tmp"
    for name in [*held_stale, other_dead, other_alive, other_host, not_ours]:
        (folder / name).write_bytes(b"partial")
    (folder / ".gone.spool.lock").write_bytes(b"")  # a killed holder's lock file

    store.atomic_write(folder / "a.lock.json", b"{}")

    assert _names(folder) == sorted(["a.lock.json", other_alive, other_host, not_ours])


def test_a_lock_in_use_is_never_swept(proj: Path) -> None:
    folder = proj / "lockstep"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom pathlib import Path\nfrom lockstep import store\n"
            "with store.lock_for(Path(sys.argv[1])):\n"
            "    print('held', flush=True)\n    time.sleep(60)\n",
            str(folder / "busy.jsonl"),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"held\n"
        store.atomic_write(folder / "other.json", b"{}")
        assert ".busy.jsonl.lock" in _names(folder)
    finally:
        holder.kill()
        holder.wait()
    store.atomic_write(folder / "other.json", b"{}")
    assert _names(folder) == ["other.json"]


def test_a_private_folder_is_removed_after_use_and_after_a_killed_run(proj: Path) -> None:
    folder = proj / "lockstep"
    with store.temp_folder(folder, "verify") as private:
        (private / "candidate.jsonl").write_text("{}")
        assert private.parent == folder and private.name.startswith(".verify.")
    assert _names(folder) == []
    tag = store.temp_name("x").split(".")[2].split("-")[0]
    killed = folder / f".verify.{tag}-{_dead_pid()}-0123abcd.tmp"
    (killed / "deep").mkdir(parents=True)
    (killed / "deep" / "candidate.jsonl").write_text("{}")
    store.atomic_write(folder / "a.json", b"{}")
    assert _names(folder) == ["a.json"]


def test_a_scratch_file_is_written_whole_without_a_lock_and_never_through_a_link(
    proj: Path, outside: Path
) -> None:
    """A candidate in a private folder: no lock file or temp file beside it; a link in the
    way (the file's name, or the folder) is refused as every write refuses one."""
    folder = proj / "lockstep"
    with store.temp_folder(folder, "verify") as private:
        with store.ScratchLines(private / "a.ledger.jsonl") as out:
            out.write(b'{"a":1}')
            out.write(b'{"b":2}')
            assert _names(private) == ["a.ledger.jsonl"]  # no lock file, no temp file
        assert (private / "a.ledger.jsonl").read_bytes() == b'{"a":1}\n{"b":2}\n'
        (private / "b.ledger.jsonl").symlink_to(outside / "precious.txt")
        with pytest.raises(DataError, match=r"b\.ledger\.jsonl: is a symbolic link"):
            store.ScratchLines(private / "b.ledger.jsonl")
        with pytest.raises(ValueError), store.ScratchLines(private / "c.ledger.jsonl") as out:
            out.write(b"{}")
            raise ValueError("a failed write leaves no half file")
        assert _names(private) == ["a.ledger.jsonl", "b.ledger.jsonl"]
    (folder / "linked").symlink_to(outside)
    with pytest.raises(DataError, match="lockstep/linked: is a symbolic link"):
        store.ScratchLines(folder / "linked" / "a.ledger.jsonl")
    assert _names(outside) == ["precious.txt"]
    assert (outside / "precious.txt").read_text() == "keep me"


def test_batched_writes_sync_each_folder_once_at_the_end_of_the_block(
    proj: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside the block every file is written whole and in place at once; the folders'
    syncs wait for its end, one per folder (a nested block leaves them to the outer)."""
    from lockstep.store import atomic

    synced: list[str] = []
    monkeypatch.setattr(atomic, "_fsync_dir", lambda folder: synced.append(folder.name))
    one, two = proj / "lockstep", proj / "other"
    store.atomic_write(one / "a.json", b"1")
    assert synced == ["lockstep"]
    synced.clear()
    with store.folder_syncs_batched():
        store.atomic_write(one / "a.json", b"2")
        with store.AtomicLines(one / "b.jsonl") as out:
            out.write(b"{}")
        with store.folder_syncs_batched():
            store.atomic_write(two / "c.json", b"3")
        assert synced == []
        assert (one / "a.json").read_bytes() == b"2"
        assert (one / "b.jsonl").read_bytes() == b"{}\n"
        assert sorted(_names(one)) == ["a.json", "b.jsonl"]  # no temp file, no lock left
    assert synced == ["lockstep", "other"]
    synced.clear()
    store.atomic_write(two / "c.json", b"4")
    assert synced == ["other"]


def test_a_batch_sweeps_every_temp_in_the_blob_store(proj: Path) -> None:
    blobs = store.BlobStore(proj / "lockstep" / "blobs")
    blobs.put(b"one")
    sub = blobs.path_for(store.sha256_hex(b"one")).parent
    (sub / store.temp_name("deadbeef")).write_bytes(b"torn")
    (sub / ".cafe.4242.tmp").write_bytes(b"torn")  # an older lockstep's blob temp
    (proj / "lockstep" / ".blobs.lock").write_bytes(b"")
    with blobs.batch() as batch:
        batch.put(b"two")
    assert not [p for p in (proj / "lockstep").rglob("*") if p.name.endswith((".tmp", ".lock"))]


def test_lock_files_do_not_accumulate(proj: Path) -> None:
    folder = proj / "lockstep"
    store.atomic_write(folder / "a.json", b"1")
    with store.AtomicLines(folder / "b.jsonl") as out:
        out.write(b"{}")
    store.JsonlAppender(folder / "c.jsonl").append(b"{}")
    with pytest.raises(RuntimeError), store.AtomicLines(folder / "d.jsonl"):
        raise RuntimeError("driver failed")
    store.BlobStore(folder / "blobs").put(b"x")
    assert sorted(p for p in _names(folder)) == ["a.json", "b.jsonl", "blobs", "c.jsonl"]


# ---------------------------------------------------------------- the lock itself


def _count_worker(path: str, rounds: int) -> None:
    target = Path(path)
    for _ in range(rounds):
        with store.lock_for(target):
            n = int(target.read_text()) if target.exists() else 0
            target.write_text(str(n + 1))


def test_the_lock_excludes_processes_although_holders_remove_its_file(proj: Path) -> None:
    target = proj / "lockstep" / "counter.txt"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_count_worker, args=(str(target), 60)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert target.read_text() == "240"
    assert _names(proj / "lockstep") == ["counter.txt"]


def test_the_lock_nests_in_a_thread_and_excludes_other_threads(proj: Path) -> None:
    target = proj / "lockstep" / "x.ledger.jsonl"
    order: list[str] = []
    with store.lock_for(target):
        store.atomic_write(target, b"nested\n")  # would wait on itself if the lock did not nest

        def other() -> None:
            with store.lock_for(target):
                order.append("other")

        thread = threading.Thread(target=other)
        thread.start()
        time.sleep(0.1)
        order.append("first")
    thread.join(10)
    assert order == ["first", "other"]
    assert target.read_bytes() == b"nested\n"
