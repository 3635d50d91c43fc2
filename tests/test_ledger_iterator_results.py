"""A target returning a generator or a stdlib iterator: its items are frozen as the caller
consumes them (``{"$iter": {"items": [...], "end": ...}}``), and replay consumes as far."""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import (
    copy_project,
    package_project,
    pytest_in,
    rows_of,
    run_cli,
    snapshot_tree,
    write_files,
)
from lockstep import record_io

SPANS = """
def spans(n, fail_at=None):
    for i in range(n):
        if i == fail_at:
            raise ValueError(f"bad span {i}")
        yield (i, i * 10)


def echo(n):
    got = []
    for _ in range(n):
        got.append((yield len(got)))
    return got


def evens(items):
    return filter(lambda x: x % 2 == 0, list(items))


def backwards(items):
    return reversed(list(items))
"""

TESTS = """
import inspect

import pytest

from gen.spans import backwards, echo, evens, spans


def test_all_items():
    it = spans(3)
    assert inspect.isgenerator(it)
    assert list(it) == [(0, 0), (1, 10), (2, 20)]


def test_stops_early():
    it = spans(50)
    assert next(it) == (0, 0)


def test_raises_midway():
    it = spans(5, fail_at=2)
    assert next(it) == (0, 0)
    assert next(it) == (1, 10)
    with pytest.raises(ValueError, match="bad span 2"):
        next(it)


def test_send_and_return_value_pass_through():
    it = echo(2)
    assert next(it) == 0
    assert it.send("a") == 1
    with pytest.raises(StopIteration) as stop:
        it.send("b")
    assert stop.value.value == ["a", "b"]


def test_filter():
    assert list(evens((1, 2, 3, 4))) == [2, 4]


def test_backwards_is_the_list_s_own_iterator():
    it = backwards((1, 2, 3))
    assert type(it) is type(reversed([]))  # more-itertools' always_reversible is tested so
    assert next(it) == 3
"""

CONFIG = """
[[ledger]]
name = "spans"
target = "gen.spans:spans"

[[ledger]]
name = "evens"
target = "gen.spans:evens"

[[ledger]]
name = "echo"
target = "gen.spans:echo"

[[ledger]]
name = "backwards"
target = "gen.spans:backwards"
"""


def make_project(root: Path) -> Path:
    write_files(
        root,
        {
            "lockstep.toml": CONFIG,
            "gen/__init__.py": "",
            "gen/spans.py": SPANS,
            "tests/test_gen.py": TESTS,
        },
    )
    return root


def rows(root: Path, name: str) -> list[dict[str, object]]:
    lines = (root / f"lockstep/{name}.ledger.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("gen"))
    names = ("spans", "evens", "echo", "backwards")
    result = pytest_in(root, "-q", *(f"--lockstep-record={n}" for n in names))
    assert result.code == 0, result.output  # the callers saw the generator behave as ever
    assert "6 passed" in result.stdout
    return root


def test_items_are_recorded_as_consumed(recorded: Path) -> None:
    by_args = {json.dumps([r["args"], r["kwargs"]]): r["result"] for r in rows(recorded, "spans")}
    assert by_args == {
        "[[3], {}]": {
            "$iter": {
                "items": [{"$tuple": [0, 0]}, {"$tuple": [1, 10]}, {"$tuple": [2, 20]}],
                "end": "exhausted",
            }
        },
        "[[50], {}]": {"$iter": {"items": [{"$tuple": [0, 0]}], "end": "open"}},
        '[[5], {"fail_at": 2}]': {
            "$iter": {
                "items": [{"$tuple": [0, 0]}, {"$tuple": [1, 10]}],
                "end": "raised",
                "exc_stem": "bad span 2",
                "exc_type": "ValueError",
            }
        },
    }
    (echo,) = rows(recorded, "echo")
    assert echo["result"] == {"$iter": {"items": [0, 1], "end": "exhausted"}}
    (evens,) = rows(recorded, "evens")
    assert evens["result"] == {"$iter": {"items": [2, 4], "end": "exhausted"}}
    # an iterator over a list is handed back as it is: its items read without consuming it
    (backwards,) = rows(recorded, "backwards")
    assert backwards["result"] == {"$iter": {"items": [3, 2, 1], "end": "exhausted"}}


def test_replay_is_green_and_a_changed_item_is_red(recorded: Path, tmp_path: Path) -> None:
    root = copy_project(recorded, tmp_path)
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output
    write_files(root, {"gen/spans.py": SPANS.replace("yield (i, i * 10)", "yield (i, i * 11)")})
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "spans(3)" in red.output
    assert "an iterator of [(0, 0), (1, 10), (2, 20)], then the end" in red.output
    assert "an iterator of [(0, 0), (1, 11), (2, 22)], then the end" in red.output


def test_unobserved_later_items_stay_green(recorded: Path, tmp_path: Path) -> None:
    root = copy_project(recorded, tmp_path)
    # Items from the second on change: only spans(50) stopped after the first; the others drift.
    changed = SPANS.replace("yield (i, i * 10)", "yield (i, i * 10 if i == 0 or n == 50 else -1)")
    write_files(root, {"gen/spans.py": changed})
    result = run_cli("replay", cwd=root)
    assert result.code == 1, result.output
    assert "spans(50)" not in result.output
    # ... and only the early-stopped generator's later items changing: green.
    later = SPANS.replace("yield (i, i * 10)", "yield (i, i * 10 if i < 5 else -1)")
    write_files(root, {"gen/spans.py": later})
    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.output


def test_an_extra_item_or_a_plain_value_is_a_drift(recorded: Path, tmp_path: Path) -> None:
    root = copy_project(recorded, tmp_path)
    longer = SPANS.replace("for i in range(n):", "for i in range(n + 1):")
    write_files(root, {"gen/spans.py": longer})
    assert run_cli("replay", cwd=root).code == 1
    eager = SPANS.replace(
        "return filter(lambda x: x % 2 == 0, list(items))",
        "return [x for x in items if x % 2 == 0]",
    )
    write_files(root, {"gen/spans.py": eager})
    result = run_cli("replay", "evens", cwd=root)
    assert result.code == 1, result.output


@pytest.mark.parametrize(
    "payload",
    [
        {"items": [1], "end": "sideways"},
        {"items": 5, "end": "open"},
        {"items": [], "end": "raised"},
        {"items": [], "end": "open", "extra": 1},
    ],
)
def test_a_hostile_iter_payload_is_exit_2(
    recorded: Path, tmp_path: Path, payload: dict[str, object]
) -> None:
    root = copy_project(recorded, tmp_path)
    path = root / "lockstep/spans.ledger.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    body = [json.loads(line) for line in lines[1:]]
    for row in body:  # a careful attacker: every row's result, and the header's digest fixed
        row["result"] = {"$iter": payload}
    text = [json.dumps(r, sort_keys=True, separators=(",", ":")) for r in body]
    header["digest"] = hashlib.sha256("".join(t + "\n" for t in text).encode()).hexdigest()
    path.write_text("\n".join([json.dumps(header, sort_keys=True), *text]) + "\n")
    before = snapshot_tree(root)
    result = run_cli("replay", "spans", cwd=root)
    assert result.code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "$iter" in result.stderr
    assert snapshot_tree(root) == before


def _countdown(items: tuple[int, ...], fail: bool) -> Iterator[int]:
    yield from items
    if fail:
        raise KeyError("done")


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    items=st.lists(st.integers(), max_size=6).map(tuple),
    take=st.integers(0, 8),
    fail=st.booleans(),
)
def test_the_caller_sees_the_same_items_and_the_row_holds_those_consumed(
    tmp_path: Path, items: tuple[int, ...], take: int, fail: bool
) -> None:
    path = tmp_path / "countdown.ledger.jsonl"
    path.unlink(missing_ok=True)
    wrapped = record_io(_countdown, ledger=path)
    it = wrapped(items, fail)
    assert inspect.isgenerator(it)
    seen: list[int] = []
    end, raised = "open", None
    for _ in range(take):
        try:
            seen.append(next(it))
        except StopIteration:
            end = "exhausted"
            break
        except KeyError as e:
            end, raised = "raised", e
            break
    assert seen == list(items[: len(seen)])
    assert (raised is not None) == (fail and end == "raised")
    del it  # closed unfinished when not consumed to its end
    wrapped.lockstep_flush()
    recorded = [r.result for r in rows_of(path)]
    if take == 0:
        assert recorded == []  # never started: nothing was observed
        return
    expected: dict[str, object] = {"items": seen, "end": end}
    if end == "raised":
        expected.update(exc_type="KeyError", exc_stem="'done'")
    assert recorded == [{"$iter": expected}]


RULES = """
class Every:
    '''Like dateutil's rrule: a rule whose occurrences come from iterating it.'''

    def __init__(self, start, step, count):
        self.start, self.step, self.count = start, step, count

    def __iter__(self):
        value = self.start
        for _ in range(self.count):
            yield value
            value += self.step
"""

RULES_TESTS = """
from rules import Every


def test_occurrences():
    assert list(Every(1, 7, 4)) == [1, 8, 15, 22]
    for first in Every(3, 1, 10):
        assert first == 3
        break
"""


def test_iterating_a_package_object_is_on_its_surface(tmp_path: Path) -> None:
    """``list(rrule(...))`` is how dateutil's users get occurrences: a class's ``__iter__``
    is on the package surface, its items frozen as consumed, so a changed step is red."""
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\npackage = "rules"\n',
            "rules.py": RULES,
            "tests/test_rules.py": RULES_TESTS,
        },
    )
    recorded = pytest_in(tmp_path, "tests", "-q", "--lockstep-record")
    assert recorded.code == 0, recorded.output
    rows = rows_of(tmp_path / "lockstep/rules.Every.__iter__.ledger.jsonl")
    assert sorted(json.dumps(r.result["$iter"], sort_keys=True) for r in rows) == [
        json.dumps({"end": "exhausted", "items": [1, 8, 15, 22]}, sort_keys=True),
        json.dumps({"end": "open", "items": [3]}, sort_keys=True),
    ]
    assert run_cli("replay", cwd=tmp_path).code == 0
    rules = tmp_path / "rules.py"
    rules.write_text(rules.read_text().replace("value += self.step", "value += self.step or 1"))
    assert run_cli("replay", cwd=tmp_path).code == 0  # the same occurrences: still green
    rules.write_text(rules.read_text().replace("range(self.count)", "range(self.count - 1)"))
    red = run_cli("replay", cwd=tmp_path)
    assert red.code == 1, red.output
    assert "rules.Every.__iter__" in red.output


CLAUSES = """
class AllOf:
    '''Like semantic_version's AllOf: its clauses in a frozenset, iterated in hash order.'''

    def __init__(self, *clauses):
        self.clauses = frozenset(clauses)

    def __iter__(self):
        return iter(self.clauses)

    def sorted_clauses(self):
        return sorted(self.clauses)
"""

CLAUSES_TESTS = """
from clauses import AllOf


def test_clauses():
    spec = AllOf(">=1.0", "<2.0")
    assert sorted(spec) == ["<2.0", ">=1.0"]
    assert spec.sorted_clauses() == ["<2.0", ">=1.0"]
"""


def test_iterating_a_set_is_refused_as_the_hash_seed_s(tmp_path: Path) -> None:
    """A frozenset of two strings iterates in the same order under two hash seeds one time
    in four: such a row passed the one verifying seed by chance (semantic_version's
    ``LegacySpec.__iter__``) and replayed red under the next seed. A row whose input
    holds a set is verified under more seeds; the same set's sorted items are kept."""
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\npackage = "clauses"\n',
            "clauses.py": CLAUSES,
            "tests/test_clauses.py": CLAUSES_TESTS,
        },
    )
    for seed in ("0", "7", "11"):
        for ledger in (tmp_path / "lockstep").glob("*.ledger.jsonl"):
            ledger.unlink()
        recorded = pytest_in(
            tmp_path, "tests", "-q", "--lockstep-record", env={"PYTHONHASHSEED": seed}
        )
        assert recorded.code == 0, recorded.output
        assert rows_of(tmp_path / "lockstep/clauses.AllOf.__iter__.ledger.jsonl") == [], seed
        refused = next(line for line in recorded.output.splitlines() if "AllOf.__iter__(" in line)
        assert "cause: hash-seed dependence" in refused, refused
        assert len(rows_of(tmp_path / "lockstep/clauses.AllOf.sorted_clauses.ledger.jsonl")) == 1
        for replay_seed in ("1", "2", "3", "5", "8"):
            green = run_cli("replay", cwd=tmp_path, env={"PYTHONHASHSEED": replay_seed})
            assert green.code == 0, (seed, replay_seed, green.output)


LAZY = """
def pick(items, pred):
    for x in items:
        if pred(x):
            yield x


def head(it, n):
    for _ in range(n):
        yield next(it)
"""

LAZY_TESTS = """
import lazy


def test_pick():
    assert list(lazy.pick([1, 2, 3], lambda x: x > 1)) == [2, 3]
    assert list(lazy.pick([4, 5, 6], lambda x: x > 4)) == [5, 6]  # the first call's: not kept


def test_head():
    assert list(lazy.head(iter([1, 2, 3]), 2)) == [1, 2]
"""


@pytest.mark.parametrize(
    ("old", "new", "drift"),
    [
        ("if pred(x):", "if pred(x) and pred(x):", "callable argument args[1]"),
        ("range(n)", "range(n + 1)", "iterator argument: expected took 2 item(s)"),
    ],
)
def test_a_returned_generator_asking_its_arguments_for_more_is_a_drift(
    tmp_path: Path, old: str, new: str, drift: str
) -> None:
    """more-itertools' ``split_at``: a change made the returned generator, read by replay,
    call the predicate once more than recorded; the ``BaseException`` that says so crossed
    the ledger's fork as a traceback and ended ``lockstep replay`` (no other ledger
    replayed, no ``--json`` document) where the call's own asking is a drift."""
    root = package_project(tmp_path / "lazy", "lazy", LAZY, LAZY_TESTS)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    source = root / "src/lazy/__init__.py"
    source.write_text(source.read_text().replace(old, new))
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.output
    assert "Traceback" not in red.output and drift in red.stdout, red.output
    assert "DRIFT: 2 cases: 1 passed, 1 drifted" in red.stdout, red.output  # the other too
    as_json = run_cli("replay", "--json", cwd=root)
    assert json.loads(as_json.stdout)["verdict"] == "DRIFT", as_json.output
