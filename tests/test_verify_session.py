"""One verifying interpreter per recording session: every ledger is verified in a fork of it.

A pytest run recording several ledgers (and a ``lockstep record`` run of several) starts
one verifying interpreter, not one per ledger.  Each ledger still replays in an untouched
copy of it: a refusal in one ledger, or a module global that replaying one ledger
changes, never reaches another ledger's verdict.  The target module logs each import with
the process that made it, so the tests see where each ledger was verified.

A package's target module is imported once per interpreter, in a fork of it (the
package's sub-server) whose own forks replay that package's ledgers; a package whose
import starts a thread or a process, keeps a descriptor open or prints gets none, and each
of its ledgers imports it in its own fork of the interpreter, as before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import recording_errors, run_cli, run_pytest, write_files

STATE = """
import os
import sys

with open(os.path.join(os.path.dirname(__file__), "..", "imports.log"), "a") as log:
    role = "serve" if "--serve" in sys.argv else "child" if "verify_child" in sys.argv[0] else "main"
    log.write(f"{role} {os.getpid()} {os.getppid()}\\n")

MODE = "plain"
BASE = [10]


def stamp(x):
    return x + BASE[0]


def switch(x):
    global MODE
    MODE = "loud"
    return x * 2


def shout(word):
    return word.upper() if MODE == "loud" else word
"""

TESTS = """
import pytest

from shop import state


@pytest.fixture(autouse=True)
def plain_mode():
    yield
    state.MODE = "plain"


def test_shout():
    assert state.shout("hi") == "hi"


def test_stamp():
    assert state.stamp(1) == 11


def test_stamp_patched(monkeypatch):
    monkeypatch.setattr(state, "BASE", [90])
    assert state.stamp(2) == 92


def test_switch():
    assert state.switch(3) == 6
"""

# stamp first (it refuses a row), switch before shout (it changes the global shout reads)
CONFIG = """
[[ledger]]
name = "stamp"
target = "shop.state:stamp"

[[ledger]]
name = "switch"
target = "shop.state:switch"

[[ledger]]
name = "shout"
target = "shop.state:shout"
"""


def _imports(root: Path) -> list[tuple[str, int, int]]:
    out = []
    for line in (root / "imports.log").read_text().splitlines():
        role, pid, ppid = line.split()
        out.append((role, int(pid), int(ppid)))
    return out


def _section(stdout: str, name: str) -> str:
    """The report lines of ledger ``name`` in a pytest summary."""
    start = stdout.index(f"{name} (create)")
    end = stdout.find("(create)", start + len(name) + 9)
    return stdout[start : end if end != -1 else len(stdout)]


def test_every_ledger_of_a_pytest_run_is_verified_in_its_own_fork_of_one_interpreter(
    tmp_path: Path,
) -> None:
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/state.py": STATE,
            "tests/test_state.py": TESTS,
            "lockstep.toml": CONFIG,
        },
    )
    result = run_pytest(
        "-q", "tests", "--lockstep-record", cwd=root, plugins=("lockstep.pytest.plugin",)
    )
    assert result.code == 0, result.output
    out = result.stdout
    stamp = _section(out, "stamp")
    assert "verified 1 of 2 new case(s) in a fresh interpreter" in stamp, out
    assert "stamp(2)" in stamp and "recorded returned 92" in stamp
    # the refusal stays with stamp; the global that switch's replay sets does not reach shout
    for name, rows in (("switch", 1), ("shout", 1)):
        section = _section(out, name)
        assert f"verified {rows} new case(s) in a fresh interpreter" in section, out
        assert "all reproduce" in section and "refused 0" in section
    # stamp's refused row already has its cause from the recording, so no interpreter with
    # a second hash seed is started to name one
    assert "module global shop.state.BASE rebound" in stamp, out
    assert "hash-seed" not in stamp
    verifying = [i for i in _imports(root) if i[0] != "main"]
    # one import, in the package's sub-server (a fork of the one interpreter), whose forks
    # replay each ledger
    assert [role for role, _, _ in verifying] == ["serve"]
    for name in ("stamp", "switch", "shout"):  # one process replaying them all would not be
        assert run_cli("replay", name, cwd=root).code == 0


def test_a_record_run_of_several_ledgers_starts_one_verifying_interpreter(
    tmp_path: Path,
) -> None:
    root = tmp_path / "proj"
    config = (
        CONFIG.replace(
            'target = "shop.state:switch"\n',
            'target = "shop.state:switch"\ndriver = "drive:switch"\n',
        )
        .replace(
            'target = "shop.state:shout"\n', 'target = "shop.state:shout"\ndriver = "drive:shout"\n'
        )
        .replace(
            'target = "shop.state:stamp"\n', 'target = "shop.state:stamp"\ndriver = "drive:stamp"\n'
        )
    )
    drivers = (
        "from shop import state\n\n\n"
        "def stamp():\n    state.stamp(1)\n\n\n"
        "def switch():\n    state.switch(3)\n    state.MODE = 'plain'\n\n\n"
        "def shout():\n    state.shout('hi')\n"
    )
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/state.py": STATE,
            "drive.py": drivers,
            "lockstep.toml": config,
        },
    )
    result = run_cli("record", cwd=root)
    assert result.code == 0, result.output
    assert result.stdout.count("all reproduce") == 3, result.stdout
    verifying = [i for i in _imports(root) if i[0] != "main"]
    assert [role for role, _, _ in verifying] == ["serve"]  # in the package's sub-server
    for name in ("stamp", "switch", "shout"):  # one process replaying them all would not be
        assert run_cli("replay", name, cwd=root).code == 0


def test_a_ledger_whose_replay_fails_leaves_the_next_one_verified(tmp_path: Path) -> None:
    """A fork that cannot replay (its target fails to import there) refuses its own ledger's
    rows only: the session's interpreter goes on to verify the next ledger."""
    root = tmp_path / "proj"
    fragile = (
        "import os\n\n"
        "if os.environ.get('PYTHONHASHSEED') == '1':  # the verifying interpreter's seed\n"
        "    raise ImportError('only in the verifying interpreter')\n\n\n"
        "def half(x):\n    return x / 2\n"
    )
    tests = (
        "from shop import fragile, state\n\n\n"
        "def test_half():\n    assert fragile.half(4) == 2\n\n\n"
        "def test_stamp():\n    assert state.stamp(1) == 11\n"
    )
    config = (
        '[[ledger]]\nname = "half"\ntarget = "shop.fragile:half"\n\n'
        '[[ledger]]\nname = "stamp"\ntarget = "shop.state:stamp"\n'
    )
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/state.py": STATE,
            "shop/fragile.py": fragile,
            "tests/test_shop.py": tests,
            "lockstep.toml": config,
        },
    )
    result = run_pytest(
        "-q",
        "tests",
        "--lockstep-record",
        cwd=root,
        env={"PYTHONHASHSEED": "0"},
        plugins=("lockstep.pytest.plugin",),
    )
    assert result.code == 0, result.output
    out = result.stdout
    half = _section(out, "half")
    assert "cannot import module 'shop.fragile': ImportError: only in the verifying" in half, out
    assert "verified 0 of 1 new case(s)" in half
    stamp = _section(out, "stamp")
    assert "verified 1 new case(s) in a fresh interpreter" in stamp and "all reproduce" in stamp
    assert [role for role, _, _ in _imports(root) if role != "main"] == ["serve"]  # stamp's fork


def test_a_configuration_the_server_cannot_read_is_each_forks_to_report(tmp_path: Path) -> None:
    """The server reads each candidate's configuration before forking (to fill caches); a
    configuration broken meanwhile (here by the last test) does not end the server: every
    ledger's fork meets it and refuses that ledger's rows with the reason."""
    root = tmp_path / "proj"
    config = (
        '[[ledger]]\nname = "stamp"\ntarget = "shop.state:stamp"\n\n'
        '[[ledger]]\nname = "shout"\ntarget = "shop.state:shout"\n'
    )
    tests = (
        "from pathlib import Path\n\nfrom shop import state\n\n\n"
        "def test_stamp():\n    assert state.stamp(1) == 11\n\n\n"
        "def test_shout():\n    assert state.shout('hi') == 'hi'\n\n\n"
        "def test_zz_break_the_configuration():\n"
        "    Path('lockstep.toml').write_text('[[ledger]\\n')\n"
    )
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/state.py": STATE,
            "tests/test_state.py": tests,
            "lockstep.toml": config,
        },
    )
    result, errors = recording_errors(root)
    # the same error of two ledgers: one line naming both
    assert [line.split(":")[2].strip() for line in errors] == ["2 ledgers (stamp, shout)"], (
        result.stdout
    )
    for line in errors:
        assert "the fresh interpreter could not replay the new cases (lockstep: error: " in line
        assert "lockstep.toml: not valid TOML" in line
    assert not (root / "lockstep/stamp.ledger.jsonl").exists()


UNSHAREABLE = {
    "a thread": "import threading\n_T = threading.Thread(target=threading.Event().wait, daemon=True)\n_T.start()\n",
    "a file kept open": "_KEPT = open(os.devnull)\n",
    "a process": "import subprocess\n_P = subprocess.Popen([sys.executable, '-c', 'pass'])\n",
    "a line printed": "print('imported')\n",
}


@pytest.mark.parametrize("started", sorted(UNSHAREABLE))
def test_a_package_whose_import_changes_the_process_is_imported_in_each_fork(
    tmp_path: Path, started: str
) -> None:
    """What a fork would share with its sub-server (a thread it lacks, a descriptor or a
    process it shares, output): that package's ledgers each import it in their own fork of
    the interpreter, and every verdict is the one a package without it gets."""
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/state.py": STATE.replace(
                'MODE = "plain"\n', UNSHAREABLE[started] + 'MODE = "plain"\n'
            ),
            "tests/test_state.py": TESTS,
            "lockstep.toml": CONFIG,
        },
    )
    result = run_pytest(
        "-q", "tests", "--lockstep-record", cwd=root, plugins=("lockstep.pytest.plugin",)
    )
    assert result.code == 0, result.output
    out = result.stdout
    stamp = _section(out, "stamp")
    assert "verified 1 of 2 new case(s) in a fresh interpreter" in stamp, out
    for name in ("switch", "shout"):
        section = _section(out, name)
        assert "verified 1 new case(s) in a fresh interpreter" in section, out
        assert "all reproduce" in section and "refused 0" in section
    verifying = [i for i in _imports(root) if i[0] != "main"]
    # the sub-server's import (refused), then one per ledger in a fork of the interpreter,
    # and stamp's kept row once more, alone, as its ledger will hold it (stamp's refused
    # row has its cause already: no second seed's interpreter)
    assert [role for role, _, _ in verifying] == ["serve"] * 5
    assert len({ppid for _, _, ppid in verifying}) == 1
    assert len({pid for _, pid, _ in verifying}) == 5


# Each case runs in a fresh interpreter: in a pytest worker, a thread another test left
# ending (or a plugin's) would change the count between the two looks and name the wrong
# change.
_IMPORTERS = """
import os, sys, threading
from lockstep.oracles.verify_forks import import_changes

def nothing():
    return None

def opened_and_closed():
    open(os.devnull).close()

KEPT = []
def keep_open():
    KEPT.append(open(os.devnull))

STOP = threading.Event()
def start_thread():
    threading.Thread(target=STOP.wait, daemon=True).start()

def prints():
    print("hello")

def raises():
    1 / 0

said = import_changes(globals()[sys.argv[1]])
STOP.set()
sys.__stdout__.write(said)
"""


@pytest.mark.parametrize(
    ("importer", "said"),
    [
        ("nothing", ""),
        ("opened_and_closed", ""),  # opened and closed: nothing kept
        ("keep_open", "its import opened a file, socket or pipe"),
        ("start_thread", "its import started a thread"),
        ("prints", "its import printed"),
        ("raises", "its import raised ZeroDivisionError"),
    ],
)
def test_what_an_import_changed_is_named(importer: str, said: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _IMPORTERS, importer],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert result.stdout == said, result.stderr


ORDERS = (
    "import json\n"
    "sets = [[f'w{i}', f'v{i}'] for i in range(200)]\n"
    "print(json.dumps([list(set(s)) for s in sets]))\n"
)


def _orders(seed: int) -> list[list[str]]:
    """How each of 200 sets of two strings iterates under hash seed ``seed``."""
    out = subprocess.run(
        [sys.executable, "-c", ORDERS],
        env={**os.environ, "PYTHONHASHSEED": str(seed)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def test_a_set_that_orders_alike_under_the_first_two_seeds_is_caught_by_a_further_one(
    tmp_path: Path,
) -> None:
    """Rows whose input holds a set are replayed under further hash seeds while they
    reproduce (all at once, each in its own interpreter): a set that iterates alike under
    the recording's seed and the first two verifying seeds, and otherwise under a later
    one, is refused as the seed's; the row without a set is kept."""
    from lockstep.oracles.verify import MORE_SEEDS, SECOND_SEED

    recording, first = 0, 1  # PYTHONHASHSEED=0 records; the first verifying seed is 1
    orders = {seed: _orders(seed) for seed in (recording, first, SECOND_SEED, *MORE_SEEDS)}
    alike = (recording, first, SECOND_SEED)
    caught = next(
        i
        for i in range(200)  # one in four is alike under three seeds, most of those differ later
        if len({tuple(orders[s][i]) for s in alike}) == 1
        and len({tuple(orders[s][i]) for s in orders}) > 1
    )
    words = sorted(orders[recording][caught])
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/tags.py": "def joined(tags):\n    return ','.join(tags)\n",
            "tests/test_tags.py": (
                "from shop.tags import joined\n\n\n"
                f"def test_joined():\n    assert joined(set({words!r}))\n"
                "    assert joined(('kept', 'tuple'))\n"
            ),
            "lockstep.toml": '[[ledger]]\nname = "joined"\ntarget = "shop.tags:joined"\n',
        },
    )
    result = run_pytest(
        "-q", "tests", "--lockstep-record", cwd=root, env={"PYTHONHASHSEED": str(recording)},
        plugins=("lockstep.pytest.plugin",),
    )  # fmt: skip
    assert result.code == 0, result.output
    assert "refused 1 row(s)" in result.stdout, result.stdout
    assert "under another hash seed" in result.stdout, result.stdout
    assert "added 1" in result.stdout, result.stdout
    assert run_cli("replay", cwd=root).code == 0


def test_the_cases_a_fork_replays_alone_are_one_argument_parsed_in_linear_time() -> None:
    """croniter's ``expand`` ledger holds 10,156 rows: one ``--only`` option per case made
    argparse spend seconds on each parse of the child's command line (quadratic in the
    options), and the server and the package's sub-server parse it several times."""
    from lockstep.cli.verify_child import _cases, _parser
    from lockstep.errors import LockstepError
    from lockstep.oracles.verify import child_argv, only_argument

    ids = [f"{i:016x}" for i in range(20_000)]
    argv = child_argv(["--config", "lockstep.toml", *only_argument(ids)], "-", "expand")
    assert sum(a.startswith("--only") for a in argv) == 1  # one option, whatever the count
    args, rest = _parser().parse_known_args(argv)
    assert not rest and args.name == "expand"
    assert _cases(args.only) == frozenset(ids)
    assert only_argument([]) == []
    with pytest.raises(LockstepError, match="--only: expected a JSON list of case ids"):
        _cases('{"a": 1}')


def test_a_reason_cut_shows_where_two_long_values_differ() -> None:
    """croniter's rows (no start time given: the clock's) were cut alike at ``start_…``,
    exactly before the field that differed: the reason never showed the difference."""
    from lockstep.canon.text import around_difference

    recorded = "croniter(" + "expr_format='0 0 1-31 1 *', " * 12 + "start_time=1796510549.4)"
    fresh = recorded.replace("1796510549.4", "1796510612.9")
    shown = around_difference(recorded, fresh, 240)
    assert shown[0].startswith("…") and shown[0].endswith("start_time=1796510549.4)"), shown
    assert shown[1].endswith("start_time=1796510612.9)"), shown
    assert around_difference("short", "other", 240) == ("short", "other")
    # differing early: cut from the start, as before
    early = around_difference("a" + "x" * 400, "b" + "x" * 400, 240)
    assert early[0].startswith("ax") and early[0].endswith("…") and len(early[0]) == 240
