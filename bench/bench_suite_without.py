"""A pytest plugin for ``bench_suite_parts.py``: a recording with one part of it switched off.

Loaded with ``-p bench_suite_without`` and ``LOCKSTEP_BENCH_WITHOUT`` set to

* ``seeds``: no row is a suspect of following the hash seed, and no further seed's
  interpreter is started while the tests run (the rows are still verified under the one
  other seed every recording uses);
* ``verification``: no row is replayed before it is written (no verifying fork; the
  interpreter is still started, as it is before the recording knows what it will verify).

Measurement only: what it writes is not what lockstep would write, and nothing of it is
kept.  It replaces module attributes by name, so a rename in lockstep fails it loudly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any


def pytest_configure(config: Any) -> None:
    without = os.environ.get("LOCKSTEP_BENCH_WITHOUT", "")
    if without == "seeds":
        from lockstep.oracles.ledger import verified_rows, verify_warming

        verified_rows._seed_suspects = lambda rows, fn="": []  # type: ignore[assignment]
        verify_warming.package_builds_sets = lambda *a, **k: False  # type: ignore[assignment]
    elif without == "verification":
        from lockstep.oracles.ledger import verified_rows

        def reproducible(
            project: Any,
            spec: Any,
            recording: Any,
            rows: Mapping[str, Any],
            signature: Any,
            report: Any,
            started: Any = None,
            within: Mapping[str, Any] | None = None,
        ) -> Mapping[str, Any]:
            return rows if within is None else within

        verified_rows.reproducible = reproducible  # type: ignore[assignment]
    elif without:
        raise ValueError(f"LOCKSTEP_BENCH_WITHOUT={without!r}: seeds or verification")
