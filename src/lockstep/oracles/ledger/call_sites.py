"""Where a recorded call came from: the line of the project that made it.

A call skipped while recording is reported with the sites that made it (``called from
tests/test_dates.py:41``), so the user finds the test that passed what could not be
frozen.  The site is the first frame outside lockstep's recorder that lies inside the
project's folder, past other packages' code kept there (a virtual environment) and past
frames with no file (``<frozen runpy>``, ``<string>``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import FrameType
from typing import Final

_OWN_FILES: Final = frozenset(
    os.path.join(os.path.dirname(__file__.removesuffix("c")), f"{name}.py")
    for name in ("recorder", "wrapping", "decorator", "iter_results", "materialize")
)
"""The recorder's own modules: a call site is the first frame outside them."""


def caller_site() -> str:
    """``file:line`` of the code that called the recorded function (outside this module):
    the first such frame inside the project (the folder the run started in), so a call
    made through ``unittest``'s ``assertEqual`` names the test, not ``unittest/case.py``;
    the first one at all when no frame is inside it."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in _OWN_FILES:
        frame = frame.f_back
    if frame is None:
        return ""
    here = Path.cwd().resolve()
    first = frame
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<"):  # no file: <frozen runpy>, <string>, <doctest ...>
            frame = frame.f_back
            continue
        try:
            shown = Path(name).resolve().relative_to(here)
        except ValueError:
            frame = frame.f_back
            continue
        if not any(part in _NOT_THE_PROJECTS for part in shown.parts):
            return f"{shown.as_posix()}:{frame.f_lineno}"
        frame = frame.f_back
    return f"{Path(first.f_code.co_filename).as_posix()}:{first.f_lineno}"


_NOT_THE_PROJECTS: Final = frozenset({"site-packages", "dist-packages", ".venv", "venv", ".tox"})
"""Folders inside the project that hold other packages' code (a virtual environment)."""


__all__ = ["caller_site"]
