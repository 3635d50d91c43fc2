"""The garbage collector kept off what a recording session builds before its tests.

``pytest --lockstep-record`` imports its machinery and wraps the targets at configure:
some ten thousand objects more (lockstep's modules, the wrapped surface), beside pytest's
own, that all live until the session ends.  Each full collection during the tests walked
them again; on a sub-second suite the recording's collections took three times the plain
run's (about 60 ms against 20 on webcolors' suite).  :func:`freeze` moves every object
alive at that point to the permanent generation (``gc.freeze``), which no collection
walks; :func:`thaw` gives them back when pytest unconfigures, so a program that runs
pytest in its own process finds its collector as it left it, and cyclic garbage made
before the session is collected then.  Objects made by the tests are collected as usual.

A process that froze objects itself is left alone: unfreezing at the end would give back
its objects too.  So is Python 3.12, whose interpreter starts with a few hundred objects
frozen: there a recording's collections walk everything, as before.
"""

from __future__ import annotations

import gc


class _Freezer:
    """Whether :func:`freeze` froze, so :func:`thaw` unfreezes only what it froze."""

    froze = False


_STATE = _Freezer()


def freeze() -> None:
    """Freeze what is alive now, unless something else of this process already froze."""
    if _STATE.froze or gc.get_freeze_count():
        return
    gc.freeze()
    _STATE.froze = True


def thaw() -> None:
    """Give back what :func:`freeze` froze (nothing when it froze nothing)."""
    if _STATE.froze:
        gc.unfreeze()
        _STATE.froze = False
