"""lockstep: freeze what legacy code does today; accept a refactor only while it replays.

The public API is deliberately small.  Everything else lives in modules whose
names say what they do (``canon``, ``store``, ``config``, ``oracles``, ``gates``)
and may change between releases.

``record_io``, ``Tape`` and the codec's functions are imported on first use, so that
``lockstep replay`` (which imports this package on every start) does not pay for the
recorder and the tape machinery it does not need, and so that the pytest plugin, which
pytest loads in every run of a project that installed lockstep, imports next to nothing
until one of its options is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lockstep.errors import LockstepError

if TYPE_CHECKING:
    from lockstep.canon import decode, dumps, encode, register_encoder, register_type
    from lockstep.oracles.ledger.recorder import record_io
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
    "record_io": "lockstep.oracles.ledger.recorder",
    "Tape": "lockstep.oracles.tape.recorder",
    **dict.fromkeys(
        ("decode", "dumps", "encode", "register_encoder", "register_type"), "lockstep.canon"
    ),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lockstep' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
