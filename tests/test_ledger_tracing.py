"""Recording under a tracer: coverage.py sees the suite, not the recorder.

A suite run under coverage (``pytest --cov``, ``coverage run -m pytest``) traces every
Python call.  The recorder's own steps around a recorded call (freezing its input and
outcome, which may call the package's ``__getstate__``) ran traced too: slower, and
counted as the suite's coverage lines the suite never ran.  They now run untraced and the
call itself traced as ever, so a recording's coverage report is the plain run's (on
Python 3.11; see ``wrapping._STEP_AROUND_TRACERS`` for why not from 3.12).  The verifying
interpreters are never measured at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import GitRepo, pytest_in, write_files

FILES = {
    "lockstep.toml": """
        [lockstep]
        dir = "lockstep"

        [[ledger]]
        name = "basket"
        target = "shop.cart:basket"

        [[ledger]]
        name = "total"
        target = "shop.cart:total"
    """,
    "shop/__init__.py": "",
    "shop/cart.py": """
        class Basket:
            def __init__(self, items):
                self.items = list(items)

            def __getstate__(self):  # a pickle's: the suite never pickles a basket
                state = dict(self.__dict__)
                state["items"] = list(state["items"])
                return state

            def __setstate__(self, state):
                self.__dict__.update(state)


        def basket(items):
            return Basket(items)


        def total(cart):
            kept = 0
            for price in cart.items:
                if price < 0:
                    continue
                kept += price
            return kept
    """,
    "tests/test_cart.py": """
        import sys

        from shop.cart import basket, total


        def test_total():
            assert total(basket([3, 4])) == 7
            assert total(basket([5, -1])) == 5


        def test_the_tracer_sees_the_call_and_not_the_recorder():
            seen = []

            def tracer(frame, event, arg):
                if event == "call":
                    seen.append(frame.f_code.co_filename)
                return None

            sys.settrace(tracer)
            try:
                assert total(basket([1, 2])) == 3
                after = sys.gettrace()
            finally:
                sys.settrace(None)
            assert after is tracer  # given back as it was
            assert any(name.endswith("cart.py") for name in seen), seen
            steps = [n for n in seen if n.endswith(("recorder.py", "encoding.py", "context.py"))]
            if sys.version_info < (3, 12):  # (not from 3.12: see wrapping._STEP_AROUND_TRACERS)
                assert not steps, steps  # the recorder's own steps ran untraced
    """,
}


def _covered(root: Path, *pytest_args: str) -> dict[str, object]:
    """``coverage run --branch -m pytest`` in ``root``: each file's executed lines, missing
    lines and branches, as coverage's JSON report has them."""
    env = dict(os.environ)
    env.update(
        PYTHONDONTWRITEBYTECODE="1",
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        COVERAGE_CORE="ctrace",  # the C tracer pytest-cov runs with on these Pythons
    )
    for name in ("PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER"):
        env.pop(name, None)
    coverage = [sys.executable, "-m", "coverage", "run", "--branch", "--source=shop"]
    pytest_argv = ["-m", "pytest", "-p", "no:cacheprovider", "-p", "lockstep.pytest.plugin"]
    run = subprocess.run(
        [*coverage, *pytest_argv, "-q", *pytest_args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    subprocess.run(
        [sys.executable, "-m", "coverage", "json", "-q", "-o", "cov.json"],
        cwd=root,
        env=env,
        check=True,
        timeout=120,
    )
    report = json.loads((root / "cov.json").read_text(encoding="utf-8"))
    return {
        name: {key: data[key] for key in ("executed_lines", "missing_lines", "executed_branches")}
        for name, data in report["files"].items()
    }


@pytest.mark.skipif(
    sys.version_info >= (3, 12),
    reason="from Python 3.12 the recorder's steps stay traced (wrapping._STEP_AROUND_TRACERS)",
)
def test_a_recording_covers_what_the_plain_suite_covers(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    write_files(repo.root, FILES)
    plain = _covered(repo.root, "tests")
    recorded = _covered(repo.root, "tests", "--lockstep-record")
    assert (repo.root / "lockstep/basket.ledger.jsonl").exists()
    assert (repo.root / "lockstep/total.ledger.jsonl").exists()
    cart = plain["shop/cart.py"]
    assert isinstance(cart, dict)
    assert 7 in cart["missing_lines"]  # __getstate__'s first line: the suite never ran it
    assert recorded == plain


def test_the_verifying_interpreters_are_not_measured(tmp_path: Path) -> None:
    """A project measuring its subprocesses (``COVERAGE_PROCESS_START``, what coverage's
    ``patch = subprocess`` sets) with ``patch = _exit``: each verifying interpreter and
    fork would have saved the replay's lines as the suite's.  Only the pytest process is
    measured."""
    repo = GitRepo(tmp_path / "project")
    write_files(repo.root, FILES)
    write_files(
        repo.root,
        {
            ".coveragerc": """
                [run]
                parallel = true
                source = shop
                patch = _exit
            """
        },
    )
    env = {"COVERAGE_PROCESS_START": str(repo.root / ".coveragerc")}
    run = pytest_in(repo.root, "tests/test_cart.py::test_total", "--lockstep-record", env=env)
    assert run.code == 0, run.output
    assert (repo.root / "lockstep/total.ledger.jsonl").exists()
    data = sorted(p.name for p in repo.root.glob(".coverage.*"))
    assert len(data) <= 1, data  # the pytest process's own, where coverage starts it
