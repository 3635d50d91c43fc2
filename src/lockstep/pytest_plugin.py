"""The pytest plugin (entry point ``lockstep``): adapts pytest to the oracle API, holds no logic.

* ``pytest --lockstep`` (or ``lockstep = true`` under ``[tool.pytest.ini_options]``... see
  README) collects every recorded case of every configured oracle as a test item
  named ``<oracle file>::<case id>``; a drift fails the item with the same diff
  the CLI prints.
* Recording hooks for ledgers and tapes live in their own modules and are wired
  in here, so each stays small.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lockstep", "lockstep: replay frozen behaviour")
    group.addoption(
        "--lockstep",
        action="store_true",
        default=False,
        help="Collect every recorded lockstep case as a test item.",
    )
    parser.addini("lockstep", "Collect lockstep cases as test items (true/false).", type="bool", default=False)
