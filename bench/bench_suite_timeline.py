"""A pytest plugin for ``bench_suite_record.py``: when each phase of a pytest run ended.

Loaded with ``-p bench_suite_timeline``, ``LOCKSTEP_BENCH_TIMELINE=FILE`` and
``LOCKSTEP_BENCH_T0`` (the ``time.monotonic()`` of the process that started pytest, just
before it did: the clock is the machine's, the same in both processes).  Writes to FILE,
as JSON, the seconds since then at which collection started and ended, the tests started
and ended, and the plugins' ``pytest_sessionfinish`` hooks ended (where a recording writes
its ledgers); the caller adds when the process ended.  It imports nothing of lockstep, so
a plain run and a recording run are timed alike.  Measurement only.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from typing import Any

import pytest

MARKS: dict[str, float] = {}


def _mark(name: str) -> None:
    MARKS[name] = time.monotonic() - float(os.environ.get("LOCKSTEP_BENCH_T0", "0"))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_collection(session: Any) -> Generator[None, None, None]:
    _mark("collect_start")
    yield
    _mark("collect_end")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtestloop(session: Any) -> Generator[None, None, None]:
    _mark("tests_start")
    yield
    _mark("tests_end")


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_sessionfinish(session: Any) -> Generator[None, None, None]:
    _mark("finish_start")
    yield  # every plugin's own session end (a recording writes its ledgers here)
    _mark("finish_end")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: Any) -> None:
    _mark("unconfigured")
    out = os.environ.get("LOCKSTEP_BENCH_TIMELINE")
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            json.dump(MARKS, fh)
