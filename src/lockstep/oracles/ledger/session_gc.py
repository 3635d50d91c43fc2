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

Where pytest is the program (``python -m pytest``, the ``pytest`` script) and no other
session's test was running when it froze, its process ends with the session, and giving
the objects back only made the interpreter's last collection, at exit, walk every one of
them: a tenth of a second after every recording of isodate's suite, a sixth of what the
recording added to it.  There they stay frozen; the process's memory goes back to the
system when it ends.  Where it cannot tell (``pytest.main`` called by another program, a
session inside another's test), it gives them back.
"""

from __future__ import annotations

import gc
import os
import sys

PROGRAMS: frozenset[str] = frozenset({"pytest", "py.test", "pytest.exe", "py.test.exe"})
"""The file names of pytest's own scripts."""


class _Freezer:
    """Whether :func:`freeze` froze, so :func:`thaw` unfreezes only what it froze, and
    whether the process ends with the session that froze."""

    froze = False
    ends_with_session = False


_STATE = _Freezer()


def freeze() -> None:
    """Freeze what is alive now, unless something else of this process already froze."""
    if _STATE.froze or gc.get_freeze_count():
        return
    gc.freeze()
    _STATE.froze = True
    _STATE.ends_with_session = pytest_is_the_program() and "PYTEST_CURRENT_TEST" not in os.environ


def thaw() -> None:
    """Give back what :func:`freeze` froze (nothing when it froze nothing)."""
    if _STATE.froze:
        if not _STATE.ends_with_session:
            gc.unfreeze()
        _STATE.froze = False


def pytest_is_the_program() -> bool:
    """Whether this process runs pytest as its program: ``python -m pytest``, or one of
    pytest's scripts, whose process ends when pytest returns."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None:
        return getattr(spec, "name", "") in ("pytest", "pytest.__main__")
    return os.path.basename(str(getattr(main, "__file__", "") or "")) in PROGRAMS
