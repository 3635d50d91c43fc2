"""A recording's further verifying interpreters start one after another, not all at once.

A package that builds sets has its rows replayed under four more hash seeds, each in an
interpreter of its own.  Started together at configure, five interpreters took both
cores while pytest collected (semver's collection took twice its plain time); started in
turn, each once the one before has done its imports, they run on the core the tests
leave idle.  What each verifies, and in which environment, is as before.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from helpers import pytest_in, rows_of, write_files
from lockstep.oracles.verify import child_argv
from lockstep.oracles.verify_session import VerifySession, forks

pytestmark = pytest.mark.skipif(not forks(), reason="verifying forks need os.fork")


def _wait_for(session: VerifySession, starts: int) -> None:
    deadline = time.monotonic() + 120
    while session.starts < starts and time.monotonic() < deadline:
        session.pump()
        time.sleep(0.01)


def test_queued_interpreters_start_one_after_another(tmp_path: Path) -> None:
    session = VerifySession(tmp_path)
    try:
        session.start(1)
        session.warm_in_turn((3, 4, 5), [])
        # the first has not done its imports a moment after it started: nothing more yet
        assert session.starts == 1
        _wait_for(session, 4)
        assert session.starts == 4
        session.pump()
        assert session.starts == 4  # none left to start
    finally:
        session.close()


def test_the_next_interpreter_waits_for_the_package_the_one_before_imports(
    tmp_path: Path,
) -> None:
    """An interpreter is ready for the next to start once it has also imported, in its
    sub-server, the packages it was asked to warm ahead: a package's import would
    otherwise run beside the next interpreter's start and take the core the tests run
    on."""
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "slow/__init__.py": "import time\ntime.sleep(1.5)\n",
            "slow/mod.py": "def f(x):\n    return x\n",
            "lockstep.toml": '[[ledger]]\nname = "f"\ntarget = "slow.mod:f"\n',
        },
    )
    session = VerifySession(root)
    try:
        session.start(1)
        session.warm(1, [child_argv(("--config", str(root / "lockstep.toml")), "-", "f")])
        session.warm_in_turn((3,), [])
        started = time.monotonic()
        _wait_for(session, 2)
        assert session.starts == 2
        assert time.monotonic() - started >= 1.0  # not before the import's sleep ended
    finally:
        session.close()


def test_what_is_still_queued_starts_when_the_candidates_come(tmp_path: Path) -> None:
    session = VerifySession(tmp_path)
    try:
        session.start(1)
        session.warm_in_turn((3, 4, 5), [])
        session.start_queued()
        assert session.starts == 4
    finally:
        session.close()


def test_interpreters_told_to_end_end_while_nothing_waits_for_them(tmp_path: Path) -> None:
    """A recording tells its interpreters to end at the session's finish and waits for
    them only at unconfigure: they wind down while pytest writes its summary."""
    session = VerifySession(tmp_path)
    try:
        session.start(1)
        session.warm_in_turn((3,), [])
        session.start_queued()
        procs = [server.proc for server in session._servers.values()]
        assert len(procs) == 2
        session.ending()
        deadline = time.monotonic() + 120
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [p.poll() for p in procs] == [0, 0]
    finally:
        session.close()
    assert not session._servers


def test_a_queued_interpreter_starts_in_the_environment_it_was_queued_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One started while a test had changed ``os.environ`` would not match the session's
    environment at the end, and would be started once more there."""
    session = VerifySession(tmp_path)
    try:
        session.start(1)
        session.warm_in_turn((3,), [])
        with monkeypatch.context() as patched:
            patched.setenv("LOCKSTEP_TEST_SET_BY_A_TEST", "1")
            _wait_for(session, 2)
        assert session.starts == 2
        assert "LOCKSTEP_TEST_SET_BY_A_TEST" not in os.environ
        session.start_queued()
        session._server((3, False))  # what a candidate's replay asks for
        assert session.starts == 2  # not started again
    finally:
        session.close()


SHOP = """
def label(items):
    return ", ".join(set(items))


def shout(word):
    return word.upper() + ", " + word.upper()
"""

SHOP_TESTS = """
import pytest

from shop.tags import label, shout


@pytest.mark.parametrize("pair", [["red", "blue"], ["north", "south"], ["cat", "dog"]])
def test_tags(pair):
    assert sorted(label(pair).split(", ")) == sorted(pair)


@pytest.mark.parametrize("word", ["a", "b"])
def test_shout(word):
    assert shout(word).startswith(word.upper())
"""


def test_a_recording_under_every_seed_refuses_what_a_seed_orders(tmp_path: Path) -> None:
    """End to end, with the further seeds started in turn during the tests: a set's order
    is still refused, what no seed orders is still written."""
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/tags.py": SHOP,
            "tests/test_tags.py": SHOP_TESTS,
            "lockstep.toml": '[[ledger]]\npackage = "shop"\n',
        },
    )
    result = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert result.code == 0, result.output
    assert "hash-seed dependence" in result.stdout
    assert len(rows_of(root / "lockstep/shop.tags.shout.ledger.jsonl")) == 2


PATCHING_TESTS = """
import time
from unittest import mock

import pytest

from shop.tags import label, shout


@pytest.fixture(autouse=True, scope="module")
def no_processes():
    '''A suite that keeps its code from starting processes, for a whole module.'''
    with mock.patch(PATCHED):
        yield


@pytest.mark.parametrize("pair", [["red", "blue"], ["north", "south"], ["cat", "dog"]])
def test_tags(pair):
    assert sorted(label(pair).split(", ")) == sorted(pair)


@pytest.mark.parametrize("word", ["a", "b", "c", "d", "e", "f"])
def test_shout(word):
    time.sleep(0.3)  # long enough for the next interpreter to be due while patched
    assert shout(word).startswith(word.upper())
"""


@pytest.mark.parametrize("patched", ["subprocess.Popen", "os.pipe"])
def test_an_interpreter_started_between_tests_is_not_started_by_a_fixtures_mock(
    tmp_path: Path, patched: str
) -> None:
    """The further interpreters start between tests, while a module's fixture may have
    patched ``subprocess.Popen`` (they start with what the first start used) or what
    ``Popen`` calls itself (they start at the session's end)."""
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/tags.py": SHOP,
            "tests/test_tags.py": PATCHING_TESTS.replace("PATCHED", repr(patched)),
            "lockstep.toml": '[[ledger]]\npackage = "shop"\n',
        },
    )
    result = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert result.code == 0, result.output
    assert "hash-seed dependence" in result.stdout
    assert len(rows_of(root / "lockstep/shop.tags.shout.ledger.jsonl")) == 6
