"""lockstep: freeze what legacy code does today; accept a refactor only while it replays.

The public API is deliberately small.  Everything else lives in modules whose
names say what they do (``canon``, ``store``, ``config``, ``oracles``, ``gates``)
and may change between releases.
"""

from __future__ import annotations

from lockstep.canon import decode, dumps, encode, register_encoder
from lockstep.errors import LockstepError
from lockstep.recorder import record_io
from lockstep.tape import Tape

__all__ = [
    "LockstepError",
    "Tape",
    "__version__",
    "decode",
    "dumps",
    "encode",
    "record_io",
    "register_encoder",
]

__version__ = "0.1.0"
