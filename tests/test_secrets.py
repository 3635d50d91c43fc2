"""Secrets never reach an oracle file: refused in every kind and field, scrubbed by value.

Every fake secret is assembled when the tests run (:mod:`secret_vectors`); after each
record, the oracle folder is searched for every one of them, raw and base64-encoded.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from helpers import invoke_cli, run_cli, write_files
from secret_vectors import vectors

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


VECTORS = vectors()
KINDS = sorted(VECTORS)


def assert_no_vector_in(folder: Path, extra: tuple[str, ...] = ()) -> None:
    """No raw secret (nor its base64) in any file lockstep wrote under ``folder``."""
    needles = [raw for raw, _ in VECTORS.values()] + list(extra)
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        for needle in needles:
            raw = needle.encode()
            assert raw not in data, f"{path}: holds a secret"
            assert base64.b64encode(raw)[:-4] not in data, f"{path}: holds a base64 secret"


def assert_not_printed(output: str) -> None:
    for raw, _ in VECTORS.values():
        assert raw not in output


def test_every_vector_is_detected_in_every_spelling_a_value_takes() -> None:
    from lockstep.secrets.detect import detector

    scan = detector()
    assert len(VECTORS) >= 20
    for kind, (_, line) in VECTORS.items():
        assert scan.scan_text(line), kind


def test_clean_values_are_not_secrets() -> None:
    from lockstep.secrets.detect import detector

    scan = detector()
    for text in [
        "alice: 300 EUR",
        "run 3fa2c1d4-5b6e-4f70-8a9b-0c1d2e3f4a5b at 2024-05-01T10:00:00",
        "sha256 " + "ab" * 32,
        '{"total": "12.50", "name": "Zoë Müller", "path": "/usr/local/lib/python3"}',
        "Traceback (most recent call last): ValueError: invalid literal for int()",
    ]:
        assert scan.scan_text(text) == [], text


# ---------------------------------------------------------------- corpus


def test_corpus_refuses_each_secret_fixture_and_writes_the_rest(tmp_path: Path) -> None:
    files: dict[str, str] = {
        "lockstep.toml": '[[corpus]]\nname = "docs"\nfixtures = "fx/*.json"\n'
        'render = "harness:render"\n',
        "harness.py": "import json\n\ndef render(path):\n"
        "    data = json.loads(path.read_text())\n"
        "    if data.get('raise'):\n        raise ValueError(data['text'])\n"
        "    return 'rendered: ' + data['text'] + '\\n'\n",
        "fx/clean.json": json.dumps({"text": "nothing to hide"}),
    }
    for kind in KINDS:
        files[f"fx/{kind}.json"] = json.dumps({"text": VECTORS[kind][1]})
    files["fx/raised.json"] = json.dumps({"text": VECTORS["github"][1], "raise": True})
    write_files(tmp_path, files)  # type: ignore[arg-type]
    result = invoke_cli("record", cwd=tmp_path)
    assert result.code == 1, result.output
    assert_not_printed(result.output)
    assert "secret refused" in result.output
    lock = json.loads((tmp_path / "lockstep/docs.lock.json").read_text())
    assert [e["id"] for e in lock["entries"]] == ["clean.json"]
    assert f"{len(KINDS) + 1} case(s) refused because they hold a secret" in result.output
    assert "exception: GitHub Token" in result.output
    assert_no_vector_in(tmp_path / "lockstep")


# ---------------------------------------------------------------- ledger

LEDGER_TARGET = """
def handle(value, tag="", sink=None, put=""):
    if sink is not None:
        sink.append(put)
    if value == "fail":
        raise ValueError("rejected " + tag)
    return {"value": value}
"""


def _ledger_driver() -> str:
    calls = ["handle('plain')"]
    for kind in KINDS:
        line = json.dumps(VECTORS[kind][1])
        calls += [
            f"handle({line})",  # args and result
            f"handle('k-{kind}', tag={line})",  # kwargs
            f"handle('m-{kind}', sink=[], put={line})",  # mutated
        ]
        calls.append(f"try:\n    handle('fail', tag={line})\nexcept ValueError:\n    pass")
    return "from svc import handle\n" + "\n".join(calls) + "\n"


def test_ledger_refuses_each_row_with_a_secret_in_any_field(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[lockstep]\nstem_length = 400\n\n[[ledger]]\nname = "handle"\n'
            'target = "svc:handle"\ndriver = "drive.py"\n',
            "svc.py": LEDGER_TARGET,
            "drive.py": _ledger_driver(),
        },
    )
    result = invoke_cli("record", cwd=tmp_path)
    assert result.code == 1, result.output
    assert_not_printed(result.output)
    lines = (tmp_path / "lockstep/handle.ledger.jsonl").read_text().splitlines()
    assert len(lines) == 2  # the header and the one clean call
    assert '"plain"' in lines[1]
    for field in ("args[0]", "kwargs.tag", "mutated", "result.value", "exc_stem"):
        assert field in result.output, field
    assert f"{4 * len(KINDS)} case(s) refused because they hold a secret" in result.output
    assert_no_vector_in(tmp_path / "lockstep")


def test_a_secret_used_as_a_dict_key_is_refused_without_naming_the_key(tmp_path: Path) -> None:
    """A refusal names the field by its path; a dict key in it is recorded data, so a key
    that is itself the secret is shown by its digest, never as itself."""
    raw = VECTORS["aws"][0]
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\nname = "handle"\ntarget = "svc:handle"\n'
            'driver = "drive.py"\n',
            "svc.py": LEDGER_TARGET,
            "drive.py": f"from svc import handle\nhandle({{{raw!r}: 1}})\nhandle('plain')\n",
        },
    )
    result = invoke_cli("record", cwd=tmp_path)
    assert result.code == 1, result.output
    assert_not_printed(result.output)
    key = hashlib.sha256(raw.encode()).hexdigest()[:8]
    assert f"args[0].<key {key}>: AWS Access Key" in result.output
    assert "1 case(s) refused because they hold a secret" in result.output
    assert_no_vector_in(tmp_path / "lockstep")


# ---------------------------------------------------------------- pins

PROGRAM = """
import json, os, sys
vectors = json.load(open("vectors.json"))
mode, kind = sys.argv[1], sys.argv[2]
if mode == "stdout":
    print("token:", vectors[kind])
elif mode == "stderr":
    print(vectors[kind], file=sys.stderr)
elif mode == "base64":
    import base64
    print(base64.b64encode(os.environ["API_TOKEN"].encode()).decode())
else:
    print("quiet")
"""


def test_pins_refuses_a_secret_in_every_field(tmp_path: Path) -> None:
    cases = ['[[case]]\nid = "clean"\nargv = ["none", "x"]\n']
    for kind in KINDS:
        cases.append(f'[[case]]\nid = "out-{kind}"\nargv = ["stdout", "{kind}"]\n')
    gh = json.dumps(VECTORS["github"][1])
    cases += [
        '[[case]]\nid = "err"\nargv = ["stderr", "aws"]\n',
        f'[[case]]\nid = "argv"\nargv = ["none", {gh}]\n',
        f'[[case]]\nid = "env"\nargv = ["none", "x"]\nenv = {{ KEY = {gh} }}\n',
        f'[[case]]\nid = "stdin"\nargv = ["none", "x"]\nstdin = {gh}\n',
    ]
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[pins]]\nname = "cli"\ncommand = ["python", "prog.py"]\n'
            'cases = "cases.toml"\n',
            "prog.py": PROGRAM,
            "cases.toml": "\n".join(cases),
            "vectors.json": json.dumps({k: line for k, (_, line) in VECTORS.items()}),
        },
    )
    result = run_cli("record", cwd=tmp_path, timeout=600)
    assert result.code == 1, result.output
    assert_not_printed(result.output)
    pins = (tmp_path / "lockstep/cli.pins.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in pins[1:]] == ["clean"]
    for field in ("stdout", "stderr: AWS Access Key", "argv[3]", "env.KEY", "stdin"):
        assert field in result.output, field
    assert_no_vector_in(tmp_path / "lockstep")
    scan = invoke_cli("scan", cwd=tmp_path)  # the cases file and vectors are fixtures
    assert scan.code == 1
    assert "cases.toml:" in scan.output
    assert_not_printed(scan.output)


# ---------------------------------------------------------------- tape


def test_tape_refuses_a_secret_in_its_events_or_output(tmp_path: Path) -> None:
    line = json.dumps(VECTORS["slack"][1])
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[tape]]\nname = "calls"\ndriver = "drive:calls"\n\n'
            '[[tape]]\nname = "returns"\ndriver = "drive:returns"\n\n'
            '[[tape]]\nname = "clean"\ndriver = "drive:clean"\n',
            "drive.py": "def calls(tape):\n    note = tape.spy('audit.note', lambda m: None)\n"
            f"    note({line})\n    return 'done'\n\n"
            f"def returns(tape):\n    return {line}\n\n"
            "def clean(tape):\n    note = tape.spy('audit.note', lambda m: None)\n"
            "    note('hello')\n    return 'done'\n",
        },
    )
    result = invoke_cli("record", cwd=tmp_path)
    assert result.code == 1, result.output
    assert "events[0].args[0]: Slack Token" in result.output
    assert "output.returned: Slack Token" in result.output
    assert not (tmp_path / "lockstep/calls.tape.json").exists()
    assert not (tmp_path / "lockstep/returns.tape.json").exists()
    assert (tmp_path / "lockstep/clean.tape.json").exists()
    assert_no_vector_in(tmp_path / "lockstep")


# ---------------------------------------------------------------- scrubbing

SCRUB_PROGRAM = """
import os, sys
token = os.environ["API_TOKEN"]
print("argv:", sys.argv[1])
print("stdin:", sys.stdin.read().strip())
print("Authorization: Bearer " + token)
"""

SCRUB_CASES = """
[[case]]
id = "auth"
argv = ["--token=<API_TOKEN>"]
env = { API_TOKEN = "<API_TOKEN>" }
stdin = "login <API_TOKEN>"
"""


def _scrub_project(root: Path) -> None:
    write_files(
        root,
        {
            "lockstep.toml": '[[secret]]\nenv = "API_TOKEN"\n\n'
            '[[pins]]\nname = "cli"\ncommand = ["python", "prog.py"]\ncases = "cases.toml"\n\n'
            '[[ledger]]\nname = "auth"\ntarget = "svc:auth"\ndriver = "drive.py"\n',
            "prog.py": SCRUB_PROGRAM,
            "cases.toml": SCRUB_CASES,
            "svc.py": "def auth(token, user):\n"
            "    return {'header': 'Bearer ' + token, 'user': user, 'n': len(token)}\n",
            "drive.py": "import os\nfrom svc import auth\nauth(os.environ['API_TOKEN'], 'bob')\n",
        },
    )


def test_a_scrubbed_secret_replays_exactly_with_the_value_and_errors_without(
    tmp_path: Path,
) -> None:
    token = VECTORS["github"][0]
    _scrub_project(tmp_path)
    env = {"API_TOKEN": token}
    recorded = run_cli("record", cwd=tmp_path, env=env, timeout=300)
    assert recorded.code == 0, recorded.output
    assert_not_printed(recorded.output)
    assert_no_vector_in(tmp_path / "lockstep")
    pin = json.loads((tmp_path / "lockstep/cli.pins.jsonl").read_text().splitlines()[1])
    assert pin["env"] == {"API_TOKEN": "<API_TOKEN>"}
    assert pin["argv"][-1] == "--token=<API_TOKEN>"
    assert "Authorization: Bearer <API_TOKEN>" in pin["stdout"]
    row = json.loads((tmp_path / "lockstep/auth.ledger.jsonl").read_text().splitlines()[1])
    assert row["args"] == ["<API_TOKEN>", "bob"]
    assert row["result"]["header"] == "Bearer <API_TOKEN>"
    assert row["result"]["n"] == len(token)  # the function saw the real value

    green = run_cli("replay", cwd=tmp_path, env=env, timeout=300)
    assert green.code == 0, green.output

    missing = run_cli("replay", cwd=tmp_path, timeout=300)  # API_TOKEN not set
    assert missing.code == 1, missing.output
    assert missing.output.count("<API_TOKEN> stands for $API_TOKEN, which is not set") == 2
    assert "API_TOKEN" in missing.output and "not set" in missing.output
    assert_not_printed(missing.output)


def test_a_scrubbed_secret_printed_encoded_is_refused(tmp_path: Path) -> None:
    token = VECTORS["stripe"][0]
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[secret]]\nenv = "API_TOKEN"\n\n'
            '[[pins]]\nname = "cli"\ncommand = ["python", "prog.py"]\ncases = "cases.toml"\n',
            "prog.py": PROGRAM,
            "cases.toml": '[[case]]\nid = "b64"\nargv = ["base64", "x"]\n'
            'env = { API_TOKEN = "<API_TOKEN>" }\n',
            "vectors.json": "{}",
        },
    )
    result = run_cli("record", cwd=tmp_path, env={"API_TOKEN": token}, timeout=300)
    assert result.code == 1, result.output
    assert "stdout: value of <API_TOKEN>" in result.output
    assert_no_vector_in(tmp_path / "lockstep", (base64.b64encode(token.encode()).decode(),))


# ---------------------------------------------------------------- allow, off, config


def test_an_allowed_value_is_written_and_off_writes_everything(tmp_path: Path) -> None:
    import hashlib

    from lockstep.secrets.detect import detector

    line = VECTORS["twilio"][1]
    ((_, hit),) = detector().scan_text(line)
    assert hit.secret_digest == hashlib.sha256(VECTORS["twilio"][0].encode()).hexdigest()
    base = '[[ledger]]\nname = "handle"\ntarget = "svc:handle"\ndriver = "drive.py"\n'
    write_files(
        tmp_path,
        {
            "lockstep.toml": base + f'\n[[secret]]\nallow = "{hit.secret_digest}"\n',
            "svc.py": LEDGER_TARGET,
            "drive.py": f"from svc import handle\nhandle({json.dumps(line)})\n",
        },
    )
    allowed = invoke_cli("record", cwd=tmp_path)
    assert allowed.code == 0, allowed.output
    write_files(tmp_path, {"lockstep.toml": '[lockstep]\nsecrets = "off"\n\n' + base})
    off = invoke_cli("record", "--force", cwd=tmp_path)
    assert off.code == 0, off.output
    scan = invoke_cli("scan", cwd=tmp_path)  # scan ignores "off": it is the check for CI
    assert scan.code == 1
    assert "lockstep/handle.ledger.jsonl:2: args[0]: Twilio API Key" in scan.output
    assert_not_printed(scan.output)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('env = "A"\npattern = "x"', "secret[0]: give exactly one of env, pattern or allow"),
        ('pattern = "x+"', "secret[0].name: a pattern secret needs a name"),
        ('allow = "nothex"', "secret[0].allow: must be the value's sha256"),
        ('name = "a b"\npattern = "x"', "secret[0].name: 'a b' cannot name a placeholder"),
        ('name = "s"\npattern = "x*"', "secret[0].pattern: matches the empty string"),
        ('env = "A"\nvalue = "x"', "secret[0].value: unknown key"),
    ],
)
def test_a_bad_secret_table_is_a_one_line_config_error(
    tmp_path: Path, table: str, message: str
) -> None:
    write_files(tmp_path, {"lockstep.toml": f"[[secret]]\n{table}\n"})
    result = invoke_cli("status", cwd=tmp_path)
    assert result.code == 2
    assert f"lockstep.toml: {message}" in result.stderr


def test_scan_is_clean_on_a_clean_project_and_names_file_line_field(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[corpus]]\nname = "docs"\nfixtures = "fx/*.txt"\n'
            'render = "harness:render"\n',
            "fx/a.txt": "hello\n",
            "lockstep/other.pins.jsonl": '{"format": "x"}\n',
        },
    )
    assert invoke_cli("scan", cwd=tmp_path).code == 0
    write_files(tmp_path, {"fx/b.txt": "line one\n" + VECTORS["aws"][1] + "\n"})
    result = invoke_cli("scan", cwd=tmp_path)
    assert result.code == 1
    assert "fx/b.txt:2: -: AWS Access Key" in result.output
    assert_not_printed(result.output)
    marked = VECTORS["aws"][1] + "  # pragma: allowlist secret\n"
    write_files(tmp_path, {"fx/b.txt": marked})
    assert invoke_cli("scan", "fx", cwd=tmp_path).code == 0
    assert invoke_cli("scan", "nowhere", cwd=tmp_path).code == 2


def test_guard_counts_the_secret_tables_as_oracle_changes() -> None:
    from lockstep.gates.scope import _oracle_tables

    before = _oracle_tables(b'[lockstep]\ndir = "x"\n', "lockstep.toml")
    off = _oracle_tables(b'[lockstep]\nsecrets = "off"\n', "lockstep.toml")
    allow = _oracle_tables(b'[[secret]]\nallow = "' + b"0" * 64 + b'"\n', "lockstep.toml")
    assert before != off and before != allow
    pyproject = b'[tool.lockstep]\nsecrets = "off"\n'
    assert _oracle_tables(pyproject, "pyproject.toml") == {"lockstep.secrets": "off"}


def test_suggestion_never_files_a_secret_as_volatile() -> None:
    from lockstep.probe.suggest import suggest
    from lockstep.process import RunResult

    def run(out: str) -> RunResult:
        return RunResult(exit_code=0, stdout=out.encode(), stderr=b"", seconds=0.0)

    one, two = vectors(1)["github"][0], vectors(2)["github"][0]
    found = suggest([run(f"token: {one}\n"), run(f"token: {two}\n")])
    assert found and all(s.secret for s in found)
    assert all(one not in s.example and two not in s.pattern for s in found)
    plain = suggest([run("batch 17\n"), run("batch 18\n")])
    assert plain and not plain[0].secret


def test_record_io_leaves_out_a_row_with_a_secret_and_warns(tmp_path: Path) -> None:
    import subprocess
    import sys

    line = json.dumps(VECTORS["openai"][1])
    write_files(
        tmp_path,
        {
            "app.py": "from lockstep import record_io\n\n"
            "@record_io(ledger='echo.ledger.jsonl')\ndef echo(value):\n    return value\n\n"
            f"echo('plain')\necho({line})\n",
        },
    )
    proc = subprocess.run(
        [sys.executable, "app.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "secret refused" in proc.stderr and "OpenAI Token" in proc.stderr
    assert_not_printed(proc.stderr)
    rows = (tmp_path / "echo.ledger.jsonl").read_text().splitlines()[1:]
    assert len(rows) == 1 and '"plain"' in rows[0]
    assert VECTORS["openai"][0] not in (tmp_path / "echo.ledger.jsonl").read_text()


def test_a_pattern_secret_is_scrubbed_from_output_and_refused_in_a_ledger_row(
    tmp_path: Path,
) -> None:
    session = "sess-" + "0123456789abcdef" * 2
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[secret]]\nname = "SESSION"\npattern = "sess-[0-9a-f]{32}"\n\n'
            '[[corpus]]\nname = "page"\nfixtures = "fx/*.txt"\nrender = "harness:render"\n\n'
            '[[ledger]]\nname = "echo"\ntarget = "harness:echo"\ndriver = "drive.py"\n',
            "harness.py": f"def render(path):\n    return 'cookie: {session}\\n'\n\n"
            "def echo(value):\n    return value\n",
            "fx/a.txt": "a",
            "drive.py": f"from harness import echo\necho('plain')\necho('{session}')\n",
        },
    )
    result = invoke_cli("record", cwd=tmp_path)
    assert result.code == 1, result.output
    assert "args[0]: value of <SESSION>" in result.output
    blobs = [p.read_text() for p in (tmp_path / "lockstep/blobs").rglob("*") if p.is_file()]
    assert blobs == ["cookie: <SESSION>\n"]
    assert session not in (tmp_path / "lockstep/echo.ledger.jsonl").read_text()
    assert invoke_cli("replay", cwd=tmp_path).code == 0


@pytest.mark.parametrize("layout", [{"separators": (",", ":")}, {"indent": 1}])
def test_every_vector_is_found_inside_a_json_document(layout: dict[str, object]) -> None:
    from lockstep.secrets.policy import SecretPolicy
    from lockstep.secrets.scrub import Scrubber

    policy = SecretPolicy(enabled=True, scrubber=Scrubber(), allowed=frozenset())
    for kind, (_, line) in VECTORS.items():
        doc = json.dumps({"n": 1, "message": line, "tags": [line]}, **layout)  # type: ignore[arg-type]
        assert policy.findings({"output": doc.encode()}), kind
