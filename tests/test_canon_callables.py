"""``$fn`` and ``$iter``: callbacks freeze by name, only within an allowed package; decoding
names no code outside it; materialized iterators thaw to fresh iterators."""

from __future__ import annotations

import collections
import datetime
import ipaddress
import itertools
import math
import operator
import os
import pathlib
import uuid
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockstep import canon
from lockstep.errors import CanonError
from lockstep.oracles.ledger.materialize import MATERIALIZE_LIMIT, take_lazily


def module_level(x: int) -> int:
    return x


def test_a_module_level_function_freezes_by_name_once_its_package_is_allowed() -> None:
    with pytest.raises(CanonError, match="only from the target's own package"):
        canon.encode(module_level)
    canon.allow_callables_from(__name__)
    frozen = canon.encode(module_level)
    assert frozen == {"$fn": f"{__name__}:module_level"}
    assert canon.decode(frozen) is module_level


@pytest.mark.parametrize(
    "value",
    [
        *(len, str.lower, str, sorted, Decimal, Fraction, set, reversed),
        *(operator.add, operator.not_, math.floor, math.isclose),
        *(datetime.datetime, datetime.date, datetime.timedelta, datetime.timezone),
        *(collections.OrderedDict, collections.defaultdict, collections.deque),
        *(uuid.UUID, ipaddress.ip_address, ipaddress.IPv4Network, pathlib.PurePosixPath),
    ],
)
def test_pure_builtins_freeze_and_thaw_to_themselves(value: object) -> None:
    """Also the standard library's value classes (a parser's ``converter=Decimal``,
    croniter's ``ret_type=datetime``, a ``factory=OrderedDict``), ``math``'s functions
    and the operator module's (``reduceby(key, add, seq, set)``)."""
    assert canon.decode(canon.encode(value)) is value


@pytest.mark.parametrize("name", ["_operator:attrgetter", "_operator:_abs", "builtins:id"])
def test_only_pure_operators_and_builtins_are_named(name: str) -> None:
    with pytest.raises(CanonError, match=r"\$fn names"):
        canon.decode({"$fn": name})


@pytest.mark.parametrize(
    "value",
    [lambda x: x, [].append, os.getcwd, print, pathlib.Path, uuid.uuid4, datetime.date.today],
)
def test_lambdas_bound_methods_and_other_builtins_are_refused(value: object) -> None:
    with pytest.raises(CanonError):
        canon.encode(value)


@pytest.mark.parametrize(
    "name",
    [
        "os:system",
        "builtins:eval",
        "builtins:__import__",
        "subprocess:run",
        "builtins:open",
        "decimal:getcontext",
        "decimal:setcontext",
        "fractions:Decimal",
        "pathlib:Path",
        "pathlib:PosixPath",
        "datetime:datetime.now",
        "math:floor.__call__",
        "collections:namedtuple",
        "uuid:uuid4",
        "ipaddress:_IPAddressBase",
        "math:__loader__",
        "cmath:__spec__",
    ],
)
def test_decoding_never_names_code_outside_the_allowed_packages(name: str) -> None:
    with pytest.raises(CanonError, match=r"\$fn names"):
        canon.decode({"$fn": name})


@given(st.lists(st.one_of(st.integers(), st.text(), st.tuples(st.booleans()))))
def test_an_iterator_handed_on_freezes_the_items_taken_and_thaws_to_them(
    items: list[object],
) -> None:
    done = take_lazily((iter(items),), {"rows": (x for x in items)}, canon.encode)
    assert done is not None
    assert list(done.call_args[0]) == items and list(done.call_kwargs["rows"]) == items
    for _, proxy in done.proxies:
        assert not proxy.why and proxy.items == items
        thawed = canon.decode({"$iter": proxy.frozen})
        assert list(thawed) == items


@given(st.lists(st.integers(), max_size=30), st.integers(0, 30))
def test_the_original_iterator_is_advanced_only_as_far_as_the_target_takes(
    items: list[int], taken: int
) -> None:
    """The caller that goes on with its iterator after the call (``consume(it, 3);
    next(it)``) finds it where the target left it, as it would unrecorded."""
    source = iter(items)
    done = take_lazily((source,), {}, canon.encode)
    assert done is not None
    handed = list(itertools.islice(done.call_args[0], taken))
    assert handed == items[:taken]
    assert list(source) == items[taken:]
    assert done.proxies[0][1].items == items[:taken]


def test_an_endless_iterator_is_taken_only_as_far_as_asked() -> None:
    source = itertools.count()
    done = take_lazily((source,), {}, canon.encode)
    assert done is not None
    assert list(itertools.islice(done.call_args[0], 4)) == [0, 1, 2, 3]
    assert next(source) == 4
    assert not done.proxies[0][1].why


def test_more_items_than_the_limit_are_all_handed_on_and_not_frozen() -> None:
    done = take_lazily((itertools.count(),), {}, canon.encode)
    assert done is not None
    taken = list(itertools.islice(done.call_args[0], MATERIALIZE_LIMIT + 5))
    assert taken == list(range(MATERIALIZE_LIMIT + 5))
    assert "more than" in done.proxies[0][1].why


def test_an_iterator_that_raises_hands_on_its_items_then_the_error() -> None:
    def broken() -> object:
        yield 1
        raise KeyError("gone")

    done = take_lazily((broken(),), {}, canon.encode)
    assert done is not None
    it = done.call_args[0]
    assert next(it) == 1
    with pytest.raises(KeyError):
        next(it)
    assert "raised KeyError" in done.proxies[0][1].why


def test_an_item_that_does_not_freeze_is_still_handed_on() -> None:
    lock = __import__("threading").Semaphore()
    done = take_lazily((iter([1, lock, 3]),), {}, canon.encode)
    assert done is not None
    assert list(done.call_args[0]) == [1, lock, 3]
    assert done.proxies[0][1].why.startswith("args[0][1]: ")


def test_a_file_or_user_iterator_is_left_alone(tmp_path: object) -> None:
    class Mine:
        def __iter__(self) -> Mine:
            return self

        def __next__(self) -> int:
            raise StopIteration

    assert take_lazily((Mine(),), {}, canon.encode) is None


# ---------------------------------------------------------------- $calls: callable arguments

_ANSWERS = st.lists(
    st.tuples(st.one_of(st.integers(), st.text(max_size=5)), st.one_of(st.booleans(), st.text())),
    max_size=12,
)


@given(_ANSWERS)
def test_a_callable_handed_on_freezes_its_calls_and_thaws_to_their_answers(
    pairs: list[tuple[object, object]],
) -> None:
    """Each call the target makes reaches the original, is frozen with its answer, and the
    thawed callable answers the same questions alike (and freezes to the same calls)."""
    answers = dict(pairs)
    done = take_lazily((lambda k: answers[k],), {}, canon.encode)
    assert done is not None
    taped = done.call_args[0]
    asked = list(answers)
    assert [taped(k) for k in asked] == [answers[k] for k in asked]
    (_, proxy), *_ = done.proxies
    frozen = {"$calls": proxy.frozen}
    thawed = canon.decode(frozen)
    assert canon.encode(thawed) == frozen
    assert [thawed(k) for k in asked] == [answers[k] for k in asked]
    with pytest.raises(canon.CallsPastRecorded, match="called"):
        thawed(asked[0] if asked else 0)  # once more than recorded


@given(st.lists(st.integers(), min_size=1, max_size=8), st.integers())
def test_a_thawed_callable_asked_otherwise_says_which_call_and_what(
    asked: list[int], other: int
) -> None:
    calls = [{"args": [k], "returned": k * 2} for k in asked]
    thawed = canon.decode([{"$calls": calls}], path="args")[0]
    for k in asked[:-1]:
        assert thawed(k) == k * 2
    if other == asked[-1]:
        assert thawed(other) == other * 2
        return
    with pytest.raises(canon.CallsPastRecorded) as caught:
        thawed(other)
    assert caught.value.drift() == (
        "callable argument args[0]",
        f"call {len(asked)} with ({asked[-1]})",
        f"call {len(asked)} with ({other})",
    )


@pytest.mark.parametrize(
    "payload",
    [
        {},
        [1],
        [{"args": [1]}],
        [{"args": 1, "returned": 1}],
        [{"args": [], "kwargs": [], "returned": 1}],
        [{"args": [], "returned": 1, "extra": 2}],
        [{"args": [], "raised": ["SystemExit", []]}],  # not an Exception: never raised
        [{"args": [], "raised": ["os.system", []]}],
        [{"args": [], "raised": ["ValueError", "x"]}],
        [{"args": [], "returned": {"$fn": "os:system"}}],
    ],
)
def test_a_malformed_calls_value_is_refused_when_thawed(payload: object) -> None:
    with pytest.raises(CanonError):
        canon.decode({"$calls": payload})


def test_a_recorded_builtin_exception_is_raised_again_with_its_arguments() -> None:
    def convert(text: str, base: int = 10) -> int:  # its own default: no $closure
        return int(text, base)

    done = take_lazily((convert,), {}, canon.encode)
    assert done is not None
    taped = done.call_args[0]
    with pytest.raises(ValueError) as original:
        taped("x")
    thawed = canon.decode({"$calls": done.proxies[0][1].frozen})
    with pytest.raises(ValueError) as again:
        thawed("x")
    assert again.value.args == original.value.args


def test_a_callable_proxy_compares_hashes_and_answers_as_the_original() -> None:
    def handler(x: int, by: int = 1) -> int:  # its own default: no $closure
        return x + by

    done = take_lazily((handler,), {}, canon.encode)
    assert done is not None
    taped = done.call_args[0]
    assert taped == handler and hash(taped) == hash(handler)
    assert {handler: 1}[taped] == 1
    assert taped(1) == 2
    assert not done.proxies[0][1].why
    assert taped.__name__ == "handler" and taped.__wrapped__ is handler
    # what replay has of it is its calls: a target that reads more is not recorded
    assert "read the callable's __name__" in done.proxies[0][1].why


# ------------------------------------------ a function a decorator's object keeps, by name


class _Curried:
    def __init__(self, func: object) -> None:
        self.func = func

    def __call__(self, *args: object) -> object:
        return self.func(*args)  # type: ignore[operator]


def _raw_double(x: int) -> int:
    return 2 * x


_raw_double.__qualname__ = "curried_double"
curried_double = _Curried(_raw_double)


class _Sneaky:
    """A class whose ``__dict__`` is a property: reading it would run code."""

    ran = 0

    @property
    def __dict__(self) -> dict[str, object]:  # type: ignore[override]
        _Sneaky.ran += 1
        return {"func": _raw_double}


sneaky = _Sneaky()


def test_a_function_a_decorator_object_keeps_freezes_through_the_object_s_name() -> None:
    """``@curry def double``: the module's name holds the object, which keeps the function
    as ``func``; the function freezes as ``module:double.func`` and thaws to itself."""
    canon.allow_callables_from(__name__)
    frozen = canon.encode(_raw_double)
    assert frozen == {"$fn": f"{__name__}:curried_double.func"}
    assert canon.decode(frozen) is _raw_double


def test_naming_through_an_object_reads_no_dict_a_class_computes() -> None:
    canon.allow_callables_from(__name__)
    with pytest.raises(CanonError, match=r"\$fn names"):
        canon.decode({"$fn": f"{__name__}:sneaky.func"})
    assert _Sneaky.ran == 0
    with pytest.raises(CanonError, match=r"\$fn names"):
        canon.decode({"$fn": f"{__name__}:curried_double.other"})
