"""Callable arguments are recorded as the calls the target made of them.

A function given a lambda or a closure (a ``key=``, a predicate, a converter) used to have
each such call skipped: the callable cannot be frozen by name, so no row guarded what the
function does with it, and a rewrite that called it otherwise replayed green.  The
recorder now hands the target a proxy that keeps each call's arguments and answer; replay
answers the same questions with the same answers and calls any other question a drift.
A target that keeps the callable it is given (a registry) gets the very function, so the
suite's identity checks hold while it records.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import recorded as recorded_in
from helpers import red_after_change, rows_of, run_cli

ROWS = """
import functools
import inspect


def pick(rows, pred):
    out = []
    for r in rows:
        if pred(r):
            out.append(r)
    return out


def total_by(rows, key):
    totals = {}
    for r in rows:
        k = key(r)
        totals[k] = totals.get(k, 0) + r["amount"]
    return sorted(totals.items())


def any_over(values, pred):
    checked = [pred(v) for v in values]
    return any(checked)


def parse_all(texts, convert):
    out = []
    for t in texts:
        try:
            out.append(convert(t))
        except ValueError:
            out.append(None)
    return out


def lazily(fn, items):
    return map(fn, items)  # holds fn until it is collected, not only while read


REGISTRY = {}


def register(name, fn):
    REGISTRY[name] = fn


def lookup(name):
    return REGISTRY[name]


def arity(fn):
    if isinstance(fn, functools.partial):
        return len(inspect.signature(fn.func).parameters)
    if inspect.isfunction(fn):
        return len(inspect.signature(fn).parameters)
    return -1
"""

TESTS = """
import functools

from shop.rows import any_over, arity, lazily, lookup, parse_all, pick, register, total_by

ROWS = [{"day": "mon", "amount": 3}, {"day": "tue", "amount": 5}, {"day": "mon", "amount": 7}]


def test_pick():
    for limit in (0, 4, 6):
        assert len(pick(ROWS, lambda r: r["amount"] > limit)) == sum(
            r["amount"] > limit for r in ROWS
        )


def test_total_by():
    assert total_by(ROWS, lambda r: r["amount"] > 100) == [(False, 15)]
    assert total_by(ROWS, lambda r: r["day"]) == [("mon", 10), ("tue", 5)]

    def parity(r):
        return r["amount"] % 2

    assert total_by(ROWS, key=parity) == [(1, 15)]


def test_any_over():
    assert any_over([1, 2, 3], lambda v: v > 9) is False
    assert any_over([1, 5, 3], lambda v: v > 4) is True


def test_parse_all():
    assert parse_all(["1"], int) == [1]
    assert parse_all([], lambda t: int(t)) == []  # the first given a callable: looked at
    assert parse_all(["1", "x", "3"], lambda t: int(t)) == [1, None, 3]


def test_lazily():
    assert list(lazily(lambda x: x * 2, [1, 2])) == [2, 4]
    assert list(lazily(lambda x: -x, [3, 4])) == [-3, -4]


def test_a_registered_function_is_the_very_function():
    def handler():
        return "ok"

    def other():
        return "no"

    register("h", handler)
    register("o", other)
    assert lookup("h") is handler
    assert lookup("o") is other


def test_arity_sees_the_callable_s_own_class():
    def f(a, b):
        return a

    assert arity(f) == 2  # the first given a callable: handed it as it is
    assert arity(functools.partial(f, 1)) == 2  # then through the proxy: still a partial
    assert arity(lambda x: x) == 1
"""


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    result = recorded_in(root, _package(ROWS, TESTS, 'package = "shop"'))
    # the registry test passed too: it got the very function
    assert "refused 0" in result.stdout, result.stdout
    return root


def _package(source: str, tests: str, ledger: str, module: str = "rows") -> dict[str, str]:
    """A package ``shop`` of one module, its suite, and ``ledger`` as its configuration."""
    return {
        "shop/__init__.py": "",
        f"shop/{module}.py": source,
        f"tests/test_{module}.py": tests,
        "lockstep.toml": f"[[ledger]]\n{ledger}\n",
    }


def _inputs(root: Path, name: str) -> list[list[object]]:
    return [row.args for row in rows_of(root / f"lockstep/shop.rows.{name}.ledger.jsonl")]


def test_the_rows_hold_each_call_of_the_callable_and_replay_green(recorded: Path) -> None:
    rows = [{"day": "mon", "amount": 3}, {"day": "tue", "amount": 5}, {"day": "mon", "amount": 7}]
    by_day = {"$calls": [{"args": [r], "returned": r["day"]} for r in rows]}
    parity = {"$calls": [{"args": [r], "returned": r["amount"] % 2} for r in rows]}
    total_inputs = _inputs(recorded, "total_by")
    # the first call given a callable only looks whether the target keeps it
    assert [rows, by_day] in total_inputs
    keyed = [row.kwargs for row in rows_of(recorded / "lockstep/shop.rows.total_by.ledger.jsonl")]
    assert {"key": parity} in keyed
    parse_inputs = _inputs(recorded, "parse_all")
    converted = {
        "$calls": [
            {"args": ["1"], "returned": 1},
            {
                "args": ["x"],
                "raised": ["ValueError", ["invalid literal for int() with base 10: 'x'"]],
            },
            {"args": ["3"], "returned": 3},
        ]
    }
    assert [["1", "x", "3"], converted] in parse_inputs
    assert _inputs(recorded, "register") == []  # it keeps what it is given: unrecorded
    # a lazy result holds its callable while it is read: that is no keeping
    negated = {"$calls": [{"args": [3], "returned": -3}, {"args": [4], "returned": -4}]}
    assert [negated, [3, 4]] in _inputs(recorded, "lazily")
    replay = run_cli("replay", cwd=recorded)
    assert replay.code == 0, replay.output


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        # the same totals, the key called twice a row
        (
            '        k = key(r)\n        totals[k] = totals.get(k, 0) + r["amount"]\n',
            '        totals[key(r)] = totals.get(key(r), 0) + r["amount"]\n',
            "callable argument args[1]: expected call 2 with ({'amount': 5, 'day': 'tue'})",
        ),
        # the same answer, fewer questions: a caller's function is called less
        (
            "    checked = [pred(v) for v in values]\n    return any(checked)\n",
            "    return any(pred(v) for v in values)\n",
            "callable argument args[1]: expected called 3 time(s)",
        ),
        # the rows in another order: the predicate asked otherwise
        (
            "    for r in rows:\n        if pred(r):",
            "    for r in rows[::-1]:\n        if pred(r):",
            "",
        ),
        # a converter's error no longer caught
        ("        except ValueError:\n", "        except TypeError:\n", ""),
    ],
)
def test_a_rewrite_that_uses_the_callable_otherwise_is_red(
    recorded: Path, old: str, new: str, said: str
) -> None:
    red = red_after_change(recorded, "shop/rows.py", old, new)
    assert said in red.stdout, red.stdout


def test_a_target_that_keeps_its_callable_is_handed_it_unrecorded(tmp_path: Path) -> None:
    """A registry's ``register`` keeps what it is given: its first call only looks, and
    every later call hands the function itself (skipped, as before callables were
    recorded), so ``lookup(name) is fn`` holds for every registration."""
    many = "\n".join(f"    register('f{i}', f{i})" for i in range(5))
    defs = "\n".join(f"    def f{i}():\n        return {i}\n" for i in range(5))
    checks = "\n".join(f"    assert lookup('f{i}') is f{i}" for i in range(5))
    tests = f"from shop.rows import lookup, register\n\n\ndef test_registry():\n{defs}\n{many}\n{checks}\n"
    ledger = 'name = "register"\ntarget = "shop.rows:register"'
    result = recorded_in(tmp_path / "proj", _package(ROWS, tests, ledger))
    assert "SKIPPED 5 of 5 call(s)" in result.stdout, result.stdout


def test_a_factory_returning_a_closure_of_its_callable_gets_it_as_it_is(tmp_path: Path) -> None:
    """``doubled(fn)`` returns a closure calling ``fn``: the probe sees it kept (the result
    cannot be frozen either), so no later call hands it a proxy, and the closures the
    suite goes on calling call the very functions."""
    root = tmp_path / "proj"
    factory = "def doubled(fn):\n    return lambda x: fn(x) * 2\n"
    tests = (
        "from shop.make import doubled\n\n\n"
        "def test_doubled():\n"
        "    fns = [lambda x, i=i: x + i for i in range(4)]\n"
        "    made = [doubled(f) for f in fns]\n"
        "    assert [m(1) for m in made] == [2, 4, 6, 8]\n"
        "    assert [m.__closure__[0].cell_contents for m in made] == fns\n"
        "    assert all(c.__closure__[0].cell_contents is f for c, f in zip(made, fns))\n"
    )
    ledger = 'name = "doubled"\ntarget = "shop.make:doubled"'
    result = recorded_in(root, _package(factory, tests, ledger, module="make"))
    assert "SKIPPED 4 of 4 call(s)" in result.stdout, result.stdout


@pytest.mark.slow
def test_mining_a_ledger_of_callables_adds_no_row_it_cannot_replay(recorded: Path) -> None:
    """Inputs mined from a row holding a callable's calls change the rows the callable is
    asked about, so its recorded answers do not fit them: such an input (asked otherwise,
    or fewer times) is dropped, never written as a row the verifying interpreter refuses."""
    before = _inputs(recorded, "total_by")
    mined = run_cli("mine", "shop.rows.total_by", "--time-limit", "20s", "-q", cwd=recorded)
    assert mined.code == 0, mined.output
    assert "refused" not in mined.stdout, mined.stdout
    assert _inputs(recorded, "total_by") == before
    assert run_cli("replay", cwd=recorded).code == 0


# A schedule that returns its times as the class it is given (croniter's
# ``get_next(datetime)``, ``ret_type=float``), keeps its slots in the mapping class asked
# for, and rounds with a ``math`` function: the standard library's value classes and
# ``math``'s functions freeze by name, so these calls are rows, not skipped calls.
SCHEDULE = """
import datetime
import math


class Schedule:
    def __init__(self, start, every_minutes, ret_type=float):
        self.start = start
        self.every = every_minutes
        self.ret_type = ret_type

    def nth(self, n, ret_type=None):
        when = self.start + datetime.timedelta(minutes=self.every * n)
        kind = ret_type or self.ret_type
        if issubclass(kind, datetime.datetime):
            return when
        return kind(when.timestamp())


def slots(names, factory, rounding=math.floor):
    table = factory()
    for i, name in enumerate(names):
        table[name] = rounding(i * 1.5)
    return table
"""

SCHEDULE_TESTS = """
import collections
import datetime
import math

from shop.schedule import Schedule, slots

START = datetime.datetime(2024, 3, 1, 8, 0, tzinfo=datetime.timezone.utc)


def test_nth():
    s = Schedule(START, 30, ret_type=datetime.datetime)
    assert s.nth(2) == datetime.datetime(2024, 3, 1, 9, 0, tzinfo=datetime.timezone.utc)
    assert s.nth(1, float) == START.timestamp() + 1800


def test_slots():
    table = slots(["a", "b", "c"], collections.OrderedDict, math.ceil)
    assert list(table.items()) == [("a", 0), ("b", 2), ("c", 3)]
    assert slots(["x"], dict) == {"x": 0}
"""


def test_standard_library_classes_given_as_arguments_are_rows_and_guard(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    result = recorded_in(root, _package(SCHEDULE, SCHEDULE_TESTS, 'package = "shop"', "schedule"))
    assert "SKIPPED" not in result.stdout, result.stdout
    nth = rows_of(root / "lockstep/shop.schedule.Schedule.nth.ledger.jsonl")
    assert len(nth) == 2
    # (self, n) and (self, n, ret_type); self holds ret_type=datetime
    assert [row.args[2] for row in nth if len(row.args) > 2] == [{"$fn": "builtins:float"}]
    assert (
        '"datetime:datetime"'
        in (root / "lockstep/shop.schedule.Schedule.nth.ledger.jsonl").read_text()
    )
    table = {str(row.args) for row in rows_of(root / "lockstep/shop.schedule.slots.ledger.jsonl")}
    assert table == {
        "[['a', 'b', 'c'], {'$fn': 'collections:OrderedDict'}, {'$fn': 'math:ceil'}]",
        "[['x'], {'$fn': 'builtins:dict'}]",
    }
    assert run_cli("replay", cwd=root).code == 0

    red = red_after_change(root, "shop/schedule.py", "rounding(i * 1.5)", "rounding(i * 1.6)")
    assert "shop.schedule.slots" in red.stdout
    source = root / "shop/schedule.py"
    source.write_text(source.read_text().replace("rounding(i * 1.6)", "rounding(i * 1.5)"))
    red = red_after_change(root, "shop/schedule.py", "self.every * n)", "self.every * n + 1)")
    assert "shop.schedule.Schedule.nth" in red.stdout
