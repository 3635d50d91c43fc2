"""Scenarios of the lockstep command line, run by the selftest's pins oracles.

    python scenarios.py NAME

Each scenario copies a fresh example project (the demo project bundled with
lockstep) into a temporary folder, makes it a git repository where the
scenario needs commits, then runs a sequence of ``python -m lockstep ...``
commands in it and prints, for each: the command, its exit code, and every
line of its stdout and stderr, tagged with the stream.  The pins oracle
freezes that transcript, so what a user sees from lockstep -- messages, exit
codes, tables, diffs, the oracle files it writes -- cannot move unnoticed.

The transcript is deterministic: the environment of every command is built
here from scratch (no user git config, fixed commit identity and dates, so
commit ids are stable), and the only varying text, the temporary folder, has a
fixed shape (``lockstep-selftest-XXXXXXXX``) that a rule in lockstep.toml
replaces.  Standard library only.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

# --------------------------------------------------------------------------- the demo project


def demo_folder(name: str) -> Path:
    """A folder bundled with lockstep's demo: ``project`` (the messy example) or ``variants``."""
    return Path(str(resources.files("lockstep.demo") / name))


# The demo's configuration, one fragment per oracle kind (as `lockstep demo` writes it).
HEADER = '[lockstep]\ndir = "lockstep"\n'

CORPUS = """
[[corpus]]
name = "transform"
fixtures = "fixtures/transform/*.json"
render = "transform.harness:render"
"""

LEDGER = """
[[ledger]]
name = "parse_amount"
target = "refs.messy:parse_amount"
driver = "refs/exercise.py"
"""

PINS = """
[[pins]]
name = "export"
command = ["python", "export/export_invoices.py"]
cases = "export/cases.toml"
env_keys = ["CURRENCY", "TAX_RATE"]
rules = ["iso-timestamp", "run"]
timeout = 20

[[rule]]
name = "run"
pattern = 'run-[0-9a-f]{8}'
replace = 'run-<RUN>'
"""

TAPE = """
[[tape]]
name = "invoice_summary"
driver = "invoicing.tape_driver:drive"
"""

ALL_KINDS = (CORPUS, LEDGER, PINS, TAPE)

EXPORT = "export/export_invoices.py"

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "lockstep selftest",
    "GIT_AUTHOR_EMAIL": "selftest@lockstep.invalid",
    "GIT_AUTHOR_DATE": "2024-01-02T03:04:05+00:00",
    "GIT_COMMITTER_NAME": "lockstep selftest",
    "GIT_COMMITTER_EMAIL": "selftest@lockstep.invalid",
    "GIT_COMMITTER_DATE": "2024-01-02T03:04:05+00:00",
}


# --------------------------------------------------------------------------- the sandbox


class Sandbox:
    """A fresh copy of the demo project and the commands run in it, printed as a transcript."""

    def __init__(self, scratch: Path) -> None:
        self.root = scratch / "project"
        home = scratch / "home"
        home.mkdir()
        self.env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(home),
            "LC_ALL": "C.UTF-8",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "PYTHONHASHSEED": "0",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            **GIT_IDENTITY,
        }

    # -- setting up

    def copy_demo(self, *fragments: str, git: bool = False) -> None:
        """The bundled demo project with a config made of ``fragments``; ``git``: one commit."""
        shutil.copytree(
            demo_folder("project"), self.root, ignore=shutil.ignore_patterns("__pycache__")
        )
        self.write("lockstep.toml", HEADER + "".join(fragments))
        self.write(".gitignore", "__pycache__/\n")
        if git:
            self.git("init", "-q", "-b", "main")
            self.commit("The legacy code, as inherited")

    # -- narration and files

    def say(self, text: str) -> None:
        out(f"\n# {text}")

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def append(self, rel: str, text: str) -> None:
        out(f"--- append to {rel}: {text!r}")
        self.write(rel, self.read(rel) + text)

    def edit(self, rel: str, old: str, new: str) -> None:
        """Replace the first ``old`` in a file by ``new`` (a hand-made change)."""
        text = self.read(rel)
        if old not in text:
            raise SystemExit(f"scenario is stale: {old!r} is not in {rel}")
        out(f"--- edit {rel}: {old!r} -> {new!r}")
        self.write(rel, text.replace(old, new, 1))

    def variant(self, name: str, dest: str) -> None:
        """Copy a bundled refactor of the demo over a project file."""
        out(f"--- cp <demo variant {name}> {dest}")
        shutil.copyfile(demo_folder("variants") / name, self.root / dest)

    def remove(self, rel: str) -> None:
        out(f"--- rm {rel}")
        (self.root / rel).unlink()

    def show(self, rel: str) -> None:
        """Print a file of the project (an oracle file, usually)."""
        out(f"--- cat {rel}")
        emit("file", self.read(rel))

    def listing(self, rel: str) -> None:
        """Print the names of the files under a folder, sorted."""
        out(f"--- ls -R {rel}")
        base = self.root / rel
        names = sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())
        emit("file", "".join(n + "\n" for n in names))

    # -- git

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", "-c", "commit.gpgsign=false", *args],
            cwd=self.root,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise SystemExit(f"git {shlex.join(args)} failed: {proc.stderr.strip()}")
        return proc.stdout

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        head = self.git("rev-parse", "--short=10", "HEAD").strip()
        out(f"--- git commit -m {shlex.quote(message)}  ({head})")

    # -- commands

    def lockstep(self, *args: str, env: dict[str, str] | None = None, cwd: str = ".") -> int:
        return self._run(["lockstep", *args], [sys.executable, "-m", "lockstep", *args], env, cwd)

    def python(self, *args: str) -> int:
        return self._run(["python", *args], [sys.executable, *args], None, ".")

    def _run(self, shown: list[str], argv: list[str], env: dict[str, str] | None, cwd: str) -> int:
        prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in (env or {}).items())
        where = "" if cwd == "." else f"(cd {cwd}) "
        out(f"\n$ {where}{prefix}{shlex.join(shown)}")
        proc = subprocess.run(
            argv,
            cwd=self.root / cwd,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=90,
        )
        out(f"exit {proc.returncode}")
        emit("stdout", proc.stdout.decode("utf-8", "backslashreplace"))
        emit("stderr", proc.stderr.decode("utf-8", "backslashreplace"))
        return proc.returncode


def out(line: str) -> None:
    """One line of the transcript."""
    sys.stdout.write(line + "\n")


def emit(stream: str, text: str) -> None:
    """Print ``text`` with every line tagged by its stream, so the transcript has no ambiguity.

    Trailing spaces are dropped (rich pads table rows to the width); a missing final
    newline is shown."""
    if not text:
        return
    for line in text.splitlines():
        out(f"{stream} | {line}".rstrip())
    if not text.endswith("\n"):
        out(f"{stream} \\ no newline at end")


# --------------------------------------------------------------------------- one kind each


def corpus_record_replay(s: Sandbox) -> None:
    s.copy_demo(*ALL_KINDS)
    s.lockstep("status")
    s.lockstep("record", "transform")
    s.show("lockstep/transform.lock.json")
    s.listing("lockstep/blobs")
    s.lockstep("replay", "transform")
    s.lockstep("status")
    s.say("Replaying everything while three oracles are not recorded yet")
    s.lockstep("replay")


def corpus_drift(s: Sandbox) -> None:
    s.copy_demo(CORPUS)
    s.lockstep("record", "transform")
    s.say("A safe refactor")
    s.variant("rows_extract_helper.py", "transform/rows.py")
    s.lockstep("replay")
    s.say("round() where ROUND_HALF_UP was: half a cent moves")
    s.variant("rows_tidy_rounding.py", "transform/rows.py")
    s.lockstep("replay")
    s.lockstep("replay", "--quiet")
    s.lockstep("diff", "transform", "half_cent.json")
    s.lockstep("diff", "transform", "basic.json")
    s.say("A render that now raises on one fixture")
    s.variant("rows_extract_helper.py", "transform/rows.py")
    s.edit(
        "transform/harness.py",
        "rows = json.loads",
        'if path.name == "basic.json":\n        raise KeyError("qty")\n    rows = json.loads',
    )
    s.lockstep("replay")
    s.say("A text render instead of the JSON value: a line diff")
    s.edit(
        "transform/harness.py",
        "return transform(rows)",
        'return "".join(f"{k}={v}\\n" for row in transform(rows) for k, v in sorted(row.items()))',
    )
    s.lockstep("diff", "transform", "half_cent.json")


def ledger_record_replay(s: Sandbox) -> None:
    s.copy_demo(*ALL_KINDS)
    s.lockstep("record", "parse_amount")
    s.show("lockstep/parse_amount.ledger.jsonl")
    s.lockstep("replay", "parse_amount")
    s.lockstep("status")


def ledger_drift(s: Sandbox) -> None:
    s.copy_demo(LEDGER)
    s.lockstep("record", "parse_amount")
    s.say("The same function as small helpers")
    s.variant("messy_faithful.py", "refs/messy.py")
    s.lockstep("replay")
    s.say("A list where the (amount, currency) tuple was")
    s.variant("messy_list.py", "refs/messy.py")
    s.lockstep("replay", "--show", "3")
    s.lockstep("diff", "parse_amount", "1628eaf529b129a2")
    s.lockstep("diff", "parse_amount", "17c97383eea11d09")
    s.say("Another exception, and another message")
    s.variant("messy_faithful.py", "refs/messy.py")
    s.edit("refs/messy.py", 'ValueError("empty amount")', 'ValueError("amount is empty")')
    s.edit("refs/messy.py", "raise KeyError(code)", "raise LookupError(code)")
    s.lockstep("replay", "--show", "0")
    s.say("A new parameter: the recorded signature no longer holds")
    s.variant("messy_faithful.py", "refs/messy.py")
    s.edit("refs/messy.py", 'default_currency="USD"):', 'default_currency="USD", locale=None):')
    s.lockstep("replay")


def pins_record_replay(s: Sandbox) -> None:
    s.copy_demo(*ALL_KINDS)
    s.lockstep("record", "export")
    s.show("lockstep/export.pins.jsonl")
    s.lockstep("replay", "export")
    s.lockstep("replay", "export", "--jobs", "1", "--quiet")
    s.lockstep("status")


def pins_drift(s: Sandbox) -> None:
    s.copy_demo(PINS)
    s.lockstep("record", "export")
    s.say("Helpers extracted: same bytes, same exit codes")
    s.variant("export_invoices_tidy.py", EXPORT)
    s.lockstep("replay")
    s.say("Exit 1 on empty input")
    s.variant("export_invoices_empty_exit.py", EXPORT)
    s.lockstep("replay")
    s.lockstep("diff", "export", "empty-input")
    s.say("A reworded stdout line and stderr line")
    s.variant("export_invoices_tidy.py", EXPORT)
    s.edit(EXPORT, "# no invoices", "# nothing to export")
    s.edit(EXPORT, '"export: %d invoices, %s %s', '"export: %d invoice(s), %s %s')
    s.lockstep("replay")
    s.lockstep("diff", "export", "march-eur")


def tape_record_replay(s: Sandbox) -> None:
    s.copy_demo(*ALL_KINDS)
    s.python("-m", "invoicing")
    s.lockstep("record", "invoice_summary")
    s.show("lockstep/invoice_summary.tape.json")
    s.lockstep("replay", "invoice_summary")
    s.lockstep("status")


def tape_drift_accept(s: Sandbox) -> None:
    s.copy_demo(TAPE)
    s.lockstep("record", "invoice_summary")
    s.say("The rate memoized per currency: same total, fewer calls")
    s.variant("invoicing_summary_memoized.py", "invoicing/summary.py")
    s.python("-m", "invoicing")
    s.lockstep("replay")
    s.lockstep("diff", "invoice_summary", "invoice_summary")
    s.say("Accepting the drift needs the new test that pins it")
    s.lockstep(
        "accept",
        "invoice_summary",
        "--why",
        "Look each rate up once.",
        "--test",
        "test_rates_looked_up_once.py",
    )
    s.variant("test_rates_looked_up_once.py", "test_rates_looked_up_once.py")
    s.lockstep(
        "accept",
        "invoice_summary",
        "--why",
        "Look each rate up once.",
        "--test",
        "test_rates_looked_up_once.py",
    )
    s.lockstep("replay")
    s.show("lockstep/invoice_summary.tape.json")
    s.say("An output change cannot be accepted")
    s.edit("invoicing/summary.py", '"lines": len(lines)', '"lines": len(lines) + 1')
    s.lockstep("replay")
    s.lockstep(
        "accept", "invoice_summary", "--why", "Add one.", "--test", "test_rates_looked_up_once.py"
    )


# --------------------------------------------------------------------------- status and probe


def status_all(s: Sandbox) -> None:
    s.copy_demo(*ALL_KINDS)
    s.lockstep("status")
    s.lockstep("record")
    s.lockstep("status")
    s.lockstep("replay")
    s.lockstep("replay", "--jobs", "2", "--quiet")
    s.lockstep("replay", "--shard", "1/2")
    s.lockstep("replay", "--shard", "2/2", "transform", "export")
    s.say("The configuration found from a sub-folder, named by --config, or by LOCKSTEP_CONFIG")
    s.lockstep("replay", "transform", "--quiet", cwd="refs")
    s.lockstep("--config", "project/lockstep.toml", "status", cwd="..")
    s.lockstep("status", env={"LOCKSTEP_CONFIG": "project/lockstep.toml"}, cwd="..")


def probe_suggest(s: Sandbox) -> None:
    s.copy_demo(PINS)
    s.say(
        "The export prints a run id and a timestamp; the timestamp rule is known, the run id is not"
    )
    s.lockstep(
        "probe",
        "--runs",
        "4",
        "--rules",
        "iso-timestamp",
        "--suggest",
        "--",
        "python",
        EXPORT,
        "export/invoices.csv",
    )
    s.say("Every case of the pins oracle, with its rules")
    s.lockstep("probe", "export", "--runs", "2", "--jobs", "2")
    s.say("A deterministic command")
    s.lockstep("probe", "--runs", "3", "--", "python", EXPORT, "export/no-such-file.csv")
    s.lockstep(
        "probe",
        "--runs",
        "2",
        "--env",
        "CURRENCY=EUR",
        "--rules",
        "iso-timestamp,run",
        "--",
        "python",
        EXPORT,
        "export/invoices.csv",
    )


# --------------------------------------------------------------------------- record modes


def record_modes(s: Sandbox) -> None:
    s.copy_demo(CORPUS, LEDGER)
    s.lockstep("record")
    s.say("A plain record over existing oracles refuses")
    s.lockstep("record", "transform")
    s.say("A new fixture: replay reports it, --new-only adds it")
    s.write(
        "fixtures/transform/zero_qty.json",
        s.read("fixtures/transform/basic.json").replace('"qty": 2', '"qty": 0'),
    )
    s.lockstep("replay", "transform")
    s.lockstep("record", "transform", "--new-only")
    s.lockstep("record", "transform", "--new-only")
    s.say("A changed transformer: --force re-records and lists what it replaced")
    s.variant("rows_tidy_rounding.py", "transform/rows.py")
    s.lockstep("record", "transform", "--force")
    s.say("A fixture removed: replay reports it missing, --trim drops it")
    s.remove("fixtures/transform/coupons_stack.json")
    s.lockstep("replay", "transform")
    s.lockstep("record", "transform", "--trim")
    s.lockstep("replay", "transform")
    s.show("lockstep/transform.lock.json")
    s.say("The ledger: new calls from the driver, then fewer")
    s.edit("refs/exercise.py", '"0.005",', '"0.005", "99 CHF",')
    s.lockstep("record", "parse_amount", "--new-only")
    s.edit("refs/exercise.py", '"10-20", "$5-7.5", ', "")
    s.lockstep("record", "parse_amount", "--trim")
    s.lockstep("record", "parse_amount", "--force")


# --------------------------------------------------------------------------- gates


def gates_safe_change(s: Sandbox) -> None:
    s.copy_demo(CORPUS, LEDGER, git=True)
    s.lockstep("record")
    s.commit("Freeze the transformer and parse_amount")
    s.lockstep("guard")
    s.say("Seam 1: the coupon arithmetic into _discount()")
    s.variant("rows_extract_helper.py", "transform/rows.py")
    s.lockstep("guard")
    s.lockstep("budget")
    s.commit("Extract _discount() from transform_row")
    s.say("Seam 2, briefed first: the rounding into _money(), keeping ROUND_HALF_UP")
    s.lockstep(
        "brief", "Extract the rounding into one _money() helper", "--target", "transform.rows"
    )
    s.variant("rows_money_helper.py", "transform/rows.py")
    s.lockstep("budget", "transform/rows.py")
    s.lockstep("replay", "--quiet")
    s.git("add", "-A")
    s.lockstep("guard", "--staged")
    s.lockstep("budget", "--staged")
    s.commit("Extract _money() keeping ROUND_HALF_UP")
    s.lockstep("guard", "--base", "HEAD~2")
    s.lockstep("budget", "--base", "HEAD~1")
    s.lockstep("review", "HEAD~1..HEAD")
    s.lockstep("review", "HEAD~1..HEAD", "--format", "md")
    s.say("Both seams at once are two seams")
    s.lockstep("review", "HEAD~2", "--format", "md")


def gates_oracle_moved(s: Sandbox) -> None:
    s.copy_demo(CORPUS, LEDGER, git=True)
    s.lockstep("record")
    s.commit("Freeze the transformer and parse_amount")
    s.say("round() instead of ROUND_HALF_UP, and the oracle re-recorded to fit")
    s.variant("rows_tidy_rounding.py", "transform/rows.py")
    s.lockstep("record", "transform", "--force")
    s.lockstep("guard")
    s.git("add", "-A")
    s.lockstep("guard", "--staged")
    s.commit("Tidy the rounding (and refresh the oracle)")
    s.lockstep("guard", "--base", "HEAD~1")
    s.lockstep("review", "HEAD~1..HEAD")
    s.lockstep("review", "HEAD~1", "--format", "md")


def gates_review_rows(s: Sandbox) -> None:
    s.copy_demo(CORPUS, LEDGER, git=True)
    s.lockstep("record")
    s.commit("Freeze the transformer and parse_amount")
    s.say("One change that breaks every rule of a refactor but replay")
    s.edit("transform/rows.py", "def transform(rows", "def transform(rows, *, strict=False")
    s.edit("refs/messy.py", "from decimal import", "import os\nfrom decimal import")
    s.append(
        "refs/messy.py",
        "\n\ndef currency_default():\n    return os.environ.get('CURRENCY', 'USD')\n"
        "\n\ndef log_amount(x):\n    print('amount', x)\n    return x\n",
    )
    s.commit("Tidy the transformer and the parser")
    s.lockstep("review", "HEAD~1..HEAD")
    s.lockstep("review", "HEAD~1..HEAD", "--format", "md")
    s.lockstep("budget", "--base", "HEAD~1")
    s.say("Replay red at HEAD")
    s.variant("messy_list.py", "refs/messy.py")
    s.commit("Return lists")
    s.lockstep("review", "HEAD~1..HEAD", "--format", "md")


def gates_step(s: Sandbox) -> None:
    s.copy_demo(CORPUS, git=True)
    s.lockstep("record")
    s.commit("Freeze the transformer")
    s.variant("rows_extract_helper.py", "transform/rows.py")
    s.lockstep("step")
    s.commit("Extract _discount()")
    s.variant("rows_tidy_rounding.py", "transform/rows.py")
    s.lockstep("step", "--revert")
    s.lockstep("guard")
    s.lockstep("replay", "--quiet")


def gates_errors(s: Sandbox) -> None:
    s.copy_demo(CORPUS, git=True)
    s.lockstep("record")
    s.commit("Freeze the transformer")
    s.lockstep("brief", "Extract the rounding and rename the coupons", "--target", "transform.rows")
    s.lockstep("review", "HEAD..HEAD")
    s.lockstep("review")
    s.lockstep("review", "no-such-rev..HEAD")
    s.lockstep("guard", "--base", "no-such-rev")
    s.lockstep("budget", "no.such.module")
    s.say("Review with no oracle configured fails closed")
    s.write("lockstep.toml", HEADER)
    s.commit("Drop the oracles")
    s.lockstep("review", "HEAD~1..HEAD", "--format", "md")
    s.say("Outside a git repository")
    shutil.rmtree(s.root / ".git")
    s.lockstep("guard")
    s.lockstep("review", "HEAD~1..HEAD")


# --------------------------------------------------------------------------- usage errors


def config_errors(s: Sandbox) -> None:
    s.copy_demo(CORPUS, PINS)
    config = s.read("lockstep.toml")
    s.say("No configuration anywhere up the tree")
    (s.root / "lockstep.toml").unlink()
    s.lockstep("status")
    s.say("An unknown key in [lockstep]")
    s.write("lockstep.toml", config.replace('dir = "lockstep"', 'dir = "lockstep"\ncolour = true'))
    s.lockstep("status")
    s.say("An unknown key in an oracle table")
    s.write(
        "lockstep.toml",
        config.replace(
            'render = "transform.harness:render"',
            'render = "transform.harness:render"\nfixture = "x"',
        ),
    )
    s.lockstep("replay")
    s.say("A wrong type")
    s.write("lockstep.toml", config.replace("timeout = 20", 'timeout = "soon"'))
    s.lockstep("status")
    s.say("Not TOML")
    s.write("lockstep.toml", config + "\n[[corpus]\n")
    s.lockstep("status")
    s.say("A duplicate oracle name")
    s.write("lockstep.toml", config + CORPUS)
    s.lockstep("status")
    s.say("An unknown rule name")
    s.write(
        "lockstep.toml",
        config.replace('rules = ["iso-timestamp", "run"]', 'rules = ["iso-timestamp", "runid"]'),
    )
    s.lockstep("record", "export")
    s.say("A rule that does not compile")
    s.write("lockstep.toml", config.replace("run-[0-9a-f]{8}", "run-[0-9a-f"))
    s.lockstep("status")
    s.say("A path escaping the project")
    s.write("lockstep.toml", config.replace('"fixtures/transform/*.json"', '"../fixtures/*.json"'))
    s.lockstep("record", "transform")
    s.say("A render callable that does not exist")
    s.write("lockstep.toml", config.replace("transform.harness:render", "transform.harness:draw"))
    s.lockstep("record", "transform")
    s.say("The configuration as [tool.lockstep] in pyproject.toml")
    (s.root / "lockstep.toml").unlink()
    s.write(
        "pyproject.toml",
        '[tool.lockstep]\ndir = "lockstep"\n\n[[tool.lockstep.corpus]]\nname = "transform"\nfixtures = "fixtures/transform/*.json"\nrender = "transform.harness:render"\nextra = 1\n',
    )
    s.lockstep("status")


def command_errors(s: Sandbox) -> None:
    s.copy_demo(CORPUS, LEDGER, PINS)
    s.lockstep("record", "transform")
    s.say("Unknown names and cases")
    s.lockstep("replay", "nope")
    s.lockstep("record", "nope")
    s.lockstep("diff", "nope", "basic.json")
    s.lockstep("diff", "transform", "nope.json")
    s.lockstep("diff", "parse_amount", "0123456789abcdef")
    s.lockstep("accept", "transform", "--why", "x", "--test", "t.py")
    s.lockstep("probe", "transform")
    s.say("Options that make no sense")
    s.lockstep("record", "transform", "--force", "--trim")
    s.lockstep("replay", "--shard", "3/2")
    s.lockstep("replay", "--shard", "x")
    s.lockstep("replay", "--jobs", "-1")
    s.lockstep("frobnicate")
    s.lockstep("demo", "--dir", "refs")


def corrupt_files(s: Sandbox) -> None:
    s.copy_demo(CORPUS, LEDGER, PINS)
    s.lockstep("record", "transform", "parse_amount")
    s.say("Corrupt oracle files")
    lines = s.read("lockstep/parse_amount.ledger.jsonl").splitlines(keepends=True)
    s.write(
        "lockstep/parse_amount.ledger.jsonl",
        "".join(lines[:2]) + '{"args": [1,\n' + "".join(lines[3:]),
    )
    out("--- truncate line 3 of lockstep/parse_amount.ledger.jsonl")
    s.lockstep("replay", "parse_amount")
    s.lockstep("status")
    s.write(
        "lockstep/parse_amount.ledger.jsonl", "".join(lines[:2]) + '{"args": [], "surprise": 1}\n'
    )
    out("--- an unknown field on line 3 of lockstep/parse_amount.ledger.jsonl")
    s.lockstep("replay", "parse_amount")
    s.write(
        "lockstep/parse_amount.ledger.jsonl", '{"fn": "refs.messy:other"}\n' + "".join(lines[1:])
    )
    out("--- another header on line 1 of lockstep/parse_amount.ledger.jsonl")
    s.lockstep("replay", "parse_amount")
    s.write("lockstep/transform.lock.json", "{\n")
    out("--- truncate lockstep/transform.lock.json")
    s.lockstep("replay", "transform")
    s.lockstep("record", "transform", "--force")
    s.lockstep("status")
    s.say("Corrupt pins cases files")
    cases = s.read("export/cases.toml")
    s.append("export/cases.toml", '\n[[case]]\nid = "empty-input"\n')
    s.lockstep("record", "export")
    s.write("export/cases.toml", cases)
    s.append("export/cases.toml", '\n[[case]]\nid = "extra"\nargs = ["-"]\n')
    s.lockstep("record", "export")
    s.write("export/cases.toml", cases)
    s.append("export/cases.toml", '\n[[case]]\nid = "away"\ncwd_rel = "../.."\n')
    s.lockstep("record", "export")
    s.write("export/cases.toml", cases)
    s.append("export/cases.toml", '\n[[case]]\nid = "locale"\nenv = { LANGUAGE = "de" }\n')
    s.lockstep("record", "export")
    s.write("export/cases.toml", cases)
    s.append("export/cases.toml", '\n[[case]]\nid = "bad id!"\n')
    s.lockstep("record", "export")
    s.write("export/cases.toml", cases)
    s.append("export/cases.toml", "\n[[case]\n")
    s.lockstep("record", "export")


def pins_refusals(s: Sandbox) -> None:
    s.copy_demo(PINS)
    s.say("A volatile field no rule names: the record is refused")
    s.edit(EXPORT, '"run-" + secrets.token_hex(4)', '"job-" + secrets.token_hex(4)')
    s.lockstep("record", "export")
    s.lockstep("status")
    s.say("A case that hangs: killed at the timeout, nothing written")
    s.write(
        "export/cases.toml", '[[case]]\nid = "hangs"\nargv = ["-"]\nenv = { TAX_RATE = "0.1" }\n'
    )
    s.edit(
        EXPORT,
        "rows = list(",
        "import time; print('waiting', flush=True); time.sleep(30) if tax else None\n    rows = list(",
    )
    s.edit("lockstep.toml", "timeout = 20", "timeout = 2")
    s.lockstep("record", "export")
    s.lockstep("status")
    s.say("An environment key the program reads but env_keys does not declare")
    s.variant("export_invoices_tidy.py", EXPORT)
    s.edit(
        EXPORT,
        'currency = os.environ.get("CURRENCY", "USD")',
        'currency = os.environ.get("EXPORT_CURRENCY") or os.environ.get("CURRENCY", "USD")',
    )
    s.edit("lockstep.toml", "timeout = 2", "timeout = 20")
    s.write(
        "export/cases.toml",
        '[[case]]\nid = "stdin"\nargv = ["-"]\nstdin = "invoice,customer,qty,unit_cents\\nINV-1,A,1,100\\n"\n',
    )
    s.lockstep("record", "export")
    s.show("lockstep/export.pins.jsonl")


# --------------------------------------------------------------------------- pytest


def pytest_plugin(s: Sandbox) -> None:
    s.copy_demo(CORPUS, LEDGER)
    s.lockstep("record")
    # (hypothesis's own pytest plugin only slows the start; it plays no part here)
    pytest = ("-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "--lockstep")
    s.python(*pytest, "-q", "--collect-only")
    s.python(*pytest, "-q")
    s.say("A drift fails the item with the same text the CLI prints")
    s.variant("messy_list.py", "refs/messy.py")
    s.python(*pytest, "-q", "-k", "1628eaf5 or 18a8b667 or basic")


# --------------------------------------------------------------------------- help


COMMANDS = ("accept", "brief", "budget", "demo", "diff", "guard", "pending", "probe")
COMMANDS += ("record", "replay", "review", "status", "step")


def help_texts(s: Sandbox) -> None:
    s.copy_demo(CORPUS)
    s.lockstep("--help")
    for command in COMMANDS:
        s.lockstep(command, "--help")


# --------------------------------------------------------------------------- main


SCENARIOS: dict[str, Callable[[Sandbox], None]] = {
    "corpus-record-replay": corpus_record_replay,
    "corpus-drift": corpus_drift,
    "ledger-record-replay": ledger_record_replay,
    "ledger-drift": ledger_drift,
    "pins-record-replay": pins_record_replay,
    "pins-drift": pins_drift,
    "tape-record-replay": tape_record_replay,
    "tape-drift-accept": tape_drift_accept,
    "status-all": status_all,
    "probe-suggest": probe_suggest,
    "record-modes": record_modes,
    "gates-safe-change": gates_safe_change,
    "gates-oracle-moved": gates_oracle_moved,
    "gates-review-rows": gates_review_rows,
    "gates-step": gates_step,
    "gates-errors": gates_errors,
    "config-errors": config_errors,
    "command-errors": command_errors,
    "corrupt-files": corrupt_files,
    "pins-refusals": pins_refusals,
    "pytest-plugin": pytest_plugin,
    "help": help_texts,
}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in SCENARIOS:
        sys.stderr.write(f"usage: python scenarios.py NAME\nscenarios: {', '.join(SCENARIOS)}\n")
        return 2
    name = argv[0]
    # The one path that varies from run to run; the rule "scratch-dir" matches its shape.
    scratch = Path(tempfile.mkdtemp(prefix="lockstep-selftest-"))
    try:
        out(f"=== scenario {name}")
        SCENARIOS[name](Sandbox(scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
