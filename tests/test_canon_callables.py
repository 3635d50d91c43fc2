"""``$fn`` and ``$iter``: callbacks freeze by name, only within an allowed package; decoding
names no code outside it; materialized iterators thaw to fresh iterators."""

from __future__ import annotations

import os
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lockstep import canon
from lockstep.errors import CanonError
from lockstep.oracles.ledger.materialize import MATERIALIZE_LIMIT, materialize


def module_level(x: int) -> int:
    return x


def test_a_module_level_function_freezes_by_name_once_its_package_is_allowed() -> None:
    with pytest.raises(CanonError, match="only from the target's own package"):
        canon.encode(module_level)
    canon.allow_callables_from(__name__)
    frozen = canon.encode(module_level)
    assert frozen == {"$fn": f"{__name__}:module_level"}
    assert canon.decode(frozen) is module_level


@pytest.mark.parametrize("value", [len, str.lower, str, sorted, Decimal, Fraction])
def test_pure_builtins_freeze_and_thaw_to_themselves(value: object) -> None:
    """Also the standard library's number types, a parser's ``converter=Decimal``."""
    assert canon.decode(canon.encode(value)) is value


@pytest.mark.parametrize("value", [lambda x: x, [].append, os.getcwd, print])
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
    ],
)
def test_decoding_never_names_code_outside_the_allowed_packages(name: str) -> None:
    with pytest.raises(CanonError, match=r"\$fn names"):
        canon.decode({"$fn": name})


@given(st.lists(st.one_of(st.integers(), st.text(), st.tuples(st.booleans()))))
def test_a_materialized_iterator_round_trips_to_a_fresh_iterator(items: list[object]) -> None:
    done = materialize((iter(items),), {"rows": (x for x in items)})
    assert done is not None and not done.too_long
    assert list(done.call_args[0]) == items and list(done.call_kwargs["rows"]) == items
    frozen = canon.encode(list(done.frozen_args))
    thawed = canon.decode(frozen)
    assert list(thawed[0]) == items


def test_an_endless_iterator_is_handed_on_lazily_and_not_frozen() -> None:
    import itertools

    done = materialize((itertools.count(),), {})
    assert done is not None and "more than" in done.too_long
    taken = list(itertools.islice(done.call_args[0], MATERIALIZE_LIMIT + 5))
    assert taken == list(range(MATERIALIZE_LIMIT + 5))


def test_an_iterator_that_raises_hands_on_its_items_then_the_error() -> None:
    def broken() -> object:
        yield 1
        raise KeyError("gone")

    done = materialize((broken(),), {})
    assert done is not None and "raised KeyError" in done.too_long
    it = done.call_args[0]
    assert next(it) == 1
    with pytest.raises(KeyError):
        next(it)


def test_a_file_or_user_iterator_is_left_alone(tmp_path: object) -> None:
    class Mine:
        def __iter__(self) -> Mine:
            return self

        def __next__(self) -> int:
            raise StopIteration

    assert materialize((Mine(),), {}) is None
