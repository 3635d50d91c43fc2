"""A case replayed as a pytest item runs under the warning filters a replay runs under.

A project's ``-Werror`` (py-moneyed's ``addopts``) makes every warning pytest sees an
error.  Its tests call ``Money * 1.2`` inside their own ``catch_warnings``, so the row
records a result, and the fresh interpreter that verified it, under Python's filters,
returned it too; replayed as a pytest item under ``-Werror``, the call raised the
``DeprecationWarning`` and the unchanged code was red (``lockstep replay`` was green).
So an item's replay runs under the filters a fresh interpreter starts with: Python's
own, then ``PYTHONWARNINGS`` and ``-W`` given to Python (not pytest's ``-W`` and
``filterwarnings``, which it applies around each test and had applied already when it
loaded this plugin).
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


@functools.cache
def interpreter_filters() -> tuple[Any, ...]:
    """The filters a fresh interpreter of this one's flags and options starts with."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        if not sys.flags.dev_mode:  # Python's defaults (the dev mode has none)
            for category in (
                DeprecationWarning,
                PendingDeprecationWarning,
                ImportWarning,
                ResourceWarning,
            ):
                warnings.simplefilter("ignore", category, append=True)
            warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
        process: Any = getattr(warnings, "_processoptions", None)
        if process is not None:
            process(list(sys.warnoptions))  # PYTHONWARNINGS and python -W, as Python reads them
        return tuple(warnings.filters)


class _NeverRaised(Warning):
    """A category no code warns with: adding a filter for it tells ``warnings`` that its
    filters changed (its cache of the last answers is dropped), by its public API."""


def as_interpreter_filters() -> None:
    """Put :func:`interpreter_filters` in place for good (in the process ``pytest
    --lockstep`` keeps for its ledgers' replays, forked while pytest's own were applied)."""
    filters: Any = warnings.filters
    filters[:] = list(interpreter_filters())
    warnings.simplefilter("ignore", _NeverRaised, append=True)


def as_replayed(run: Callable[[], T]) -> T:
    """``run()`` under :func:`interpreter_filters`; pytest's own come back after."""
    with warnings.catch_warnings():
        filters: Any = warnings.filters  # a list (typeshed says a Sequence)
        filters[:] = list(interpreter_filters())
        warnings.simplefilter("ignore", _NeverRaised, append=True)
        return run()
