"""What a kind offers to ``lockstep mine`` and ``replay --against``: a subject to call directly.

Both commands generate inputs shaped like the recorded ones (:mod:`lockstep.mine`)
and need, from the kind, only this: the recorded inputs, a way to run one input
in this process, a way to add inputs to the oracle through its normal record
path, and -- for the differential gate -- a way to freeze one input's outcome as a
case of the oracle and to check a case with the oracle's own comparison.  The
kind keeps its file format and comparison to itself; the generator and the
coverage collector know nothing about kinds.

Inputs cross process boundaries as canonical values (:mod:`lockstep.canon`), so
one subject in an old checkout and one in the new can be fed the same input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from lockstep.canon import JSON
from lockstep.model import Outcome, RecordReport

INPUT_TIMEOUT: Final = 30.0
"""Seconds a generated input may run where the oracle sets no limit of its own (a corpus's
render; a ledger's is its ``timeout``)."""


@dataclass(frozen=True)
class Call:
    """One input: the positional and keyword arguments of a call (Python values)."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    clock: Any = None
    """The frozen clock a recorded ledger row ran under (a
    :class:`lockstep.oracles.ledger.clock.Clock`), run there again; None: today's clock
    (every generated input)."""


@dataclass(frozen=True)
class Ran:
    """What one in-process run of an input gave, reduced to what mining compares."""

    outcome_class: str
    """Result type and shape, or exception type: ``returned float``, ``raised ValueError``."""
    result_key: bytes
    """Canonical bytes of the whole outcome (value, exception stem, mutations)."""


class MiningSubject(Protocol):
    """A recorded oracle's target, callable directly; every member is required.

    An input is a :class:`Call`: a ledger's are the target's arguments; a corpus's are one
    positional argument, the parsed JSON document of a fixture (its render is called with
    a file holding it).
    """

    @property
    def target(self) -> Callable[..., Any]:
        """The code whose source constants and coverage count (the target or render)."""
        ...

    @property
    def sources(self) -> tuple[Path, ...]:
        """The source files whose literals feed the generator and whose arcs count as
        coverage: the target's module; a render's module and the project modules it uses
        (a render is often a thin harness around the code under freeze)."""
        ...

    @property
    def typed(self) -> bool:
        """Whether the target's parameter type hints describe the inputs (a ledger's do; a
        render's ``path: Path`` says nothing about the document in the file)."""
        ...

    @property
    def unit(self) -> str:
        """What one added case is called in reports: ``row``, ``fixture``."""
        ...

    @property
    def timeout(self) -> float:
        """Seconds one generated input may run before mining drops it as one the code
        loops on (a ledger's ``timeout``; :data:`INPUT_TIMEOUT` for a corpus)."""
        ...

    def seeds(self) -> list[Call]:
        """The recorded inputs, thawed, in file order (what generated inputs are shaped
        like); a usage error when the recorded inputs cannot be varied."""
        ...

    def recorded(self) -> list[JSON]:
        """The recorded inputs exactly as recorded, encoded (:meth:`encode_input`'s form):
        what ``replay --against`` compares first, even when they cannot be varied."""
        ...

    def describe(self, value: JSON) -> str:
        """An encoded input as a user reads it: a call, a fixture."""
        ...

    def run(self, call: Call) -> Ran:
        """Run one input in this process (never raises for the target's own exceptions)."""
        ...

    def add(self, calls: Sequence[Call]) -> RecordReport:
        """Record ``calls`` into the oracle as new cases through the normal record path."""
        ...

    def encode_input(self, call: Call) -> JSON:
        """The input as a canonical value (to send it to another interpreter)."""
        ...

    def decode_input(self, value: JSON) -> Call:
        """The inverse of :meth:`encode_input`."""
        ...

    def freeze(self, value: JSON) -> JSON:
        """Run an encoded input and freeze it as one case of the oracle (what record writes)."""
        ...

    def check(self, case: JSON) -> Outcome:
        """Replay one frozen case against this subject with the oracle's own comparison."""
        ...


SHAPE_DEPTH = 3
"""How deep :func:`shape_of` looks into containers: deeper differences are one class."""


def shape_of(value: JSON, depth: int = 0) -> str:
    """The type and container shape of a frozen value: ``tuple[float|str]``, ``dict``, ``None``.

    Two results of one shape are one *outcome class* for mining: a new class is worth a
    row even when it reached no new line (a function that returns ``None`` or a tuple
    from the same line).
    """
    if value is None:
        return "None"
    if isinstance(value, list):
        return "list" + _elements(value, depth)
    if isinstance(value, dict):
        if len(value) == 1:
            tag, payload = next(iter(value.items()))
            if tag.startswith("$"):
                name = tag[1:]
                if name in ("tuple", "set", "frozenset") and isinstance(payload, list):
                    return name + _elements(payload, depth)
                return name
        return "dict"
    return type(value).__name__


def _elements(items: list[JSON], depth: int) -> str:
    if not items or depth >= SHAPE_DEPTH:
        return ""
    return "[" + "|".join(sorted({shape_of(item, depth + 1) for item in items})) + "]"
