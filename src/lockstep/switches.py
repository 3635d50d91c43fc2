"""Environment variables that switch lockstep's own behaviour across processes.

Kept in one tiny module so that the command line, the pytest plugin and the recorder
name each variable once without importing one another (the plugin and ``--help`` stay
cheap to import).
"""

from __future__ import annotations

from typing import Final

RECORD_IO_OFF: Final = "LOCKSTEP_RECORD_IO_OFF"
"""Set (to anything non-empty) while lockstep replays or verifies: ``@record_io`` then
returns the function unwrapped, so a replay never records its own calls."""
