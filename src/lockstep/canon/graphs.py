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
    """The objects of other libraries met while one value (an argument, a result) freezes."""

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
    numbering = _Numbering()
    numbering.walk(root, False, depth + 2)
    table: list[JSON] = []
    queue = numbering.queue
    while len(table) < len(queue):
        old = queue[len(table)]
        state = states[old]
        numbering.walk(state, False, depth + 5)
        name = qualified_name(scope.entries[old][1])
        table.append([name, {"state": state} if state is not None else {}])
    return {"$graph": [root, table]}


class _Numbering:
    r"""Renumbers the ``$node``\ s of frozen JSON in place, in first-met order of the
    written order; ``queue``: the numbers met first (in the order they were met) as they
    were numbered while freezing."""

    __slots__ = ("order", "queue", "renamed")

    def __init__(self) -> None:
        self.order: dict[int, int] = {}
        self.queue: list[int] = []
        self.renamed: set[int] = set()  # each $node object once, were one held twice

    def walk(self, value: Any, unordered: bool, level: int) -> None:
        """Walk a container at ``level``; ``unordered``: inside a set member or a dict
        key, where a node would have no canonical place."""
        t = type(value)
        if t is not list and t is not dict:
            return
        if level > MAX_DEPTH:  # a container past the limit, as the encoder and decoder count
            raise _TooDeep
        walk = self.walk
        if t is list:
            for x in value:
                if type(x) is list or type(x) is dict:
                    walk(x, unordered, level + 1)
            return
        if len(value) == 1 and self._tagged(value, unordered, level):
            return
        for key in sorted(value) if len(value) > 1 else value:
            x = value[key]
            if type(x) is list or type(x) is dict:
                walk(x, unordered, level + 1)

    def _tagged(self, value: dict[str, Any], unordered: bool, level: int) -> bool:
        """Walk a one-key object whose tag orders its parts its own way; False for any
        other object (its keys are walked in sorted order)."""
        tag = next(iter(value))
        if tag == "$node":
            self._number(value, unordered)
        elif tag in _UNORDERED:
            self.walk(value[tag], True, level + 1)
        elif tag in _PAIRS:
            self._pairs(value[tag], unordered, level + 1)
        elif tag == "$defaultdict" and type(value[tag]) is list and len(value[tag]) == 2:
            self._pairs(value[tag][1], unordered, level + 2)
        else:
            return False
        return True

    def _number(self, node: dict[str, Any], unordered: bool) -> None:
        if id(node) in self.renamed:
            return
        if unordered:
            raise Unfreezable(
                "cannot freeze an object of another library inside a set or a dict key: "
                "it has no canonical place there"
            )
        met = node["$node"]
        n = self.order.get(met)
        if n is None:
            n = self.order[met] = len(self.queue)
            self.queue.append(met)
        node["$node"] = n
        self.renamed.add(id(node))

    def _pairs(self, pairs: Any, unordered: bool, level: int) -> None:
        """The ``[key, value]`` pairs of a ``$dict``/``$counter``/``$defaultdict`` (a list
        at ``level``): keys walked as unordered places, values in the pairs' order, which
        their keys decide."""
        if level + 1 > MAX_DEPTH:
            raise _TooDeep
        for key, value in pairs:
            self.walk(key, True, level + 2)
            self.walk(value, unordered, level + 2)
