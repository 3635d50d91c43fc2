"""lockstep: freeze what legacy code does today; accept a refactor only while it replays.

The public API is deliberately small.  Everything else lives in modules whose
names say what they do (``canon``, ``store``, ``config``, ``oracles``, ``gates``)
and may change between releases.

``record_io`` and ``Tape`` are imported on first use, so that ``lockstep replay``
(which imports this package on every start) does not pay for the recorder and
the tape machinery it does not need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lockstep.canon import decode, dumps, encode, register_encoder, register_type
from lockstep.errors import LockstepError

if TYPE_CHECKING:
    from lockstep.oracles.ledger.decorator import record_io
    from lockstep.oracles.tape.recorder import Tape

__all__ = [
    "LockstepError",
    "Tape",
    "__version__",
    "decode",
    "dumps",
    "encode",
    "record_io",
    "register_encoder",
    "register_type",
]

__version__ = "0.1.0"

_LAZY = {"record_io": "lockstep.oracles.ledger.decorator", "Tape": "lockstep.oracles.tape.recorder"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lockstep' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
