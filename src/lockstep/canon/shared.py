"""The project's objects held twice inside one object: written once, ``{"$same": n}`` after.

A parsed document holds its parts twice: tomlkit's ``Container`` is a dict of its items
and keeps the same items again in its ``_body`` list, each key in both; a nested table
is a ``Container`` inside an item.  Frozen as a tree (an object reached twice, frozen
twice) every level doubled what it held: an 866-byte TOML file froze to 125 KB, a test
file's calls to rows of half a megabyte, and recording tomlkit's suite took 15 times the
suite.  Thawed, the two places held two copies, so a method that changed an item through
one of them left the other as it was, where the recorded object changed both: such rows
could not replay and were refused.

So inside the outermost object of the project being frozen (a ``$obj`` not inside another
one), an object met again after its form was complete is written once, at the first of
its places in the written order, and ``{"$same": n}`` at every later place: ``n`` counts
the ``$obj`` forms written in full before it, in the written order (an object's keys
sorted, a list in order, the pairs of a ``$dict`` in their keys' order), the outermost
object being 0.  Inside a set member or a dict key nothing is numbered or shared: they
have no place in that order (a set's members are ordered by their own bytes), so they
keep their full forms.  Thawing gives every ``{"$same": n}`` the very object form ``n``
thawed to, so the document's parts are shared again.

Identity stays outside the contract: :func:`unshared` writes each ``$same`` out as the
form it names, and a comparison whose bytes differ compares those (a ledger recorded
before, whose rows repeat such objects in full, replays green; so does a refactor that
copies where the code shared).  A cycle is still ``{"$ref": n}`` (:mod:`.objects`).
"""

from __future__ import annotations

from typing import Any, Final

from lockstep.canon._core import JSON, MAX_DEPTH, _TooDeep

_UNORDERED: Final = frozenset({"$set", "$frozenset"})
_PAIRS: Final = frozenset({"$dict", "$counter"})
_LEAVES: Final = frozenset({"$same", "$ref", "$node", "$kept"})


class Alias(dict[str, Any]):
    """What the encoder puts where an object whose form refers to an object around it is
    met again: the form it was frozen to at its first place (whose ``$ref`` numbers are
    right only there), to be written ``{"$same": n}`` by :func:`share`."""


def share(root: JSON, level: int) -> JSON | None:
    """``root`` (an outermost ``$obj`` form at ``level``, in which the encoder put the
    very same form at each place an object was reached again) with every later place of
    a form turned into ``{"$same": n}``.  Nothing in ``root`` changes: each container on
    a changed path is copied.  A container past :data:`MAX_DEPTH` is refused (a form
    written at a deeper place than where it was frozen).

    An :class:`Alias` (an object whose form refers to an object around it, met again)
    becomes ``{"$same": n}`` of the place it was frozen at, which must come first in the
    written order: the form is written there, where its references are right.  None when
    one comes before it, or inside a set member or a dict key: the caller freezes the
    value again without aliases."""
    sharing = _Sharing()
    shared: JSON = sharing.walk(root, level, False)
    return None if sharing.broken else shared


class _Sharing:
    __slots__ = ("broken", "by_payload", "seen")

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}
        self.by_payload: dict[int, int] = {}
        self.broken = False

    def walk(self, value: Any, level: int, unordered: bool) -> Any:
        t = type(value)
        if t is Alias:
            n = None if unordered else self.by_payload.get(id(value.get("$obj")))
            if n is None:
                self.broken = True
                return value
            return {"$same": n}
        if t is not list and t is not dict:
            return value
        if level > MAX_DEPTH:
            raise _TooDeep
        if t is dict and len(value) == 1:
            tag = next(iter(value))
            if tag == "$obj" and not unordered:
                n = self.seen.get(id(value))
                if n is not None:
                    return {"$same": n}
                self.seen[id(value)] = self.by_payload[id(value[tag])] = len(self.seen)
            elif tag in _UNORDERED:
                self.walk(value[tag], level + 1, True)
                return value
            elif tag in _PAIRS:
                return _with(value, tag, self._pairs(value[tag], level + 1, unordered))
            elif tag == "$defaultdict" and type(value[tag]) is list and len(value[tag]) == 2:
                factory, pairs = value[tag]
                changed = self._pairs(pairs, level + 2, unordered)
                return value if changed is pairs else {tag: [factory, changed]}
        return self._children(value, level, unordered)

    def _children(self, value: Any, level: int, unordered: bool) -> Any:
        out: Any = None
        items = enumerate(value) if type(value) is list else _sorted_items(value)
        for key, x in items:
            if type(x) is list or type(x) is dict or type(x) is Alias:
                y = self.walk(x, level + 1, unordered)
                if y is not x:
                    if out is None:
                        out = value.copy()
                    out[key] = y
        return value if out is None else out

    def _pairs(self, pairs: Any, level: int, unordered: bool) -> Any:
        """The ``[key, value]`` pairs at ``level``: keys walked as unordered places (for
        their depth only), values in the pairs' order."""
        if type(pairs) is not list:
            return pairs
        if level > MAX_DEPTH:
            raise _TooDeep
        out: Any = None
        for i, pair in enumerate(pairs):
            if type(pair) is not list or len(pair) != 2:
                continue
            if level + 1 > MAX_DEPTH:
                raise _TooDeep
            key, x = pair
            self.walk(key, level + 2, True)
            y = self.walk(x, level + 2, unordered)
            if y is not x:
                if out is None:
                    out = pairs.copy()
                out[i] = [key, y]
        return pairs if out is None else out


def _sorted_items(value: dict[str, Any]) -> list[tuple[str, Any]]:
    return sorted(value.items()) if len(value) > 1 else list(value.items())


def _with(value: dict[str, Any], tag: str, payload: Any) -> dict[str, Any]:
    return value if payload is value[tag] else {tag: payload}


def numbered(root: JSON) -> list[Any]:
    """The ``$obj`` payloads of the outermost form ``root`` in the order :func:`share`
    numbered them (``root``'s own first): what each ``{"$same": n}`` inside names."""
    return _Numbering(root).found


class _Numbering:
    """The numbered payloads, and for each the numbers of the forms around its place
    (outermost first): where a ``$ref`` leaving it pointed."""

    __slots__ = ("chains", "found", "stack")

    def __init__(self, root: JSON) -> None:
        self.found: list[Any] = []
        self.chains: list[tuple[int, ...]] = []
        self.stack: list[int] = []
        self.number(root, False, 0)

    def number(self, value: Any, unordered: bool, level: int) -> None:
        t = type(value)
        if level > MAX_DEPTH + 1 or (t is not list and t is not dict):
            return
        if t is list:
            for x in value:
                if type(x) is list or type(x) is dict:
                    self.number(x, unordered, level + 1)
            return
        pushed = False
        if len(value) == 1:
            tag = next(iter(value))
            if self.tagged(tag, value[tag], unordered, level):
                return
            if tag == "$obj" and not unordered:
                self.chains.append(tuple(self.stack))
                self.stack.append(len(self.found))
                self.found.append(value[tag])
                pushed = True
        for _, x in _sorted_items(value):
            if type(x) is list or type(x) is dict:
                self.number(x, unordered, level + 1)
        if pushed:
            self.stack.pop()

    def tagged(self, tag: str, payload: Any, unordered: bool, level: int) -> bool:
        """Number inside a tag whose payload is not walked key by key; whether it was one."""
        if tag in _LEAVES or tag in _UNORDERED:
            return True
        if tag in _PAIRS:
            self.pairs(payload, unordered, level + 1)
            return True
        if tag == "$defaultdict" and type(payload) is list and len(payload) == 2:
            self.pairs(payload[1], unordered, level + 2)
            return True
        return False

    def pairs(self, pairs: Any, unordered: bool, level: int) -> None:
        """The values of ``[key, value]`` pairs (a list at ``level``), in the pairs' order."""
        if type(pairs) is not list:
            return
        for pair in pairs:
            if type(pair) is list and len(pair) == 2:
                self.number(pair[1], unordered, level + 2)


SAME_KEY: Final = b'"$same":'
"""What the canonical bytes of a value holding a ``$same`` contain (a string holding
these characters is written with its quotes escaped, so only the tag matches)."""


def unshared(value: JSON) -> JSON:
    """``value`` with each ``{"$same": n}`` written out as the form it names (that form's
    own ``$same`` places too): the tree form, as a ledger recorded before wrote it.

    A ``$ref`` in the form written out that points to an object around the form's own
    place (a parser pointing back at its document) is renumbered for the new place, when
    that object is around it there too: the tree form had it so."""
    expanded: JSON = _Expander().expand(value, 0)
    return expanded


def same_unshared(a: JSON, b: JSON) -> bool:
    """Whether :func:`unshared` makes ``a`` and ``b`` the same canonical bytes, compared as
    the graphs it builds rather than as the text they stand for.

    Written out, a form is one object shared by each of its places, so a document whose
    parts share parts at every level is a small graph standing for a tree twice as large
    per level: marshmallow's nested schemas were compared for 86 s, writing the trees out.
    Walked in pairs of places, each pair of shared objects is compared once.  As the
    canonical bytes have it: a dict's keys in any order, a list's items in order, a
    scalar by its type and value (``1``, ``1.0`` and ``true`` differ, so do ``0.0`` and
    ``-0.0``)."""
    return _same_graphs(unshared(a), unshared(b))


def _same_graphs(a: Any, b: Any) -> bool:
    seen: set[tuple[int, int]] = set()
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if x is y:
            continue
        if isinstance(x, dict):
            if not isinstance(y, dict) or len(x) != len(y):
                return False
            if (id(x), id(y)) in seen:
                continue
            seen.add((id(x), id(y)))  # both are kept alive by the graphs: ids stay theirs
            for key, item in x.items():
                if key not in y:
                    return False
                pending.append((item, y[key]))
        elif isinstance(x, list | tuple):
            if not isinstance(y, list | tuple) or len(x) != len(y):
                return False
            if (id(x), id(y)) in seen:
                continue
            seen.add((id(x), id(y)))
            pending.extend(zip(x, y, strict=True))
        elif not _same_scalar(x, y):
            return False
    return True


def _same_scalar(x: Any, y: Any) -> bool:
    if type(x) is not type(y):
        return False
    if type(x) is float:
        return bool(x.hex() == y.hex())  # every bit: 0.0 and -0.0 are written apart
    return bool(x == y)


class _Expander:
    __slots__ = ("busy", "chains", "contexts", "index", "memo", "stack", "table")

    def __init__(self) -> None:
        self.table: list[Any] | None = None
        self.chains: list[tuple[int, ...]] = []
        self.index: dict[int, int] = {}
        self.memo: dict[int, Any] = {}
        self.busy: set[int] = set()
        self.stack: list[int] = []
        self.contexts: list[tuple[int, int]] = []
        """Each form being written out at another place: (its number, the length of
        the stack at that place)."""

    def expand(self, value: Any, level: int) -> Any:
        t = type(value)
        if (t is not list and t is not dict) or level > MAX_DEPTH + 1:
            return value
        if t is list:
            return [self.expand(x, level + 1) for x in value]
        if len(value) == 1:
            tag = next(iter(value))
            payload = value[tag]
            if tag == "$same" and self.table is not None:
                return self.same(value, payload, level)
            if tag == "$ref" and self.contexts:
                return self.ref(value, payload)
            if tag == "$obj":
                if self.table is None:
                    numbering = _Numbering(value)
                    self.table, self.chains = numbering.found, numbering.chains
                    self.index = {id(p): n for n, p in enumerate(self.table)}
                n = self.index.get(id(payload))
                if n is not None:
                    self.stack.append(n)
                    try:
                        return {"$obj": self.expand(payload, level + 1)}
                    finally:
                        self.stack.pop()
        return {k: self.expand(x, level + 1) for k, x in value.items()}

    def same(self, value: Any, n: Any, level: int) -> Any:
        assert self.table is not None
        if type(n) is not int or not 0 <= n < len(self.table) or n in self.busy:
            return value  # a form naming itself stays as it is
        kept = self.memo.get(n)
        if kept is not None:
            return kept
        self.busy.add(n)
        self.contexts.append((n, len(self.stack)))
        self.stack.append(n)
        try:
            done = {"$obj": self.expand(self.table[n], level + 1)}
        finally:
            self.stack.pop()
            self.contexts.pop()
            self.busy.discard(n)
        if not _refers_out(self.table[n]):
            self.memo[n] = done  # the same wherever it is written out
        return done

    def ref(self, value: Any, r: Any) -> Any:
        """A ``$ref`` inside a form written out at another place, renumbered if it points
        to an object around the form's own place that is around the new one too."""
        n, base = self.contexts[-1]
        if type(r) is not int or r < 0:
            return value
        k = len(self.stack) - 1 - base  # objects between the form and the reference
        if r <= k:
            return value  # inside the form: the same wherever it is
        chain = self.chains[n]
        if r - k > len(chain):
            return value
        target = chain[-(r - k)]
        around = self.stack[:base]
        for j in range(len(around) - 1, -1, -1):
            if around[j] == target:
                return {"$ref": k + (base - j)}
        return value


def _refers_out(payload: Any) -> bool:
    """Whether a form's payload holds a ``$ref`` to an object around the form."""
    found = [False]

    def walk(value: Any, k: int, level: int) -> None:
        t = type(value)
        if found[0] or level > MAX_DEPTH + 1 or (t is not list and t is not dict):
            return
        if t is dict and len(value) == 1:
            tag = next(iter(value))
            if tag == "$ref":
                if type(value[tag]) is int and value[tag] > k:
                    found[0] = True
                return
            if tag == "$obj":
                walk(value[tag], k + 1, level + 1)
                return
        for x in value if t is list else value.values():
            walk(x, k, level + 1)

    walk(payload, 0, 0)
    return found[0]
