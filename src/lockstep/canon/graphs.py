"""Other libraries' plain objects inside one value: a graph, frozen once per object.

orderedmultidict keeps its items in a ring of nodes (each links its ``prev`` and ``next``)
and an index from each key to its nodes.  Frozen the way the project's own objects are --
an object reached twice is frozen twice -- every index entry carried a rotation of the
whole ring: 40 items took 372 KB and 0.75 s per call, a ring past about 60 items nested
past the depth limit, and the thawed index pointed at copies of the nodes, so a call that
removed an item through it behaved otherwise than on the recorded object.

So another library's plain objects (:mod:`~lockstep.canon.library_classes`) inside one
value -- a call's argument, its result, everything they hold -- form one graph:

    {"$graph": [root, [["pkg.mod:Qual", {"state": ...}], ...]]}

Each such object is an entry of the table, once, and every place that holds it (the root,
or another entry's state) holds ``{"$node": n}``.  The numbering is canonical: the
root is walked in its written order (an object's keys sorted, a list in order, the pairs
of a ``$dict`` in their keys' order), then each entry's state in the order the entries
were numbered; a node gets the next number where it is first met.  Two values that
canon calls equal (whatever the insertion order of their dicts) write the same bytes.  A
node inside a set, or inside a dict key, has no such order and is refused.

An entry's state is frozen as a value of its own: a cycle back through an enclosing
object of the project (``{"$ref": n}``) does not cross an entry.  A value holding none of
these objects is written exactly as before (no ``$graph``), so ledgers recorded before
replay unchanged.  Thawing allocates every entry first (``object.__new__``: no code of the
class runs), then fills each state, then thaws the root: the nodes are shared again, the
ring's index pointing at the ring's own nodes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final

from lockstep.canon._core import JSON, MAX_DEPTH, Unfreezable, _TooDeep, qualified_name

MAX_NODES: Final = 20_000
"""Most objects of other libraries one value may hold (each counted once)."""

_UNORDERED: Final = frozenset({"$set", "$frozenset"})
_PAIRS: Final = frozenset({"$dict", "$counter"})


class Scope:
    """The objects of other libraries met while one outermost object freezes."""

    __slots__ = ("context", "entries", "ids")

    def __init__(self) -> None:
        self.ids: dict[int, int] = {}
        self.entries: list[tuple[Any, type[Any]]] = []  # held: their ids stay theirs
        self.context: list[type[Any]] = []
        """The class of the entry whose state is being frozen (where its markers are kept)."""

    def node(self, v: Any, t: type[Any]) -> JSON:
        """``{"$node": n}`` for ``v``, numbered in the order met (renumbered at the end)."""
        n = self.ids.get(id(v))
        if n is None:
            if len(self.entries) >= MAX_NODES:
                raise Unfreezable(
                    f"holds more than {MAX_NODES:,} objects of other libraries: too large "
                    "to freeze (data, not behaviour)"
                )
            n = self.ids[id(v)] = len(self.entries)
            self.entries.append((v, t))
        return {"$node": n}


class GraphNeeded(Exception):
    """An object of another library met where no scope is open: by the fast encoder,
    which then leaves the value to the slow one (that opens a scope per value)."""


_LOCAL: Final = threading.local()


def _stack() -> list[Scope]:
    stack: list[Scope] | None = getattr(_LOCAL, "scopes", None)
    if stack is None:
        stack = _LOCAL.scopes = []
    return stack


def current() -> Scope | None:
    """The innermost scope open in this thread, if any."""
    stack = _stack()
    return stack[-1] if stack else None


def opened() -> Scope:
    """A new scope for one top-level value; the caller ends it with :func:`close` (or
    :func:`abandon` on a refusal)."""
    scope = Scope()
    _stack().append(scope)
    return scope


def close(
    scope: Scope, root: JSON, depth: int, state_of: Callable[[Any, type[Any], int], JSON]
) -> JSON:
    """``root`` as it is when the scope met no object of another library; else the
    ``$graph`` of ``root`` and every entry, each entry's state frozen by ``state_of(v, t,
    depth)`` (which may meet more).  Always ends the scope."""
    try:
        if not scope.entries:
            return root
        states: list[JSON] = []
        while len(states) < len(scope.entries):
            v, t = scope.entries[len(states)]
            scope.context[:] = [t]
            try:
                states.append(state_of(v, t, depth + 5))
            except Unfreezable as e:
                e.segments.append(f".<{qualified_name(t)} object>")
                raise
        return _canonical(scope, root, states, depth)
    finally:
        abandon(scope)


def abandon(scope: Scope) -> None:
    """End ``scope`` (after a refusal, too)."""
    stack = _stack()
    if scope in stack:
        del stack[stack.index(scope) :]


def _canonical(scope: Scope, root: JSON, states: list[JSON], depth: int) -> JSON:
    order: dict[int, int] = {}
    queue: list[int] = []
    new_root = _walk(root, order, queue, False, depth + 2)
    table: list[JSON] = []
    done = 0
    while done < len(queue):
        old = queue[done]
        t = scope.entries[old][1]
        state = _walk(states[old], order, queue, False, depth + 5)
        table.append([qualified_name(t), {"state": state} if state is not None else {}])
        done += 1
    return {"$graph": [new_root, table]}


def _walk(value: Any, order: dict[int, int], queue: list[int], unordered: bool, level: int) -> Any:
    """``value`` with each ``$node`` renumbered in first-met order; ``unordered``: inside a
    set member or a dict key, where a node would have no canonical place."""
    if type(value) is not list and type(value) is not dict:
        return value
    if level > MAX_DEPTH:  # a container past the limit, as the encoder and decoder count
        raise _TooDeep
    if isinstance(value, list):
        return [_walk(x, order, queue, unordered, level + 1) for x in value]
    if len(value) == 1:
        ((tag, payload),) = value.items()
        if tag == "$node":
            if unordered:
                raise Unfreezable(
                    "cannot freeze an object of another library inside a set or a dict key: "
                    "it has no canonical place there"
                )
            n = order.get(payload)
            if n is None:
                n = order[payload] = len(queue)
                queue.append(payload)
            return {"$node": n}
        if tag in _UNORDERED:
            return {tag: _walk(payload, order, queue, True, level + 1)}
        if tag in _PAIRS or tag == "$defaultdict":
            return {tag: _pairs(tag, payload, order, queue, unordered, level + 1)}
    return {k: _walk(value[k], order, queue, unordered, level + 1) for k in sorted(value)}


def _pairs(
    tag: str, payload: Any, order: dict[int, int], queue: list[int], unordered: bool, level: int
) -> Any:
    """The pairs of a ``$dict``/``$counter`` (``$defaultdict``: factory, then pairs), keys
    walked as unordered places, values in the pairs' order (their keys')."""
    if tag == "$defaultdict":
        factory, pairs = payload
        return [factory, _pairs("$dict", pairs, order, queue, unordered, level + 1)]
    out = []
    for key, value in payload:
        out.append(
            [
                _walk(key, order, queue, True, level + 2),
                _walk(value, order, queue, unordered, level + 2),
            ]
        )
    return out
