"""Which targets can reach the code of their package that builds a set.

Rows whose outcome holds texts a set could have ordered are replayed under four more hash
seeds, each a fork per ledger at the recording's end.  semver builds one set, in
``Version.replace``; read package-wide, that made the rows of 16 of its 47 ledgers
suspects (66 more forks).  Read by what each target can reach, three remain.  The
reading must only ever err toward verifying more: each case below is a way code reaches
a set without naming the function that builds it.
"""

from __future__ import annotations

import importlib
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import pytest_in, rows_of, write_files
from lockstep.oracles.ledger import set_reach
from lockstep.oracles.ledger.set_reach import target_reaches_sets

_NAMES = itertools.count()


@pytest.fixture
def package(tmp_path: Path) -> Iterator[object]:
    """``package(files)``: a package of those modules, imported; its name is returned."""
    made: list[str] = []

    def make(files: dict[str, str]) -> str:
        name = f"reach_pkg_{next(_NAMES)}"
        write_files(tmp_path, {f"{name}/{path}": text for path, text in files.items()})
        made.append(name)
        importlib.invalidate_caches()
        for module in files:
            dotted = module.removesuffix(".py").replace("/", ".").removesuffix("__init__")
            importlib.import_module(f"{name}.{dotted}".rstrip("."))
        return name

    sys.path.insert(0, str(tmp_path))
    set_reach.forget()
    try:
        yield make
    finally:
        sys.path.remove(str(tmp_path))
        for name in made:
            for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
                del sys.modules[module]
        set_reach.forget()


TAGS = """
def label(items):
    return ", ".join(set(items))


def shout(word):
    return word.upper() + ", " + word.upper()


def labels_of(groups):
    return [label(group) for group in groups]


def counted(items):
    return f"{len(items)} items: " + ", ".join(items)
"""


def test_a_target_reaches_what_it_calls_by_name(package) -> None:
    name = package({"__init__.py": "", "tags.py": TAGS})
    assert target_reaches_sets(f"{name}.tags:label")
    assert target_reaches_sets(f"{name}.tags:labels_of")  # through label
    assert not target_reaches_sets(f"{name}.tags:shout")
    assert not target_reaches_sets(f"{name}.tags:counted")


METHODS = """
import functools

UNITS = {"kg", "g"}


def _wrapping(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


class Scale:
    def __init__(self, unit):
        self.unit = unit

    def units(self):
        return ", ".join(UNITS)

    def describe(self):
        return "scale in " + self.units()

    @_wrapping
    def name(self, replace=None):
        return f"scale {self.unit}" if replace is None else replace

    def keys_gone(self, a, b):
        return " ".join(a.keys() - b.keys())
"""


def test_methods_module_sets_views_and_wrappers(package) -> None:
    name = package({"__init__.py": "", "scale.py": METHODS})
    target = f"{name}.scale:Scale"
    assert target_reaches_sets(f"{target}.units")  # a module's set, by its name
    assert target_reaches_sets(f"{target}.describe")  # self.units()
    assert target_reaches_sets(f"{target}.keys_gone")  # a.keys() - b.keys() is a set
    # a wrapping decorator and a parameter named like nothing that builds a set
    assert not target_reaches_sets(f"{target}.name")


STATE = """
class Catalog:
    def load(self, names):
        self._names = set(names)
        return self

    def names(self):
        return ", ".join(self._names)

    def size(self):
        return f"{self._count} names"


CACHE = {}


def remember(key, names):
    CACHE[key] = list(frozenset(names))


def recall(key):
    return CACHE[key]


class Tags(set):
    def listed(self):
        return list(self)
"""


def test_what_one_call_leaves_in_an_attribute_or_a_global_reaches_its_reader(package) -> None:
    """``load`` keeps a set in ``self._names``; ``names``, called after it by the test,
    joins it in the seed's order without ever naming ``load``."""
    name = package({"__init__.py": "", "catalog.py": STATE})
    assert target_reaches_sets(f"{name}.catalog:Catalog.names")
    assert target_reaches_sets(f"{name}.catalog:recall")


def test_a_subclass_of_set_counts_for_every_target(package) -> None:
    name = package({"__init__.py": "", "catalog.py": STATE})
    assert target_reaches_sets(f"{name}.catalog:Tags.listed")
    assert target_reaches_sets(f"{name}.catalog:Catalog.size")


def test_a_package_imported_anew_is_read_anew(package, tmp_path: Path) -> None:
    name = package({"__init__.py": "", "tags.py": TAGS})
    assert not target_reaches_sets(f"{name}.tags:shout")
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]
    write_files(tmp_path, {f"{name}/tags.py": "def shout(word):\n    return str(set(word))\n"})
    importlib.invalidate_caches()
    importlib.import_module(f"{name}.tags")
    assert target_reaches_sets(f"{name}.tags:shout")


def test_a_module_of_the_package_imported_later_is_read_then(package, tmp_path: Path) -> None:
    """The reading is kept while ``sys.modules`` holds what it was read from; a module of
    the package imported since (a lazy import) is read with the rest at the next ask."""
    name = package({"__init__.py": "", "tags.py": "def shout(word):\n    return late(word)\n"})
    assert not target_reaches_sets(f"{name}.tags:shout")
    assert not target_reaches_sets(f"{name}.tags:shout")  # kept: nothing was imported
    write_files(tmp_path, {f"{name}/lazy.py": "def late(word):\n    return str(set(word))\n"})
    importlib.invalidate_caches()
    importlib.import_module(f"{name}.lazy")
    assert target_reaches_sets(f"{name}.tags:shout")


REGISTRY = """
HANDLERS = []


def register(fn):
    HANDLERS.append(fn)
    return fn


@register
def tags(text):
    return ", ".join(set(text.split()))


def handle(text):
    return [handler(text) for handler in HANDLERS]


def plain(text):
    return text.title()
"""


def test_a_registry_filled_by_a_decorator_reaches_what_it_holds(package) -> None:
    name = package({"__init__.py": "", "handlers.py": REGISTRY})
    assert target_reaches_sets(f"{name}.handlers:handle")
    assert not target_reaches_sets(f"{name}.handlers:plain")


DYNAMIC = """
def tags(items):
    return ", ".join(frozenset(items))


def by_name(kind, items):
    return globals()[kind](items)


def by_attribute(obj, kind):
    return getattr(obj, "as_" + kind)()


def literal(obj):
    return getattr(obj, "title")()
"""


def test_a_call_by_a_computed_name_may_reach_anything(package) -> None:
    name = package({"__init__.py": "", "dynamic.py": DYNAMIC})
    assert target_reaches_sets(f"{name}.dynamic:by_name")
    assert target_reaches_sets(f"{name}.dynamic:by_attribute")
    assert not target_reaches_sets(f"{name}.dynamic:literal")


DUNDER = """
class Bag:
    def __init__(self, items):
        self.items = items

    def __str__(self):
        return ", ".join({*self.items})


def describe(bag):
    return "bag of " + format(bag)
"""


def test_a_dunder_that_builds_a_set_counts_for_every_target(package) -> None:
    """``format(bag)`` runs ``__str__`` without naming it: any call of the package may."""
    name = package(
        {"__init__.py": "", "bag.py": DUNDER, "other.py": "def one():\n    return 'a b'\n"}
    )
    assert target_reaches_sets(f"{name}.other:one")
    assert target_reaches_sets(f"{name}.bag:describe")


ACROSS = """
from .tags import label as joined
from . import tags


def via_alias(items):
    return joined(items)


def via_module(items):
    return tags.label(items)


if __name__ == "__main__":
    print(tags.label(["a", "b"]))


def unrelated():
    return "a b"
"""


def test_imports_carry_reach_across_modules(package) -> None:
    name = package({"__init__.py": "", "tags.py": TAGS, "use.py": ACROSS})
    assert target_reaches_sets(f"{name}.use:via_alias")
    assert target_reaches_sets(f"{name}.use:via_module")
    assert not target_reaches_sets(f"{name}.use:unrelated")  # the __main__ block is no call


def test_what_cannot_be_read_counts_as_reaching(package) -> None:
    name = package(
        {
            "__init__.py": "import functools\n\nfrom .tags import shout\n\n"
            "loud = functools.partial(shout)\n",
            "tags.py": TAGS,
        }
    )
    assert target_reaches_sets(f"{name}:loud")  # no code of its own to read
    assert target_reaches_sets(f"{name}.tags:missing")
    assert target_reaches_sets("nowhere_at_all:thing")
    assert not target_reaches_sets(f"{name}:shout")  # imported: read where it is defined


LOGGED = """
import os


def _log(items):
    with open(os.environ["REPLAY_LOG"], "a") as f:
        f.write((os.environ.get("PYTHONHASHSEED") or "run") + " " + repr(items) + "\\n")


def tidy(items):
    _log(items)
    return sorted(set(items))  # texts in order: a seed suspect (sorted, so it holds)


def greet(names):
    _log(names)
    return ["hello " + name for name in names]
"""

LOGGED_TESTS = """
from shop.logged import greet, tidy


def test_tidy():
    assert tidy(["b", "a"]) == ["a", "b"]


def test_greet():
    assert greet(["ann", "bob"]) == ["hello ann", "hello bob"]
"""


def test_the_further_seeds_replay_only_targets_that_can_reach_a_set(tmp_path: Path) -> None:
    """Both outcomes hold texts in an order; only ``tidy`` can reach the package's set, so
    only its row is replayed under the four further seeds.  Both are written."""
    root = tmp_path / "proj"
    log = tmp_path / "replays.log"
    write_files(
        root,
        {
            "shop/__init__.py": "",
            "shop/logged.py": LOGGED,
            "tests/test_logged.py": LOGGED_TESTS,
            "lockstep.toml": '[[ledger]]\npackage = "shop"\n',
        },
    )
    result = pytest_in(root, "--lockstep-record", "-q", "tests", env={"REPLAY_LOG": str(log)})
    assert result.code == 0, result.output
    assert len(rows_of(root / "lockstep/shop.logged.tidy.ledger.jsonl")) == 1
    assert len(rows_of(root / "lockstep/shop.logged.greet.ledger.jsonl")) == 1
    by_seed: dict[str, list[str]] = {}
    for line in log.read_text().splitlines():
        seed, _, items = line.partition(" ")
        by_seed.setdefault(seed, []).append(items)
    assert sorted(by_seed["1"]) == ["['ann', 'bob']", "['b', 'a']"]  # the first: every row
    for further in ("3", "4", "5", "6"):
        assert by_seed[further] == ["['b', 'a']"], further


PROPERTIES = """
class Version:
    def __init__(self, major):
        self._major = major

    def tags(self):
        return ", ".join({"a", "b", str(self._major)})

    @property
    def major(self):
        return self._major

    @major.setter
    def major(self, value):
        raise AttributeError("attribute 'major' is readonly")


if True:
    def spelled(words):
        return ", ".join(words)
else:
    def spelled(words):
        return ", ".join(set(words))
"""


def test_a_getter_and_setter_of_one_name_are_each_read(package) -> None:
    """A property's setter is found where a target names it (``Version.major.fset``:
    semver's five read-only setters could not be found and so counted as reaching its
    one set, 20 more forks), and a name defined twice is read as both definitions."""
    name = package({"__init__.py": "", "version.py": PROPERTIES})
    assert target_reaches_sets(f"{name}.version:Version.tags")
    assert target_reaches_sets(f"{name}.version:spelled")  # either definition may run
    assert not target_reaches_sets(f"{name}.version:Version.major.fset")
    assert not target_reaches_sets(f"{name}.version:Version.major")
