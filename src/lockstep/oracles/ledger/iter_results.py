"""A target's iterator result, relayed to its caller: each item frozen as it is consumed,
the row noted (:meth:`.recorder.TargetRecorder.iterated`) when the iterator ends."""

from __future__ import annotations

import itertools
import types
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Final

from lockstep import canon
from lockstep.canon import JSON
from lockstep.canon.sequence_iterators import SEQUENCE_ITERATORS, remaining_items
from lockstep.errors import CanonError

if TYPE_CHECKING:
    from lockstep.oracles.ledger.recorder import TargetRecorder

_encode = canon.encode


ITERATOR_RESULTS: Final = frozenset(
    {
        types.GeneratorType,
        map,
        filter,
        zip,
        enumerate,
        *SEQUENCE_ITERATORS,
        *(t for t in vars(itertools).values() if isinstance(t, type) and hasattr(t, "__next__")),
    }
)
"""Iterator results the recorder relays (generators and the stdlib's own iterators):
their items are frozen as the caller consumes them."""


def kept_or_relayed(rec: TargetRecorder, pending: Any, it: Any) -> Any:
    """``it`` itself when it iterates a sequence, a set or a dict, the row noted with every
    item it has left, read without consuming it (:func:`~lockstep.canon.sequence_iterators.
    remaining_items`); else :func:`relay`.

    Relayed through a generator, ``always_reversible([1, 2, 3])`` stopped being a
    ``list_reverseiterator``, and more-itertools' suite, which compares the classes,
    failed under recording only."""
    remaining = remaining_items(it)
    if remaining is None:
        return relay(rec, pending, it)
    items: list[JSON] = []
    refused = ""
    for item in remaining:
        try:
            items.append(_encode(item, path=f"result item {len(items)}"))
        except CanonError as e:
            refused = str(e)
            break
        except Exception as e:
            refused = f"freezing a result item: {type(e).__name__}: {e}"
            break
    rec.iterated(pending, items, "exhausted", None, refused)
    return it


def relay(  # noqa: C901 -- next, send, throw and close, one branch each
    rec: TargetRecorder, pending: Any, it: Any
) -> Generator[Any, Any, Any]:
    items: list[JSON] = []
    refused = ""
    end = "open"
    exc: BaseException | None = None
    is_gen = type(it) is types.GeneratorType
    sent: Any = None
    thrown: BaseException | None = None
    try:
        while True:
            try:
                if thrown is not None:
                    item = it.throw(thrown)
                elif is_gen:
                    item = it.send(sent)
                else:
                    item = next(it)
            except StopIteration as stop:
                end = "exhausted"
                return stop.value
            except Exception as e:
                end, exc = "raised", e
                raise
            finally:
                thrown = None
            if not refused:
                try:
                    items.append(_encode(item, path=f"result item {len(items)}"))
                except CanonError as e:
                    refused = str(e)
                except Exception as e:
                    refused = f"freezing a result item: {type(e).__name__}: {e}"
            try:
                sent = yield item
            except GeneratorExit:
                if is_gen:
                    it.close()
                raise
            except BaseException as e:
                if not is_gen:
                    raise
                thrown, sent = e, None
    finally:
        rec.iterated(pending, items, end, exc, refused)
