"""time-machine, imported the way a replay needs it (one place for every clock lockstep moves).

Replay moves the clock for rows a test recorded under a frozen one
(:mod:`lockstep.oracles.ledger.clock`), and the verifying interpreter runs on a clock
years ahead (:mod:`lockstep.oracles.verify_clock`); both import time-machine here.
"""

from __future__ import annotations

import sys
from typing import Any, Final

_NOT_FOR_REPLAY: Final = (("pytest", "dateutil", "dateutil.parser"), ("pytest",))
"""What time-machine imports if it can and a replay never uses: its pytest plugin, and
dateutil for destinations given as text (which time-machine 2.15 cannot do without: then
pytest alone)."""


def time_machine_module() -> Any:
    """time-machine, imported without pytest and dateutil outside a test process.

    Its pytest plugin is 90 ms of CPU in each verifying fork of a ledger with clock rows
    (four of them for humanize's surface), and a module the replayed code would see in
    ``sys.modules`` although ``lockstep replay`` runs no test; dateutil may be the very
    target, which its case must import, not find imported.  While time-machine is
    imported, those stand as not importable (its imports of them are guarded); they are
    importable again right after.  A release that needs dateutil (2.15) is imported
    without pytest alone, and one that cannot do without either as it is."""
    already = sys.modules.get("time_machine")
    if already is not None:
        return already
    if "pytest" in sys.modules:  # a test process: its own tests may travel to "2020-01-01"
        import time_machine

        return time_machine
    for unwanted in _NOT_FOR_REPLAY:
        module = _imported_without(unwanted)
        if module is not None:
            return module
    import time_machine

    return time_machine


def _imported_without(unwanted: tuple[str, ...]) -> Any | None:
    """time-machine imported while ``unwanted`` stand as not importable; None when this
    release cannot do without one of them (time-machine 2.15 imports dateutil's parser
    unguarded), and then nothing of it stays imported."""
    blocked = [name for name in unwanted if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        import time_machine

        return time_machine
    except ImportError:
        for name in [
            n for n in sys.modules if n == "time_machine" or n.startswith("time_machine.")
        ]:
            del sys.modules[name]
        return None
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
