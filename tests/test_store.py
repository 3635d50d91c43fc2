"""Files that cannot be half-written, appends that never interleave, readers that say FILE:LINE."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lockstep import store
from lockstep.errors import DataError


class Row(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    n: int


def test_atomic_write_replaces_whole(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "oracle.json"
    store.atomic_write(target, b"old")
    store.atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
    assert [p.name for p in target.parent.iterdir()] == ["oracle.json"]


def test_an_interrupted_write_leaves_the_old_file_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "oracle.json"
    target.write_bytes(b"trusted")

    def crash(src: object, dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        store.atomic_write(target, b"half")
    assert target.read_bytes() == b"trusted"
    assert [p.name for p in tmp_path.iterdir()] == ["oracle.json"]


def test_atomic_lines_abort_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "x.jsonl"
    target.write_bytes(b"old\n")
    with pytest.raises(RuntimeError), store.AtomicLines(target) as out:
        out.write(b"new")
        raise RuntimeError("driver failed")
    assert target.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.jsonl"]


def _append_worker(path: str, worker: int, count: int) -> None:
    appender = store.JsonlAppender(Path(path))
    pad = "x" * 9000  # larger than PIPE_BUF: a torn write would show
    for i in range(count):
        appender.append(json.dumps({"w": worker, "i": i, "pad": pad}).encode())


def test_concurrent_appends_lose_and_interleave_nothing(tmp_path: Path) -> None:
    target = tmp_path / "calls.jsonl"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_worker, args=(str(target), w, 60)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    seen = {(row["w"], row["i"]) for _, row in store.iter_jsonl(target, dict)}
    assert seen == {(w, i) for w in range(4) for i in range(60)}


def test_reader_names_file_and_line(tmp_path: Path) -> None:
    target = tmp_path / "x.jsonl"
    target.write_text('{"id": "a", "n": 1}\n\n{"id": "b"}\n')
    rows = store.iter_jsonl(target, Row)
    assert next(rows) == (1, Row("a", 1))
    with pytest.raises(DataError, match=r"x\.jsonl:3: misses required field `n`"):
        next(rows)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("not json", "not valid JSON"),
        ('{"id": "a", "n": 1, "extra": 2}', "unknown field `extra`"),
        ('{"id": 3, "n": 1}', "Expected `str`"),
    ],
)
def test_reader_reasons(tmp_path: Path, line: str, reason: str) -> None:
    target = tmp_path / "y.jsonl"
    target.write_text('{"id": "a", "n": 1}\n' + line + "\n")
    with pytest.raises(DataError) as info:
        list(store.iter_jsonl(target, Row))
    assert str(info.value).startswith("y.jsonl:2: ") or ":2: " in str(info.value)
    assert reason in str(info.value)


@given(
    rows=st.lists(st.builds(Row, st.text(), st.integers(-(2**63), 2**63 - 1)), max_size=20),
    garbage_at=st.integers(min_value=0, max_value=20),
    garbage=st.sampled_from(["{", "[1,", '{"id": 1}', "nul", '{"n": 1}']),
)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
def test_reader_round_trips_and_pinpoints_a_bad_line(
    tmp_path: Path, rows: list[Row], garbage_at: int, garbage: str
) -> None:
    target = tmp_path / "prop.jsonl"
    lines = [msgspec.json.encode(r) for r in rows]
    target.write_bytes(b"".join(line + b"\n" for line in lines))
    assert [r for _, r in store.iter_jsonl(target, Row)] == rows
    at = min(garbage_at, len(lines))
    lines.insert(at, garbage.encode())
    target.write_bytes(b"".join(line + b"\n" for line in lines))
    with pytest.raises(DataError, match=rf"prop\.jsonl:{at + 1}: "):
        list(store.iter_jsonl(target, Row))


def test_missing_file_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="file not found"):
        list(store.iter_jsonl(tmp_path / "nope.jsonl", Row))


def test_blob_store_is_content_addressed_and_verified(tmp_path: Path) -> None:
    blobs = store.BlobStore(tmp_path / "blobs")
    digest = blobs.put(b"hello")
    assert digest == store.sha256_hex(b"hello")
    assert blobs.put(b"hello") == digest
    assert blobs.get(digest) == b"hello"
    blobs.path_for(digest).write_bytes(b"torn")
    assert blobs.get(digest) is None
    assert blobs.get("0" * 64) is None


def test_pretty_json_is_deterministic() -> None:
    assert (
        store.pretty_json({"b": [1], "a": "é"})
        == '{\n  "a": "é",\n  "b": [\n    1\n  ]\n}\n'.encode()
    )


_NAMES = st.text(
    alphabet=st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=40,
)


@given(target=_NAMES, other=_NAMES, legacy=st.from_regex(r"\A(?:[a-z0-9_]{8}|[0-9]+)\Z"))
@settings(max_examples=300)
def test_a_temp_file_is_told_to_be_of_its_own_target_only(
    target: str, other: str, legacy: str
) -> None:
    """Whether a temp file is one of the held target's is read with one pattern for every
    target: it names the target a pattern made for that target would (dots, newlines and
    a target that ends like a temp file's own part included)."""
    from lockstep.store.paths import _temp_of, temp_name

    for name in (temp_name(target), f".{target}.{legacy}.tmp"):
        assert _temp_of(name, target)
        assert _temp_of(name, other) == (other == target)
