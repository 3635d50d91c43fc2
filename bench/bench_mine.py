"""Mining and differential benchmark: inputs per second next to Hypothesis' own loop.

Run ``python bench/bench_mine.py [--inputs N]``.

On a small pure function (the cell parser of ``tests/test_mine_cli.py``) in a
real temporary git repository, it times

* the floor: Hypothesis' own ``@given`` loop, with lockstep's strategy for the
  function's inputs, calling the old and the new version *in one process* and
  comparing their results with ``==`` (no freezing, no processes);
* ``replay --against HEAD~1 --generate N`` as the library runs it
  (:func:`lockstep.mine.differential.replay_against`): a temporary worktree, two fresh
  interpreters, every input frozen by the old side and checked by the new one with the
  ledger's comparison;
* the floor for mining: the same ``@given`` loop calling one version;
* ``mine`` (:func:`lockstep.mine.miner.mine`) with a budget that stops it after its
  rounds: inputs tried per second under the arc collector, and rows per second through
  the record path (fresh-interpreter verification included).

The goal is within 2x of the floor.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from lockstep.config import load_project  # noqa: E402
from lockstep.mine import miner  # noqa: E402
from lockstep.mine.constants import harvest_source  # noqa: E402
from lockstep.mine.differential import replay_against  # noqa: E402
from lockstep.mine.strategies import inputs_like  # noqa: E402
from lockstep.oracles import kind_of  # noqa: E402
from lockstep.oracles.mining import Call  # noqa: E402
from test_mine_cli import CELLS, CONFIG, DRIVER, REWRITE  # noqa: E402


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _project(root: Path) -> None:
    (root / "refs").mkdir(parents=True)
    (root / "refs/__init__.py").write_text("")
    (root / "refs/cells.py").write_text(CELLS)
    (root / "refs/drive.py").write_text(DRIVER)
    (root / "lockstep.toml").write_text(CONFIG)
    (root / ".gitignore").write_text("__pycache__/\n.lockstep_cache/\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "b@example.invalid")
    _git(root, "config", "user.name", "bench")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run(
        [sys.executable, "-m", "lockstep", "record", "cells"],
        cwd=root,
        check=True,
        capture_output=True,
        env=env,
    )
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "legacy")
    (root / "refs/cells.py").write_text(REWRITE)
    _git(root, "commit", "-q", "-am", "rewrite")


def _module(source: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def _floor(strategy: Any, body: Any, n: int) -> float:
    """Inputs per second of Hypothesis' own loop running ``body`` on each draw."""

    @seed(0)
    @settings(
        database=None,
        deadline=None,
        max_examples=n,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def run(call: Call) -> None:
        body(call)

    start = time.perf_counter()
    run()
    return n / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", type=int, default=2000)
    args = parser.parse_args()
    n = args.inputs
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        _project(root)
        os.chdir(root)
        project = load_project(root)
        spec = project.oracle("cells")
        sys.path.insert(0, str(root))
        subject = kind_of(spec).mining(project, spec)
        seeds = subject.seeds()
        pool = harvest_source(CELLS).merged(harvest_source(REWRITE))
        strategy = inputs_like(seeds, pool, subject.target)
        old = _module(CELLS, "old_cells").parse_cell
        new = _module(REWRITE, "new_cells").parse_cell

        def both(call: Call) -> None:
            def outcome(fn: Any) -> Any:
                try:
                    return ("ok", fn(*call.args, **call.kwargs))
                except Exception as e:
                    return ("raised", type(e).__name__, str(e))

            assert outcome(old) == outcome(new)

        def one(call: Call) -> None:
            with contextlib.suppress(Exception):
                old(*call.args, **call.kwargs)

        floor_two = _floor(strategy, both, n)
        start = time.perf_counter()
        result = replay_against(project, [spec], "HEAD~1", generate=n)
        against_seconds = time.perf_counter() - start
        assert result.ok, result.differences
        against = result.inputs / against_seconds

        floor_one = _floor(strategy, one, n)
        clock_start = time.perf_counter()
        report = miner.mine(subject, "cells", budget=600, seed=0)
        mine_seconds = time.perf_counter() - clock_start
        generated = report.curve[-1].seconds
        tried = report.tried / generated

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, inputs {n}")
    print(f"floor: @given calling old and new in one process  {floor_two:10,.0f} inputs/s")
    print(
        f"replay --against (whole run, {result.inputs} inputs)   {against:10,.0f} inputs/s "
        f"({floor_two / against:.2f}x the floor)"
    )
    print(f"floor: @given calling one version                 {floor_one:10,.0f} inputs/s")
    print(
        f"mine: inputs tried under the arc collector       {tried:10,.0f} inputs/s "
        f"({floor_one / tried:.2f}x the floor); {report.tried} tried in {generated:.2f} s"
    )
    print(
        f"mine: whole run incl. record path                 {report.added / mine_seconds:10,.1f} "
        f"rows/s ({report.added} rows in {mine_seconds:.2f} s)"
    )


if __name__ == "__main__":
    main()
