"""A case is its whole process tree, and its output is capped: finding 7 of issue 10."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lockstep.config import parse_config, parse_size
from lockstep.errors import ConfigError
from lockstep.process import DEFAULT_OUTPUT_CAP, RunResult, build_env, run

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/task").is_dir(), reason="descendant tracking needs Linux /proc"
)

# main → child (setsid) → grandchild that writes its pid and sleeps; the child exits at once,
# so the grandchild is an orphan outside the case's session.
ORPHAN = """
import os, sys, time
pidfile = sys.argv[1]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        with open(pidfile + ".part", "w") as f:
            f.write(str(os.getpid()))
        os.rename(pidfile + ".part", pidfile)
        time.sleep(60)
    os._exit(0)
while not os.path.exists(pidfile):
    time.sleep(0.002)
print("orphan started", flush=True)
mode = sys.argv[2]
if mode == "hang":
    time.sleep(60)
elif mode == "wait-for":
    # stay until told, then say whether this case's own orphan is still alive
    while not os.path.exists(sys.argv[3]):
        time.sleep(0.005)
    mine = int(open(pidfile).read())
    try:
        os.kill(mine, 0)
        print("my orphan is alive")
    except ProcessLookupError:
        print("my orphan was killed early")
"""


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie not yet reaped by whoever inherited it counts as gone
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rfind(")") + 2] in "ZX"


def _wait_gone(pid: int, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if _gone(pid):
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "orphan.py"
    path.write_text(ORPHAN)
    return path


def _run(
    program: Path, *args: str, timeout: float = 20, env: dict[str, str] | None = None
) -> RunResult:
    return run(
        ["python", str(program), *args],
        env=build_env(env or {}),
        cwd=program.parent,
        timeout=timeout,
    )


def test_a_setsid_grandchild_dies_at_the_timeout(program: Path) -> None:
    pidfile = program.parent / "g.pid"
    result = _run(program, str(pidfile), "hang", timeout=1.5)
    assert result.timed_out
    grandchild = int(pidfile.read_text())
    assert _gone(grandchild), "the grandchild that left the session survived the timeout"


def test_a_setsid_grandchild_dies_when_the_case_exits_and_is_noted(program: Path) -> None:
    pidfile = program.parent / "g.pid"
    result = _run(program, str(pidfile), "exit")
    assert result.exit_code == 0
    assert result.stdout == b"orphan started\n"
    grandchild = int(pidfile.read_text())
    assert _gone(grandchild), "the grandchild outlived its case"
    assert result.leftovers == 1
    assert "killed 1 process the case left running" in result.leftover_note
    assert not result.timed_out and result.truncated_stream is None
    assert result.killed_note == ""


def test_a_background_child_in_the_group_is_a_leftover_too(tmp_path: Path) -> None:
    pidfile = tmp_path / "bg.pid"
    script = f"sleep 60 & echo $! > {pidfile}; echo done"
    result = run(["sh", "-c", script], env=build_env({}), cwd=tmp_path, timeout=20)
    assert result.stdout == b"done\n"
    assert _gone(int(pidfile.read_text()))
    assert result.leftovers == 1


def test_a_clean_program_has_no_leftovers() -> None:
    result = run(["python", "-c", "print(1)"], env=build_env({}), cwd=Path.cwd(), timeout=20)
    assert (result.stdout, result.leftovers, result.leftover_note) == (b"1\n", 0, "")


def test_parallel_cases_never_kill_each_others_orphans_early(program: Path) -> None:
    folder = program.parent
    pid_a, pid_b, go = folder / "a.pid", folder / "b.pid", folder / "go"

    def case_b() -> RunResult:
        return _run(program, str(pid_b), "wait-for", str(go), env={"CASE": "b"})

    with ThreadPoolExecutor(2) as pool:
        running_b = pool.submit(case_b)
        while not pid_b.exists():
            time.sleep(0.005)
        a = pool.submit(_run, program, str(pid_a), "exit", env={"CASE": "a"}).result()
        # Case a is over while b still runs: a's orphan is gone, b's is not.
        assert a.stdout == b"orphan started\n"
        assert _wait_gone(int(pid_a.read_text()))
        assert not _gone(int(pid_b.read_text()))
        go.write_text("")
        b = running_b.result(timeout=30)
    assert b.stdout == b"orphan started\nmy orphan is alive\n", b.stdout
    assert _gone(int(pid_b.read_text()))
    assert (a.leftovers, b.leftovers) == (1, 1)


def test_identical_parallel_cases_keep_their_orphans_until_both_are_done(program: Path) -> None:
    """Orphans that cannot be told apart are killed late (when every candidate case is done)."""
    folder = program.parent
    go = folder / "go"
    pidfiles = [folder / f"{n}.pid" for n in range(2)]
    with ThreadPoolExecutor(2) as pool:
        slow = pool.submit(_run, program, str(pidfiles[0]), "wait-for", str(go))
        while not pidfiles[0].exists():
            time.sleep(0.005)
        fast = pool.submit(_run, program, str(pidfiles[1]), "wait-for", str(go))
        while not pidfiles[1].exists():
            time.sleep(0.005)
        go.write_text("")
        results = [slow.result(timeout=30), fast.result(timeout=30)]
    for result in results:
        assert result.stdout == b"orphan started\nmy orphan is alive\n", result.stdout
    for pidfile in pidfiles:
        assert _wait_gone(int(pidfile.read_text()))


def test_processes_lockstep_did_not_start_for_a_case_are_left_alone(program: Path) -> None:
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    detached = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    try:
        _run(program, str(program.parent / "g.pid"), "exit")
        _run(program, str(program.parent / "h.pid"), "hang", timeout=1)
        assert bystander.poll() is None
        assert detached.poll() is None
    finally:
        for proc in (bystander, detached):
            proc.kill()
            proc.wait()


def test_lockstep_is_a_subreaper_only_while_a_case_runs() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    value = ctypes.c_int(-1)
    run(["true"], env=build_env({}), cwd=Path.cwd(), timeout=20)
    assert libc.prctl(37, ctypes.byref(value), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER
    assert value.value == 0


# ---------------------------------------------------------------- the output cap

CAPPED = """
import json, resource, sys
from pathlib import Path
from lockstep.process import build_env, run

before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = run(
    ["python", "-c", sys.argv[1]], env=build_env({}), cwd=Path.cwd(), timeout=60,
    **({"max_output": int(sys.argv[2])} if len(sys.argv) > 2 else {}),
)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({
    "grew_kib": after - before, "stdout": len(result.stdout), "stderr": len(result.stderr),
    "truncated": result.truncated_stream, "note": result.killed_note, "code": result.exit_code,
    "seconds": result.seconds,
}))
"""

LOUD = (
    "import sys\nblock = b'x' * (1 << 20)\nfor _ in range(200):\n    sys.{}.buffer.write(block)\n"
)


def _capped(tmp_path: Path, program: str, *cap: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", CAPPED, program, *cap],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_200_mb_of_stdout_stops_at_the_default_cap_with_memory_bounded(tmp_path: Path) -> None:
    found = _capped(tmp_path, LOUD.format("stdout"))
    assert found["truncated"] == "stdout"
    assert found["stdout"] == DEFAULT_OUTPUT_CAP
    assert found["code"] == -9
    assert found["note"] == (
        "stdout exceeded the 32 MiB cap; the case was killed there and its output cut at the cap"
    )
    # 32 MiB read back, never the 200 MB written
    assert isinstance(found["grew_kib"], int) and found["grew_kib"] < 80 * 1024, found


def test_a_smaller_cap_applies_to_stderr_too(tmp_path: Path) -> None:
    found = _capped(tmp_path, LOUD.format("stderr"), str(1 << 20))
    assert found["truncated"] == "stderr"
    assert found["stderr"] == 1 << 20
    assert found["stdout"] == 0
    assert "stderr exceeded the 1 MiB cap" in str(found["note"])
    assert isinstance(found["grew_kib"], int) and found["grew_kib"] < 40 * 1024, found


def test_output_at_the_cap_is_not_truncated(tmp_path: Path) -> None:
    result = run(
        ["python", "-c", "import sys; sys.stdout.write('x' * 4096)"],
        env=build_env({}),
        cwd=tmp_path,
        timeout=20,
        max_output=4096,
    )
    assert result.truncated_stream is None
    assert len(result.stdout) == 4096
    over = run(
        ["python", "-c", "import sys; sys.stdout.write('x' * 4097)"],
        env=build_env({}),
        cwd=tmp_path,
        timeout=20,
        max_output=4096,
    )
    assert over.truncated_stream == "stdout"
    assert len(over.stdout) == 4096


# ---------------------------------------------------------------- the config key


def _pins(**extra: object) -> dict[str, object]:
    return {"pins": [{"name": "p", "command": ["python", "x.py"], "cases": "c.toml", **extra}]}


@pytest.mark.parametrize(
    ("value", "size"),
    [
        (1, 1),
        (4096, 4096),
        ("64MiB", 64 << 20),
        ("64 MiB", 64 << 20),
        ("512KiB", 512 << 10),
        ("1GiB", 1 << 30),
        ("100B", 100),
        ("12345", 12345),
    ],
)
def test_max_output_accepts_bytes_and_binary_units(value: int | str, size: int) -> None:
    config = parse_config(_pins(max_output=value), "lockstep.toml")
    assert config.pins[0].max_output_bytes == size
    assert parse_size(value) == size


def test_max_output_defaults_to_32_mib() -> None:
    assert parse_config(_pins(), "lockstep.toml").pins[0].max_output_bytes == 32 << 20


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("64MB", "'64MB' is not a size: give bytes as an integer or a string such as '64MiB'"),
        ("lots", "'lots' is not a size"),
        ("-1", "'-1' is not a size"),
        (0, "0 is out of range: from 1 byte to 4 GiB"),
        ("5GiB", "'5GiB' is out of range"),
    ],
)
def test_a_bad_max_output_is_a_config_error_naming_the_key(value: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(_pins(max_output=value), "lockstep.toml")
    assert str(caught.value) == f"lockstep.toml: pins[0].max_output: {message}" or (
        str(caught.value).startswith("lockstep.toml: pins[0].max_output: ")
        and message in str(caught.value)
    )


def test_a_boolean_max_output_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"pins\[0\]\.max_output"):
        parse_config(_pins(max_output=True), "lockstep.toml")


def test_the_orphan_program_is_what_the_tests_think_it_is(tmp_path: Path) -> None:
    """Without lockstep, the grandchild of ORPHAN does outlive its parent (the tests mean it)."""
    (tmp_path / "orphan.py").write_text(textwrap.dedent(ORPHAN))
    pidfile = tmp_path / "plain.pid"
    subprocess.run(
        [sys.executable, str(tmp_path / "orphan.py"), str(pidfile), "exit"],
        check=True,
        stdout=subprocess.DEVNULL,  # the grandchild keeps a pipe open
        timeout=30,
    )
    grandchild = int(pidfile.read_text())
    try:
        assert not _gone(grandchild)
    finally:
        os.kill(grandchild, 9)


# ---------------------------------------------------------------- fallbacks


def _tracker(monkeypatch: pytest.MonkeyPatch, **flags: object) -> None:
    from lockstep.process import tracker as tracking

    tracker = tracking.Tracker()
    for name, value in flags.items():
        setattr(tracker, name, value)
    monkeypatch.setattr(tracking, "_TRACKER", tracker)


def test_without_the_children_files_an_orphan_is_still_found(
    program: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tracker(monkeypatch, children_files=False)
    pidfile = program.parent / "g.pid"
    result = _run(program, str(pidfile), "exit")
    assert _gone(int(pidfile.read_text()))
    assert result.leftovers == 1


@pytest.mark.parametrize(
    "flags",
    [{"_prctl": None}, {"proc": False, "children_files": False, "_prctl": None}],
    ids=["no-subreaper", "no-proc"],
)
def test_without_subreaper_or_proc_the_group_still_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: dict[str, object]
) -> None:
    _tracker(monkeypatch, **flags)
    pidfile = tmp_path / "bg.pid"
    script = f"sleep 60 & echo $! > {pidfile}; echo done"
    result = run(["sh", "-c", script], env=build_env({}), cwd=tmp_path, timeout=20)
    assert result.stdout == b"done\n"
    assert _wait_gone(int(pidfile.read_text()))
    hung = run(["sh", "-c", "sleep 60 & sleep 60"], env=build_env({}), cwd=tmp_path, timeout=0.5)
    assert hung.timed_out
