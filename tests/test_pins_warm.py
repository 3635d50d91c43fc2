"""Warm pins through the real CLI: record proves warm == cold per case, replay runs warm where proven."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import run_cli, write_files
from lockstep.pyentry import PythonEntry, cold_reason, python_entry

PROG = """
import atexit, os, sys
mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
print("argv", sys.argv, sys.orig_argv[1:])
print("path0", sys.path[0] == os.path.dirname(os.path.abspath(__file__)))
print("cwd", os.path.basename(os.getcwd()))
print("env", os.environ.get("REGION", "-"), sorted(k for k in os.environ if k != "PATH"))
print("stdin", repr(sys.stdin.read()))
print("streams", sys.stdout.encoding, sys.stdout.errors, sys.stderr.line_buffering, sys.stdout.name)
print("main", __name__, sorted(k for k in globals() if k.startswith("__")))
atexit.register(lambda: print("atexit ran"))
print("to stderr", file=sys.stderr)
if mode == "three":
    sys.exit(3)
if mode == "message":
    raise SystemExit("bad input: no rows")
if mode == "crash":
    def parse(row):
        return int(row)
    parse("x")
if mode == "none":
    sys.exit(None)
"""

TOOL = """
import sys
print("module", __name__, sys.argv[1:], __spec__.name, sys.orig_argv[1:])
raise SystemExit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""

SNIFF = """
import sys
print("json preloaded" if "json" in sys.modules else "json fresh")
"""

CASES = """
[[case]]
id = "ok"
argv = ["ok", "--flag", "x y"]
env = { REGION = "eu" }
stdin = "alice,3\\nbob,4\\n"

[[case]]
id = "three"
argv = ["three"]

[[case]]
id = "message"
argv = ["message"]

[[case]]
id = "crash"
argv = ["crash"]

[[case]]
id = "none"
argv = ["none"]

[[case]]
id = "in-sub"
argv = ["ok"]
cwd_rel = "sub"
"""

MODULE_CASES = """
[[case]]
id = "zero"

[[case]]
id = "seven"
argv = ["7"]
"""

SNIFF_CASES = """
[[case]]
id = "sniff"

[[case]]
id = "seeded"
env = { PYTHONHASHSEED = "5" }
"""

CONFIG = """
[[pins]]
name = "prog"
command = ["python", "prog.py"]
cases = "cases/prog.toml"
warm = true

[[pins]]
name = "tool"
command = ["python", "-m", "tool"]
cases = "cases/tool.toml"
warm = true
warm_imports = ["decimal"]

[[pins]]
name = "sniff"
command = ["python", "sniff.py"]
cases = "cases/sniff.toml"
warm = true
warm_imports = [{imports}]
"""


def make_project(root: Path, imports: str = '"json"') -> Path:
    write_files(
        root,
        {
            "lockstep.toml": CONFIG.replace("{imports}", imports),
            "prog.py": PROG,
            "tool.py": TOOL,
            "sniff.py": SNIFF,
            "sub/.keep": "",
            "cases/prog.toml": CASES,
            "cases/tool.toml": MODULE_CASES,
            "cases/sniff.toml": SNIFF_CASES,
        },
    )
    return root


def pins(root: Path, name: str) -> dict[str, dict[str, object]]:
    lines = (root / "lockstep" / f"{name}.pins.jsonl").read_text().splitlines()[1:]
    return {p["id"]: p for p in map(json.loads, lines)}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = make_project(tmp_path_factory.mktemp("warm") / "project")
    result = run_cli("record", cwd=root)
    assert result.code == 0, result.output
    return root, result.output


def test_record_proves_each_case_identical_warm_and_cold(recorded: tuple[Path, str]) -> None:
    root, _ = recorded
    prog = pins(root, "prog")
    assert {k: p["warm"] for k, p in prog.items()} == dict.fromkeys(prog, True)
    assert prog["three"]["exit_code"] == 3
    assert prog["message"]["exit_code"] == 1
    assert prog["message"]["stderr"] == "to stderr\nbad input: no rows\n"
    assert prog["crash"]["exit_code"] == 1
    crash = str(prog["crash"]["stderr"])
    assert crash.startswith("to stderr\nTraceback (most recent call last):\n")
    assert 'prog.py", line 19, in <module>' in crash and crash.endswith(
        "ValueError: invalid literal for int() with base 10: 'x'\n"
    )
    assert "warm_server" not in crash
    assert prog["none"]["exit_code"] == 0
    ok = str(prog["ok"]["stdout"])
    assert "argv ['prog.py', 'ok', '--flag', 'x y'] ['prog.py', 'ok', '--flag', 'x y']" in ok
    assert "stdin 'alice,3\\nbob,4\\n'" in ok and "env eu" in ok and ok.endswith("atexit ran\n")
    assert "cwd project" in ok
    # The script path is relative to the case's folder: missing there, as a fresh run says.
    assert prog["in-sub"]["exit_code"] == 2
    assert "can't open file" in str(prog["in-sub"]["stderr"])
    tool = pins(root, "tool")
    assert [(p["warm"], p["exit_code"]) for p in tool.values()] == [(True, 7), (True, 0)]
    assert "module __main__ ['7'] tool" in str(tool["seven"]["stdout"])


def test_replay_runs_warm_green_and_red_on_a_change(recorded: tuple[Path, str]) -> None:
    root, _ = recorded
    assert run_cli("replay", "--jobs", "1", cwd=root).code == 0
    assert run_cli("replay", "--jobs", "2", cwd=root).code == 0
    prog = root / "prog.py"
    original = prog.read_text()
    prog.write_text(original.replace("sys.exit(3)", "sys.exit(4)"))
    try:
        result = run_cli("replay", "prog", cwd=root)
        assert result.code == 1, result.output
        assert "three" in result.output
    finally:
        prog.write_text(original)


def test_a_case_that_differs_warm_is_refused_named_and_replayed_cold(
    recorded: tuple[Path, str],
) -> None:
    root, output = recorded
    assert "warm refused for 2 case(s)" in output
    assert "sniff (stdout differs warm)" in output
    assert "seeded (its env sets PYTHONHASHSEED" in output
    sniff = pins(root, "sniff")
    assert sniff["sniff"]["warm"] is False and sniff["sniff"]["stdout"] == "json fresh\n"
    assert sniff["seeded"]["warm"] is False
    assert run_cli("replay", "sniff", cwd=root).code == 0
    # Replay trusts the file's verdict: a pin forced warm shows the server's preloaded state.
    path = root / "lockstep" / "sniff.pins.jsonl"
    original = path.read_text()
    path.write_text(original.replace('"warm":false', '"warm":true'))
    try:
        result = run_cli("replay", "sniff", cwd=root)
        assert result.code == 1 and "json preloaded" in result.output, result.output
    finally:
        path.write_text(original)


def test_replay_falls_back_to_cold_when_the_server_cannot_start(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    assert run_cli("record", "sniff", cwd=root).code == 0
    config = root / "lockstep.toml"
    config.write_text(CONFIG.replace("{imports}", '"no_such_module_here"'))
    assert run_cli("replay", "sniff", cwd=root).code == 0


@pytest.mark.parametrize(
    ("pins_table", "message"),
    [
        (
            'command = ["sh", "run.sh"]\nwarm = true',
            "lockstep.toml: pins[0].warm: only for Python programs",
        ),
        (
            'command = ["python", "-u", "prog.py"]\nwarm = true',
            "pins[0].warm: only for Python programs: the interpreter must run a script",
        ),
        ('command = ["python", "-m"]\nwarm = true', "'-m' must be followed by a module name"),
        (
            'command = ["python", "prog.py"]\nwarm_imports = ["json"]',
            "pins[0].warm_imports: only used with 'warm = true'",
        ),
        (
            'command = ["python", "prog.py"]\nwarm = true\nwarm_imports = ["no such"]',
            "pins[0].warm_imports[0]: 'no such' is not a module name",
        ),
        ('command = ["python", "prog.py"]\nwarm = "yes"', "pins[0].warm"),
    ],
)
def test_warm_config_errors(tmp_path: Path, pins_table: str, message: str) -> None:
    write_files(
        tmp_path,
        {
            "lockstep.toml": f'[[pins]]\nname = "p"\ncases = "c.toml"\n{pins_table}\n',
            "c.toml": '[[case]]\nid = "a"\n',
            "prog.py": "print(1)\n",
        },
    )
    result = run_cli("replay", cwd=tmp_path)
    assert result.code == 2, result.output
    assert message in result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_warm_case_past_the_timeout_or_the_cap_is_killed_as_a_cold_one(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "lockstep.toml": (
                '[[pins]]\nname = "slow"\ncommand = ["python", "slow.py"]\ncases = "c.toml"\n'
                'warm = true\ntimeout = 3\nmax_output = "64KiB"\n'
            ),
            "c.toml": '[[case]]\nid = "a"\n\n[[case]]\nid = "b"\nargv = ["loud"]\n',
            "slow.py": "print('done')\n",
        },
    )
    assert run_cli("record", cwd=tmp_path).code == 0
    assert '"warm":true' in (tmp_path / "lockstep" / "slow.pins.jsonl").read_text()
    (tmp_path / "slow.py").write_text(
        "import sys, time\nprint('started', flush=True)\n"
        "if sys.argv[1:] == ['loud']:\n    sys.stdout.write('x' * 200_000)\n"
        "time.sleep(60)\n"
    )
    result = run_cli("replay", "--jobs", "2", cwd=tmp_path, timeout=60)
    assert result.code != 0
    assert "killed at the timeout" in result.output, result.output
    assert "stdout exceeded the 64 KiB cap" in result.output, result.output


_word = st.text(st.characters(codec="utf-8", exclude_characters="\0"), min_size=1, max_size=12)


@given(
    python=st.sampled_from(["python", "python3", "python3.11", "/usr/bin/python3"]),
    script=_word.filter(lambda w: not w.startswith("-")),
    args=st.lists(_word, max_size=4),
)
def test_python_entry_reads_a_script_command(python: str, script: str, args: list[str]) -> None:
    entry = python_entry([python, script, *args])
    assert isinstance(entry, PythonEntry)
    assert (entry.script, entry.module, entry.args) == (script, "", tuple(args))
    module = python_entry([python, "-m", "pkg.cli", *args])
    assert isinstance(module, PythonEntry) and module.module == "pkg.cli"
    assert isinstance(python_entry([python, "-u", script]), str)
    assert isinstance(python_entry(["node", script]), str)


@given(st.dictionaries(st.from_regex(r"[A-Z_]{1,12}", fullmatch=True), st.text(max_size=5)))
def test_cold_reason_names_exactly_the_start_time_keys(env: dict[str, str]) -> None:
    server = {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "TZ": "UTC", "PYTHONHASHSEED": "0"}
    sensitive = [
        k
        for k, v in env.items()
        if (k.startswith(("PYTHON", "LC_")) or k in {"LANG", "LANGUAGE", "TZ"})
        and server.get(k) != v
    ]
    reason = cold_reason(env, server)
    assert bool(reason) == bool(sensitive)
    if sensitive:
        assert min(sensitive) in reason


INFER_PROG = """
import sys
sys.path.insert(0, "vendor/site-packages")
import json, decimal
import helper, opener, threader
print(json.dumps({"n": sys.argv[1:], "d": str(decimal.Decimal(1) / 8)}), helper.X)
"""

VENDORED = {
    # An installed package that opens a file at import, and one that starts a thread.
    "vendor/site-packages/opener.py": "with open(__file__) as fh:\n    SIZE = len(fh.read())\n",
    "vendor/site-packages/threader.py": (
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
    ),
    "vendor/site-packages/quiet.py": "VALUE = 1\n",
}


def git_project(root: Path, files: dict[str, str]) -> Path:
    write_files(root, files)
    for argv in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"],
    ):
        subprocess.run(argv, cwd=root, check=True)
    return root


def header(root: Path, name: str) -> dict[str, object]:
    first = (root / "lockstep" / f"{name}.pins.jsonl").read_text().splitlines()[0]
    found: dict[str, object] = json.loads(first)
    return found


def test_warm_alone_infers_the_preload_and_leaves_out_what_is_unsafe(tmp_path: Path) -> None:
    root = git_project(
        tmp_path / "project",
        {
            "lockstep.toml": (
                '[[pins]]\nname = "cli"\ncommand = ["python", "cli.py"]\n'
                'cases = "cases.toml"\nwarm = true\n'
            ),
            "cases.toml": '[[case]]\nid = "a"\nargv = ["1"]\n\n[[case]]\nid = "b"\nargv = ["2"]\n',
            "cli.py": INFER_PROG,
            "helper.py": "import quiet\nX = quiet.VALUE\n",
            **VENDORED,
        },
    )
    result = run_cli("record", cwd=root)
    assert result.code == 0, result.output
    warm = header(root, "cli")["warm"]
    assert isinstance(warm, dict) and warm["inferred"] is True, result.output
    imports = warm["imports"]
    assert isinstance(imports, list)
    # Direct imports of the program and of its own modules; never its own code, never a
    # module that opens a file or starts a thread at import.
    # (``threading`` is a direct import of the program's threader module: safe to preload
    # itself; whether the server reaches it depends on the Python version, see below.)
    assert imports[:2] == ["json", "decimal"], result.output
    assert set(imports) <= {"json", "decimal", "threading"}, result.output
    assert "warm: preloads json, decimal" in result.output
    assert "helper (the project's own code)" in result.output
    assert "opener (opens a file at import)" in result.output
    # Found only through the path the program set up at run time: the server cannot import
    # them before the program runs, so they are left out, named.
    assert "quiet (cannot import 'quiet'" in result.output
    # threader starts a thread at import: left out, named (3.11 cannot import it before the
    # program sets up its path; 3.12 can, and sees the thread).
    assert (
        "threader (cannot import 'threader'" in result.output
        or "threader (starts a thread at import)" in result.output
    ), result.output
    assert {p["warm"] for p in pins(root, "cli").values()} == {True}
    assert run_cli("replay", "--jobs", "1", cwd=root).code == 0
    # A case added later is proven with the file's own preload, which stays as it was.
    before = header(root, "cli")
    with (root / "cases.toml").open("a") as fh:
        fh.write('\n[[case]]\nid = "c"\nargv = ["3"]\n')
    result = run_cli("record", "--new-only", cwd=root)
    assert result.code == 0, result.output
    assert header(root, "cli") == before
    assert pins(root, "cli")["c"]["warm"] is True
    # warm_imports still overrides: record preloads exactly that, and says nothing inferred.
    config = root / "lockstep.toml"
    config.write_text(config.read_text() + 'warm_imports = ["json"]\n')
    result = run_cli("record", "--force", cwd=root)
    assert result.code == 0 and "inferred" not in result.output, result.output
    assert header(root, "cli")["warm"] == {
        "imports": ["json"],
        "inferred": False,
        "digest": header(root, "cli")["warm"]["digest"],  # type: ignore[index]
    }
    assert run_cli("replay", cwd=root).code == 0


@pytest.mark.parametrize("inferred", [False, True])
def test_a_preloaded_module_that_starts_printing_at_import_turns_replay_red(
    tmp_path: Path, inferred: bool
) -> None:
    """Issue 26: the warm server's imports are not where a change may hide.  Listed in
    ``warm_imports``, a change to any file the preload loaded makes every case run cold, so
    the new output shows; inferred, the project's own module is never preloaded at all."""
    lib = "legacy.py"
    extra = "" if inferred else 'warm_imports = ["json", "legacy"]\n'
    root = git_project(
        tmp_path / "project",
        {
            "lockstep.toml": (
                '[[pins]]\nname = "cli"\ncommand = ["python", "cli.py"]\n'
                f'cases = "cases.toml"\nwarm = true\n{extra}'
            ),
            "cases.toml": '[[case]]\nid = "a"\nargv = ["1"]\n\n[[case]]\nid = "b"\nargv = ["2"]\n',
            "cli.py": (
                "import json, sys\nimport legacy\nprint(json.dumps(legacy.total(sys.argv[1:])))\n"
            ),
            lib: "def total(args):\n    return len(args)\n",
        },
    )
    assert run_cli("record", cwd=root).code == 0
    assert {p["warm"] for p in pins(root, "cli").values()} == {True}
    imports = header(root, "cli")["warm"]["imports"]  # type: ignore[index]
    assert imports == (["json"] if inferred else ["json", "legacy"])
    assert run_cli("replay", cwd=root).code == 0
    module = root / lib
    module.write_text('print("DEPRECATION: legacy is going away")\n' + module.read_text())
    subprocess.run(["git", "commit", "-qam", "legacy prints"], cwd=root, check=True)
    result = run_cli("replay", "--jobs", "1", cwd=root)
    assert result.code == 1, result.output
    assert "DEPRECATION" in result.output
