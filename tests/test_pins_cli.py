"""Pins through the real CLI: record probes first, replay compares exit code, stdout, stderr."""

from __future__ import annotations

import base64
import json
import os
import shutil
import textwrap
import time
from pathlib import Path

import pytest

from helpers import invoke_cli, run_cli, run_pytest, snapshot_tree, write_files

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


EXPORT = """
import os, sys, uuid, datetime
print(f"run {uuid.uuid4()} at {datetime.datetime.now().isoformat()}")
rows = [line for line in sys.stdin.read().splitlines() if line.strip()]
currency = os.environ.get("CURRENCY", "USD")
if os.environ.get("TAX_RATE"):
    print("taxed")
for row in rows:
    name, amount = row.split(",")
    print(f"{name}: {int(amount) * 100} {currency}")
print(f"{len(rows)} rows exported", file=sys.stderr)
sys.exit(0)
"""

CASES = """
[[case]]
id = "two-rows"
argv = ["--format", "text"]
env = { CURRENCY = "EUR" }
stdin = "alice,3\\nbob,4\\n"

[[case]]
id = "empty"
"""

CONFIG = """
[[pins]]
name = "export"
command = ["python", "export.py"]
cases = "cases/export.toml"
env_keys = ["CURRENCY"]
rules = ["uuid", "iso-timestamp"]
timeout = {timeout}
"""


def make_project(
    root: Path,
    *,
    program: str = EXPORT,
    cases: str = CASES,
    timeout: float = 20,
    extra_config: str = "",
) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": CONFIG.replace("{timeout}", str(timeout)) + extra_config,
            "export.py": program,
            "cases/export.toml": cases,
        },
    )
    return root


@pytest.fixture(scope="module")
def recorded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The export project, recorded once; tests work on copies of it."""
    root = make_project(tmp_path_factory.mktemp("recorded") / "project")
    result = run_cli("record", "export", cwd=root)
    assert result.code == 0, result.output
    return root


@pytest.fixture
def recorded(recorded_template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(recorded_template, root)
    return root


def pins_lines(root: Path) -> list[dict[str, object]]:
    text = (root / "lockstep" / "export.pins.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def one_line_error(result_stderr: str) -> str:
    lines = [line for line in result_stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result_stderr
    assert lines[0].startswith("lockstep: error: ")
    return lines[0]


def test_record_then_replay_is_green_and_the_file_is_closed_and_reviewable(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path)
    rec = run_cli("record", "export", cwd=root)
    assert rec.code == 0, rec.output
    assert "added 2" in rec.stdout
    assert "rules fired: uuid×4, iso-timestamp×4" in rec.stdout
    header, *pins = pins_lines(root)
    assert header["format"] == "lockstep-pins"
    assert header["env_base"] == {
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "TZ": "UTC",
    }
    assert [r["name"] for r in header["rules"]] == ["uuid", "iso-timestamp"]  # type: ignore[index,union-attr]
    assert [p["id"] for p in pins] == ["empty", "two-rows"]
    two = pins[1]
    assert set(two) == {"id", "argv", "env", "stdin", "exit_code", "stdout", "stderr", "cwd_rel"}
    assert two["argv"] == ["python", "export.py", "--format", "text"]
    assert two["env"] == {"CURRENCY": "EUR"}
    assert two["stdout"] == "run <UUID> at <TS>\nalice: 300 EUR\nbob: 400 EUR\n"
    assert two["stderr"] == "2 rows exported\n"
    # Env discovery: the program reads TAX_RATE, which env_keys does not declare.
    assert "reads TAX_RATE but env_keys does not declare it" in rec.stdout
    assert "CURRENCY but" not in rec.stdout

    rep = run_cli("replay", "export", "--jobs", "2", cwd=root)
    assert rep.code == 0, rep.output
    assert "2 passed" in rep.stdout


def test_nothing_leaks_in_from_the_users_shell_and_stdin_is_never_inherited(
    tmp_path: Path,
) -> None:
    program = """
    import os, sys
    print(sorted(k for k in os.environ if not k.startswith("LC_CTYPE")))
    print(repr(sys.stdin.read()))
    """
    cases = '[[case]]\nid = "env"\nenv = { CURRENCY = "EUR" }\n'
    root = make_project(tmp_path, program=program, cases=cases)
    rec = run_cli(
        "record",
        "export",
        cwd=root,
        env={"SECRET_TOKEN": "hunter2", "TAX_RATE": "0.2"},
        input=b"typed at the terminal\n",
    )
    assert rec.code == 0, rec.output
    _, pin = pins_lines(root)
    assert pin["stdout"] == ("['CURRENCY', 'LANG', 'LC_ALL', 'PATH', 'PYTHONHASHSEED', 'TZ']\n''\n")
    rep = run_cli("replay", "export", cwd=root, env={"SECRET_TOKEN": "x"}, input=b"more\n")
    assert rep.code == 0, rep.output


def test_a_changed_exit_code_on_empty_input_drifts_with_each_stream_reported(
    recorded: Path,
) -> None:
    root = recorded
    broken = EXPORT.replace(
        'print(f"{len(rows)} rows exported", file=sys.stderr)',
        'print(f"{len(rows)} rows exported", file=sys.stderr)\n'
        'if not rows:\n    print("nothing to export", file=sys.stderr)\n    sys.exit(3)',
    )
    (root / "export.py").write_text(textwrap.dedent(broken), encoding="utf-8")
    before = snapshot_tree(root)
    rep = run_cli("replay", "export", cwd=root)
    assert rep.code == 1, rep.output
    assert "export::empty" in rep.stdout
    assert "exit_code: expected 0" in rep.stdout
    assert "got 3" in rep.stdout
    assert "stderr:" in rep.stdout
    assert "+nothing to export" in rep.stdout
    assert "stdout:" not in rep.stdout.split("export::empty")[1]
    assert "rules fired: uuid×1, iso-timestamp×1" in rep.stdout
    assert "two-rows" not in rep.stdout
    assert snapshot_tree(root) == before


def test_record_refuses_a_nondeterministic_case_and_writes_nothing(tmp_path: Path) -> None:
    program = """
    import os, random
    print("pid", os.getpid(), "lucky", random.random())
    """
    root = make_project(tmp_path, program=program, cases='[[case]]\nid = "flaky"\n')
    before = snapshot_tree(root)
    rec = run_cli("record", "export", cwd=root)
    assert rec.code == 1, rec.output  # a finding, like a nondeterministic probe: not bad input
    lines = [line for line in rec.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("lockstep: refused: "), rec.stderr
    line = lines[0]
    assert "case 'flaky' is not deterministic" in line
    assert "stdout line 1" in line
    assert "lockstep probe export --suggest" in line
    assert snapshot_tree(root) == before
    assert not (root / "lockstep").exists() or not any((root / "lockstep").iterdir())


def test_record_modes_create_new_only_force_trim(recorded: Path) -> None:
    root = recorded
    again = invoke_cli("record", "export", cwd=root)
    assert again.code == 2
    line = one_line_error(again.stderr)
    assert "--new-only" in line and "--force" in line and "--trim" in line

    (root / "cases/export.toml").write_text(
        textwrap.dedent(CASES) + '\n[[case]]\nid = "one-row"\nstdin = "carol,1\\n"\n',
        encoding="utf-8",
    )
    new = run_cli("record", "export", "--new-only", cwd=root)
    assert new.code == 0, new.output
    assert "added 1: one-row" in new.stdout
    assert [p["id"] for p in pins_lines(root)[1:]] == ["empty", "one-row", "two-rows"]

    force = run_cli("record", "export", "--force", cwd=root)
    assert force.code == 0, force.output
    assert "unchanged 3" in force.stdout

    (root / "cases/export.toml").write_text(textwrap.dedent(CASES), encoding="utf-8")
    trim = run_cli("record", "export", "--trim", cwd=root)
    assert trim.code == 0, trim.output
    assert "trimmed 1: one-row" in trim.stdout
    assert [p["id"] for p in pins_lines(root)[1:]] == ["empty", "two-rows"]


BIG_AND_BINARY = """
import os, sys
if os.environ["SHAPE"] == "binary":
    sys.stdout.buffer.write(bytes(range(256)) * 4)
else:
    line = "x" * 99 + "\\n"
    for i in range(60_000):
        sys.stdout.write(f"{i:08d} {line}")
"""


def test_binary_and_many_megabytes_of_output_record_and_replay(tmp_path: Path) -> None:
    cases = (
        '[[case]]\nid = "bin"\nenv = { SHAPE = "binary" }\n\n'
        '[[case]]\nid = "big"\nenv = { SHAPE = "big" }\n'
    )
    root = make_project(tmp_path, program=BIG_AND_BINARY, cases=cases)
    config = root / "lockstep.toml"
    config.write_text(config.read_text().replace('env_keys = ["CURRENCY"]', 'env_keys = ["SHAPE"]'))
    assert run_cli("record", "export", cwd=root).code == 0
    _, big, binary = pins_lines(root)
    assert isinstance(big["stdout"], str) and len(big["stdout"]) > 6_000_000
    assert isinstance(binary["stdout"], dict)  # the tagged form, lossless
    assert base64.b64decode(binary["stdout"]["$bytes"]) == bytes(range(256)) * 4
    assert run_cli("replay", "export", cwd=root).code == 0

    (root / "export.py").write_text(
        BIG_AND_BINARY.replace(
            "bytes(range(256)) * 4", "bytes(range(255)) + b'X' + bytes(range(256)) * 3"
        ),
        encoding="utf-8",
    )
    rep = run_cli("replay", "export", cwd=root)
    assert rep.code == 1
    assert "binary output differs at byte 255" in rep.stdout
    assert "export::big" not in rep.stdout


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


HANGING = """
import os, subprocess, sys, time, pathlib
if os.environ.get("HANG") or pathlib.Path("hang.flag").exists():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    pathlib.Path("pids.txt").write_text(f"{os.getpid()} {child.pid}")
    print("working on it", flush=True)
    time.sleep(120)
print("done")
"""


def _wait_gone(pids: list[int]) -> list[int]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        alive = [p for p in pids if _alive(p)]
        if not alive:
            return []
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def test_a_hanging_replay_is_killed_with_its_group_and_shows_partial_output(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path, program=HANGING, cases='[[case]]\nid = "slow"\n', timeout=1.5)
    assert run_cli("record", "export", cwd=root).code == 0
    (root / "hang.flag").write_text("1")
    rep = run_cli("replay", "export", cwd=root, timeout=60)
    assert rep.code == 1, rep.output
    assert "killed at the timeout" in rep.stdout
    assert "+working on it" in rep.stdout
    pids = [int(p) for p in (root / "pids.txt").read_text().split()]
    assert _wait_gone(pids) == []


def test_record_refuses_a_case_that_hangs_and_leaves_no_process(tmp_path: Path) -> None:
    cases = '[[case]]\nid = "stuck"\nenv = { HANG = "1" }\n'
    root = make_project(tmp_path, program=HANGING, cases=cases, timeout=1)
    (root / "lockstep.toml").write_text(
        (root / "lockstep.toml")
        .read_text()
        .replace('env_keys = ["CURRENCY"]', 'env_keys = ["HANG"]')
    )
    rec = run_cli("record", "export", cwd=root, timeout=60)
    assert rec.code == 2, rec.output
    line = one_line_error(rec.stderr)
    assert "case 'stuck' did not finish within 1 s" in line
    assert "working on it" in line
    assert not (root / "lockstep" / "export.pins.jsonl").exists()
    pids = [int(p) for p in (root / "pids.txt").read_text().split()]
    assert _wait_gone(pids) == []


# ---------------------------------------------------------------- bad input: exit 2, one line


BAD_CASES = {
    "duplicate id": (
        '[[case]]\nid = "a"\n\n[[case]]\nid = "a"\n',
        "cases/export.toml: case[1].id: duplicate id 'a'",
    ),
    "unknown field": (
        '[[case]]\nid = "a"\nstdinn = "x"\n',
        "cases/export.toml: case[0].stdinn: unknown key",
    ),
    "escaping cwd_rel": (
        '[[case]]\nid = "a"\ncwd_rel = "../elsewhere"\n',
        "cases/export.toml: case[0].cwd_rel: '../elsewhere' escapes the project root",
    ),
    "undeclared env key": (
        '[[case]]\nid = "a"\nenv = { HOME = "/root" }\n',
        "cases/export.toml: case[0].env.HOME: not declared in env_keys",
    ),
    "wrong type": (
        '[[case]]\nid = "a"\nargv = "--flag"\n',
        "cases/export.toml: case[0].argv: Expected `array`, got `str`",
    ),
}


@pytest.mark.parametrize("problem", sorted(BAD_CASES))
def test_a_bad_cases_file_is_one_line_and_exit_2(tmp_path: Path, problem: str) -> None:
    cases, expected = BAD_CASES[problem]
    root = make_project(tmp_path, cases=cases)
    before = snapshot_tree(root)
    result = invoke_cli("record", "export", cwd=root)
    assert result.code == 2, result.output
    assert expected in one_line_error(result.stderr)
    assert snapshot_tree(root) == before


def test_a_program_that_does_not_exist_is_one_line_and_exit_2(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    (root / "lockstep.toml").write_text(
        (root / "lockstep.toml").read_text().replace('["python", "export.py"]', '["no-such-tool"]')
    )
    before = snapshot_tree(root)
    result = invoke_cli("record", "export", cwd=root)
    assert result.code == 2
    assert "program 'no-such-tool' not found" in one_line_error(result.stderr)
    assert snapshot_tree(root) == before


def test_a_rule_that_does_not_compile_is_one_line_and_exit_2(tmp_path: Path) -> None:
    extra = '\n[[rule]]\nname = "run"\npattern = "run-(["\nreplace = "<RUN>"\n'
    root = make_project(tmp_path, extra_config=extra)
    before = snapshot_tree(root)
    result = invoke_cli("record", "export", cwd=root)
    assert result.code == 2
    assert "rule[0].pattern: does not compile" in one_line_error(result.stderr)
    assert snapshot_tree(root) == before


def test_a_rule_replacement_naming_a_missing_group_is_one_line_and_exit_2(tmp_path: Path) -> None:
    extra = '\n[[rule]]\nname = "run"\npattern = "run-[0-9]+"\nreplace = \'\\2\'\n'
    root = make_project(tmp_path, extra_config=extra)
    text = (
        (root / "lockstep.toml").read_text().replace('"iso-timestamp"]', '"iso-timestamp", "run"]')
    )
    (root / "lockstep.toml").write_text(text)
    result = invoke_cli("record", "export", cwd=root)
    assert result.code == 2
    assert "rule[0] ('run')" in one_line_error(result.stderr)


@pytest.mark.parametrize(
    ("mangle", "expected"),
    [
        (lambda d: d.pop("exit_code"), ":3: missing field `exit_code`"),
        (lambda d: d.update(extra=1), ":3: unknown field `extra`"),
        (lambda d: d.update(stdout={"$bytes": "***"}), ":3: stdout: $bytes is not valid base64"),
    ],
    ids=["missing field", "unknown field", "bad base64"],
)
def test_a_corrupt_pins_line_is_file_line_and_exit_2(
    recorded: Path, mangle: object, expected: str
) -> None:
    root = recorded
    path = root / "lockstep" / "export.pins.jsonl"
    lines = path.read_text().splitlines()
    pin = json.loads(lines[2])
    mangle(pin)  # type: ignore[operator]
    lines[2] = json.dumps(pin)
    path.write_text("\n".join(lines) + "\n")
    before = snapshot_tree(root)
    for args in (("replay", "export"), ("record", "export", "--new-only")):
        result = invoke_cli(*args, cwd=root)
        assert result.code == 2, result.output
        assert f"lockstep/export.pins.jsonl{expected}" in one_line_error(result.stderr)
    assert snapshot_tree(root) == before
    # --force re-records everything: an unreadable file is replaced, and the report says so.
    forced = invoke_cli("record", "export", "--force", cwd=root)
    assert forced.code == 0, forced.output
    assert f"replaced an unreadable file (lockstep/export.pins.jsonl{expected}" in forced.stdout


def test_a_pinned_cwd_rel_escaping_the_root_is_stale_and_never_used(recorded: Path) -> None:
    """The folder a case runs in comes from the cases file; the pin's copy is only compared."""
    path = recorded / "lockstep" / "export.pins.jsonl"
    path.write_text(path.read_text().replace('"cwd_rel":"."', '"cwd_rel":"../.."', 1))
    result = invoke_cli("replay", "export", cwd=recorded)
    assert result.code == 1, result.output
    assert "STALE" in result.stdout
    assert "cwd_rel changed since record" in result.stdout
    assert "re-record with 'lockstep record export --force'" in result.stdout


def test_a_missing_header_is_named(recorded: Path) -> None:
    root = recorded
    path = root / "lockstep" / "export.pins.jsonl"
    path.write_text("\n".join(path.read_text().splitlines()[1:]) + "\n")
    result = invoke_cli("replay", "export", cwd=root)
    assert result.code == 2
    assert "export.pins.jsonl:1: not a pins header" in one_line_error(result.stderr)


def test_replay_before_record_says_what_to_do(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    result = invoke_cli("replay", "export", cwd=root)
    assert result.code == 1, result.output  # not green, and the same for every kind
    assert "ERROR export::(not recorded)" in result.stdout
    assert "run 'lockstep record export' on the trusted commit" in result.stdout


def test_new_and_vanished_cases_are_reported(recorded: Path) -> None:
    root = recorded
    (root / "cases/export.toml").write_text(
        '[[case]]\nid = "empty"\n\n[[case]]\nid = "fresh"\n', encoding="utf-8"
    )
    result = run_cli("replay", "export", cwd=root)
    assert result.code == 1
    assert "MISSING export::two-rows" in result.stdout
    assert "NEW export::fresh" in result.stdout


def test_each_pin_is_a_pytest_item_under_xdist(recorded: Path) -> None:
    root = recorded
    result = run_pytest(
        "--lockstep", "-n", "2", "-v", cwd=root, plugins=("lockstep.pytest.plugin", "xdist.plugin")
    )
    assert result.code == 0, result.output
    assert "2 passed" in result.stdout
    assert "[gw" in result.stdout  # really ran on xdist workers
    assert "export.pins.jsonl::empty" in result.stdout
    assert "export.pins.jsonl::two-rows" in result.stdout


def test_new_only_under_other_rules_is_refused_and_force_adopts_them(recorded: Path) -> None:
    """One policy for every kind: --new-only never mixes two rule sets in one file."""
    root = recorded
    config = root / "lockstep.toml"
    config.write_text(
        config.read_text().replace(
            'rules = ["uuid", "iso-timestamp"]', 'rules = ["uuid", "iso-timestamp", "hex-address"]'
        )
    )
    (root / "cases/export.toml").write_text(
        textwrap.dedent(CASES) + '\n[[case]]\nid = "one-row"\nstdin = "carol,1\\n"\n',
        encoding="utf-8",
    )
    before = snapshot_tree(root)
    new = invoke_cli("record", "export", "--new-only", cwd=root)
    assert new.code == 2, new.output
    line = one_line_error(new.stderr)
    assert "export: the configured rules or environment base differ" in line
    assert "--force" in line
    assert snapshot_tree(root) == before

    force = run_cli("record", "export", "--force", cwd=root)
    assert force.code == 0, force.output
    header = pins_lines(root)[0]
    assert [r["name"] for r in header["rules"]] == [  # type: ignore[index]
        "uuid",
        "iso-timestamp",
        "hex-address",
    ]


def test_a_case_past_the_output_cap_is_refused_at_record_and_an_error_at_replay(
    tmp_path: Path,
) -> None:
    program = "import os, sys\nsys.stdout.write('x' * int(os.environ['SIZE']))\n"
    root = make_project(
        tmp_path, program=program, cases='[[case]]\nid = "loud"\nenv = { SIZE = "100" }\n'
    )
    config = root / "lockstep.toml"
    text = config.read_text().replace('env_keys = ["CURRENCY"]', 'env_keys = ["SIZE"]')
    config.write_text(text + 'max_output = "1KiB"\n')
    assert run_cli("record", "export", cwd=root).code == 0

    (root / "cases/export.toml").write_text('[[case]]\nid = "loud"\nenv = { SIZE = "5000" }\n')
    replay = run_cli("replay", "export", cwd=root)
    assert replay.code == 1, replay.output
    assert "STALE" in replay.stdout  # the case changed since record: not run
    (root / "export.py").write_text(program.replace("int(os.environ['SIZE'])", "5000"))
    (root / "cases/export.toml").write_text('[[case]]\nid = "loud"\nenv = { SIZE = "100" }\n')
    replay = run_cli("replay", "export", cwd=root)
    assert replay.code == 1, replay.output
    assert "ERROR export::loud" in replay.stdout
    assert "stdout exceeded the 1 KiB cap" in replay.stdout

    before = snapshot_tree(root)
    rec = run_cli("record", "export", "--force", cwd=root)
    assert rec.code == 2, rec.output
    assert "case 'loud': stdout exceeded the 1 KiB cap" in rec.stderr
    assert "lockstep.toml: pins[0].max_output" in rec.stderr
    assert snapshot_tree(root) == before
