"""The context watch names the same globals, in the same words and order, as a plain scan of
every watched global does: its pass in C only skips globals that cannot have changed.

A fake package (two modules, a class, containers, a ``threading.local``) is edited by a
random sequence of steps -- rebinding, deleting, patching with a mock, filling a registry
with words or a cache with objects, emptying, restoring -- and after every step the watch's
answer is compared with the one the full scan below gives (the loop the watch ran on every
new row before it had an index).
"""

from __future__ import annotations

import re
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any, ClassVar
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lockstep.oracles.ledger import context
from lockstep.oracles.ledger.context import ContextWatch

PKG = "ctxwatchpkg"
_MISSING = object()


def _full_scan(watch: ContextWatch) -> tuple[list[str], list[str]]:
    """Every watched global compared, one by one, with no selection first (the reference
    the watch's C-speed selection must agree with)."""
    out: list[str] = []
    grown: list[str] = []
    for w in watch.watched:
        context._compare(w, out, grown)
    return out, grown


class _Settings(threading.local):
    pass


def _module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)

    class Config:
        __module__ = name
        level = 1
        names: ClassVar[list[str]] = ["a"]
        flag = None

    module.__dict__.update(
        {
            "Config": Config,
            "WORD": "word",
            "COUNT": 3,
            "NOTHING": None,
            "REGISTRY": {"a": 1},
            "CACHE": {},
            "ITEMS": [1, 2],
            "SEEN": {"x"},
            "SETTINGS": _Settings(),
            "helper": lambda x: x,
        }
    )
    return module


@pytest.fixture
def package() -> Iterator[list[types.ModuleType]]:
    modules = [_module(PKG), _module(f"{PKG}.sub")]
    for module in modules:
        sys.modules[module.__name__] = module
    yield modules
    for module in modules:
        sys.modules.pop(module.__name__, None)
    sys.modules.pop(f"{PKG}.late", None)


_NAMES = ["WORD", "COUNT", "NOTHING", "REGISTRY", "CACHE", "ITEMS", "SEEN", "SETTINGS", "helper"]

step = st.one_of(
    st.tuples(st.just("rebind"), st.sampled_from(_NAMES), st.sampled_from(["word", 3, None])),
    st.tuples(st.just("delete"), st.sampled_from(_NAMES), st.none()),
    st.tuples(st.just("mock"), st.sampled_from(_NAMES), st.none()),
    st.tuples(st.just("restore"), st.sampled_from(_NAMES), st.none()),
    st.tuples(st.just("word"), st.sampled_from(["REGISTRY", "CACHE", "ITEMS", "SEEN"]), st.text()),
    st.tuples(st.just("object"), st.sampled_from(["REGISTRY", "CACHE", "ITEMS"]), st.text()),
    st.tuples(st.just("pop"), st.sampled_from(["REGISTRY", "CACHE", "ITEMS", "SEEN"]), st.none()),
    st.tuples(st.just("setting"), st.just("SETTINGS"), st.sampled_from(["en", "fr", None])),
    st.tuples(st.just("attr"), st.sampled_from(["level", "names", "flag"]), st.integers(0, 2)),
    st.tuples(st.just("late"), st.just(""), st.none()),
)


def _apply(
    modules: list[types.ModuleType], starts: list[dict[str, Any]], which: int, action: tuple
) -> None:
    kind, name, value = action
    module, start = modules[which], starts[which]
    ns = module.__dict__
    if kind == "rebind":
        ns[name] = value
    elif kind == "delete":
        ns.pop(name, None)
    elif kind == "mock":
        ns[name] = mock.MagicMock()
    elif kind == "restore":
        ns[name] = start[name]
    elif kind in ("word", "object"):
        item: Any = value if kind == "word" else re.compile(re.escape(value))
        target = ns.get(name)
        if type(target) is dict:
            target[value] = item
        elif type(target) is list:
            target.append(item)
        elif type(target) is set:
            target.add(value)
    elif kind == "pop":
        target = ns.get(name)
        if type(target) in (dict, set) and target:
            target.pop() if type(target) is set else target.pop(next(iter(target)))
        elif type(target) is list and target:
            target.pop()
    elif kind == "setting":
        settings_ = ns.get("SETTINGS")
        if isinstance(settings_, threading.local):
            if value is None:
                vars(settings_).pop("language", None)
            else:
                settings_.language = value
    elif kind == "attr":
        setattr(ns["Config"], name, [value] if name == "names" else value)
    elif kind == "late" and f"{PKG}.late" not in sys.modules:
        late = _module(f"{PKG}.late")
        sys.modules[late.__name__] = late
        modules.append(late)
        starts.append(dict(late.__dict__))


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(st.tuples(st.integers(0, 2), step), max_size=25))
def test_the_watch_names_what_a_full_scan_names(steps: list[tuple[int, tuple]]) -> None:
    modules = [_module(PKG), _module(f"{PKG}.sub")]
    for module in modules:
        sys.modules[module.__name__] = module
    try:
        watch = ContextWatch([f"{PKG}.sub:helper"])
        starts = [dict(module.__dict__) for module in modules]
        assert watch._globals() == _full_scan(watch) == ([], [])
        for which, action in steps:
            _apply(modules, starts, min(which, len(modules) - 1), action)
            watch._watch_new_modules()
            assert watch._globals() == _full_scan(watch)
    finally:
        for name in (PKG, f"{PKG}.sub", f"{PKG}.late"):
            sys.modules.pop(name, None)


def test_a_global_of_one_watched_name_is_seen_rebound_and_deleted(
    package: list[types.ModuleType],
) -> None:
    """A namespace with a single watched name (a class with one attribute) is still compared."""

    class Single:
        __module__ = PKG
        only = 1

    package[0].Single = Single
    watch = ContextWatch([f"{PKG}:helper"])
    Single.only = 2
    assert f"module global {PKG}.Single.only rebound" in watch()
    del Single.only
    assert f"module global {PKG}.Single.only deleted" in watch()
    Single.only = 1
    assert f"{PKG}.Single.only" not in watch()


def test_a_lazy_import_into_a_global_is_named_as_one(package: list[types.ModuleType]) -> None:
    """dateutil.rrule starts with ``easter = None`` and imports the module into it in
    ``rrule.__init__``: a row that thaws an rrule without that call finds None there."""
    watch = ContextWatch([f"{PKG}:helper"])
    package[0].NOTHING = types.ModuleType("easter")  # None -> a module: a lazy import
    assert watch() == f"module global {PKG}.NOTHING imported lazily since the start (it was None)"
    package[0].WORD = types.ModuleType("word")  # a value -> a module: a rebinding
    assert f"module global {PKG}.WORD rebound" in watch()


def test_the_environment_cause_follows_the_variables_not_pytests_own(
    package: list[types.ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only pytest's PYTEST_CURRENT_TEST moving between rows keeps the cause found before."""
    watch = ContextWatch([f"{PKG}:helper"])
    assert watch() == ""
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_a (call)")
    assert watch() == ""
    monkeypatch.setenv("CTXWATCH_FLAG", "on")
    assert watch() == "environment variable(s) changed: CTXWATCH_FLAG"
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_b (call)")
    assert watch() == "environment variable(s) changed: CTXWATCH_FLAG"
    monkeypatch.delenv("CTXWATCH_FLAG")
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_c (call)")
    assert watch() == ""


def test_a_replaced_clock_is_named_each_time(package: list[types.ModuleType]) -> None:
    watch = ContextWatch([f"{PKG}:helper"])
    assert watch() == ""
    with mock.patch("time.time"):
        assert watch() == "frozen clock (time.time is a mock replaced)"
    assert watch() == ""
    with mock.patch("datetime.date"), mock.patch("time.strftime", lambda *a: ""):
        assert watch() == "frozen clock (time.strftime, datetime.date replaced)"
    assert watch() == ""


def test_a_changed_decimal_context_is_named(package: list[types.ModuleType]) -> None:
    """``localcontext()`` with another rounding changes what ``quantize`` returns: a row whose
    outcome differs under it names the context, with what changed."""
    import decimal

    watch = ContextWatch([f"{PKG}:helper"])
    assert watch() == ""
    with decimal.localcontext() as context:
        context.rounding = decimal.ROUND_HALF_UP
        context.prec = 6
        assert watch() == (
            "decimal context changed (prec 28 -> 6, rounding ROUND_HALF_EVEN -> ROUND_HALF_UP)"
        )
        context.traps[decimal.Inexact] = True
        assert "traps ('DivisionByZero', 'InvalidOperation', 'Overflow') -> (" in watch()
    assert watch() == ""


@settings(max_examples=50, deadline=None)
@given(
    before=st.lists(st.sampled_from(["locale switched (C -> de_DE)", "mock.patch active on a.b"])),
    start=st.integers(100, 5000),
    now=st.integers(100, 5000),
)
def test_a_raised_recursion_limit_is_named_only_for_a_recursion_error(
    before: list[str], start: int, now: int
) -> None:
    limit = f"{context.RECURSION_CHANGED} ({start} -> {now})"
    hint = "; ".join([limit, *before])
    other = context.without_raised_limit(hint, "raised ValueError: dt.tzinfo is not self")
    deeper = context.without_raised_limit(hint, "raised RecursionError: maximum recursion")
    assert deeper == hint  # a recursion error: the limit is the first thing to look at
    if now > start:  # raised (Hypothesis does, around every example): not this cause
        assert other == "; ".join(before)
    else:  # lowered (or kept): a cause, and such rows are refused for it anyway
        assert other == hint


def test_a_started_patch_dict_is_named_by_its_mapping() -> None:
    """``patch.dict(...).start()`` has no target: it was named "NoneType.?"."""
    import os

    started = [mock.patch.dict(os.environ, {"LOCKSTEP_T": "1"}), mock.patch.dict({}, {"a": 1})]
    for p in started:
        p.start()
    try:
        active = list(mock._patch._active_patches)  # type: ignore[attr-defined]
        causes = context._patch_causes(active, mock)
    finally:
        mock.patch.stopall()
    assert causes == ["mock.patch.dict active on os.environ", "mock.patch.dict active on dict"]


def test_django_set_up_after_recording_began_is_no_switch_a_later_one_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A conftest's ``django.setup()`` at collection activates the suite's language once
    recording has begun: naming it made it every later refusal's cause."""
    monkeypatch.delitem(sys.modules, "django.utils.translation", raising=False)
    watch = ContextWatch([f"{PKG}.mod:f"])
    language = ["en-us"]
    fake = types.ModuleType("django.utils.translation")
    fake.get_language = lambda: language[0]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "django.utils.translation", fake)
    assert "translation" not in watch()
    language[0] = "de"
    assert "translation switched (en-us -> de)" in watch()
