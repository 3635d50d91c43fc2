"""While a suite records, Hypothesis's per-example deadline is lifted.

Recording freezes every call of the targets, so an example runs slower than the suite
alone, and Hypothesis's default deadline (200 ms an example) failed property tests that
pass without recording (bidict's ``test_prop_inverse_consistent``): a failing run
records nothing.  The deadline is about the code's speed, which the recording changes;
the examples and their assertions stay as they are.  The profile in force when the lift
happens (the root conftest's own, if it loaded one) is the parent of the one loaded here,
and is loaded back at the end; a test's own ``@settings(deadline=...)`` still holds, and
so does a profile a conftest loads after the lift.

Hypothesis is never imported for this.  Its pytest plugin is loaded wherever it is
installed, and imports it only when a test uses it or at the terminal summary (from
6.1xx on); importing it here cost a recording a sixth of a second before its first test,
where no test of the suite uses it (semver's, 1.4 s alone).  So when
the suite has not imported it by the time recording starts, the lift waits for its
import: a finder on ``sys.meta_path`` sees ``import hypothesis`` go by and lifts the
deadline as soon as the package's module has run, before the importing line goes on (a
test module's ``@settings(...)`` reads the default in force when it is built).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Final

import pytest

LIFTED: Final = "lockstep-record"
"""The Hypothesis profile loaded while recording: the one in force, without a deadline."""
RESTORED: Final = "lockstep-record-before"
PACKAGE: Final = "hypothesis"


def lift_deadline(config: pytest.Config) -> None:
    """Load a profile without a deadline when the suite runs with Hypothesis: now, when it
    is imported already; otherwise when (and if) the suite imports it."""
    hypothesis = sys.modules.get(PACKAGE)
    if hypothesis is not None:
        _lift(hypothesis, config.add_cleanup)
    else:  # a suite may import it without its plugin: watched all the same
        finder = _LiftOnImport(config.add_cleanup)
        sys.meta_path.insert(0, finder)
        config.add_cleanup(finder.remove)


def _lift(hypothesis: Any, add_cleanup: Callable[[Callable[[], None]], None]) -> None:
    settings = hypothesis.settings
    current = settings.default
    if current.deadline is None:
        return
    settings.register_profile(RESTORED, parent=current)
    settings.register_profile(LIFTED, parent=current, deadline=None)
    settings.load_profile(LIFTED)
    add_cleanup(lambda: settings.load_profile(RESTORED))


class _LiftOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: on the first ``import hypothesis`` it takes itself off
    ``sys.meta_path``, lets the other finders find the package as ever, and has that one
    module's loader lift the deadline once the package has run."""

    def __init__(self, add_cleanup: Callable[[Callable[[], None]], None]) -> None:
        self._add_cleanup = add_cleanup

    def remove(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != PACKAGE:
            return None
        self.remove()
        spec = importlib.util.find_spec(fullname)  # the other finders, as without this one
        loader = spec.loader if spec is not None else None
        if loader is None:
            return spec
        run_module = loader.exec_module
        add_cleanup = self._add_cleanup

        def exec_module(module: ModuleType) -> None:
            vars(loader).pop("exec_module", None)  # once: a loader may serve other modules
            run_module(module)
            if module.__name__ == PACKAGE:
                _lift(module, add_cleanup)

        # a loader without attributes of its own keeps the suite's deadline
        with contextlib.suppress(AttributeError):
            setattr(loader, "exec_module", exec_module)  # noqa: B010 - until it has run once
        return spec


__all__ = ["lift_deadline"]
