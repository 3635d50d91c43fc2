"""Drive Hypothesis programmatically: draw examples from a strategy and hand each to a callback.

Hypothesis is made to run tests; lockstep needs it as a generator (mining) and as a
shrinker (the differential gate).  Both go through ``@given`` with settings made
for a tool, not a test suite: no example database (nothing is written to the
user's project), no deadline, no health checks (the targets are legacy code, slow
and filtering by nature), and a seed, so a run is repeatable.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lockstep.cancel import raise_pending

if TYPE_CHECKING:  # Hypothesis is the 'mine' extra: imported when a search runs
    from hypothesis import Phase, settings
    from hypothesis.strategies import SearchStrategy

T = TypeVar("T")


def keep_files_in(folder: Path) -> None:
    """Where Hypothesis keeps its own files (its character tables): a folder of this user's,
    outside every project (see :func:`hypothesis_home`), never a ``.hypothesis`` folder dropped
    into the user's project."""
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(folder)


def hypothesis_home() -> Path:
    """``<user cache>/lockstep/hypothesis``: not under the project, since a file there could
    arrive in a commit (a planted ``charmap.json.gz`` crashed Hypothesis with an
    AssertionError) or a committed link could make Hypothesis write elsewhere.  When that
    folder cannot be made, a private temporary one, removed at exit."""
    import atexit
    import shutil
    import tempfile

    from lockstep.safe_paths import user_cache_dir

    folder = user_cache_dir() / "hypothesis"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if folder.is_dir() and not folder.is_symlink():
            return folder
    except OSError:
        pass
    scratch = Path(tempfile.mkdtemp(prefix="lockstep-hypothesis-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    return scratch


@contextmanager
def _quiet() -> Iterator[None]:
    """No Hypothesis warnings on the user's terminal (a large strategy's repr is costly to
    build, and Hypothesis says so; lockstep never shows that repr)."""
    from hypothesis.errors import HypothesisWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypothesisWarning)
        yield


def _settings(examples: int, phases: tuple[Phase, ...]) -> settings:
    from hypothesis import HealthCheck, Verbosity, settings

    return settings(
        database=None,
        deadline=None,
        max_examples=max(1, examples),
        suppress_health_check=list(HealthCheck),
        phases=phases,
        report_multiple_bugs=False,
        print_blob=False,
        verbosity=Verbosity.quiet,
    )


def draw_each(
    strategy: SearchStrategy[T], callback: Callable[[T], None], *, examples: int, seed_value: int
) -> None:
    """Call ``callback`` on up to ``examples`` drawn values (generation only, no shrinking)."""
    from hypothesis import Phase, given, seed

    @seed(seed_value)
    @_settings(examples, (Phase.generate,))
    @given(strategy)
    def run(value: T) -> None:
        raise_pending()
        callback(value)

    with _quiet():
        run()


class Counterexample(Exception):
    """Raised inside the property when the two versions differ (the value is on it)."""

    def __init__(self, value: Any) -> None:
        super().__init__("the versions differ")
        self.value = value


def smallest_failure(
    strategy: SearchStrategy[T],
    differs: Callable[[T], bool],
    *,
    examples: int,
    seed_value: int,
) -> T | None:
    """The smallest value (by Hypothesis' shrinking) on which ``differs`` is true, or None
    when ``examples`` draws found none."""
    from hypothesis import Phase, given, seed
    from hypothesis.errors import Flaky, Found

    last: list[T] = []

    @seed(seed_value)
    @_settings(examples, (Phase.generate, Phase.shrink))
    @given(strategy)
    def run(value: T) -> None:
        raise_pending()
        if differs(value):
            last.append(value)
            raise Counterexample(value)

    try:
        with _quiet():
            run()
    except (Counterexample, Found, Flaky):
        # Hypothesis re-runs the shrunk example last before raising: that is the smallest.
        return last[-1] if last else None
    return None
