"""The demo's chapters, in story order.

Each chapter module defines ``CHAPTER: Chapter``.  Its project files live
under ``demo/project/`` (copied as the starting state) and its refactors under
``demo/variants/``.
"""

from __future__ import annotations

import importlib

from lockstep.demo.steps import Chapter

ORDER: tuple[str, ...] = ("corpus", "ledger", "pins", "tape", "review")


def chapters() -> list[Chapter]:
    """Every chapter, in story order."""
    return [importlib.import_module(f"lockstep.demo.chapters.{name}").CHAPTER for name in ORDER]
