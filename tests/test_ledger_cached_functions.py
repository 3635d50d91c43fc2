"""A cached function keeps its cache's API while its calls are recorded.

``functools.lru_cache`` keeps ``cache_clear``, ``cache_info`` and ``cache_parameters`` on
its type, not in a ``__dict__`` that ``functools.wraps`` copies.  Suites clear such caches
between tests (packaging's do, in fixtures): if the recording wrapper lacked them, the
suite would fail only under ``--lockstep-record`` and nothing would be recorded.
"""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, rows_of, run_cli, write_files

NAMES = """
import functools

CALLS = []


@functools.lru_cache(maxsize=32)
def canonical(name):
    CALLS.append(name)
    return name.strip().lower().replace("_", "-")


class Tags:
    @staticmethod
    @functools.cache
    def parse(text):
        CALLS.append(text)
        return tuple(text.split("-"))
"""

TESTS = """
import pytest

import names
from names import Tags, canonical


@pytest.fixture(autouse=True)
def fresh_caches():
    canonical.cache_clear()
    Tags.parse.cache_clear()
    names.CALLS.clear()
    yield


def test_canonical_is_cached():
    assert canonical(" Foo_Bar ") == "foo-bar"
    assert canonical(" Foo_Bar ") == "foo-bar"
    assert names.CALLS == [" Foo_Bar "]
    assert canonical.cache_info().hits == 1
    assert canonical.cache_parameters()["maxsize"] == 32


def test_the_cache_was_cleared_between_tests():
    assert canonical.cache_info().currsize == 0
    assert canonical("X") == "x"
    assert names.CALLS == ["X"]


def test_a_static_cached_method():
    assert Tags.parse("a-b") == ("a", "b")
    assert Tags.parse("a-b") == ("a", "b")
    assert names.CALLS == ["a-b"]
    assert Tags.parse.cache_info().currsize == 1
"""


def _project(root: Path, config: str) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": config,
            "src/names/__init__.py": NAMES,
            "tests/test_names.py": TESTS,
            "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        },
    )
    return root


def test_a_package_surface_of_cached_functions_records_as_the_suite_runs(tmp_path: Path) -> None:
    root = _project(tmp_path, '[[ledger]]\npackage = "names"\n')
    plain = pytest_in(root, "-q", "tests")
    assert plain.code == 0, plain.output
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert "3 passed" in recorded.output
    # every call is a row's call, cache hits too: the caller sees the same value
    assert len(rows_of(root / "lockstep/names.canonical.ledger.jsonl")) == 2
    assert len(rows_of(root / "lockstep/names.Tags.parse.ledger.jsonl")) == 1
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output

    source = root / "src/names/__init__.py"
    source.write_text(source.read_text().replace('replace("_", "-")', 'replace("_", "")'))
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "names.canonical" in red.stdout


def test_a_named_cached_function_keeps_its_cache_api(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        '[[ledger]]\nname = "canonical"\ntarget = "names:canonical"\n'
        '[[ledger]]\nname = "parse"\ntarget = "names:Tags.parse"\n',
    )
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    assert len(rows_of(root / "lockstep/canonical.ledger.jsonl")) == 2
    assert len(rows_of(root / "lockstep/parse.ledger.jsonl")) == 1
