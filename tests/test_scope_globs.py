"""The ``[gates]`` globs: anchored at the project root, ``*`` in one folder, ``**/`` across folders."""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lockstep.config import GatesSpec
from lockstep.gates.scope import is_production_path, matches


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        # anchored: a pattern without a folder matches at the root only
        ("test_*.py", "test_a.py", True),
        ("test_*.py", "pkg/test_a.py", False),
        ("conftest.py", "conftest.py", True),
        ("conftest.py", "tests/conftest.py", False),
        # **/ spans zero or more folders, so it matches at the root too
        ("**/test_*.py", "test_a.py", True),
        ("**/test_*.py", "pkg/test_a.py", True),
        ("**/test_*.py", "a/b/c/test_a.py", True),
        ("**/*.py", "a.py", True),
        ("**/*.py", "a/b/c.py", True),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("src/**/*.py", "lib/src/a.py", False),
        # * and ? stay inside one folder
        ("*.py", "a.py", True),
        ("*.py", "a/b.py", False),
        ("?.py", "a.py", True),
        ("?.py", "ab.py", False),
        ("a/?/b.py", "a/x/b.py", True),
        ("a/?/b.py", "a/x/y/b.py", False),
        ("pkg/*.py", "pkg/sub/a.py", False),
        # tests/** is everything under tests, not the folder's name alone nor a neighbour
        ("tests/**", "tests/a.py", True),
        ("tests/**", "tests/unit/deep/a.py", True),
        ("tests/**", "tests", False),
        ("tests/**", "tests_old/a.py", False),
        ("tests/**", "src/tests/a.py", False),
        # dot files are files like any other
        ("*.py", ".hidden.py", True),
        ("**/*.py", "pkg/.cache/a.py", True),
        ("tests/**", "tests/.data/x", True),
        # the whole path must match, and case counts
        ("a.py", "a.pyc", False),
        ("*.py", "A.PY", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, expected: bool) -> None:
    assert matches(path, [pattern]) is expected


def test_any_pattern_of_several_matches_and_none_matches_nothing() -> None:
    assert matches("b/c.py", ("a/*.py", "b/*.py"))
    assert not matches("c/c.py", ("a/*.py", "b/*.py"))
    assert not matches("a.py", ())


def test_default_gates_exclude_tests_at_any_depth() -> None:
    gates = GatesSpec()
    assert is_production_path(gates, "shop/prices.py")
    assert is_production_path(gates, "main.py")
    assert not is_production_path(gates, "test_prices.py")
    assert not is_production_path(gates, "shop/test_prices.py")
    assert not is_production_path(gates, "tests/helpers.py")
    assert not is_production_path(gates, "conftest.py")
    assert not is_production_path(gates, "shop/conftest.py")
    assert not is_production_path(gates, "README.md")


# --------------------------------------------------------------------------- a reference


def _reference(path: str, pattern: str) -> bool:
    """The semantics written out segment by segment, for patterns whose ``**`` is a whole segment.

    A ``**`` segment spans zero or more folders when something follows it, and
    one or more path segments when it ends the pattern; any other segment
    matches exactly one path segment (``fnmatch`` within the segment).
    """

    def walk(pat: list[str], segs: list[str]) -> bool:
        if not pat:
            return not segs
        head, rest = pat[0], pat[1:]
        if head == "**":
            least = 0 if rest else 1
            return any(walk(rest, segs[i:]) for i in range(least, len(segs) + 1))
        return bool(segs) and fnmatchcase(segs[0], head) and walk(rest, segs[1:])

    return walk(pattern.split("/"), path.split("/"))


_NAMES = st.sampled_from(["a", "b", "ab", "x.py", "test_x.py", ".h", "a.b", "tests"])
_PATHS = st.lists(_NAMES, min_size=1, max_size=5).map("/".join)
_SEGMENTS = st.one_of(
    _NAMES,
    st.sampled_from(["*", "?", "**", "*.py", "test_*.py", "a*", "?b", ".*", "*b*"]),
)
_PATTERNS = st.lists(_SEGMENTS, min_size=1, max_size=4).map("/".join)


@given(_PATHS, _PATTERNS)
@settings(max_examples=500)
def test_matching_agrees_with_the_segment_reference(path: str, pattern: str) -> None:
    assert matches(path, [pattern]) is _reference(path, pattern), (pattern, path)
