"""lockstep's own modules load as Python loads them under pytest, never assertion-rewritten.

pytest marks every module of a distribution with a ``pytest11`` entry point for assertion
rewriting (a wheel install lists them all; an editable install lists none).  The run below
marks ``lockstep`` as a wheel install would, then checks how the modules were loaded.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

RUNNER = textwrap.dedent(
    """
    import sys

    import _pytest.config as config
    import pytest

    listed = config._iter_rewritable_modules


    def as_a_wheel_lists_them(files):
        yield from listed(files)
        yield "lockstep"


    config._iter_rewritable_modules = as_a_wheel_lists_them
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "test_loaded.py"]))
    """
)

TESTS = textwrap.dedent(
    """
    import sys


    def loader_of(name):
        return type(sys.modules[name].__loader__).__name__


    def test_lockstep_modules_are_loaded_plainly():
        import lockstep.oracles.lifecycle  # what a recording run imports

        for name in ("lockstep.pytest.plugin", "lockstep.oracles.lifecycle"):
            assert loader_of(name) != "AssertionRewritingHook", name


    def test_the_users_own_tests_are_still_rewritten():
        assert loader_of(__name__) == "AssertionRewritingHook"


    def test_a_failing_assert_still_reads_well():
        numbers = [1, 2]
        assert numbers == [1, 2, 3]
    """
)


def test_lockstep_is_not_assertion_rewritten_but_the_users_tests_are(tmp_path: Path) -> None:
    (tmp_path / "run.py").write_text(RUNNER)
    (tmp_path / "test_loaded.py").write_text(TESTS)
    done = subprocess.run(
        [sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    out = done.stdout
    assert "1 failed, 2 passed" in out, out + done.stderr
    assert "test_a_failing_assert_still_reads_well" in out
    assert "Right contains one more item: 3" in out  # the rewritten assert's explanation
