"""The nondeterminism probe through the real CLI: count, show where, suggest, verify."""

from __future__ import annotations

import os
import re
import sys
import time
import tomllib
from pathlib import Path

from helpers import invoke_cli, run_cli, write_files

STEADY = 'import sys\nprint("total 42")\nprint("warn", file=sys.stderr)\n'

FLAKY = """
import datetime, os, secrets, uuid
print(f"run-{secrets.token_hex(4)} id {uuid.uuid4()} at {datetime.datetime.now().isoformat()}")
print(f"worker pid {os.getpid()}")
print("total 42")
"""


def test_a_deterministic_command_has_one_signature_and_exits_0(tmp_path: Path) -> None:
    write_files(tmp_path, {"steady.py": STEADY})
    result = run_cli(
        "probe", "--runs", "4", "--jobs", "2", "--", "python", "steady.py", cwd=tmp_path
    )
    assert result.code == 0, result.output
    assert "raw: 1 signature" in result.stdout
    assert re.search(r"\n\s+4\s+0\s+[0-9a-f]{12}", result.stdout)
    assert "1 of 1 case deterministic" in result.stdout


def test_a_nondeterministic_command_shows_counts_and_where_it_differs(tmp_path: Path) -> None:
    write_files(tmp_path, {"flaky.py": FLAKY})
    result = run_cli(
        "probe",
        "-n",
        "5",
        "--rules",
        "uuid,iso-timestamp",
        "--",
        "python",
        "flaky.py",
        cwd=tmp_path,
    )
    assert result.code == 1, result.output
    assert "raw: 5 signatures" in result.stdout
    assert "after rules [uuid, iso-timestamp]: 5 signatures" in result.stdout
    assert "rules fired: uuid×5, iso-timestamp×5" in result.stdout
    assert "stdout line 1:" in result.stdout
    assert "- run-" in result.stdout and "<UUID>" in result.stdout


def test_suggest_proposes_verified_rules_that_make_the_probe_green(tmp_path: Path) -> None:
    write_files(tmp_path, {"flaky.py": FLAKY})
    result = run_cli(
        "probe", "-n", "4", "-j", "2", "--suggest", "--", "python", "flaky.py", cwd=tmp_path
    )
    assert result.code == 1, result.output
    assert "suggested rules — verified" in result.stdout
    block = result.stdout.split("(or pass to --rules):\n", 1)[1].rsplit("\n", 2)[0]
    parsed = tomllib.loads(block)
    assert parsed["rules"][:2] == ["uuid", "iso-timestamp"]
    user_rules = {r["name"]: r for r in parsed["rule"]}
    assert user_rules["run"]["pattern"] == "run-[0-9a-f]{8}"
    assert "pid" in user_rules

    # Paste the suggestion into a project: the pins oracle now probes green.
    config = (
        '[[pins]]\nname = "flaky"\ncommand = ["python", "flaky.py"]\ncases = "cases.toml"\n'
        f"{block.split(chr(10), 1)[0]}\n\n{block.split(chr(10), 1)[1]}"
    )
    write_files(tmp_path, {"lockstep.toml": config, "cases.toml": '[[case]]\nid = "only"\n'})
    green = run_cli("probe", "flaky", "--runs", "4", cwd=tmp_path)
    assert green.code == 0, green.output
    assert "flaky::only — 4 runs" in green.stdout
    assert "after rules [uuid, iso-timestamp, pid, run]: 1 signature" in green.stdout
    assert run_cli("record", "flaky", cwd=tmp_path).code == 0
    assert run_cli("replay", "flaky", cwd=tmp_path).code == 0


def test_probe_name_runs_every_case_of_a_pins_oracle(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "lockstep.toml": """
                [[pins]]
                name = "tool"
                command = ["python", "tool.py"]
                cases = "cases.toml"
                env_keys = ["MODE"]
                """,
            "tool.py": "import os, time\nprint(os.environ['MODE'], time.time() if os.environ['MODE'] == 'clock' else '')\n",
            "cases.toml": """
                [[case]]
                id = "calm"
                env = { MODE = "calm" }

                [[case]]
                id = "clock"
                env = { MODE = "clock" }
                """,
        },
    )
    result = run_cli("probe", "tool", "-n", "3", "-j", "2", cwd=tmp_path)
    assert result.code == 1, result.output
    assert "tool::calm — 3 runs" in result.stdout
    assert "tool::clock — 3 runs" in result.stdout
    assert "1 of 2 cases deterministic" in result.stdout


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_hanging_command_is_killed_with_its_whole_group(tmp_path: Path) -> None:
    hang = (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        "open(f'pids-{os.getpid()}.txt', 'w').write(f'{os.getpid()} {child.pid}')\n"
        "print('partial', flush=True)\n"
        "time.sleep(120)\n"
    )
    write_files(tmp_path, {"hang.py": hang})
    result = run_cli(
        "probe", "-n", "2", "-j", "2", "--timeout", "1", "--", "python", "hang.py", cwd=tmp_path
    )
    assert result.code == 0, result.output  # the same partial output each time
    assert "2 of 2 runs hit the timeout (1 s) and were killed" in result.stdout
    pids = [int(p) for f in tmp_path.glob("pids-*.txt") for p in f.read_text().split()]
    assert len(pids) == 4
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in pids if _alive(p)]


def test_probe_usage_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    write_files(tmp_path, {"steady.py": STEADY})
    cases = [
        (("probe", "--rules", "nope", "--", "python", "steady.py"), "unknown rule 'nope'"),
        (("probe", "--", "no-such-program-xyz"), "program 'no-such-program-xyz' not found"),
        (("probe", "--env", "NOEQUALS", "--", sys.executable, "steady.py"), "KEY=VALUE"),
    ]
    for args, expected in cases:
        result = invoke_cli(*args, cwd=tmp_path)
        assert result.code == 2, result.output
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert expected in result.stderr, result.stderr
        if "KEY=VALUE" not in expected:
            assert len(lines) == 1, result.stderr


COUNTED = """
import pathlib
counter = pathlib.Path("count.txt")
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
ids = ["30e52521-d7c6-4068-ad5b-81d21730bc49", "9d514a07-da68-4fc7-a999-0e0f2f0d1650"]
print(f"job {ids[(n // 2) % 2]} at 2026-11-29T21:25:4{n % 10}")
print(f"run-{n // 3:08x} batch {n * 7 % 5} token-{n:04d}")
"""


def test_probe_suggest_prints_the_same_bytes_whatever_the_hash_seed(tmp_path: Path) -> None:
    # Each run prints something else, the same sequence every time (a counter file): two
    # probes under different hash seeds must print byte-identical suggestions.
    write_files(tmp_path, {"counted.py": COUNTED})
    outputs = []
    for seed in ("1", "2", "3"):
        (tmp_path / "count.txt").unlink(missing_ok=True)
        result = run_cli(
            "probe",
            "--suggest",
            "-n",
            "4",
            "--",
            "python",
            "counted.py",
            cwd=tmp_path,
            env={"PYTHONHASHSEED": seed},
        )
        assert result.code == 1, result.output
        assert "suggested rules" in result.stdout
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
