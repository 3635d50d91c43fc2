"""A skipped call names the project's line that made it, never a frame with no file.

glom's suite reaches its calls through code compiled under a made-up file name; the
recording's note named ``<frozen runpy>:88`` as the site, which a path relative to the
project's folder took for a file inside it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from lockstep.oracles.ledger.call_sites import caller_site as _caller_site

HERE = Path(__file__).resolve()


def test_a_frame_without_a_file_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(HERE.parent.parent)
    namespace = {"site": _caller_site}
    exec(compile("def through():\n    return site()\n", "<frozen runpy>", "exec"), namespace)
    line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    shown = namespace["through"]()  # type: ignore[operator]
    assert shown == f"tests/{HERE.name}:{line}"
