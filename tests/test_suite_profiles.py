"""The suite's own Hypothesis profiles: the README's plain ``python -m pytest`` has no
per-example deadline, so a busy machine cannot fail a property on timing alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import run_pytest, write_files

HERE = Path(__file__).resolve().parent

SLOW_PROPERTY = """
import time

from hypothesis import given, settings, strategies as st


@settings(max_examples=2)
@given(st.integers())
def test_slow_example(n):
    time.sleep(0.3)  # over Hypothesis' default deadline of 200 ms
"""


@pytest.mark.parametrize("ci", ["", "true"])
def test_a_slow_example_passes_without_ci_and_with_it(tmp_path: Path, ci: str) -> None:
    for name in ("conftest.py", "helpers.py"):
        shutil.copy(HERE / name, tmp_path / name)
    write_files(tmp_path, {"test_slow.py": SLOW_PROPERTY})
    result = run_pytest(
        "-n",
        "0",
        cwd=tmp_path,
        env={"CI": ci, "HYPOTHESIS_PROFILE": ""},
        plugins=("xdist.plugin", "hypothesis.extra.pytestplugin"),
    )
    assert result.code == 0, result.output
    assert "1 passed" in result.output
    assert ("hypothesis profile: ci" if ci else "hypothesis profile: dev") in result.output
