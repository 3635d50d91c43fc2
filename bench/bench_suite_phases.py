"""A pytest plugin for ``bench_suite_record.py``: times the steps of ``--lockstep-record``'s end.

Loaded with ``-p bench_suite_phases`` and ``LOCKSTEP_BENCH_PHASES=FILE``; wraps, by name,
the functions the recording's end runs through and writes their wall and CPU seconds (this
process's; ``*_cpu``) to FILE as JSON when pytest ends.  Measurement only: nothing it wraps changes what it does.
Where ledgers are written side by side (threads taking turns), a step's figures are summed
over the ledgers and overlap; ``all_ledgers`` is the span of writing them all.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import resource
import time
from collections import defaultdict
from typing import Any

TIMES: defaultdict[str, float] = defaultdict(float)


def _wrap(owner: Any, name: str, label: str) -> None:
    fn = getattr(owner, name, None)
    if fn is None:
        return

    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        cpu = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            TIMES[label] += time.perf_counter() - start
            TIMES[f"{label}_cpu"] += time.process_time() - cpu

    setattr(owner, name, timed)


def pytest_configure(config: Any) -> None:
    from lockstep.oracles.ledger import kind, pytest_recording

    _wrap(kind, "without_secrets", "secrets")
    _wrap(kind, "verify", "verify")
    try:  # where the verification rounds live since they left ``kind``
        from lockstep.oracles.ledger import verified_rows

        _wrap(verified_rows, "without_secrets", "secrets")
        _wrap(verified_rows, "verify", "verify")
    except ImportError:
        pass
    _wrap(kind, "write_ledger", "write")
    try:
        from lockstep.oracles.ledger import merging

        _wrap(merging, "merge_parts", "merge")
        _wrap(pytest_recording, "merge_parts", "merge")
    except ImportError:
        pass
    try:
        from lockstep.oracles import verify_session
        from lockstep.oracles.verify_session import VerifySession
    except ImportError:  # a lockstep with one verifying interpreter per ledger
        return
    _wrap(verify_session, "in_turns", "all_ledgers")  # ledgers written side by side: the span
    for method in ("close", "ending"):  # told to end at the session's end, closed later
        _count_starts(VerifySession, method)


def _count_starts(cls: Any, method: str) -> None:
    if not hasattr(cls, method):
        return
    original = getattr(cls, method)

    def counting(self: Any) -> None:
        TIMES["starts"] = max(TIMES["starts"], float(self.starts))
        original(self)

    setattr(cls, method, counting)


def pytest_unconfigure(config: Any) -> None:
    if os.environ.get("LOCKSTEP_BENCH_PHASES"):
        atexit.register(_write_times)  # once every verifying interpreter has been waited for


def _write_times() -> None:
    out = os.environ["LOCKSTEP_BENCH_PHASES"]
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    TIMES["children_cpu"] = children.ru_utime + children.ru_stime
    own = resource.getrusage(resource.RUSAGE_SELF)
    TIMES["pytest_cpu"] = own.ru_utime + own.ru_stime
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(dict(TIMES), fh)
