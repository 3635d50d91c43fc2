"""time-machine, imported the way a replay needs it (one place for every clock lockstep moves).

Replay moves the clock for rows a test recorded under a frozen one
(:mod:`lockstep.oracles.ledger.clock`), and the verifying interpreter runs on a clock
years ahead (:mod:`lockstep.oracles.verify_clock`); both import time-machine here.
"""

from __future__ import annotations

import sys
from typing import Any, Final

_NOT_FOR_REPLAY: Final = ("pytest", "dateutil", "dateutil.parser")
"""What time-machine imports if it can and a replay never uses: its pytest plugin, and
dateutil for destinations given as text."""


def time_machine_module() -> Any:
    """time-machine, imported without pytest and dateutil outside a test process.

    Its pytest plugin is 90 ms of CPU in each verifying fork of a ledger with clock rows
    (four of them for humanize's surface), and a module the replayed code would see in
    ``sys.modules`` although ``lockstep replay`` runs no test; dateutil may be the very
    target, which its case must import, not find imported.  While time-machine is
    imported, those stand as not importable (its imports of them are guarded); they are
    importable again right after.  A release that cannot do without them is imported as
    it is."""
    already = sys.modules.get("time_machine")
    if already is not None:
        return already
    if "pytest" in sys.modules:  # a test process: its own tests may travel to "2020-01-01"
        import time_machine

        return time_machine
    blocked = [name for name in _NOT_FOR_REPLAY if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        import time_machine

        return time_machine
    except ImportError:
        pass
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    import time_machine

    return time_machine
