"""Fixtures shared by the whole suite, how it runs in parallel, and its hypothesis profiles.

``python -m pytest`` runs the suite under pytest-xdist, one worker per core
(``-n auto``, work stealing), without any flag: see :func:`pytest_cmdline_main`.
``-n 0`` or ``-p no:xdist`` runs it in this one process, ``-n N`` with N workers,
``--pdb`` serially (xdist cannot distribute a debugger).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import zlib
from collections.abc import Generator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from helpers import GitRepo

# ------------------------------------------------------------------ the user's cache folder

# lockstep keeps a key (and Hypothesis' tables for mine) in $XDG_CACHE_HOME/lockstep: the
# suite and the commands it starts use a folder of their own, never the user's home
_CACHE_HOME = tempfile.mkdtemp(prefix="lockstep-tests-cache-")
atexit.register(shutil.rmtree, _CACHE_HOME, ignore_errors=True)
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME

# ------------------------------------------------------------------ hypothesis profiles

settings.register_profile(
    "ci",
    # the same examples on every run, so a red CI run is red again on a rerun
    derandomize=True,
    database=None,
    # a slow, noisy 2-core box: timing is not what these properties are about
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    max_examples=100,  # hypothesis' default; tests that ask for more keep their @settings
    print_blob=True,  # a failure prints the @reproduce_failure line to paste
)
settings.register_profile(
    "dev",
    # the README's `python -m pytest` runs this one: no deadline either, since a busy
    # machine (other jobs, xdist workers on every core) makes any per-example limit trip
    # on timing alone; examples stay random and the database on, as Hypothesis' default
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _hypothesis_profile() -> str:
    """``HYPOTHESIS_PROFILE`` if set, else ``ci`` when ``CI`` is set (not to 0/false), else ``dev``."""
    chosen = os.environ.get("HYPOTHESIS_PROFILE", "").strip()
    if chosen:
        return chosen
    ci = os.environ.get("CI", "").strip().lower()
    return "ci" if ci not in ("", "0", "false", "no") else "dev"


HYPOTHESIS_PROFILE = _hypothesis_profile()
settings.load_profile(HYPOTHESIS_PROFILE)


def pytest_report_header(config: pytest.Config) -> str:
    return f"hypothesis profile: {HYPOTHESIS_PROFILE}"


# ------------------------------------------------------------------ xdist by default


def _default_to_xdist(config: pytest.Config) -> None:
    """Ask xdist for one worker per core unless the command line chose otherwise.

    ``-n auto`` in ``addopts`` would do the same, but would make ``-p no:xdist``
    a usage error ("unrecognized arguments: -n"); setting the option here, before
    xdist reads it, keeps both working.
    """
    if not config.pluginmanager.has_plugin("xdist"):
        return  # -p no:xdist
    if hasattr(config, "workerinput"):
        return  # this is a worker: never start workers of its own
    if config.option.numprocesses is not None:
        return  # -n given, -n 0 included
    config.option.numprocesses = "auto"  # xdist turns it into a count (0 under --pdb)
    if config.option.dist == "no" and not config.option.distload:
        # the suite mixes 10 ms unit tests with multi-second end-to-end runs: an idle
        # worker takes queued tests from the busy one instead of waiting for its chunk
        config.option.dist = "worksteal"


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, object, object]:
    _default_to_xdist(config)
    return (yield)


# ------------------------------------------------------------------ shards


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--shard",
        metavar="K/N",
        help="run the K-th of N disjoint parts of the selected tests (a test's part is a "
        "hash of its node id, so every worker and every run agrees); CI splits the tests "
        "its first Python has run in full between the other claimed Pythons",
    )


def _shard(config: pytest.Config) -> tuple[int, int] | None:
    given = config.getoption("--shard")
    if not given:
        return None
    part, _, count = given.partition("/")
    try:
        k, n = int(part), int(count)
    except ValueError:
        k = n = 0
    if not 1 <= k <= n:
        raise pytest.UsageError(f"--shard {given}: expected K/N with 1 <= K <= N, e.g. 1/2")
    return k, n


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    shard = _shard(config)
    if shard is None:
        return
    k, n = shard
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        mine = zlib.crc32(item.nodeid.encode()) % n == k - 1
        (kept if mine else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


# ------------------------------------------------------------------ fixtures


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepo:
    """A fresh, real git repository (``git init``) in a temp folder."""
    return GitRepo(tmp_path / "repo")
