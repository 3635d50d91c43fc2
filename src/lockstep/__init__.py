"""lockstep: freeze what legacy code does today; accept a refactor only while it replays.

The public API is deliberately small.  Everything else lives in modules whose
names say what they do (``canon``, ``store``, ``config``, ``oracles``, ``gates``)
and may change between releases.

Every name is imported on first use, so that ``lockstep --help`` and ``lockstep replay``
(which import this package on every start) pay neither for the codec's msgspec types
nor for the recorder and the tape machinery they do not need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lockstep.canon import decode, dumps, encode, register_encoder, register_type
    from lockstep.errors import LockstepError
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

_LAZY = {
    "LockstepError": "lockstep.errors",
    "decode": "lockstep.canon",
    "dumps": "lockstep.canon",
    "encode": "lockstep.canon",
    "register_encoder": "lockstep.canon",
    "register_type": "lockstep.canon",
    "record_io": "lockstep.oracles.ledger.decorator",
    "Tape": "lockstep.oracles.tape.recorder",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lockstep' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
