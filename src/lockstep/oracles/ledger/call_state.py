"""What the recorder keeps of one call: the row of an input seen, what it learned before a
new call and carries across it, an input with objects seen again.

msgspec Structs outside the garbage collector (nothing they hold refers back to them):
built on every call, they cost a fraction of a dataclass's ``__init__``.
"""

from __future__ import annotations

import sys
from typing import Any, TypeAlias

import msgspec

from lockstep import canon
from lockstep.canon import JSON

_object_key = canon.object_key


class _Seen(msgspec.Struct, gc=False):
    """One distinct input's row as this process saw it.

    A msgspec Struct outside the garbage collector (nothing it holds can refer back to
    it): built once per new input, it costs a fraction of a dataclass's ``__init__``, and
    the collector does not walk the rows themselves.  The input is kept only as its
    canonical bytes (``key``, the table's own key): the frozen arguments are decoded from
    them when the row is built, which saves about a quarter of a row's memory.
    """

    key: bytes
    """Bytes of the frozen input ``[args, kwargs]``: the table's key (its canonical bytes,
    the same object) unless a dict in it was passed out of sorted order; then the same
    input with every dict in the order it was passed (see :func:`_ordered`), what the row
    is written from, so replay passes the same dict."""
    ok: bool
    result: JSON
    exc_type: str
    exc_stem: str
    mutated: dict[str, JSON] | None
    outcome: bytes
    first_call: int
    other_outcomes: tuple[bytes, ...] = ()
    other_calls: tuple[int, ...] = ()
    """The call number that first produced each of ``other_outcomes``.  (Tuples, rebuilt on
    the rare second outcome: a row costs no list of its own.)"""


class _Oversize(msgspec.Struct, gc=False):
    """An input whose frozen call was too large to keep (:data:`.recorder.MAX_ROW_BYTES`),
    remembered by its memo key: its next calls are skipped for the same reason without
    freezing a result that would again be too large (dateutil's no-argument
    ``get_zonefile_instance()`` returns every zone, 9 MiB frozen, on each of its calls)."""

    reason: str


class _Pending(msgspec.Struct, gc=False):
    """What :meth:`TargetRecorder.before` learned about a new input, carried across the call.

    Short-lived and referred to only by the wrapper's frame, so kept out of the garbage
    collector like :class:`_Seen`.
    """

    call_index: int
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    enc_args: JSON
    enc_kwargs: JSON
    mutable: bool
    memo_key: bytes | None
    key: bytes
    """Canonical bytes of the frozen input: what rows are deduplicated by."""
    object_key: bytes | None = None
    """:func:`canon.object_key` of an input holding objects (remembered once recorded)."""
    result_key: bytes | None = None
    clock: dict[str, Any] | None = None
    """The frozen clock the call ran under, as the row holds it (part of ``key``)."""
    on: JSON | None = None
    """The subclass a classmethod was called on, frozen (part of ``key``)."""


_Fresh: TypeAlias = tuple[int, bytes, bytes]
"""A new input made of scalars (:func:`canon.scalar_call_key` wrote its key), carried
across the call: its call number, its ``marshal`` memo key and its key.  A tuple: the
lightest object to build on every call with a new input."""


class _Again(msgspec.Struct, gc=False):
    """A repeated input holding objects (found by :func:`canon.object_key`): nothing was
    frozen; after the call its key is taken again to see whether the call changed it."""

    remembered: _Remembered
    before: bytes
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def unchanged(self) -> bool:
        """Whether the call left the arguments as they were (their key is the same)."""
        return _object_key(self.args, self.kwargs) == self.before


class _Remembered(msgspec.Struct, gc=False):
    """An input with objects, as first frozen: its row, its frozen arguments and table key,
    and the key of the object it returned (None when it raised or returned no such value)."""

    seen: _Seen
    enc_args: JSON
    enc_kwargs: JSON
    key: bytes
    result_key: bytes | None


class _Materialized(_Pending, gc=False):
    """A call whose iterator and callable arguments are handed on through proxies that keep
    what the target takes of them (:mod:`.materialize`)."""

    call_args: tuple[Any, ...] = ()
    call_kwargs: dict[str, Any] = {}
    recorded: bool = False
    """False when the call is skipped (still called with ``call_args``)."""
    relayed: bool = False
    """Noted when its iterator result ended, which keeps the callables it was given while
    it is read: references to them then say nothing of the target keeping them."""
    proxies: tuple[tuple[int | str, Any], ...] = ()
    """Each iterator or callable argument's place and proxy
    (:class:`~.materialize.TakenItems`, :class:`~.materialize.TapedCalls`), until the input
    is completed with what they handed on (:func:`~.materialize.complete_input`)."""

    def call(
        self, args: tuple[Any, ...], skip_first: bool
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The arguments to call the target with (``self`` kept when it was skipped)."""
        return ((args[0], *self.call_args) if skip_first else self.call_args), self.call_kwargs

    def count_references(self) -> None:
        """Count each callable argument's references now, just before the target is called
        with :meth:`call`'s arguments (the caller holds them): one more once it returned
        means the target kept it (:func:`.materialize.kept_callables` counts alike, through
        the proxy class's ``watched``)."""
        for _, proxy in self.proxies:
            watched = getattr(type(proxy), "watched", None)
            if watched is not None:
                proxy.refs = sys.getrefcount(watched(proxy))
