"""How much of one target's input holding objects a recording freezes.

Freezing an object costs its size on every call: a suite that grows one structure call by
call (furl's tests add to one query thousands of times) or moves items in a large one
(boltons' ``BarrelList`` of 100,000 items, ten thousand times) would take minutes to
record and write as many rows.  ``[lockstep] object_calls`` bounds how many such calls
of one target a recording freezes, ``[lockstep] object_bytes`` how many bytes their rows
take (the frozen input, then the outcome with the objects as the call left them); past
either, such calls run unrecorded and are counted as skipped, with the setting named.
Inputs of scalars and tuples are never counted: they repeat, and repeated inputs are
found without freezing them.  Once the budget is spent, a call with objects is skipped
before anything of it is keyed or frozen, even one repeating a recorded input: keying a
babel ``Locale`` (its whole locale data) on each of thousands of calls cost minutes.
"""

from __future__ import annotations


class InputBudget:
    """One target's budget (0: no limit on that measure)."""

    def __init__(self, calls: int = 0, size: int = 0) -> None:
        self.calls = calls
        self.size = size
        self._calls_spent = 0
        self._size_spent = 0
        self.charged = False
        """Whether the last call asked about was counted (:meth:`refund` gives it back)."""

    def exhausted(self) -> str | None:
        """Why no more call with objects is frozen, once the budget is spent (counting
        nothing), or None."""
        if (self.calls and self._calls_spent >= self.calls) or (
            self.size and self._size_spent >= self.size
        ):
            return self.refusal()
        return None

    def refusal(self) -> str | None:
        """Why the next call with objects is not frozen, or None (the call is counted)."""
        if self.calls and self._calls_spent >= self.calls:
            return (
                f"past the first {self.calls:,} calls whose input holds objects or mutable "
                "values, as many as a recording freezes ([lockstep] object_calls)"
            )
        if self.size and self._size_spent >= self.size:
            return (
                f"past the first {_size_text(self.size)} frozen for calls whose input holds "
                "objects or mutable values, as much as a recording freezes of one target "
                "([lockstep] object_bytes)"
            )
        self._calls_spent += 1
        self.charged = True
        return None

    def refund(self) -> None:
        """Give back the call :meth:`refusal` last counted: its input did not freeze and the
        call was skipped, so it froze nothing the budget bounds (bidict's ``keys``: its
        first 2,000 calls were all skipped as unfreezable and spent the budget, and the
        next 8,015, which would have frozen, were skipped as past it)."""
        if self.charged:
            self._calls_spent -= 1
            self.charged = False

    def spent(self, size: int) -> None:
        """Count bytes frozen for a call whose input held objects (its input, its outcome)."""
        self._size_spent += size


def _size_text(n: int) -> str:
    return f"{n / 2**20:,.4g} MiB" if n >= 2**20 else f"{n:,} bytes"
