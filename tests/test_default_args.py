"""A default argument that holds a recorded member holds its wrapper while recording.

``def cached(cache, key=keys.hashkey)`` keeps the ``hashkey`` of when it was defined;
recording put a wrapper in ``keys``, and cachetools' own ``assertIs(wrapper.cache_key,
cachetools.keys.hashkey)`` failed under recording only (seven tests), so nothing was
recorded.  The originals' defaults now follow the module while the recording runs, and
are put back after.
"""

from __future__ import annotations

from pathlib import Path

from helpers import pytest_in, rows_of, write_files

KEYS = """
def hashkey(*args):
    return tuple(args)
"""

DECORATE = """
from . import keys


def cached(cache, key=keys.hashkey, *, keyword=keys.hashkey):
    def decorator(func):
        def wrapper(*args):
            k = key(*args)
            if k not in cache:
                cache[k] = func(*args)
            return cache[k]
        wrapper.cache_key = key
        wrapper.keyword = keyword
        return wrapper
    return decorator
"""

TESTS = """
from shop import keys
from shop.memo import cached


def test_the_default_key_is_the_module_one():
    wrapper = cached({})(lambda x: x * 2)
    assert wrapper.cache_key is keys.hashkey
    assert wrapper.keyword is keys.hashkey
    assert wrapper(3) == 6


def test_keys():
    assert keys.hashkey(1, 2) == (1, 2)
"""


def test_a_default_holding_a_recorded_member_is_its_wrapper_while_recording(
    tmp_path: Path,
) -> None:
    root = tmp_path / "proj"
    write_files(
        root,
        {
            # the package imports both at once, as cachetools does: memo's default is
            # taken before any member is wrapped
            "shop/__init__.py": "from . import keys, memo\n",
            "shop/keys.py": KEYS,
            "shop/memo.py": DECORATE,
            "tests/test_memo.py": TESTS,
            "lockstep.toml": '[[ledger]]\npackage = "shop"\n',
        },
    )
    result = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert result.code == 0, result.output
    assert len(rows_of(root / "lockstep/shop.keys.hashkey.ledger.jsonl")) == 1
    # and put back after: a plain run in the same interpreter sees the original again
    check = pytest_in(root, "-q", "tests")
    assert check.code == 0, check.output


def test_defaults_are_put_back_when_the_recording_ends(tmp_path: Path) -> None:
    import sys
    import types

    from lockstep.oracles.ledger.default_args import rebound_defaults

    module = types.ModuleType("defaults_pkg_probe")
    exec(
        "def original():\n    return 1\n\ndef user(f=original, *, g=original):\n    return f\n",
        module.__dict__,
    )
    module.user.__module__ = module.__name__
    module.original.__module__ = module.__name__
    sys.modules[module.__name__] = module
    try:

        def replacement() -> int:
            return 2

        original = module.original
        swapped = rebound_defaults({id(original): (original, replacement, None)})
        assert module.user.__defaults__ == (replacement,)
        assert module.user.__kwdefaults__ == {"g": replacement}
        for fn, attr, before in reversed(swapped):
            setattr(fn, attr, before)
        assert module.user.__defaults__ == (original,)
        assert module.user.__kwdefaults__ == {"g": original}
    finally:
        del sys.modules[module.__name__]
