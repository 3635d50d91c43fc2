"""Secrets and hostile text stay out of every place lockstep writes or prints.

Oracle files are guarded in tests/test_secrets.py; here the other doors: a ledger row
scanned as its line is written (key and quotes), bytes and dict keys, secrets found by
the name of their environment variable, drifted output at replay (terminal, pending,
HTML, JUnit), refusals, ``lockstep scan``, and control characters or HTML in output.
Every fake secret is assembled at test time (:mod:`secret_vectors`).
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from helpers import GitRepo, invoke_cli, pytest_in, run_cli, write_files
from secret_vectors import vectors

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


VECTORS = vectors()
PASSWORD = "hunter2-" + "S3cr3t" + "-Xq9!"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"


def spellings(value: str) -> list[str]:
    """The value and the encodings a program may print it in (base64 at each alignment,
    hex, URL-quoted, JSON-escaped)."""
    raw = value.encode()
    forms = {value, raw.hex(), quote(value, safe=""), json.dumps(value)[1:-1]}
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw + b"\0\0").decode()
        forms.add(encoded[-(-8 * pad // 6) : 8 * (pad + len(raw)) // 6])
    return sorted(f for f in forms if len(f) >= 8)


def assert_nowhere(values: list[str], root: Path, printed: str) -> None:
    """No value, in any spelling, in any file under ``root`` nor in ``printed``."""
    files = [p for p in root.rglob("*") if p.is_file()]
    for value in values:
        for form in spellings(value):
            assert form not in printed, f"printed: a spelling of a secret ({form[:4]}...)"
            for path in files:
                assert form.encode() not in path.read_bytes(), f"{path.name}: holds a secret"


# ---------------------------------------------------------------- ledger rows as written

LEDGER_TARGET = """
def handle(value, **kw):
    out = dict(kw.get("give", {}))
    out["value"] = value
    return out
"""


def test_a_ledger_row_is_scanned_as_written_with_keys_quotes_and_bytes(tmp_path: Path) -> None:
    github = VECTORS["github"][0]
    aws = VECTORS["aws"][0]
    drive = (
        "from svc import handle\n"
        "handle('plain')\n"
        f"handle('login', password={PASSWORD!r})\n"
        f"handle('dsn', give={{'dsn': {AWS_SECRET!r}}})\n"
        f"handle({github.encode()!r})\n"
        f"handle('ba', give={{'blob': bytearray({aws.encode()!r})}})\n"
        f"handle('key', give={{{github!r}: 1}})\n"
    )
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[lockstep]\nsecret_env = []\n\n[[ledger]]\nname = "handle"\n'
            'target = "svc:handle"\ndriver = "drive.py"\n',
            "svc.py": LEDGER_TARGET,
            "drive.py": drive,
        },
    )
    result = invoke_cli("record", cwd=tmp_path)
    assert result.code == 1, result.output
    out = result.output
    assert "kwargs.password: Secret Keyword" in out
    assert "result.dsn: Base64 High Entropy String" in out
    assert "args[0]: GitHub Token" in out
    assert "result.blob: AWS Access Key" in out
    assert "GitHub Token" in out.split("handle('key'")[0] or ".<key " in out
    assert "5 case(s) refused because they hold a secret" in out
    rows = (tmp_path / "lockstep/handle.ledger.jsonl").read_text().splitlines()
    assert len(rows) == 2 and '"plain"' in rows[1]
    assert_nowhere([PASSWORD, AWS_SECRET, github, aws], tmp_path / "lockstep", out)
    scan = invoke_cli("scan", cwd=tmp_path)
    assert scan.code == 0, scan.output


def test_a_positional_argument_is_scanned_under_its_parameter_name(tmp_path: Path) -> None:
    """``connect("db", "hunter2...")`` into ``def connect(host, password)`` is the same
    secret as ``password="hunter2..."``: the recorded signature names each positional."""
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[lockstep]\nsecret_env = []\n\n[[ledger]]\nname = "connect"\n'
            'target = "svc:connect"\ndriver = "drive.py"\n\n'
            '[[ledger]]\nname = "spread"\ntarget = "svc:spread"\ndriver = "drive.py"\n',
            "svc.py": "def connect(host, password):\n    return len(password or '')\n\n"
            "def spread(host, *secrets):\n    return len(secrets)\n",
            "drive.py": "from svc import connect, spread\n"
            f"connect('db', {PASSWORD!r})\n"
            f"connect('db', password={PASSWORD!r})\n"
            "connect('db', None)\n"
            f"spread('db', 'x', {PASSWORD!r})\n",
        },
    )
    result = invoke_cli("record", cwd=tmp_path)
    assert result.code == 1, result.output
    assert "args[1]: Secret Keyword" in result.output
    assert "kwargs.password: Secret Keyword" in result.output
    assert "args[2]: Secret Keyword" in result.output  # one of *secrets
    assert result.output.count("refused svc:") == 3, result.output
    assert "null" in (tmp_path / "lockstep/connect.ledger.jsonl").read_text()
    assert_nowhere([PASSWORD], tmp_path / "lockstep", result.output)


def test_a_token_in_a_line_shaped_like_a_call_is_still_found(tmp_path: Path) -> None:
    """detect-secrets drops every finding of a line like ``note: connect('...')`` (meant
    for ``secret = get_secret()``); a token printed in one is still a token."""
    github = VECTORS["github"][0]
    aws = VECTORS["aws"][0]
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\nname = "handle"\ntarget = "svc:handle"\n'
            'driver = "drive.py"\n',
            "svc.py": LEDGER_TARGET,
            "drive.py": "from svc import handle\n"
            f"handle(\"note: connect('{github}')\")\n"
            f"handle('x', give={{'log': \"key: get('{aws}')\"}})\n"
            'handle("secret = get_secret_key()")\n',
        },
    )
    result = invoke_cli("record", cwd=tmp_path)
    assert result.code == 1, result.output
    assert "args[0]: GitHub Token" in result.output
    assert "result.log: AWS Access Key" in result.output
    assert "get_secret_key()" in (tmp_path / "lockstep/handle.ledger.jsonl").read_text()
    assert_nowhere([github, aws], tmp_path / "lockstep", result.output)


def test_a_bytes_value_in_a_written_file_is_found_by_scan(tmp_path: Path) -> None:
    github = VECTORS["github"][0]
    row = {"args": [{"$bytes": base64.b64encode(github.encode()).decode()}], "id": "x"}
    write_files(tmp_path, {"lockstep.toml": "", "lockstep/old.jsonl": json.dumps(row) + "\n"})
    scan = invoke_cli("scan", cwd=tmp_path)
    assert scan.code == 1, scan.output
    assert "lockstep/old.jsonl:1: args[0]: GitHub Token" in scan.output
    assert github not in scan.output


# ---------------------------------------------------------------- secrets by env name


def test_an_environment_secret_is_scrubbed_by_name_and_replays(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\nname = "handle"\ntarget = "svc:handle"\n'
            'driver = "drive.py"\n',
            "svc.py": LEDGER_TARGET,
            "drive.py": "import os\nfrom svc import handle\n"
            "handle('plain')\nhandle(os.environ['DB_PASSWORD'])\n",
        },
    )
    env = {"DB_PASSWORD": PASSWORD, "SHORT_TOKEN": "abc12"}
    result = invoke_cli("record", cwd=tmp_path, env=env)
    assert result.code == 0, result.output
    assert "SHORT_TOKEN" in result.stderr and "not scrubbed" in result.stderr
    text = (tmp_path / "lockstep/handle.ledger.jsonl").read_text()
    assert "<DB_PASSWORD>" in text
    assert_nowhere([PASSWORD], tmp_path / "lockstep", result.output)
    replayed = invoke_cli("replay", cwd=tmp_path, env=env)
    assert replayed.code == 0, replayed.output
    assert_nowhere([PASSWORD], tmp_path / "lockstep", replayed.output)


def test_only_a_placeholder_of_a_secret_variable_needs_it_set_at_replay(tmp_path: Path) -> None:
    """``<author>`` or ``<ITEM_ID>`` in a recorded value is text, not a placeholder: it
    replays without any variable set; ``<API_KEY>`` (a name ``secret_env`` matches) is
    the placeholder of a variable that is not set, so record's own replay in a fresh
    interpreter refuses that row, naming the variable."""
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\nname = "handle"\ntarget = "svc:handle"\n'
            'driver = "drive.py"\n',
            "svc.py": LEDGER_TARGET,
            "drive.py": "from svc import handle\n"
            "handle('<author>Ada</author> <ITEM_ID> <b>')\n"
            "handle('key: <API_KEY>')\n",
        },
    )
    recorded = invoke_cli("record", cwd=tmp_path)
    assert recorded.code == 1, recorded.output
    assert "<API_KEY> stands for $API_KEY, which is not set" in recorded.output
    assert "added 1:" in recorded.output
    assert "<author>" in (tmp_path / "lockstep/handle.ledger.jsonl").read_text()
    replayed = invoke_cli("replay", cwd=tmp_path)
    assert replayed.code == 0, replayed.output


def test_secret_env_names_are_configurable(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[lockstep]\nsecret_env = ["MY_*"]\n\n[[ledger]]\nname = "handle"\n'
            'target = "svc:handle"\ndriver = "drive.py"\n',
            "svc.py": LEDGER_TARGET,
            "drive.py": "import os\nfrom svc import handle\nhandle(os.environ['MY_DSN'])\n"
            "handle(os.environ['DB_PASSWORD'])\n",
        },
    )
    env = {"MY_DSN": "dsn-value-0001", "DB_PASSWORD": "not-a-secret-here"}
    result = invoke_cli("record", cwd=tmp_path, env=env)
    assert result.code == 0, result.output
    text = (tmp_path / "lockstep/handle.ledger.jsonl").read_text()
    assert "<MY_DSN>" in text and "dsn-value-0001" not in text
    assert "not-a-secret-here" in text


# ---------------------------------------------------------------- drifted output at replay

PROGRAM = """
import base64, os, sys
token = os.environ["API_TOKEN"].encode()
if os.path.exists("leak"):
    print("b64:", base64.b64encode(b"x" + token).decode())
    print("hex:", token.hex())
    print("service:", os.environ["SERVICE_TOKEN"])
    print("new token:", open("leak").read().strip())
    print("control: \\x1b[2J\\x1b]0;title\\x07 <img src=x onerror=alert(1)> <!-- hidden")
else:
    print("quiet")
"""


def _drift_project(root: Path) -> dict[str, str]:
    write_files(
        root,
        {
            "lockstep.toml": '[[secret]]\nenv = "API_TOKEN"\n\n[[pins]]\nname = "cli"\n'
            'command = ["python", "prog.py"]\ncases = "cases.toml"\n',
            "prog.py": PROGRAM,
            "cases.toml": '[[case]]\nid = "run"\nargv = []\n'
            'env = { API_TOKEN = "<API_TOKEN>", SERVICE_TOKEN = "<SERVICE_TOKEN>" }\n',
        },
    )
    return {"API_TOKEN": VECTORS["stripe"][0], "SERVICE_TOKEN": "svc-" + VECTORS["twilio"][0]}


def test_drifted_output_is_masked_in_terminal_pending_html_and_junit(tmp_path: Path) -> None:
    env = _drift_project(tmp_path)
    recorded = run_cli("record", cwd=tmp_path, env=env, timeout=300)
    assert recorded.code == 0, recorded.output
    github = VECTORS["github"][0]
    (tmp_path / "leak").write_text(github + "\n")
    result = run_cli(
        "replay",
        "--keep-pending",
        "--report",
        "out/report.html",
        "--junit",
        "out/junit.xml",
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert result.code == 1, result.output
    out = result.output
    assert "<secret: GitHub Token>" in out
    assert "<API_TOKEN>" in out and "<SERVICE_TOKEN>" in out
    assert "\x1b" not in out and "\\x1b[2J" in out
    pending = (tmp_path / "lockstep/.pending/cli.jsonl").read_text()
    assert "<secret: GitHub Token>" in pending
    html = (tmp_path / "out/report.html").read_text()
    assert "\x1b" not in html and "\x07" not in html
    assert "<img src" not in html
    assert (tmp_path / "out/junit.xml").exists()
    secrets = [env["API_TOKEN"], env["SERVICE_TOKEN"], github]
    assert_nowhere(secrets, tmp_path / "lockstep", out)
    assert_nowhere(secrets, tmp_path / "out", out)


VARYING_TOKEN = """
import random, string


def token():
    tail = "".join(random.choice(string.ascii_letters) for _ in range(36))
    return "gh" + "p_" + tail
"""


def test_output_that_varies_is_shown_masked_by_record_and_probe(tmp_path: Path) -> None:
    """A call or a program whose output varies is refused with the two outcomes quoted
    (record's note, the error, ``lockstep probe``'s lines): each token in them masked."""
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\nname = "handle"\ntarget = "svc:handle"\n'
            'driver = "drive.py"\n\n'
            '[[pins]]\nname = "cli"\ncommand = ["python", "prog.py"]\ncases = "cases.toml"\n',
            "tok.py": VARYING_TOKEN,
            "svc.py": "from tok import token\n\ndef handle(x):\n    return token()\n",
            "drive.py": "from svc import handle\nhandle(1)\nhandle(1)\n",
            "prog.py": "from tok import token\nprint('\\x1b[2J', token())\n",
            "cases.toml": '[[case]]\nid = "run"\nargv = []\n',
        },
    )
    ledger = run_cli("record", "handle", cwd=tmp_path, timeout=300)
    assert ledger.code == 1, ledger.output
    assert "2 different outcomes" in ledger.output
    pins = run_cli("record", "cli", cwd=tmp_path, timeout=300)
    assert pins.code == 1 and "is not deterministic" in pins.output, pins.output
    probe = run_cli("probe", "cli", cwd=tmp_path, timeout=300)
    assert probe.code == 1 and "stdout line 1:" in probe.output, probe.output
    for result in (ledger, pins, probe):
        assert "ghp_" not in result.output, result.output
        assert "<secret: " in result.output
    assert "\x1b" not in probe.output and "\\x1b[2J" in probe.output


def test_replay_against_an_old_revision_shows_and_keeps_outcomes_masked(tmp_path: Path) -> None:
    """``replay --against REV`` quotes both versions' outcomes of the smallest differing
    call, and keeps that call for the review: a token in either is masked."""
    github, gitlab = VECTORS["github"][0], VECTORS["gitlab"][0]
    repo = GitRepo(tmp_path / "repo")
    config = '[[ledger]]\nname = "tok"\ntarget = "svc:tok"\ndriver = "drive:main"\n'
    repo.commit(
        "old",
        {
            "lockstep.toml": config,
            ".gitignore": "__pycache__/\n.lockstep-cache/\n",
            "svc.py": f"def tok(n):\n    return {github!r} if n else 'none'\n",
            "drive.py": "from svc import tok\n\ndef main():\n    tok(0)\n",
        },
    )
    repo.commit("new", {"svc.py": f"def tok(n):\n    return {gitlab!r} if n else 'none'\n"})
    assert run_cli("record", cwd=repo.root, timeout=300).code == 0
    repo.commit("freeze")
    result = run_cli(
        "replay", "--against", "HEAD~2", "--generate", "50", cwd=repo.root, timeout=600
    )
    assert result.code == 1, result.output
    assert "<secret: " in result.output
    kept = "".join(p.read_text() for p in (repo.root / ".lockstep-cache").rglob("*.json"))
    assert_nowhere([github, gitlab], repo.root / ".lockstep-cache", result.output + kept)


# ---------------------------------------------------------------- refusals name no value


def test_a_refusal_names_a_fixture_or_case_named_after_a_secret_by_digest(tmp_path: Path) -> None:
    github = VECTORS["github"][0]
    stripe = VECTORS["stripe"][0]
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[corpus]]\nname = "docs"\nfixtures = "fx/*.txt"\n'
            'render = "harness:render"\n\n'
            '[[pins]]\nname = "cli"\ncommand = ["python", "-c", "print(1)"]\n'
            'cases = "cases.toml"\n',
            "harness.py": "def render(path):\n    return 'plain text\\n'\n",
            f"fx/{github}.txt": "x",
            "fx/clean.txt": "x",
            "cases.toml": f'[[case]]\nid = "{stripe}"\nargv = []\n\n'
            '[[case]]\nid = "fine"\nargv = []\n',
        },
    )
    result = run_cli("record", cwd=tmp_path, timeout=300)
    assert result.code == 1, result.output
    assert "id: GitHub Token" in result.output and "id: Stripe Access Key" in result.output
    assert result.output.count("refused <case ") == 2, result.output
    assert_nowhere([github, stripe], tmp_path / "lockstep", result.output)


# ---------------------------------------------------------------- lockstep scan


def test_scan_finds_known_values_and_encoded_tokens_on_any_line(tmp_path: Path) -> None:
    github = VECTORS["github"][0]
    api = VECTORS["stripe"][0][3:]  # a value no detector knows: found because configured
    encoded = base64.b64encode(github.encode()).decode()
    lines = [
        "nothing here",
        f"plain {api} end",
        f"b64 {encoded}",
        f"hex {github.encode().hex()}",
        "url " + quote(f'password="{PASSWORD}"', safe=""),
    ]
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[secret]]\nenv = "API_TOKEN"\n',
            "lockstep/notes.txt": "\n".join(lines) + "\n",
        },
    )
    scan = invoke_cli("scan", cwd=tmp_path, env={"API_TOKEN": api})
    assert scan.code == 1, scan.output
    out = scan.output
    assert "lockstep/notes.txt:2: -: value of <API_TOKEN>" in out
    assert "lockstep/notes.txt:3: -: GitHub Token (base64)" in out
    assert "lockstep/notes.txt:4: -: GitHub Token (hex)" in out
    assert "lockstep/notes.txt:5: -: Secret Keyword (URL-encoded)" in out
    assert ":1:" not in out
    for value in (github, api, PASSWORD):
        assert not any(form in out for form in spellings(value))


# ---------------------------------------------------------------- every door at once

EVERY_DOOR_DRIVE = """
import json, os
from svc import handle
values = [*json.load(open("lines.json")).values(), os.environ["DB_PASSWORD"]]
for line in values:
    handle(line.encode())
    handle({line: 1})
    handle("b", give={"blob": bytearray(line.encode())})
    handle("r", give={"raw": line})
handle("plain")
"""

EVERY_DOOR_EMIT = """
import base64, json, os
from urllib.parse import quote


def emitted():
    \"\"\"Each secret kind as a program prints it, and the environment secrets raw and in
    every spelling (base64 at three alignments, hex, URL-quoted, JSON-escaped).\"\"\"
    lines = [f"new: {line}" for line in json.load(open("lines.json")).values()]
    for name in ("API_TOKEN", "SERVICE_TOKEN", "DB_PASSWORD"):
        value = os.environ[name].encode()
        lines.append(f"{name} {value.decode()} {value.hex()} {quote(value.decode(), safe='')}")
        lines.extend(base64.b64encode(b"ab"[:pad] + value).decode() for pad in range(3))
        lines.append(json.dumps({"v": value.decode() + '"/'}))
    lines.append("\\x1b[2J\\x1b]0;owned\\x07<img src=x onerror=alert(1)><!--")
    return lines
"""

EVERY_DOOR_PROGRAM = """
import os
from emit import emitted
print("connecting with", os.environ["DB_PASSWORD"], "and", os.environ["API_TOKEN"])
if os.path.exists("leak"):
    print("\\n".join(emitted()))
"""

EVERY_DOOR_HARNESS = """
import os
from emit import emitted


def render(path):
    text = "dsn " + os.environ["DB_PASSWORD"] + "\\n"
    return text + "\\n".join(emitted()) if os.path.exists("leak") else text


def calls(tape):
    connect = tape.spy("db.connect", lambda dsn: "ok")
    connect("db://" + os.environ["DB_PASSWORD"])
    if os.path.exists("leak"):
        for line in emitted():
            connect(line)
    return "done"
"""


def _standalone(raw: str) -> bool:
    """Whether the value is flagged as a name on its own (a case id): a 14-letter password
    is a secret only beside its keyword."""
    from lockstep.secrets.policy import SecretPolicy
    from lockstep.secrets.scrub import Scrubber

    policy = SecretPolicy(enabled=True, scrubber=Scrubber(), allowed=frozenset())
    safe = raw.replace(".", "").replace("-", "").replace("_", "").isalnum()
    return safe and bool(policy.findings({"id": raw}))


def test_every_secret_kind_through_every_door_is_nowhere_written_or_printed(
    tmp_path: Path,
) -> None:
    """The issue's "done when": each of the 22 kinds and the environment secrets (one
    ``[[secret]] env``, two found by name) through ledger values, bytes and dict keys,
    fixture names, pins ids, program output scrubbed at record, and drifted output of
    pins, corpus and tape at replay (terminal, pending, HTML, JUnit), a pull request's
    markdown review and a code line that prints a token: no spelling of any value in any
    file lockstep wrote nor in anything it printed."""
    raws = {kind: raw for kind, (raw, _) in VECTORS.items()}
    assert len(raws) == 22
    named = sorted(kind for kind, raw in raws.items() if _standalone(raw))
    files_named = [kind for kind in named if _standalone(raws[kind] + ".txt")]
    assert len(named) >= 12 and len(files_named) >= 10, named
    env = {
        "API_TOKEN": VECTORS["stripe"][0],
        "SERVICE_TOKEN": "svc-" + VECTORS["twilio"][0],
        "DB_PASSWORD": PASSWORD,
    }
    repo = GitRepo(tmp_path)
    files: dict[str, str] = {
        "lockstep.toml": '[[secret]]\nenv = "API_TOKEN"\n\n'
        '[[ledger]]\nname = "handle"\ntarget = "svc:handle"\ndriver = "drive.py"\n\n'
        '[[corpus]]\nname = "docs"\nfixtures = "fx/*.txt"\nrender = "harness:render"\n\n'
        '[[tape]]\nname = "calls"\ndriver = "harness:calls"\n\n'
        '[[pins]]\nname = "ids"\ncommand = ["python", "-c", "print(1)"]\ncases = "ids.toml"\n\n'
        '[[pins]]\nname = "out"\ncommand = ["python", "prog.py"]\ncases = "out.toml"\n',
        ".gitignore": "leak\nout/\n",
        "svc.py": LEDGER_TARGET,
        "drive.py": EVERY_DOOR_DRIVE,
        "emit.py": EVERY_DOOR_EMIT,
        "harness.py": EVERY_DOOR_HARNESS,
        "fx/clean.txt": "x",
        **{f"fx/{value}.txt": "x" for value in env.values()},
        "ids.toml": '[[case]]\nid = "fine"\nargv = []\n'
        + "".join(
            f"\n[[case]]\nid = {json.dumps(raw)}\nargv = []\n"
            for raw in dict.fromkeys([*(raws[k] for k in named), *env.values()])
            if re.fullmatch(r"[\w.-]+", raw)  # an id: letters, digits, '.', '_', '-'
        ),
        "out.toml": '[[case]]\nid = "run"\nargv = []\n'
        'env = { API_TOKEN = "<API_TOKEN>", SERVICE_TOKEN = "<SERVICE_TOKEN>", '
        'DB_PASSWORD = "<DB_PASSWORD>" }\n',
        "prog.py": EVERY_DOOR_PROGRAM,
        "lines.json": json.dumps({kind: line for kind, (_, line) in VECTORS.items()}),
    }
    for kind in files_named:
        files[f"fx/{raws[kind]}.txt"] = "x"
    write_files(tmp_path, files)  # type: ignore[arg-type]
    inputs = {tmp_path / name for name in files}
    recorded = run_cli("record", cwd=tmp_path, env=env, timeout=600)
    assert recorded.code == 1, recorded.output
    assert "refused <case " in recorded.output
    pins = (tmp_path / "lockstep/out.pins.jsonl").read_text()
    assert "connecting with <DB_PASSWORD> and <API_TOKEN>" in pins  # scrubbed, not refused
    assert "dsn <DB_PASSWORD>" in "".join(
        p.read_text() for p in (tmp_path / "lockstep/blobs").rglob("*") if p.is_file()
    )
    assert "db://<DB_PASSWORD>" in (tmp_path / "lockstep/calls.tape.json").read_text()
    repo.commit("recorded")
    green = run_cli("replay", "out", "calls", "handle", cwd=tmp_path, env=env, timeout=600)
    assert green.code == 0, green.output

    (tmp_path / "leak").write_text("1\n")
    replayed = run_cli(
        "replay",
        "--keep-pending",
        "--report",
        "out/report.html",
        "--junit",
        "out/junit.xml",
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert replayed.code == 1, replayed.output
    assert "<secret: GitHub Token>" in replayed.output
    assert "\\x1b[2J" in replayed.output and "\x1b" not in replayed.output
    for name in ("out", "docs", "calls"):
        assert (tmp_path / f"lockstep/.pending/{name}.jsonl").exists(), name
    html = (tmp_path / "out/report.html").read_text()
    assert "<img src" not in html and "\x1b" not in html
    assert "<testcase" in (tmp_path / "out/junit.xml").read_text()

    github = raws["github"]
    shout = f"\n\ndef shout():\n    print({github!r})\n"
    repo.commit("prints a token", {"svc.py": LEDGER_TARGET + shout})
    review_md = run_cli("review", "HEAD~1..HEAD", "--format", "md", cwd=tmp_path, env=env)
    review = run_cli("review", "HEAD~1..HEAD", cwd=tmp_path, env=env)
    assert review_md.code == 1 and "| check | verdict | evidence |" in review_md.output
    assert review.code == 1, review.output
    assert "added: print('&lt;secret: " in review_md.output  # masked, then HTML-escaped
    assert "logging and printing" in review.output

    printed = recorded.output + green.output + replayed.output + review_md.output
    printed += review.output
    inputs.update(tmp_path / name for name in ("leak", "svc.py"))
    written = [
        p
        for p in tmp_path.rglob("*")
        if p.is_file() and p not in inputs and ".git" not in p.relative_to(tmp_path).parts
    ]
    assert any(p.name == "report.html" for p in written)
    tails = [  # no part of a token left unmasked (a URL's password is in its middle)
        raw[-12:] for kind, raw in raws.items() if len(raw) >= 24 and kind != "basic-auth"
    ]
    for value in [*raws.values(), *env.values(), *tails]:
        for form in spellings(value):
            assert form not in printed, f"printed: a spelling of a secret ({form[:6]}...)"
            for path in written:
                assert form not in str(path.relative_to(tmp_path)), path.name
                assert form.encode() not in path.read_bytes(), f"{path.name}: holds a secret"


def test_a_drift_under_pytest_is_masked_like_the_cli_masks_it(tmp_path: Path) -> None:
    env = _drift_project(tmp_path)
    assert run_cli("record", cwd=tmp_path, env=env, timeout=300).code == 0
    github = VECTORS["github"][0]
    (tmp_path / "leak").write_text(github + "\n")
    result = pytest_in(tmp_path, "-q", "--lockstep", "--lockstep-keep-pending", "lockstep", env=env)
    assert result.code == 1, result.output
    assert "<secret: GitHub Token>" in result.output and "\\x1b[2J" in result.output
    assert_nowhere([github, *env.values()], tmp_path / "lockstep", result.output)


ENV_SECRET_KINDS = """
[[pins]]
name = "cli"
command = ["python", "prog.py"]
cases = "cases.toml"

[[corpus]]
name = "docs"
fixtures = "fx/*.txt"
render = "harness:render"

[[tape]]
name = "calls"
driver = "drive:calls"
"""


def test_an_environment_secret_is_scrubbed_from_pins_corpus_and_tape_and_replays(
    tmp_path: Path,
) -> None:
    """A value found by its variable's name (no ``[[secret]]`` table) is scrubbed from
    program output, rendered documents and tape events like a ``[[secret]] env`` one,
    and replay scrubs it the same way; without the variable, replay says so in one line."""
    write_files(
        tmp_path,
        {
            "lockstep.toml": ENV_SECRET_KINDS,
            "prog.py": "import os\nprint('connecting with', os.environ['DB_PASSWORD'])\n",
            "cases.toml": '[[case]]\nid = "run"\nargv = []\n'
            'env = { DB_PASSWORD = "<DB_PASSWORD>" }\n',
            "harness.py": "import os\n\ndef render(path):\n"
            "    return path.read_text() + os.environ.get('DB_PASSWORD', 'unset')\n",
            "fx/a.txt": "dsn: ",
            "drive.py": "import os\n\ndef calls(tape):\n"
            "    connect = tape.spy('db.connect', lambda dsn: 'ok')\n"
            "    connect('db://' + os.environ.get('DB_PASSWORD', 'unset'))\n"
            "    return 'done with ' + os.environ.get('DB_PASSWORD', 'unset')\n",
        },
    )
    env = {"DB_PASSWORD": PASSWORD}
    recorded = run_cli("record", cwd=tmp_path, env=env, timeout=300)
    assert recorded.code == 0, recorded.output
    pin = json.loads((tmp_path / "lockstep/cli.pins.jsonl").read_text().splitlines()[1])
    assert pin["stdout"] == "connecting with <DB_PASSWORD>\n"
    tape = json.loads((tmp_path / "lockstep/calls.tape.json").read_text())
    assert tape["events"][0]["args"] == ["db://<DB_PASSWORD>"], tape["events"]
    assert tape["output"]["returned"] == "done with <DB_PASSWORD>", tape["output"]
    blobs = [p.read_text() for p in (tmp_path / "lockstep/blobs").rglob("*") if p.is_file()]
    assert blobs == ["dsn: <DB_PASSWORD>"]
    assert_nowhere([PASSWORD], tmp_path / "lockstep", recorded.output)

    green = run_cli("replay", cwd=tmp_path, env=env, timeout=300)
    assert green.code == 0, green.output

    unset = run_cli("replay", "--keep-pending", cwd=tmp_path, timeout=300)
    assert unset.code == 1, unset.output
    missing = "<DB_PASSWORD> stands for $DB_PASSWORD, which is not set here"
    assert unset.output.count(missing) == 3, unset.output
    assert_nowhere([PASSWORD], tmp_path / "lockstep", unset.output)


def test_an_environment_secret_not_set_at_replay_is_an_error_not_a_green_ledger(
    tmp_path: Path,
) -> None:
    """The placeholder of a variable that is not set is not handed to the function as
    itself (which would replay green against the scrubbed record): the case errors."""
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\nname = "handle"\ntarget = "svc:handle"\n'
            'driver = "drive.py"\n',
            "svc.py": LEDGER_TARGET,
            "drive.py": "import os\nfrom svc import handle\n"
            "handle('plain')\nhandle(os.environ['DB_PASSWORD'])\n",
        },
    )
    assert invoke_cli("record", cwd=tmp_path, env={"DB_PASSWORD": PASSWORD}).code == 0
    unset = invoke_cli("replay", cwd=tmp_path)
    assert unset.code == 1, unset.output
    assert unset.output.count("<DB_PASSWORD> stands for $DB_PASSWORD, which is not set") == 1


def test_scan_reads_a_freshly_recorded_ledger_s_bytes_as_recording_did(tmp_path: Path) -> None:
    """hyperlink's ``URL._to_bytes`` ledger: a ``$bytes`` of ``http://example.com/%C3%A1/``
    (high-entropy base64) on a line with ``%XX`` escapes.  Recording read the bytes as the
    text they hold and wrote the row; ``lockstep scan`` flagged the base64, seen quoted in
    the URL-unquoted line, and a pre-commit scan failed on a fresh recording."""
    payload = base64.b64encode(b"http://example.com/%C3%A1/%C3%A9?%C3%AD=%C3%B3#%C3%BA").decode()
    row = (
        '{"args":[{"$obj":["u:U",{"state":{"path":"%C3%A1"}}]}],"fn":"u:U.to_bytes",'
        f'"id":"0123456789abcdef","kwargs":{{}},"ok":true,"result":{{"$bytes":"{payload}"}}}}'
    )
    write_files(tmp_path, {"lockstep.toml": "", "lockstep/u.ledger.jsonl": row + "\n"})
    scan = invoke_cli("scan", cwd=tmp_path)
    assert scan.code == 0, scan.output
