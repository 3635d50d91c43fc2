"""Hypothesis strategies for inputs shaped like the recorded ones.

A recorded call says more about what the target receives than its annotations
do: which types appear in each argument, how long the strings are and which
characters they use, how big the numbers and containers get.  Each argument slot
draws from

* the recorded values themselves (copied: a target may mutate its input);
* values of the same types and shapes, over the recorded alphabets and ranges
  widened by the boundary values (0, -1, empty) and the source's constants;
* for strings, the source's literals whole, as prefixes and suffixes around
  recorded or random text (with or without whitespace between), and under case changes and a few characters whose
  case mapping is special (``ß``, ``İ``, ``ſ``), because ``lower`` and
  ``casefold`` part exactly there;
* ``st.from_type`` of the parameter's type hint, when it has one.

Hypothesis is used for what it is best at: drawing structured values with a
bias towards small and boundary ones, deterministically under a seed, and
shrinking a failing one.
"""

from __future__ import annotations

import copy
import inspect
import string
import typing
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from typing import Any, Final

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from lockstep.mine.constants import Constants
from lockstep.oracles.mining import Call

SPECIAL_CHARS: Final = "ßİıſﬁΣςµÅé"
"""Characters whose ``lower``/``upper``/``casefold`` differ or change length."""
MAX_TEXT: Final = 40
MAX_ITEMS: Final = 8
MAX_DEPTH: Final = 3
_CASINGS: Final[tuple[Callable[[str], str], ...]] = (
    str.upper,
    str.lower,
    str.title,
    str.casefold,
    lambda s: f" {s} ",
)


def _copied(values: Sequence[Any]) -> SearchStrategy[Any]:
    """The recorded values themselves, each draw a fresh copy."""
    return st.sampled_from(list(values)).map(copy.deepcopy)


def _distinct(values: Sequence[Any]) -> list[Any]:
    seen: dict[tuple[type, str], Any] = {}
    for v in values:
        seen.setdefault((type(v), repr(v)), v)
    return list(seen.values())


JOINTS: Final = (" ", "\t", "\u00a0")
"""Whitespace put between a source literal and the text around it, half of the time: legacy
parsers differ exactly on whether ``"12 %"`` is ``"12%"``."""
NUMERIC_WORDS: Final = ("0", "1", "7", "12", "-1", "0.5", "100")
"""Number-like text put between the source's prefixes and suffixes (``"12%"``, ``"$7"``)."""


def text_like(samples: Sequence[str], pool: Constants) -> SearchStrategy[str]:
    """Strings like ``samples``: their alphabet, lengths, and the source's literals."""
    words = list(dict.fromkeys([*samples, *pool.strings]))
    alphabet = sorted(set("".join(words)) | set(string.digits) | set(" .-") | set(SPECIAL_CHARS))
    longest = min(MAX_TEXT, max((len(s) for s in samples), default=8) + 4)
    random_text = st.text(alphabet=st.sampled_from(alphabet), max_size=longest)
    known = st.sampled_from(words) if words else random_text
    numeric = st.one_of(
        st.integers(0, 1000).map(str),
        st.integers(-1000, -1).map(str),
        st.decimals(-1000, 1000, places=2, allow_nan=False).map(str),
    )
    body = st.one_of(random_text, numeric, known)
    joint = st.one_of(st.just(""), st.sampled_from(JOINTS))
    composed = st.builds(
        lambda p, a, m, b, s: p + a + m + b + s,
        _affix(pool.prefixes, pool),
        joint,
        body,
        joint,
        _affix(pool.suffixes, pool),
    )
    cased = st.builds(lambda s, f: f(s), body, st.sampled_from(_CASINGS))
    return st.one_of(random_text, composed, known, cased)  # simplest first: see values_like


def _affix(specific: Sequence[str], pool: Constants) -> SearchStrategy[str]:
    """Nothing, an ``startswith``/``endswith`` operand, or any literal, about equally often."""
    parts: list[SearchStrategy[str]] = [st.just("")]
    if specific:
        parts.append(st.sampled_from(list(specific)))
    if pool.strings:
        parts.append(st.sampled_from(list(pool.strings)))
    return st.one_of(parts)


def _ints(samples: Sequence[int], pool: Constants) -> SearchStrategy[int]:
    lo, hi = min(samples), max(samples)
    span = max(16, hi - lo)
    edges = sorted({0, 1, -1, lo, hi, lo - 1, hi + 1, *pool.ints})
    return st.one_of(st.sampled_from(edges), st.integers(lo - span, hi + span))


def _floats(samples: Sequence[float], pool: Constants) -> SearchStrategy[float]:
    finite = [x for x in samples if x == x and abs(x) != float("inf")] or [0.0]
    lo, hi = min(finite), max(finite)
    span = max(1.0, hi - lo)
    edges = [0.0, -0.0, 1.0, -1.0, lo, hi, *pool.floats, *(float(n) for n in pool.ints[:50])]
    return st.one_of(st.sampled_from(edges), st.floats(lo - span, hi + span, allow_nan=False))


def _decimals(samples: Sequence[Decimal]) -> SearchStrategy[Decimal]:
    places = max((-e for d in samples if isinstance(e := d.as_tuple().exponent, int)), default=2)
    return st.decimals(allow_nan=False, allow_infinity=False, places=max(0, places))


def values_like(samples: Sequence[Any], pool: Constants, depth: int = 0) -> SearchStrategy[Any]:
    """Values of the types and shapes in ``samples`` (one argument slot, or the elements
    of the containers in it)."""
    # Hypothesis shrinks towards the first branch of a one_of: the generated values come
    # first, so a difference shrinks to the simplest value of the type ("1%"), not to the
    # first recorded value that shows it; the recorded values themselves come last.
    parts: list[SearchStrategy[Any]] = []
    by_type: dict[type, list[Any]] = {}
    for v in samples:
        by_type.setdefault(type(v), []).append(v)
    for t, vals in by_type.items():
        parts.extend(_of_type(t, vals, pool, depth))
    distinct = _distinct(samples)
    if distinct:
        parts.append(_copied(distinct))
    if not parts:
        return st.nothing()
    return st.one_of(parts)


def _of_type(t: type, vals: list[Any], pool: Constants, depth: int) -> list[SearchStrategy[Any]]:
    """Strategies for more values of exactly type ``t`` (none for a type we cannot vary:
    its recorded values are drawn as they are)."""
    scalar: dict[type, Callable[[], SearchStrategy[Any]]] = {
        bool: st.booleans,
        int: lambda: _ints(vals, pool),
        float: lambda: _floats(vals, pool),
        str: lambda: text_like(vals, pool),
        Decimal: lambda: _decimals(vals),
        type(None): st.none,
    }
    if t in scalar:
        return [scalar[t]()]
    if t is bytes:
        out = [text_like([v.decode("latin-1") for v in vals], pool).map(_latin1)]
        return out + ([st.sampled_from(list(pool.blobs))] if pool.blobs else [])
    if depth >= MAX_DEPTH:
        return []
    if t in (list, tuple):
        return [_sequences(t, vals, pool, depth)]
    if t is dict:
        return [_dicts(vals, pool, depth)]
    return []


def _latin1(text: str) -> bytes:
    return text.encode("utf-8") if any(ord(c) > 255 for c in text) else text.encode("latin-1")


def _sequences(t: type, vals: Sequence[Any], pool: Constants, depth: int) -> SearchStrategy[Any]:
    lengths = {len(v) for v in vals}
    if t is tuple and len(lengths) == 1:
        # a record-like tuple: each position keeps its own types
        (n,) = lengths
        columns = [values_like([v[i] for v in vals], pool, depth + 1) for i in range(n)]
        return st.tuples(*columns)
    elements = [e for v in vals for e in v]
    if not elements:
        return st.just(t())
    longest = min(MAX_ITEMS, max(lengths) + 2)
    items = st.lists(values_like(elements, pool, depth + 1), max_size=longest)
    return items.map(tuple) if t is tuple else items


def _records(vals: Sequence[dict[Any, Any]], pool: Constants, depth: int) -> SearchStrategy[Any]:
    """Dicts used as records (a JSON document, a row): each key keeps its own value types;
    a key every sample has is always there, one only some have is there sometimes, and
    each of the source's string literals may appear as a key of its own."""
    by_key: dict[str, list[Any]] = {}
    for v in vals:
        for k, x in v.items():
            by_key.setdefault(k, []).append(x)
    every = {k for k in by_key if all(k in v for v in vals)}
    required = {k: values_like(xs, pool, depth + 1) for k, xs in by_key.items() if k in every}
    optional = {k: values_like(xs, pool, depth + 1) for k, xs in by_key.items() if k not in every}
    values = [x for xs in by_key.values() for x in xs]
    extra = [k for k in pool.strings[:MAX_EXTRA_KEYS] if k not in by_key]
    if extra and values:
        optional.update({k: values_like(values, pool, depth + 1) for k in extra})
    return st.fixed_dictionaries(required, optional=optional)


MAX_EXTRA_KEYS: Final = 24
"""Source literals offered as extra keys of a record-like dict."""


def _dicts(vals: Sequence[dict[Any, Any]], pool: Constants, depth: int) -> SearchStrategy[Any]:
    keys = [k for v in vals for k in v]
    values = [x for v in vals for x in v.values()]
    if not keys:
        return st.just({})
    if all(isinstance(k, str) for k in keys):
        # records first: Hypothesis shrinks towards the first branch, and a record with one
        # value changed is the smallest difference a reader understands
        return st.one_of(_records(vals, pool, depth), _free_dicts(vals, keys, values, pool, depth))
    return _free_dicts(vals, keys, values, pool, depth)


def _free_dicts(
    vals: Sequence[dict[Any, Any]],
    keys: list[Any],
    values: list[Any],
    pool: Constants,
    depth: int,
) -> SearchStrategy[Any]:
    """Any keys drawn like the recorded keys, any values drawn like the recorded values."""
    key_strategy = values_like(keys, pool, depth + 1)
    if all(isinstance(k, str) for k in keys) and pool.strings:
        key_strategy = st.one_of(key_strategy, st.sampled_from(list(pool.strings)))
    longest = min(MAX_ITEMS, max(len(v) for v in vals) + 2)
    return st.dictionaries(key_strategy, values_like(values, pool, depth + 1), max_size=longest)


_SHAPED: Final = frozenset({str, bytes, int, float, bool, type(None)})
"""Hints that add nothing to :func:`values_like` but cost: ``st.from_type(str)`` draws from
all of Unicode (building Hypothesis' character tables takes seconds on first use)."""


def _hinted(target: Callable[..., Any]) -> dict[str, SearchStrategy[Any]]:
    """``st.from_type`` of each annotated parameter whose hint Hypothesis can draw."""
    try:
        hints = typing.get_type_hints(target)
    except Exception:
        return {}
    out: dict[str, SearchStrategy[Any]] = {}
    for name, hint in hints.items():
        if name == "return" or hint in _SHAPED:
            continue  # drawn from the recorded values already, over their alphabets
        try:
            strategy = st.from_type(hint)
            strategy.validate()
        except Exception:
            continue
        out[name] = strategy
    return out


def _defaults(target: Callable[..., Any]) -> dict[str, Any]:
    """Parameters with a default that a keyword can set: a recorded caller may never have
    passed one, yet its other values lead to code no recorded call reaches."""
    try:
        parameters = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return {}
    settable = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {
        p.name: p.default
        for p in parameters
        if p.kind in settable and p.default is not inspect.Parameter.empty
    }


def _parameter_names(target: Callable[..., Any]) -> list[str]:
    try:
        return list(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        return []


def inputs_like(
    seeds: Sequence[Call], pool: Constants, target: Callable[..., Any], *, hinted: bool = True
) -> SearchStrategy[Call]:
    """Calls shaped like ``seeds``: for each way the target was called (how many positional
    arguments, which keywords), each argument drawn like the recorded ones in that slot;
    with ``hinted``, also from the target's parameter type hints."""
    shapes: dict[tuple[int, tuple[str, ...]], list[Call]] = {}
    for call in seeds:
        shapes.setdefault((len(call.args), tuple(sorted(call.kwargs))), []).append(call)
    hints = _hinted(target) if hinted else {}
    names = _parameter_names(target)
    defaults = _defaults(target)

    def slot(samples: list[Any], name: str | None) -> SearchStrategy[Any]:
        like = values_like(samples, pool)
        if name is not None and name in hints:
            return st.one_of(like, hints[name])
        return like

    calls: list[SearchStrategy[Call]] = []
    for (n, keys), group in shapes.items():
        positional = [
            slot([c.args[i] for c in group], names[i] if i < len(names) else None) for i in range(n)
        ]
        keyword = {k: slot([c.kwargs[k] for c in group], k) for k in keys}
        unset = {
            name: slot([default], name)
            for name, default in defaults.items()
            if name not in keys and name not in names[:n]
        }
        calls.append(
            st.builds(
                lambda args, kwargs: Call(tuple(args), dict(kwargs)),
                st.tuples(*positional),
                st.fixed_dictionaries(keyword, optional=unset),
            )
        )
    if not calls:
        return st.nothing()
    return st.one_of(calls)


def _affixed(value: str, pool: Constants) -> list[str]:
    """The recorded value and a few number-like words with each prefix before, each suffix
    after, each also with a space between (``"12 %"``: whether it is accepted)."""
    bodies = [value, *NUMERIC_WORDS]
    return [p + j + b for j in ("", " ") for p in pool.prefixes for b in bodies] + [
        b + j + s for j in ("", " ") for s in pool.suffixes for b in bodies
    ]


def near_constant(value: Any, near: Constants) -> bool:
    """Whether ``value`` is one of the target's own literals."""
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return value in near.strings
    if isinstance(value, bytes):
        return value in near.blobs
    if isinstance(value, int):
        return value in near.ints
    return isinstance(value, float) and value in near.floats


def _candidates(value: Any, pool: Constants) -> Sequence[Any]:
    """The source constants that may stand in for ``value`` (of its type)."""
    if isinstance(value, bool):
        return ()
    if isinstance(value, str):
        return [*pool.strings, *_affixed(value, pool)]
    if isinstance(value, bytes):
        return pool.blobs
    if isinstance(value, int):
        return pool.ints
    if isinstance(value, float):
        return pool.floats
    return ()


MAX_LEAVES: Final = 32
"""Scalars inside one container argument that constants are put in place of."""
MAX_NESTED: Final = 3000
"""Most calls made by putting constants inside container arguments (a document's fields)."""

MAX_LAYOUTS: Final = 16
"""Most recorded container layouts (which fields a document has) constants are put into."""

Where = tuple[int | str, ...]
"""A path into a container: keys and indices."""


def _leaves(value: Any, where: Where = ()) -> Iterator[tuple[Where, Any]]:
    """The scalars in a (JSON-like) container, with their paths, in order."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield from _leaves(item, (*where, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _leaves(item, (*where, i))
    elif where:
        yield where, value


def _dict_nodes(value: Any, where: Where = ()) -> Iterator[tuple[Where, dict[str, Any]]]:
    if isinstance(value, dict):
        yield where, value
        for key, item in value.items():
            if isinstance(key, str):
                yield from _dict_nodes(item, (*where, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _dict_nodes(item, (*where, i))


def _at(value: Any, where: Where) -> Any:
    for step in where:
        value = value[step]
    return value


def _nested_variants(value: Any, pool: Constants) -> Iterator[Any]:
    """``value`` (a container) with one scalar replaced by a constant of its type, or one
    dict given a source literal as a key it lacks (holding that dict's first value)."""
    for where, leaf in list(_leaves(value))[:MAX_LEAVES]:
        for constant in _candidates(leaf, pool):
            if constant == leaf and type(constant) is type(leaf):
                continue  # the document as it is
            copied = copy.deepcopy(value)
            _at(copied, where[:-1])[where[-1]] = constant
            yield copied
    for where, node in list(_dict_nodes(value))[:MAX_LEAVES]:
        if not node:
            continue
        first = next(iter(node.values()))
        for key in pool.strings[:MAX_EXTRA_KEYS]:
            if key not in node:
                copied = copy.deepcopy(value)
                _at(copied, where)[key] = copy.deepcopy(first)
                yield copied


def _containers(seeds: Sequence[Call]) -> list[tuple[Call, int | str, Any]]:
    """Each container argument of a recorded layout not seen yet (documents differ in which
    fields they have), with its call and slot: where constants go inside containers."""
    found: list[tuple[Call, int | str, Any]] = []
    layouts: set[tuple[int | str, tuple[Where, ...]]] = set()
    for call in seeds:
        slots: list[tuple[int | str, Any]] = [*enumerate(call.args), *call.kwargs.items()]
        for where, value in slots:
            if not isinstance(value, dict | list) or len(layouts) >= MAX_LAYOUTS:
                continue
            layout = (where, tuple(path for path, _ in _leaves(value)))
            if layout not in layouts:
                layouts.add(layout)
                found.append((call, where, value))
    return found


def constant_calls(seeds: Sequence[Call], pool: Constants) -> list[tuple[Call, Any]]:
    """Every source constant as a whole argument, in every recorded slot of its type; then
    inside container arguments (a document's fields and keys).

    A sentinel word in a set (``x in {"n/a", "-"}``) takes one path and one result for
    every member, so coverage would keep just one of them; each member is its own
    behaviour to freeze, so each gets a row.  The other arguments are the first
    recorded call's.  Each call comes with the value put in its slot (None for a value
    put inside a container: such a call is kept only on its merits).
    """
    out: list[tuple[Call, Any]] = []
    seen: set[str] = set()
    by_shape: dict[tuple[int, tuple[str, ...]], Call] = {}
    for call in seeds:
        by_shape.setdefault((len(call.args), tuple(sorted(call.kwargs))), call)

    def add(base: Call, where: int | str, value: Any, constant: Any) -> None:
        args = list(copy.deepcopy(base.args))
        kwargs = copy.deepcopy(base.kwargs)
        if isinstance(where, int):
            args[where] = value
        else:
            kwargs[where] = value
        call = Call(tuple(args), kwargs)
        key = repr((call.args, sorted(call.kwargs.items())))
        if key not in seen:
            seen.add(key)
            out.append((call, constant))

    for base in by_shape.values():
        slots: list[tuple[int | str, Any]] = [*enumerate(base.args), *base.kwargs.items()]
        for where, value in slots:
            for constant in _candidates(value, pool):
                add(base, where, constant, constant)
    budget = MAX_NESTED
    for base, where, value in _containers(seeds):
        for variant in _nested_variants(value, pool):
            if budget <= 0:
                return out
            budget -= 1
            add(base, where, variant, None)
    return out
