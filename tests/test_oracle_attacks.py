"""Oracle files are inert data: an edit to an oracle file alone never runs anything, never
loosens a comparison, and never turns a drift green.

Each kind is recorded on a small legacy-style project, then one field of its oracle
file is edited at a time, as a hostile pull request would.  Every edit must end in a
corrupt-file error (exit 2, naming the file) or a stale / drifted case (exit 1) --
never a green replay, and never a command run or a module imported from the file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from helpers import Result, invoke_cli, pytest_in, run_cli, snapshot_tree, write_files

# Heavy, and about processes, files, the browser or the docs rather than this Python: CI runs
# it on the default Python only (.ci/run, job 2 deselects -m slow).
pytestmark = pytest.mark.slow


CATCH_ALL = {
    "builtin": False,
    "ignore_case": False,
    "name": "uuid",
    "pattern": "\\A[\\s\\S]*\\Z",
    "replace": "Z",
}


def _not_green(result: Result) -> None:
    assert result.code in (1, 2), result.output
    assert "green:" not in result.stdout


# --------------------------------------------------------------------------- pins

EXPORT = """
import sys
rows = [line.strip().split(",") for line in sys.stdin if line.strip()]
print("id,total")
for name, amount in rows:
    print(f"{name},{float(amount) * 1.2:.2f}")
"""


@pytest.fixture
def pins_project(tmp_path: Path) -> Path:
    root = tmp_path / "pins"
    write_files(
        root,
        {
            "lockstep.toml": (
                '[[pins]]\nname = "export"\ncommand = ["python", "export.py"]\n'
                'cases = "cases.toml"\nrules = ["uuid"]\n'
            ),
            "export.py": EXPORT,
            "cases.toml": '[[case]]\nid = "two"\nstdin = "alice,10\\nbob,20\\n"\n',
        },
    )
    assert run_cli("record", "export", cwd=root).code == 0
    return root


def _edit_pins(root: Path, line: int, edit: object) -> None:
    path = root / "lockstep" / "export.pins.jsonl"
    lines = path.read_text().splitlines()
    doc = json.loads(lines[line])
    edit(doc)  # type: ignore[operator]
    lines[line] = json.dumps(doc, sort_keys=True)
    path.write_text("\n".join(lines) + "\n")


def test_an_edited_pin_argv_is_never_run(pins_project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    _edit_pins(
        pins_project, 1, lambda pin: pin.update(argv=["sh", "-c", f"touch {marker}; echo id,total"])
    )
    result = run_cli("replay", "export", cwd=pins_project)
    assert result.code == 1, result.output
    assert "STALE" in result.stdout and "argv changed since record" in result.stdout
    assert not marker.exists()


@pytest.mark.parametrize(
    ("field", "edit"),
    [
        ("rules", lambda h: h.update(rules=[CATCH_ALL])),
        ("env_base", lambda h: h["env_base"].update(TAX_RATE="0")),
        ("env_inherit", lambda h: h.update(env_inherit=["PATH", "HOME"])),
    ],
)
def test_an_edited_pins_header_makes_every_case_stale(
    pins_project: Path, field: str, edit: object
) -> None:
    # The output now differs: a catch-all rule from the file must not hide that.
    (pins_project / "export.py").write_text(EXPORT.replace("1.2", "1.3"))
    _edit_pins(pins_project, 0, edit)
    result = run_cli("replay", "export", cwd=pins_project)
    assert result.code == 1, result.output
    assert f"{field} changed since record" in result.stdout


@pytest.mark.parametrize("key", ["argv", "stdin", "env", "cwd_rel"])
def test_an_edited_case_is_stale_not_ignored(pins_project: Path, key: str) -> None:
    cases = pins_project / "cases.toml"
    (pins_project / "sub").mkdir()
    (pins_project / "sub" / "export.py").write_text(EXPORT)
    extra = {
        "argv": 'argv = ["--verbose"]\n',
        "stdin": None,
        "env": 'env = { CURRENCY = "EUR" }\n',
        "cwd_rel": 'cwd_rel = "sub"\n',
    }[key]
    text = cases.read_text()
    text = text.replace("bob,20", "bob,21") if extra is None else text + extra
    cases.write_text(text)
    result = invoke_cli("replay", "export", cwd=pins_project)
    assert result.code == 1, result.output
    assert f"{key} changed since record" in result.stdout
    status = invoke_cli("status", cwd=pins_project)
    assert "1 stale" in status.stdout, status.output
    new_only = run_cli("record", "export", "--new-only", cwd=pins_project)
    assert new_only.code == 0, new_only.output
    assert "1 kept case(s) changed in the cases file since they were recorded" in new_only.stdout


# --------------------------------------------------------------------------- corpus

RENDER = """
import json


def render(path):
    data = json.loads(path.read_text())
    return {"total": sum(data["amounts"]), "name": data["name"].title()}
"""


@pytest.fixture
def corpus_project(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    write_files(
        root,
        {
            "lockstep.toml": (
                '[[corpus]]\nname = "rows"\nfixtures = "fixtures/*.json"\n'
                'render = "harness:render"\nrules = ["uuid"]\n'
            ),
            "harness.py": RENDER,
            "fixtures/a.json": '{"name": "ada", "amounts": [1, 2]}',
            "fixtures/b.json": '{"name": "bob", "amounts": [3]}',
        },
    )
    assert invoke_cli("record", "rows", cwd=root).code == 0
    return root


def _edit_lock(root: Path, edit: object) -> None:
    path = root / "lockstep" / "rows.lock.json"
    doc = json.loads(path.read_text())
    edit(doc)  # type: ignore[operator]
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d.update(rules=[CATCH_ALL]), "rules changed since record"),
        (lambda d: d.update(render="os:system"), "render changed since record"),
        (lambda d: d.update(loose=True), "loose changed since record"),
    ],
)
def test_a_lock_cannot_loosen_or_redirect_the_render(
    corpus_project: Path, edit: object, expected: str
) -> None:
    (corpus_project / "harness.py").write_text(RENDER.replace(".title()", ".upper()"))
    _edit_lock(corpus_project, edit)
    result = invoke_cli("replay", "rows", cwd=corpus_project)
    assert result.code == 1, result.output
    assert expected in result.stdout


def test_lock_entries_edited_by_hand(corpus_project: Path) -> None:
    def huge(d: dict[str, list[dict[str, object]]]) -> None:
        d["entries"][0]["nbytes"] = 10**190

    _edit_lock(corpus_project, huge)
    result = invoke_cli("replay", "rows", cwd=corpus_project)
    assert result.code == 2 and "nbytes" in result.stderr, result.output

    assert invoke_cli("record", "rows", "--force", cwd=corpus_project).code == 0

    def off_by_one(d: dict[str, list[dict[str, int]]]) -> None:
        d["entries"][0]["nbytes"] += 1

    _edit_lock(corpus_project, off_by_one)
    _not_green(invoke_cli("replay", "rows", cwd=corpus_project))

    assert invoke_cli("record", "rows", "--force", cwd=corpus_project).code == 0

    def reorder(d: dict[str, list[object]]) -> None:
        d["entries"].reverse()

    _edit_lock(corpus_project, reorder)
    result = invoke_cli("replay", "rows", cwd=corpus_project)
    assert result.code == 2 and "out of order" in result.stderr, result.output


# --------------------------------------------------------------------------- ledger

PARSE = """
def parse_amount(raw, strict=False):
    text = raw.strip().replace(",", ".")
    if strict and not text:
        raise ValueError("empty amount")
    return round(float(text or 0), 2)
"""

DRIVER = """
from money import parse_amount


def main():
    for raw in ["1,5", " 2.25 ", "", "10"]:
        parse_amount(raw)
    try:
        parse_amount("", strict=True)
    except ValueError:
        pass
"""


@pytest.fixture
def ledger_project(tmp_path: Path) -> Path:
    root = tmp_path / "ledger"
    write_files(
        root,
        {
            "lockstep.toml": (
                '[[ledger]]\nname = "parse"\ntarget = "money:parse_amount"\ndriver = "drive:main"\n'
            ),
            "money.py": PARSE,
            "drive.py": DRIVER,
        },
    )
    assert invoke_cli("record", "parse", cwd=root).code == 0
    assert invoke_cli("replay", "parse", cwd=root).code == 0
    return root


def _ledger_lines(root: Path) -> tuple[Path, list[str]]:
    path = root / "lockstep" / "parse.ledger.jsonl"
    return path, path.read_text().splitlines()


@pytest.mark.parametrize("edit", ["drop-last", "drop-middle", "duplicate", "swap", "truncate"])
def test_a_ledger_body_edited_at_line_boundaries_is_corrupt(
    ledger_project: Path, edit: str
) -> None:
    path, lines = _ledger_lines(ledger_project)
    header, rows = lines[0], lines[1:]
    assert len(rows) >= 4
    body = {
        "drop-last": rows[:-1],
        "drop-middle": rows[:1] + rows[2:],
        "duplicate": [*rows, rows[-1]],
        "swap": [rows[1], rows[0], *rows[2:]],
        "truncate": rows[:2],
    }[edit]
    path.write_text("\n".join([header, *body]) + "\n")
    before = snapshot_tree(ledger_project)
    result = invoke_cli("replay", "parse", cwd=ledger_project)
    assert result.code == 2, result.output
    expected = {
        "duplicate": "is duplicate (rows are written sorted by id)",
        "swap": "is out of order (rows are written sorted by id)",
    }.get(edit, "lockstep/parse.ledger.jsonl:1: the rows do not match the header")
    assert expected in result.stderr
    assert result.stderr.startswith("lockstep: error: lockstep/parse.ledger.jsonl:")
    assert snapshot_tree(ledger_project) == before


def _rewrite_with_digest(root: Path, rows: list[dict[str, object]]) -> None:
    """An editor who also fixes the header's count and digest (the careful attacker)."""
    import hashlib

    path, lines = _ledger_lines(root)
    header = json.loads(lines[0])
    body = [json.dumps(r, sort_keys=True, separators=(",", ":")) for r in rows]
    header["rows"] = len(body)
    header["digest"] = hashlib.sha256("".join(b + "\n" for b in body).encode()).hexdigest()
    path.write_text("\n".join([json.dumps(header, sort_keys=True), *body]) + "\n")


def test_a_row_id_that_does_not_match_its_input_is_corrupt(ledger_project: Path) -> None:
    _, lines = _ledger_lines(ledger_project)
    rows = [json.loads(line) for line in lines[1:]]
    rows[0]["args"] = ["99"]  # the input changed, the id did not
    _rewrite_with_digest(ledger_project, rows)
    result = invoke_cli("replay", "parse", cwd=ledger_project)
    assert result.code == 2, result.output
    assert "does not match its input" in result.stderr


def test_an_edited_result_is_red_even_with_a_fixed_digest(ledger_project: Path) -> None:
    _, lines = _ledger_lines(ledger_project)
    rows = [json.loads(line) for line in lines[1:]]
    ok = next(r for r in rows if r["ok"])
    ok["result"] = 12345.0
    _rewrite_with_digest(ledger_project, rows)
    result = invoke_cli("replay", "parse", cwd=ledger_project)
    assert result.code == 1, result.output
    assert "DRIFT" in result.stdout


def test_an_edited_stem_length_is_stale(ledger_project: Path) -> None:
    path, lines = _ledger_lines(ledger_project)
    header = json.loads(lines[0])
    header["stem_length"] = 3
    path.write_text("\n".join([json.dumps(header, sort_keys=True), *lines[1:]]) + "\n")
    result = invoke_cli("replay", "parse", cwd=ledger_project)
    assert result.code == 1, result.output
    assert "stem_length changed since record" in result.stdout
    assert "re-record with 'lockstep record parse --force'" in result.stdout
    # recorded from the tests (no driver): the hint names what records it, not a driver
    config = ledger_project / "lockstep.toml"
    config.write_text(config.read_text().replace('driver = "drive:main"\n', ""))
    result = invoke_cli("replay", "parse", cwd=ledger_project)
    assert result.code == 1, result.output
    assert "re-record with 'pytest --lockstep-record=parse --lockstep-refresh'" in result.stdout
    assert "lockstep record parse --force" not in result.stdout


@pytest.mark.parametrize("stem", [0, -5])
def test_a_stem_length_below_one_is_not_a_header_lockstep_writes(
    ledger_project: Path, stem: int
) -> None:
    path, lines = _ledger_lines(ledger_project)
    header = json.loads(lines[0])
    header["stem_length"] = stem
    path.write_text("\n".join([json.dumps(header, sort_keys=True), *lines[1:]]) + "\n")
    result = invoke_cli("replay", "parse", cwd=ledger_project)
    assert result.code == 2, result.output
    assert "parse.ledger.jsonl:1:" in result.stderr and "stem_length" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "tag",
    [
        "$namedtuple",
        "$partial",  # a partial is built, never called; its function must be the target's
    ],
)
def test_a_ledger_value_naming_a_callable_never_calls_it(
    ledger_project: Path, tmp_path: Path, tag: str
) -> None:
    marker = tmp_path / "CALLED"
    _, lines = _ledger_lines(ledger_project)
    rows = [json.loads(line) for line in lines[1:]]
    rows[0]["result"] = (
        {"$namedtuple": ["os:system", [f"touch {marker}"]]}
        if tag == "$namedtuple"
        else {"$partial": [{"$fn": "os:system"}, [f"touch {marker}"], {}]}
    )
    _rewrite_with_digest(ledger_project, rows)
    result = invoke_cli("replay", "parse", cwd=ledger_project)
    _not_green(result)
    assert not marker.exists()
    assert "os" not in {m for m in sys.modules if m == "this"}  # nothing imported by name


# --------------------------------------------------------------------------- tape

TAPE_FILES = {
    "shop/__init__.py": "",
    "shop/rates.py": "def rate(cur):\n    return {'EUR': 1.0, 'USD': 0.5}[cur]\n",
    "shop/total.py": (
        "from shop import rates\n\n\ndef total(lines):\n"
        "    return sum(a * rates.rate(c) for a, c in lines)\n"
    ),
    "drive.py": (
        "from shop import total\n\n\ndef drive(tape):\n"
        "    with tape.patch('shop.rates.rate'):\n"
        "        return total.total([(10, 'EUR'), (4, 'USD')])\n"
    ),
}


def test_a_tape_file_cannot_loosen_its_comparison(tmp_path: Path) -> None:
    root = tmp_path / "tape"
    write_files(
        root,
        {
            "lockstep.toml": '[[tape]]\nname = "total"\ndriver = "drive:drive"\n',
            **TAPE_FILES,
        },
    )
    assert invoke_cli("record", "total", cwd=root).code == 0
    path = root / "lockstep" / "total.tape.json"
    doc = json.loads(path.read_text())
    doc["rules"] = [CATCH_ALL]
    doc["mode"] = "counts"
    path.write_text(json.dumps(doc))
    result = invoke_cli("replay", "total", cwd=root)
    assert result.code == 1, result.output
    assert "mode, rules changed since record" in result.stdout


@pytest.mark.parametrize("xdist", [False, True])
def test_under_pytest_a_value_naming_what_it_must_not_stops_the_session(
    ledger_project: Path, xdist: bool
) -> None:
    """``pytest --lockstep`` meets a forged class name only as the rows thaw, in an item:
    that item fails with the one line replay prints and the session stops after it, exit
    2, not a failure of every item of the file (exit 1, as if the code had drifted), nor a
    last line counting only the items that passed before it.  Under xdist the items fail
    with that line, and the session exits 2."""
    _, lines = _ledger_lines(ledger_project)
    rows = [json.loads(line) for line in lines[1:]]
    ok = next(r for r in rows if r["ok"])
    ok["result"] = {"$obj": ["os:system", {"state": {}}]}
    _rewrite_with_digest(ledger_project, rows)
    cli = invoke_cli("replay", "parse", cwd=ledger_project)
    assert cli.code == 2, cli.output
    workers = ("-n", "2") if xdist else ()
    result = pytest_in(ledger_project, "--lockstep", "-q", *workers, xdist=xdist)
    assert result.code == 2, result.output
    assert "$obj names 'os:system'" in result.output, result.output
    if not xdist:
        last = result.output.strip().splitlines()[-1]
        assert "1 failed" in last and "Interrupted: lockstep: " in result.output, result.output


def test_a_ledger_saved_with_a_byte_order_mark_says_so(ledger_project: Path) -> None:
    path, _ = _ledger_lines(ledger_project)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    result = invoke_cli("replay", "parse", cwd=ledger_project)
    assert result.code == 2, result.output
    assert "lockstep/parse.ledger.jsonl:1: starts with a UTF-8 byte order mark" in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
