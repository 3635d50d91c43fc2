"""While a suite records, Hypothesis's per-example deadline is lifted.

Recording freezes every call of the targets, so an example runs slower than the suite
alone, and Hypothesis's default deadline (200 ms an example) failed property tests that
pass without recording (bidict's ``test_prop_inverse_consistent``): a failing run
records nothing.  The deadline is about the code's speed, which the recording changes;
the examples and their assertions stay as they are.  The profile in force when recording
starts (the root conftest's own, if it loaded one) is the parent of the one loaded here,
and is loaded back at the end; a test's own ``@settings(deadline=...)`` still holds, and
so does a profile a conftest below the root loads (it is read after the run starts).
"""

from __future__ import annotations

import sys
from typing import Any, Final

import pytest

LIFTED: Final = "lockstep-record"
"""The Hypothesis profile loaded while recording: the one in force, without a deadline."""
RESTORED: Final = "lockstep-record-before"


def lift_deadline(config: pytest.Config) -> None:
    """Load a profile without a deadline when the suite runs with Hypothesis (its pytest
    plugin is loaded: it imports Hypothesis itself by the session's end, so importing it
    here, before the test modules apply the profile in force, costs the run nothing)."""
    hypothesis: Any = sys.modules.get("hypothesis")
    if hypothesis is None and config.pluginmanager.hasplugin("hypothesispytest"):
        import hypothesis
    if hypothesis is None:
        return
    settings = hypothesis.settings
    current = settings.default
    if current.deadline is None:
        return
    settings.register_profile(RESTORED, parent=current)
    settings.register_profile(LIFTED, parent=current, deadline=None)
    settings.load_profile(LIFTED)
    config.add_cleanup(lambda: settings.load_profile(RESTORED))
