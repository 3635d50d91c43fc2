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


def share(root: JSON, level: int) -> JSON:
    """``root`` (an outermost ``$obj`` form at ``level``, in which the encoder put the
    very same form at each place an object was reached again) with every later place of
    a form turned into ``{"$same": n}``.  Nothing in ``root`` changes: each container on
    a changed path is copied.  A container past :data:`MAX_DEPTH` is refused (a form
    written at a deeper place than where it was frozen)."""
    shared: JSON = _Sharing().walk(root, level, False)
    return shared


class _Sharing:
    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}

    def walk(self, value: Any, level: int, unordered: bool) -> Any:
        t = type(value)
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
                self.seen[id(value)] = len(self.seen)
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
            if type(x) is list or type(x) is dict:
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
    found: list[Any] = []
    _number(root, False, found, 0)
    return found


def _number(value: Any, unordered: bool, found: list[Any], level: int) -> None:
    t = type(value)
    if level > MAX_DEPTH + 1 or (t is not list and t is not dict):
        return
    if t is list:
        for x in value:
            if type(x) is list or type(x) is dict:
                _number(x, unordered, found, level + 1)
        return
    if len(value) == 1:
        tag = next(iter(value))
        payload = value[tag]
        if tag in _LEAVES or tag in _UNORDERED:
            return
        if tag == "$obj" and not unordered:
            found.append(payload)
        elif tag in _PAIRS:
            _number_pairs(payload, unordered, found, level + 1)
            return
        elif tag == "$defaultdict" and type(payload) is list and len(payload) == 2:
            _number_pairs(payload[1], unordered, found, level + 2)
            return
    for _, x in _sorted_items(value):
        if type(x) is list or type(x) is dict:
            _number(x, unordered, found, level + 1)


def _number_pairs(pairs: Any, unordered: bool, found: list[Any], level: int) -> None:
    """The values of ``[key, value]`` pairs (a list at ``level``), in the pairs' order."""
    if type(pairs) is not list:
        return
    for pair in pairs:
        if type(pair) is list and len(pair) == 2:
            _number(pair[1], unordered, found, level + 2)


SAME_KEY: Final = b'"$same":'
"""What the canonical bytes of a value holding a ``$same`` contain (a string holding
these characters is written with its quotes escaped, so only the tag matches)."""


def unshared(value: JSON) -> JSON:
    """``value`` with each ``{"$same": n}`` written out as the form it names (that form's
    own ``$same`` places too): the tree form, as a ledger recorded before wrote it."""
    expanded: JSON = _expand(value, None, {}, 0)
    return expanded


def _expand(value: Any, table: list[Any] | None, memo: dict[int, Any], level: int) -> Any:
    t = type(value)
    if (t is not list and t is not dict) or level > MAX_DEPTH + 1:
        return value
    if t is list:
        return [_expand(x, table, memo, level + 1) for x in value]
    if len(value) == 1:
        tag = next(iter(value))
        payload = value[tag]
        if tag == "$same" and table is not None:
            if type(payload) is not int or not 0 <= payload < len(table):
                return value
            target = table[payload]
            done = memo.get(id(target))
            if done is None:
                done = memo[id(target)] = None  # a form naming itself stays as it is
                done = memo[id(target)] = {"$obj": _expand(target, table, memo, level + 1)}
            return value if done is None else done
        if tag == "$obj" and table is None:
            inner = numbered(value)
            return {"$obj": _expand(payload, inner, {}, level + 1)}
    return {k: _expand(x, table, memo, level + 1) for k, x in value.items()}
