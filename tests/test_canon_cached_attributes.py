"""What a class caches on its objects is not part of what they freeze to.

A ``functools.cached_property`` (or a library's ``cachedproperty``/``reify``) keeps its
value in the object's ``__dict__`` once read: whether it is there says which code read it
first.  py-moneyed keeps its currencies in a module-level registry, so a call returning one
froze with its ``name`` under the whole suite (an earlier test had read it) and without it
in the verifying interpreter, and every such row was refused.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Generic, TypeVar

import pytest

from helpers import project_module, run_cli, run_pytest, write_files
from lockstep import canon

MODULE = "cached_attrs_probe"

SOURCE = """
import functools


class reify:  # a library's caching descriptor, as Pyramid's
    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.__name__] = self.fn(obj)
        return value


class Currency:
    def __init__(self, code):
        self.code = code

    @functools.cached_property
    def name(self):
        return {"USD": "US Dollar", "EUR": "Euro"}[self.code]

    @reify
    def symbol(self):
        return {"USD": "$", "EUR": "E"}[self.code]

    def describe(self):
        return self.code


class Priced(Currency):
    pass
"""


@pytest.fixture
def module(tmp_path: Path) -> Iterator[types.ModuleType]:
    with project_module(tmp_path, MODULE, SOURCE) as module:
        yield module


@pytest.mark.parametrize("cls", ["Currency", "Priced"])
def test_an_object_freezes_alike_whether_its_cached_attributes_were_read(
    module: types.ModuleType, cls: str
) -> None:
    fresh = getattr(module, cls)("USD")
    read = getattr(module, cls)("USD")
    assert (read.name, read.symbol) == ("US Dollar", "$")
    assert "name" in vars(read) and "symbol" in vars(read)
    assert canon.encode(read) == canon.encode(fresh)
    thawed = canon.decode(canon.encode(read))
    assert "name" not in vars(thawed)
    assert (thawed.name, thawed.symbol) == ("US Dollar", "$")  # computed again when read


def test_what_is_not_a_cache_still_freezes(module: types.ModuleType) -> None:
    """Another attribute, and one that shadows a method, are the object's own state."""
    a, b = module.Currency("USD"), module.Currency("USD")
    b.describe = "set on the object"
    b.extra = 1
    assert canon.encode(a) != canon.encode(b)
    assert canon.encode(module.Currency("USD")) != canon.encode(module.Currency("EUR"))


def test_reading_a_cached_attribute_is_no_mutation(module: types.ModuleType) -> None:
    currency = module.Currency("EUR")
    before = canon.encode(currency)
    assert currency.name == "Euro"
    assert canon.encode(currency) == before


def test_a_functools_cached_property_is_found_through_the_bases() -> None:
    from lockstep.canon.cached_attributes import cached_names

    class Base:
        @functools.cached_property
        def total(self) -> int:
            return 1

        @property
        def plain(self) -> int:
            return 2

    class Child(Base):
        pass

    class Shadowed(Base):
        total = 3  # a plain class attribute now: the object's value would be its own

    assert cached_names(Child) == frozenset({"total"})
    assert cached_names(Shadowed) == frozenset()


REGISTRY = """
import functools


class Currency:
    def __init__(self, code, digits):
        self.code = code
        self.digits = digits

    @functools.cached_property
    def name(self):
        return {"USD": "US Dollar", "JPY": "Yen"}[self.code]


CURRENCIES = {"USD": Currency("USD", 2), "JPY": Currency("JPY", 0)}


def get_currency(code):
    return CURRENCIES[str(code).upper()]
"""


def test_a_registry_whose_objects_cache_what_tests_read_records_and_guards(
    tmp_path: Path,
) -> None:
    """The py-moneyed shape: an earlier test reads a registry object's cached ``name``; a
    later test's call returns that object.  Its rows are written (they reproduce in the
    verifying interpreter, which never read ``name``), replay is green, and a one-line
    change to the function is red."""
    root = tmp_path / "proj"
    write_files(
        root,
        {
            "money/__init__.py": "",
            "money/classes.py": REGISTRY,
            "tests/test_money.py": (
                "from money import classes\n\n\n"
                "def test_a_names():\n"
                "    assert classes.CURRENCIES['USD'].name == 'US Dollar'\n\n\n"
                "def test_b_get():\n"
                "    assert classes.get_currency('usd').digits == 2\n"
                "    assert classes.get_currency('JPY').digits == 0\n"
            ),
            "lockstep.toml": ('[[ledger]]\nname = "get"\ntarget = "money.classes:get_currency"\n'),
        },
    )
    result = run_pytest(
        "-q", "tests", "--lockstep-record", cwd=root, plugins=("lockstep.pytest.plugin",)
    )
    assert result.code == 0, result.output
    assert "refused 0" in result.stdout and "added 2" in result.stdout, result.stdout
    assert run_cli("replay", cwd=root).code == 0
    source = root / "money" / "classes.py"
    source.write_text(REGISTRY.replace("str(code).upper()", "str(code)"))
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output


T = TypeVar("T")


class Box(Generic[T]):
    def __init__(self) -> None:
        self.items: list[T] = []


def test_a_generic_object_is_frozen_without_the_alias_it_was_made_through() -> None:
    """``Box[int]()`` keeps ``__orig_class__`` (a typing alias, no state of the box):
    every call handed markdown-it's ``Ruler[T]()`` was skipped for it."""
    canon.allow_callables_from(__name__)
    box = Box[int]()
    box.items.append(1)
    assert "__orig_class__" in vars(box)
    assert canon.dumps(box) == canon.dumps(_plain_box([1]))
    assert canon.loads(canon.dumps(box)).items == [1]


def _plain_box(items: list[int]) -> Box[int]:
    box: Box[int] = Box()
    box.items.extend(items)
    return box
