"""What a call prints is part of its row, compared on replay where the row kept some.

A billing export that prints its lines and returns their count recorded a row of the count
alone, and a change to the printed text replayed green.  Now the text a recorded call
writes to ``sys.stdout`` is kept in its row (``mutated["(stdout)"]``, ledger version 8)
and replayed: a change to it drifts.  A row that kept none (recorded before, or while a
test patched ``print``) says nothing of printing, so it never drifts on it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import copy_project, recorded, run_cli

BILLING = (
    "import time\n\n\n"
    "def export(rows):\n"
    "    for name, cents in rows:\n"
    "        print(f'{name},{cents / 100:.2f}')\n"
    "    return len(rows)\n\n\n"
    "def stamped(name):\n"
    "    print(name, time.perf_counter_ns())\n"
    "    return name\n\n\n"
    "def total(rows):\n"
    "    return sum(cents for _, cents in rows)\n"
)

FILES = {
    "lockstep.toml": "".join(
        f'[[ledger]]\nname = "{name}"\ntarget = "billing:{name}"\n\n'
        for name in ("export", "stamped", "total")
    ),
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
    "billing.py": BILLING,
    "tests/test_billing.py": (
        "from unittest import mock\n\n"
        "import billing\n\n\n"
        "def test_export(capsys):\n"
        "    assert billing.export([('a', 150), ('b', 99)]) == 2\n"
        "    assert capsys.readouterr().out == 'a,1.50\\nb,0.99\\n'  # the test still sees it\n"
        "    assert billing.total([('a', 150)]) == 150\n"
        "    assert billing.stamped('x') == 'x'\n\n\n"
        "def test_export_quietly():\n"
        "    with mock.patch('builtins.print'):\n"
        "        assert billing.export([('c', 5)]) == 1\n"
    ),
}


def _rows(root: Path, name: str) -> tuple[dict[str, object], list[dict[str, object]]]:
    header, *rows = (
        json.loads(line)
        for line in (root / f"lockstep/{name}.ledger.jsonl").read_text().splitlines()
    )
    return header, rows


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("printed") / "project"
    run = recorded(root, FILES)
    # what it prints differs in a fresh interpreter (a clock): kept without the text
    assert "kept 1 row(s) without what their call printed" in run.output, run.output
    assert [sorted(row) for row in _rows(root, "stamped")[1]] == [
        ["args", "fn", "id", "kwargs", "ok", "result"]
    ]
    assert run_cli("replay", cwd=root).code == 0
    return root


def test_the_printed_text_is_kept_and_a_change_to_it_drifts(project: Path, tmp_path: Path) -> None:
    header, rows = _rows(project, "export")
    assert header["lockstep_ledger"] == 8
    printed = {row["mutated"]["(stdout)"] for row in rows if "mutated" in row}  # type: ignore[index]
    assert printed == {"a,1.50\nb,0.99\n"}
    # a call made while a test patched print kept no text: it says nothing of printing
    assert any("mutated" not in row for row in rows)
    total_header, _ = _rows(project, "total")
    assert total_header["lockstep_ledger"] == 2  # nothing printed: its bytes as before

    root = copy_project(project, tmp_path)
    (root / "billing.py").write_text(BILLING.replace(":.2f", ":.3f"))
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "printed: expected 'a,1.50\\nb,0.99\\n'" in red.stdout, red.stdout
    assert "got 'a,1.500\\nb,0.990\\n'" in red.stdout
    assert "DRIFT: 4 cases: 3 passed, 1 drifted" in red.stdout  # the patched one: no word


def test_printing_nothing_any_more_drifts(project: Path, tmp_path: Path) -> None:
    root = copy_project(project, tmp_path)
    (root / "billing.py").write_text(BILLING.replace("        print(f'", "        str(f'"))
    red = run_cli("replay", "export", cwd=root)
    assert red.code == 1 and "got ''" in red.stdout, red.output


def test_a_row_recorded_before_rows_kept_printed_text_replays_green(
    project: Path, tmp_path: Path
) -> None:
    """Upgrading lockstep turns no printing function red: a row that kept no text is not
    compared on what its call prints."""
    root = copy_project(project, tmp_path)
    path = root / "lockstep/export.ledger.jsonl"
    header, rows = _rows(root, "export")
    for row in rows:
        row.pop("mutated", None)
    body = "".join(json.dumps(row, separators=(",", ":"), sort_keys=True) + "\n" for row in rows)
    import hashlib

    header.update(lockstep_ledger=2, digest=hashlib.sha256(body.encode()).hexdigest())
    path.write_text(json.dumps(header, separators=(",", ":"), sort_keys=True) + "\n" + body)
    green = run_cli("replay", "export", cwd=root)
    assert green.code == 0, green.output


ECHO_FILES = {
    "lockstep.toml": '[[ledger]]\nname = "echo"\ntarget = "echo:main"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
    "echo.py": (
        "import sys\n\n\n"
        "def main(argv):\n"
        "    for line in sys.stdin:\n"
        "        print(line.strip().upper())\n"
        "    return len(argv)\n"
    ),
    "tests/test_echo.py": (
        "import io\nimport sys\n\nimport echo\n\n\n"
        "def test_echo(monkeypatch, capsys):\n"
        "    monkeypatch.setattr(sys, 'stdin', io.StringIO('select 1\\n'))\n"
        "    assert echo.main(['-']) == 1\n"
        "    assert capsys.readouterr().out == 'SELECT 1\\n'\n"
    ),
}


def test_a_row_whose_printed_text_alone_does_not_reproduce_keeps_the_rest(
    tmp_path: Path,
) -> None:
    """What the call printed came from the test's stdin, which is no part of its input: a
    fresh interpreter prints nothing.  The row keeps its result, without the text, rather
    than being refused whole (it guarded the result before rows kept printed text)."""
    root = tmp_path / "project"
    run = recorded(root, ECHO_FILES)
    assert "kept 1 row(s) without what their call printed" in run.output, run.output
    header, rows = _rows(root, "echo")
    assert header["lockstep_ledger"] == 2 and len(rows) == 1 and "mutated" not in rows[0]
    assert run_cli("replay", cwd=root).code == 0
    (root / "echo.py").write_text(ECHO_FILES["echo.py"].replace("len(argv)", "len(argv) + 1"))
    assert run_cli("replay", cwd=root).code == 1


def test_tees_of_overlapping_calls_never_pile_up() -> None:
    """Two threads' calls overlapping end out of order; what is left in ``sys.stdout``
    afterwards is the stream that was there, not a chain of ended tees."""
    import io
    import sys

    from lockstep.oracles.ledger.printed import teed

    real = sys.stdout
    sys.stdout = stream = io.StringIO()
    try:
        for _ in range(50):
            first = teed()
            second = teed()  # the other thread's call, started while the first runs
            print("both")
            assert first is not None and second is not None
            assert first.end() == "both\n"  # ends first: the second's tee stays in place
            assert second.end() == "both\n"
            assert sys.stdout is stream
    finally:
        sys.stdout = real
    assert stream.getvalue() == "both\n" * 50


STREAM_FILES = {
    "lockstep.toml": "".join(
        f'[[ledger]]\nname = "{name}"\ntarget = "shown:{name}"\n\n'
        for name in ("where", "raw", "context")
    ),
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
    "shown.py": (
        "import sys\n\nimport click\n\n\n"
        "def where():\n"
        "    print('terminal' if sys.stdout.isatty() else 'pipe')\n"
        "    return 1\n\n\n"
        "def raw(data):\n"
        "    sys.stdout.buffer.write(data)\n"
        "    sys.stdout.flush()\n"
        "    return len(data)\n\n\n"
        "def context():\n"
        "    return click.get_current_context(silent=True) is None\n"
    ),
    "tests/test_shown.py": (
        "import shown\n\n\n"
        "def test_shown():\n"
        "    assert shown.where() == 1\n"
        "    assert shown.raw(b'bytes\\n') == 6\n"
        "    assert shown.context() is True\n"
    ),
}


@pytest.fixture(scope="module")
def streams(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("streams") / "project"
    recorded(root, STREAM_FILES)
    return root


def test_bytes_written_to_the_stream_are_kept_too(streams: Path, tmp_path: Path) -> None:
    _, rows = _rows(streams, "raw")
    assert rows[0]["mutated"] == {"(stdout)": "bytes\n"}
    assert run_cli("replay", "raw", cwd=streams).code == 0
    root = copy_project(streams, tmp_path)
    (root / "shown.py").write_text(
        STREAM_FILES["shown.py"].replace("buffer.write(data)", "buffer.write(data * 2)")
    )
    assert run_cli("replay", "raw", cwd=root).code == 1


def test_a_replay_in_a_terminal_compares_what_a_pipe_got(streams: Path) -> None:
    """Recorded under pytest's capture (no terminal), replayed by a developer in one: the
    call sees no terminal either (click keeps its colours for a terminal)."""
    import os
    import subprocess
    import sys

    _, rows = _rows(streams, "where")
    assert rows[0]["mutated"] == {"(stdout)": "pipe\n"}
    primary, secondary = os.openpty()
    try:
        env = {**os.environ, "NO_COLOR": "1"}
        env.pop("LOCKSTEP_CONFIG", None)
        code = subprocess.call(
            [sys.executable, "-m", "lockstep", "replay", "where"],
            cwd=streams,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=secondary,
            stderr=secondary,
            timeout=120,
        )
    finally:
        os.close(secondary)
        os.close(primary)
    assert code == 0


def test_lockstep_s_own_command_line_is_not_the_replayed_call_s(streams: Path) -> None:
    """``lockstep replay`` is a click program: a replayed call asking click for its
    current context found lockstep's, where the recording (and its verification) found
    none."""
    _, rows = _rows(streams, "context")
    assert rows[0]["result"] is True
    replayed = run_cli("replay", "context", cwd=streams)
    assert replayed.code == 0, replayed.output
    assert run_cli("replay", cwd=streams).code == 0


def test_two_threads_calls_overlapping_a_thousand_times_leave_no_chain() -> None:
    """A server thread and its client each making recorded calls, each starting before
    the other's ends (boltons' netstring test): every write still reaches the stream
    in a step or two, and the stream is put back at the end."""
    import io
    import sys
    import threading

    from lockstep.oracles.ledger.printed import Tee, teed

    real = sys.stdout
    sys.stdout = stream = io.StringIO()
    turns = [threading.Semaphore(0), threading.Semaphore(0)]
    depths: list[int] = []

    def side(me: int) -> None:
        other = 1 - me
        tee = teed()
        for _ in range(1000):
            turns[other].release()
            turns[me].acquire()
            print("x")
            depth, layer = 0, sys.stdout
            while type(layer) is Tee:
                layer, depth = layer._out, depth + 1
            depths.append(depth)
            assert tee is not None
            tee.end()
            tee = teed()  # the next call starts while the other side's runs
        assert tee is not None
        tee.end()
        turns[other].release()

    try:
        threads = [threading.Thread(target=side, args=(n,)) for n in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert sys.stdout is stream
    finally:
        sys.stdout = real
    assert stream.getvalue() == "x\n" * 2000
    assert max(depths) <= 2


def test_a_forged_printed_text_that_is_no_text_is_a_corrupt_line(
    project: Path, tmp_path: Path
) -> None:
    """A row whose printed text was replaced by another value (its digest made again)
    would have been compared on nothing: it is a corrupt line, exit 2, naming it."""
    import hashlib

    root = copy_project(project, tmp_path)
    path = root / "lockstep/export.ledger.jsonl"
    header, rows = _rows(root, "export")
    for row in rows:
        if "mutated" in row:
            row["mutated"]["(stdout)"] = {"$obj": ["os:system", {}]}  # type: ignore[index]
    body = "".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows)
    header["digest"] = hashlib.sha256(body.encode()).hexdigest()
    path.write_text(json.dumps(header, separators=(",", ":")) + "\n" + body)
    bad = run_cli("replay", "export", cwd=root)
    assert bad.code == 2, bad.output
    assert "export.ledger.jsonl:" in bad.stderr and "as no text" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
