"""lockstep's pytest plugin: adapts pytest to the oracle API and holds no oracle logic.

:mod:`.plugin` is the entry point (hooks and options), :mod:`.items` the collected
cases, :mod:`.project` the one project loader, :mod:`.ledger_recording` the
``--lockstep-record`` run and :mod:`.tape_fixture` the ``tape`` fixture.
"""

from __future__ import annotations

import sys


def _not_assertion_rewritten() -> None:
    """Take lockstep's own modules off pytest's list of modules to assertion-rewrite.

    pytest rewrites the ``assert`` statements of every module of a distribution that
    registers a ``pytest11`` plugin, so that a failing assert in a plugin's fixture reads
    well.  lockstep's modules assert nothing a test relies on, and a rewritten module is
    parsed and compiled again on every run where bytecode is not written
    (``PYTHONDONTWRITEBYTECODE``, a read-only site-packages): about 0.15 s of CPU on a
    recording run.  This package is imported before any module of the plugin's hooks, so
    everything they import loads as Python would load it.  The users' test modules and
    conftest files are untouched.  Without pytest's hook (or if a later pytest keeps its
    list elsewhere) this does nothing.
    """
    for finder in sys.meta_path:
        marked = getattr(finder, "_must_rewrite", None)
        if isinstance(marked, set) and "lockstep" in marked:
            marked.discard("lockstep")
            cache = getattr(finder, "_marked_for_rewrite_cache", None)
            if isinstance(cache, dict):
                cache.clear()


_not_assertion_rewritten()
