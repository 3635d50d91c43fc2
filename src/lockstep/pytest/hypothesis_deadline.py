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
import functools
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


def lift_deadline(config: pytest.Config, *, counting: bool = False) -> None:
    """Load a profile without a deadline when the suite runs with Hypothesis: now, when it
    is imported already; otherwise when (and if) the suite imports it.

    ``counting``: the run only counts calls (``lockstep init``'s run of the suite, under a
    profiler that slows every example many times): it keeps no example database either
    (a failure the slowness made was saved in ``.hypothesis/`` and failed the suite's
    later runs: hyperlink's ``test_decoded_urls``), nor fails a test as too slow."""
    hypothesis = sys.modules.get(PACKAGE)
    lift = functools.partial(_lift, add_cleanup=config.add_cleanup, counting=counting)
    if hypothesis is not None:
        lift(hypothesis)
    else:  # a suite may import it without its plugin: watched all the same
        finder = _LiftOnImport(lift)
        sys.meta_path.insert(0, finder)
        config.add_cleanup(finder.remove)


def _lift(
    hypothesis: Any, add_cleanup: Callable[[Callable[[], None]], None], counting: bool
) -> None:
    settings = hypothesis.settings
    current = settings.default
    changes: dict[str, Any] = {}
    if current.deadline is not None:
        changes["deadline"] = None
    if counting:
        slow = hypothesis.HealthCheck.too_slow
        changes["database"] = None
        changes["suppress_health_check"] = [*current.suppress_health_check, slow]
        _home_elsewhere(add_cleanup)
    if not changes:
        return
    settings.register_profile(RESTORED, parent=current)
    settings.register_profile(LIFTED, parent=current, **changes)
    settings.load_profile(LIFTED)
    add_cleanup(lambda: settings.load_profile(RESTORED))


def _home_elsewhere(add_cleanup: Callable[[Callable[[], None]], None]) -> None:
    """Hypothesis's own files (its caches in ``.hypothesis/``) in a temporary folder,
    removed at the end: a counting run leaves nothing of them in the project."""
    import shutil
    import tempfile

    from hypothesis.configuration import set_hypothesis_home_dir

    home = tempfile.mkdtemp(prefix="lockstep-hypothesis-")
    set_hypothesis_home_dir(home)
    add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))


class _LiftOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: on the first ``import hypothesis`` it takes itself off
    ``sys.meta_path``, lets the other finders find the package as ever, and has that one
    module's loader lift the deadline once the package has run."""

    def __init__(self, lift: Callable[[ModuleType], None]) -> None:
        self._lift = lift

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
        lift = self._lift

        def exec_module(module: ModuleType) -> None:
            vars(loader).pop("exec_module", None)  # once: a loader may serve other modules
            run_module(module)
            if module.__name__ == PACKAGE:
                lift(module)

        # a loader without attributes of its own keeps the suite's deadline
        with contextlib.suppress(AttributeError):
            setattr(loader, "exec_module", exec_module)  # noqa: B010 - until it has run once
        return spec


__all__ = ["lift_deadline"]
