"""The call counter init and strength rank by: every call of a watched function, and
the calls from outside the watched code told apart from the ones it makes itself."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import write_files
from lockstep.strength.calls import CallCounter, code_of

SOURCE = """
    import functools


    def leaf(x):
        return x + 1


    def twice(x):
        return leaf(leaf(x))


    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            return fn(*args)
        return wrapper


    class Box:
        @property
        def size(self):
            return 3

        @classmethod
        def make(cls):
            return cls()

        @staticmethod
        def helper():
            return 0

        @functools.cached_property
        def cached(self):
            return 4

        @logged
        def decorated(self):
            return 5


    class reify:  # a library's caching descriptor (Pyramid's, py-moneyed's cached_property)
        def __init__(self, wrapped):
            self.wrapped = wrapped

        def __get__(self, obj, owner=None):
            value = obj.__dict__[self.wrapped.__name__] = self.wrapped(obj)
            return value


    class Priced:
        @reify
        def price(self):
            return 6


    BOX = Box()
    make_box = BOX.make
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ModuleType]:
    root = tmp_path_factory.mktemp("counted")
    write_files(root, {"counted/lib.py": SOURCE})
    spec = importlib.util.spec_from_file_location("counted_lib", root / "counted/lib.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["counted_lib"] = module
    spec.loader.exec_module(module)
    return root / "counted", module


@settings(max_examples=25, deadline=None)
@given(outside=st.integers(0, 20), through=st.integers(0, 20))
def test_calls_from_outside_and_from_inside_are_counted_apart(
    lib: tuple[Path, ModuleType], outside: int, through: int
) -> None:
    folder, module = lib
    with CallCounter([folder]) as counter:
        for _ in range(outside):
            module.leaf(1)
        for _ in range(through):
            module.twice(1)
    leaf, twice = module.leaf.__code__, module.twice.__code__
    assert counter.calls[leaf] == outside + 2 * through
    assert counter.from_outside[leaf] == outside
    assert counter.calls[twice] == counter.from_outside[twice] == through
    assert counter.by_name()[(folder.resolve() / "lib.py", "leaf")] == outside + 2 * through


def test_code_outside_the_watched_folders_is_not_counted(
    lib: tuple[Path, ModuleType], tmp_path: Path
) -> None:
    _, module = lib
    with CallCounter([tmp_path]) as counter:
        module.twice(1)
    assert not counter.calls
    assert sys.getprofile() is None  # the hook is gone once the block ends


def test_code_of_finds_the_function_a_member_runs(lib: tuple[Path, ModuleType]) -> None:
    _, module = lib
    box = module.Box
    held = box.__dict__
    assert code_of(held["size"]) is held["size"].fget.__code__
    assert code_of(held["make"]) is held["make"].__func__.__code__
    assert code_of(held["helper"]) is held["helper"].__func__.__code__
    assert code_of(held["cached"]) is held["cached"].func.__code__
    assert code_of(held["decorated"]).co_qualname == "Box.decorated"  # type: ignore[union-attr]
    assert code_of(module.make_box) is held["make"].__func__.__code__  # a bound method
    assert (
        code_of(module.Priced.__dict__["price"]) is module.Priced.__dict__["price"].wrapped.__code__
    )
    assert code_of(42) is None


def test_a_cached_attribute_read_from_outside_counts_from_outside(
    lib: tuple[Path, ModuleType],
) -> None:
    """Its function is called by the descriptor's ``__get__``, which is watched code when
    the descriptor is the package's own: the read's site is the caller that counts."""
    folder, module = lib
    with CallCounter([folder]) as counter:
        read = (module.Priced().price, module.Box().cached)
    assert read == (6, 4)
    price = module.Priced.__dict__["price"].wrapped.__code__
    cached = module.Box.__dict__["cached"].func.__code__
    assert counter.from_outside[price] == counter.calls[price] == 1
    assert counter.from_outside[cached] == counter.calls[cached] == 1


def test_a_decorated_member_called_from_outside_counts_from_outside(
    lib: tuple[Path, ModuleType],
) -> None:
    """dateutil's ``isoparse`` sits behind a ``functools.wraps`` decorator of its own module:
    the wrapper is watched code, and init called the member never called from outside."""
    folder, module = lib
    box = module.Box()
    with CallCounter([folder]) as counter:
        assert box.decorated() == 5
        assert box.decorated() == 5
        module.twice(1)  # a plain call inside the package still counts from inside
    decorated = code_of(module.Box.__dict__["decorated"])
    assert decorated is not None and decorated.co_name == "decorated"
    assert counter.calls[decorated] == counter.from_outside[decorated] == 2
    assert counter.from_outside[module.leaf.__code__] == 0


def test_a_module_importing_under_the_counter_keeps_its_comprehensions(tmp_path: Path) -> None:
    """Python 3.12 inlines a comprehension into the module's frame; reading that frame's
    variables from the profile hook (to tell a decorator's wrapper) broke it: hyperlink's
    suite failed to import under ``lockstep init``."""
    write_files(
        tmp_path,
        {
            "inlined/mod.py": (
                "def f(s):\n    return s\n\n\n"
                'f("x")\n'
                'TABLE = dict([((a + b).upper(), 1) for a in "ab" for b in "cd"])\n'
            )
        },
    )
    spec = importlib.util.spec_from_file_location("inlined_mod", tmp_path / "inlined/mod.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with CallCounter([tmp_path / "inlined"]):
        spec.loader.exec_module(module)
    assert module.TABLE == {"AC": 1, "AD": 1, "BC": 1, "BD": 1}


def test_a_generator_counts_once_when_it_starts_not_at_each_resumption(tmp_path: Path) -> None:
    module = _loaded(
        tmp_path,
        "gens",
        "import contextlib\n\n\n"
        "def numbers():\n    yield 1\n    yield 2\n    yield 3\n\n\n"
        "@contextlib.contextmanager\n"
        "def indented():\n    yield 4\n",
    )
    with CallCounter([tmp_path / "gens"]) as counter:
        assert list(module.numbers()) == [1, 2, 3]
        assert list(module.numbers()) == [1, 2, 3]
        with module.indented():
            pass
    numbers = module.numbers.__code__
    indented = module.indented.__wrapped__.__code__
    assert counter.calls[numbers] == counter.from_outside[numbers] == 2
    assert counter.calls[indented] == 1


def test_a_call_through_functools_counts_where_the_package_called_it(tmp_path: Path) -> None:
    """``total_ordering``'s ``__le__`` is functools' code: a call of ``__lt__`` it makes for
    the package's own comparison is the package's, as the recording sees it."""
    module = _loaded(
        tmp_path,
        "ordered",
        "import functools\n\n\n"
        "@functools.total_ordering\n"
        "class Ver:\n"
        "    def __init__(self, n):\n        self.n = n\n\n"
        "    def __eq__(self, other):\n        return self.n == other.n\n\n"
        "    def __lt__(self, other):\n        return self.n < other.n\n\n\n"
        "def newest(a, b):\n    return b if a <= b else a\n",
    )
    one, two = module.Ver(1), module.Ver(2)
    with CallCounter([tmp_path / "ordered"]) as counter:
        for _ in range(3):
            assert module.newest(one, two) is two
        assert one <= two and not two <= one
    lt = module.Ver.__lt__.__code__
    assert counter.calls[lt] == 5
    assert counter.from_outside[lt] == 2
    assert counter.from_outside[module.newest.__code__] == 3


def _loaded(root: Path, folder: str, source: str) -> ModuleType:
    """The module ``source``, written to ``root/folder/mod.py`` and imported from there."""
    write_files(root, {f"{folder}/mod.py": source})
    spec = importlib.util.spec_from_file_location(f"{folder}_mod", root / folder / "mod.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
