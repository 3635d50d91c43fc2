"""A recorded method answers ``inspect.getfullargspec`` as it did unrecorded.

``functools.wraps`` sets ``__wrapped__``, which ``inspect.signature`` follows and
``getfullargspec`` does not: babel's suite calls each gettext method of its
``Translations`` with the arguments its spec names, read the recording wrapper's
``(*args, **kwargs)``, called them with none and failed only under ``--lockstep-record``
(so nothing was recorded).
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path

from helpers import pytest_in, rows_of, run_cli, write_files

CATALOG = """
import functools


class Catalog:
    def __init__(self, messages):
        self.messages = dict(messages)

    def gettext(self, message):
        return self.messages.get(message, message)

    def ngettext(self, singular, plural, n=1, *, context=None):
        return singular if n == 1 else plural

    @classmethod
    def empty(cls, domain="messages"):
        return cls({})


def logged(func):
    @functools.wraps(func)
    def inner(*args, **kwargs):
        return func(*args, **kwargs)

    return inner


@logged
def shout(text):
    return text.upper()
"""

TESTS = """
import inspect

from catalog import Catalog, shout

DATA = {"message": "hello", "singular": "apple", "plural": "apples", "n": 2}


def test_each_method_called_with_the_arguments_its_spec_names():
    catalog = Catalog({"hello": "bonjour"})
    got = {}
    for name in ("gettext", "ngettext"):
        method = getattr(catalog, name)
        spec = inspect.getfullargspec(method)
        names = [a for a in spec.args if a != "self"]
        got[name] = method(*[DATA[a] for a in names])
    assert got == {"gettext": "bonjour", "ngettext": "apples"}
    assert inspect.getfullargspec(Catalog.ngettext).kwonlyargs == ["context"]
    assert inspect.getfullargspec(Catalog.empty).args == ["cls", "domain"]
    assert Catalog.empty().gettext("x") == "x"


def test_a_decorated_function_keeps_both_answers():
    assert inspect.getfullargspec(shout).varargs == "args"  # the decorator's own
    assert list(inspect.signature(shout).parameters) == ["text"]  # followed to the source
    assert shout("hi") == "HI"
"""


def test_recorded_methods_keep_the_argument_spec_the_suite_reads(tmp_path: Path) -> None:
    root = tmp_path / "catalog"
    write_files(
        root,
        {
            "lockstep.toml": '[[ledger]]\npackage = "catalog"\n',
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
            "src/catalog/__init__.py": CATALOG,
            "tests/test_catalog.py": TESTS,
        },
    )
    plain = pytest_in(root, "-q", "tests")
    assert plain.code == 0, plain.output
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert "2 passed" in recorded.output
    assert len(rows_of(root / "lockstep/catalog.Catalog.ngettext.ledger.jsonl")) == 1
    assert len(rows_of(root / "lockstep/catalog.Catalog.gettext.ledger.jsonl")) == 2
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output


def test_the_wrapper_of_a_plain_function_carries_its_own_signature() -> None:
    from lockstep.oracles.ledger.wrapping import _with_signature_of

    def area(width: int, height: int = 1, *rest: int, unit: str = "m") -> str:
        return f"{width * height}{unit}"

    @functools.wraps(area)
    def wrapper(*args: object, **kwargs: object) -> object:
        return area(*args, **kwargs)  # type: ignore[arg-type]

    assert inspect.getfullargspec(wrapper).args == []
    kept = _with_signature_of(area, wrapper)
    assert inspect.getfullargspec(kept) == inspect.getfullargspec(area)
    assert inspect.signature(kept) == inspect.signature(area)
