"""A refused row whose arguments hold the same object of the project: name that first.

Each argument of a call is frozen on its own, so an object two arguments hold (a token
and the group it is a child of, a document and one of its items) thaws as two objects:
``token.has_ancestor(group)`` walks ``token.parent`` and compares by identity, and the
fresh interpreter returned False where the recording returned True.  The refusal named
whatever else had changed in the process (a module global a cache filled) and sent the
user looking in the wrong place.  The row itself shows the likely cause: the same form
of an object, with state, in two arguments.
"""

from __future__ import annotations

from typing import Any, Final

from lockstep import canon
from lockstep.errors import CanonError
from lockstep.oracles.ledger.format import LedgerRow

MOST_FORMS: Final = 5_000
"""Object forms looked at per row, at most (a refused row of a parsed document holds
thousands; the first shared one is found long before)."""


def linked_arguments(row: LedgerRow) -> str:
    """The cause to name when an argument of ``row`` is an object of the project that
    another argument looks to hold (``""`` when none does)."""
    places: list[tuple[str, Any]] = [(f"args[{i}]", v) for i, v in enumerate(row.args)]
    places += [(name, v) for name, v in row.kwargs.items()]
    if len(places) < 2:
        return ""
    for place, value in places:
        wanted = _signature(value)
        if wanted is None:
            continue
        for other, holder in places:
            if other != place and _holds(holder, wanted, [MOST_FORMS]):
                return (
                    f"{other} holds a {wanted[0]} like {place}: if it is that very object, "
                    "it thaws as another (each argument is frozen on its own), and a call "
                    "that tells them apart by identity returns otherwise"
                )
    return ""


def _signature(value: Any) -> tuple[str, bytes] | None:
    """An object form's class and the scalars of its state (a parent link, a list of
    children and any other container left out: a cycle writes them otherwise at each
    place); None for anything else, or a state with no scalar to tell it by."""
    payload = value.get("$obj") if isinstance(value, dict) and len(value) == 1 else None
    if not (isinstance(payload, list) and len(payload) == 2 and isinstance(payload[1], dict)):
        return None
    state = payload[1].get("state")
    if isinstance(state, dict) and "$tuple" in state and len(state) == 1:
        halves = state["$tuple"]  # (__dict__, slots)
        state = {k: v for h in halves if isinstance(h, dict) for k, v in h.items()}
    if not isinstance(state, dict):
        return None
    scalars: dict[str, Any] = {
        str(k): v for k, v in state.items() if isinstance(v, str | int | float | bool)
    }
    if not any(isinstance(v, str) and v.strip() for v in scalars.values()):
        return None  # no text to tell it by: two blank objects look alike
    try:
        return _short(payload[0]), canon.canonical_json([payload[1].get("base"), scalars])
    except CanonError:
        return None


def _holds(value: Any, wanted: tuple[str, bytes], budget: list[int]) -> bool:
    """Whether ``value`` holds, at any depth, an object form of ``wanted``'s signature."""
    if budget[0] <= 0:
        return False
    if isinstance(value, list):
        return any(_holds(item, wanted, budget) for item in value)
    if not isinstance(value, dict):
        return False
    if len(value) == 1 and "$obj" in value:
        budget[0] -= 1
        if _signature(value) == wanted:
            return True
    return any(_holds(item, wanted, budget) for item in value.values())


def _short(name: object) -> str:
    return str(name).replace(":", ".", 1) if isinstance(name, str) else "object"
