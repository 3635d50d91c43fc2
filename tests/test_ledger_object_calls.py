"""``[lockstep] object_calls`` and ``object_bytes``: a suite that grows one object call by
call (furl's tests add to one query thousands of times) freezes the whole object on every
call; past either limit, calls with objects not met before run unrecorded and the summary
counts them as skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import recorded, rows_of, run_cli

STACK = """
class Stack:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)
        return len(self.items)
"""

TEST = (
    "from stacks import Stack\n\n\n"
    "def test_grow():\n"
    "    s = Stack()\n"
    "    for i in range(40):  # items of one kind: only the first 25 are frozen\n"
    "        assert s.push(i + 0.5) == i + 1\n"
)


def _files(setting: str) -> dict[str, str]:
    return {
        "lockstep.toml": f'[lockstep]\n{setting}\n\n[[ledger]]\npackage = "stacks"\n',
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        "src/stacks/__init__.py": STACK,
        "tests/test_stack.py": TEST,
    }


def _package_files(setting: str, package: str, source: str, test: str) -> dict[str, str]:
    """:func:`_files` for another package than ``stacks``: its source and its one test file."""
    return {
        "lockstep.toml": f'[lockstep]\n{setting}\n\n[[ledger]]\npackage = "{package}"\n',
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        f"src/{package}/__init__.py": source,
        f"tests/test_{package}.py": test,
    }


def test_past_the_limit_calls_with_new_objects_are_counted_not_frozen(tmp_path: Path) -> None:
    root = tmp_path / "limited"
    run = recorded(root, _files("object_calls = 5"))
    rows = rows_of(root / "lockstep/stacks.Stack.push.ledger.jsonl")
    assert len(rows) == 25  # the first 5, then the first 20 of each test (one here)
    assert (
        "15 call(s): past the first 5 calls whose input holds objects or mutable values "
        "(and the first 20 of each test after them, and each kind of call not met before)"
    ) in run.output, run.output
    assert "[lockstep] object_calls" in run.output
    assert run_cli("replay", cwd=root).code == 0


KINDS = """
def humanize(when, locale="en", granularity=()):
    return f"{when.days} {locale} {','.join(granularity)}"
"""

KINDS_TEST = (
    "import datetime\n\nfrom kinds import humanize\n\n\n"
    "def test_languages():\n"
    "    for days in range(30):  # thirty calls of one kind spend the limit\n"
    "        humanize(datetime.timedelta(days=days + 1000))\n"
    "    for locale in ('fr', 'it', 'fr'):  # then two kinds not met before, one again\n"
    "        humanize(datetime.timedelta(days=2000), locale=locale)\n"
    "    humanize(datetime.timedelta(days=2001), granularity=['year'])\n"
    "    humanize(datetime.timedelta(days=2002), granularity=['year'])\n"
)


def test_past_the_limit_a_kind_of_call_not_met_before_is_frozen(tmp_path: Path) -> None:
    """arrow's Italian ``humanize``: a late call differing from the thousands before it
    only in a scalar argument (``locale="it"``) was skipped past the limit, and a one-line
    change to the Italian years replayed green while the suite failed."""
    root = tmp_path / "kinds"
    run = recorded(root, _package_files("object_calls = 3", "kinds", KINDS, KINDS_TEST))
    rows = rows_of(root / "lockstep/kinds.humanize.ledger.jsonl")
    # 3 under the limit, 20 for the test, then 'fr', 'it' and ['year'] once each
    assert len(rows) == 26, run.output
    kinds = {(r.kwargs.get("locale"), str(r.kwargs.get("granularity"))) for r in rows[-40:]}
    assert {("fr", "None"), ("it", "None")} <= kinds, kinds
    assert sum(1 for r in rows if r.kwargs.get("granularity") is not None) == 1
    assert "9 call(s): past the first 3 calls" in run.output, run.output
    assert run_cli("replay", cwd=root).code == 0


def test_no_limit_records_every_call(tmp_path: Path) -> None:
    root = tmp_path / "unlimited"
    recorded(root, _files("object_calls = 0"))
    assert len(rows_of(root / "lockstep/stacks.Stack.push.ledger.jsonl")) == 40


def test_past_the_byte_limit_calls_with_objects_are_counted_not_frozen(tmp_path: Path) -> None:
    """``[lockstep] object_bytes``: the stack grows by a number a call, so each call's
    row is longer than the last; past 1,000 bytes of them, no more is frozen."""
    root = tmp_path / "bytes"
    run = recorded(root, _files("object_bytes = 1000"))
    rows = rows_of(root / "lockstep/stacks.Stack.push.ledger.jsonl")
    assert 5 < len(rows) < 40, len(rows)
    skipped = 40 - len(rows)
    assert f"{skipped} call(s): past the first 1,000 bytes frozen for calls" in run.output, (
        run.output
    )
    assert "[lockstep] object_bytes" in run.output
    assert run_cli("replay", cwd=root).code == 0
    unlimited = tmp_path / "no-byte-limit"
    recorded(unlimited, _files("object_bytes = 0"))
    assert len(rows_of(unlimited / "lockstep/stacks.Stack.push.ledger.jsonl")) == 40


@pytest.mark.parametrize(
    ("setting", "most"),
    [("object_calls = -1", "1000000000"), ("object_bytes = -1", "1099511627776")],
)
def test_a_limit_out_of_range_is_a_one_line_error(tmp_path: Path, setting: str, most: str) -> None:
    root = tmp_path / "bad"
    root.mkdir()
    (root / "lockstep.toml").write_text(f"[lockstep]\n{setting}\n")
    result = run_cli("replay", cwd=root)
    assert result.code == 2
    key = setting.split(" ")[0]
    assert result.stderr.strip().splitlines() == [
        f"lockstep: error: lockstep.toml: lockstep.{key}: must be between 0 (no limit) and {most}"
    ]


def test_past_the_limit_a_call_is_skipped_before_its_input_is_keyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """babel's suite hands ``format_decimal`` a ``Locale`` (its whole locale data) on each
    of thousands of calls: past the budget, keying each input to look for a repeat of a
    recorded one cost minutes.  Nothing of a call is keyed once the budget is spent."""
    from lockstep import record_io
    from lockstep.oracles.ledger import recorder
    from lockstep.oracles.ledger.input_budget import InputBudget

    keyed: list[int] = []
    real = recorder._object_key

    def counting(args: object, kwargs: object) -> object:
        keyed.append(1)
        return real(args, kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(recorder, "_object_key", counting)

    def size(items: list[int]) -> int:
        return len(items)

    wrapped = record_io(size, ledger=tmp_path / "size.ledger.jsonl")
    rec = wrapped.lockstep_recorder
    rec.budget = InputBudget(3, 0)
    for i in range(10):
        assert wrapped([i % 4]) == 1  # the fourth and later calls repeat recorded inputs
    part = rec.part()
    rec.active = False  # nothing to write at exit
    assert len(part.entries) == 3
    assert len(keyed) == 6  # the three recorded calls keyed their input and result; no more
    assert list(part.unfreezable.values()) == [7], part.unfreezable


def test_an_input_of_too_many_objects_spends_a_row_of_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """babel's suite passes a ``Locale`` holding its whole locale data (more objects than a
    value may hold) on thousands of calls: each was walked four times to name where it
    failed, and the failures spent nothing of the byte budget, so every call paid them.
    Such an input is refused at once (``TooLargeError``), as a row's worth of the budget."""
    from lockstep import record_io
    from lockstep.errors import TooLargeError
    from lockstep.oracles.ledger import recorder
    from lockstep.oracles.ledger.input_budget import InputBudget

    walked: list[int] = []

    def too_large(args: object, kwargs: object) -> object:
        walked.append(1)
        raise TooLargeError("holds more than 20,000 objects: too large to freeze", "args")

    monkeypatch.setattr(recorder, "_encode_call_keyed", too_large)

    def count(cells: list[int]) -> int:
        return len(cells)

    wrapped = record_io(count, ledger=tmp_path / "count.ledger.jsonl")
    rec = wrapped.lockstep_recorder
    rec.budget = InputBudget(0, 4 * recorder.MAX_ROW_BYTES)
    for _ in range(10):
        assert wrapped([1, 2]) == 2
    part = rec.part()
    rec.active = False  # nothing to write at exit
    assert len(walked) == 4  # four rows' worth of budget, then nothing is walked
    reasons = sorted((n, r.removeprefix("args: ")[:20]) for r, n in part.unfreezable.items())
    assert reasons == [(4, "holds more than 20,0"), (6, "past the first 4 MiB")], reasons


class LazyLocale:
    """A babel ``Locale`` in small: its data loaded into it by its first call."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.data: dict[str, object] | None = None


def _parents(levels: int) -> dict[str, object]:
    """A locale data dict's chain of parents, deeper than a frozen value may nest."""
    root: dict[str, object] = {}
    node = root
    for _ in range(levels):
        node["parent"] = node = {}
    return root


def numbering_system(locale: LazyLocale) -> str:
    if locale.data is None:
        locale.data = _parents(300)
    return "latn"


def test_an_input_left_too_deep_by_its_call_spends_a_row_and_is_not_walked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """babel's ``Locale`` loads its locale data on its first call: the input as the call
    left it nests deeper than a value may, and learning that walked it whole, on each of
    a thousand calls.  Such a call now spends a row's worth of the byte budget, and a
    later call with an input of the same state is skipped before anything is walked."""
    from lockstep import record_io
    from lockstep.oracles.ledger import recorder
    from lockstep.oracles.ledger.input_budget import InputBudget

    walks: list[str] = []
    real = recorder._encode

    def counting(value: object, **kw: str) -> object:
        walks.append(kw.get("path", ""))
        return real(value, **kw)

    monkeypatch.setattr(recorder, "_encode", counting)

    wrapped = record_io(numbering_system, ledger=tmp_path / "numbering.ledger.jsonl")
    rec = wrapped.lockstep_recorder
    rec.budget = InputBudget(0, 4 * recorder.MAX_ROW_BYTES)
    for _ in range(5):  # five locales of one state: walked after the first call only
        assert wrapped(LazyLocale("en")) == "latn"
    for i in range(8):  # eight of other states: three more walks spend the budget
        assert wrapped(LazyLocale(f"l{i}")) == "latn"
    part = rec.part()
    rec.active = False  # nothing to write at exit
    assert not part.entries
    assert walks == ["args[0] after the call"] * 4, walks
    reasons = sorted(
        (n, r.removeprefix("args[0] after the call: ")[:20]) for r, n in part.unfreezable.items()
    )
    assert reasons == [(5, "past the first 4 MiB"), (8, "nested more than 200")], reasons


MARKERS = """
class Marker:
    def __init__(self, text):
        self.left, self.op, self.right = text.split(" ")

    def evaluate(self, env):
        return env.get(self.left) == self.right


class Named(str):
    def __init__(self, text):
        self.upper_form = text.upper()
"""

MARKER_TEST = (
    "from markers import Marker, Named\n\n"
    "LONG = 'n' * 64  # texts alike in their first 64 characters: calls of one kind\n\n\n"
    "def test_many():\n"
    "    for i in range(30):\n"
    "        assert Marker(f'v{i} == x').evaluate({}) is False\n"
    "        assert Named(LONG + str(i)).upper_form == (LONG + str(i)).upper()\n"
)


def test_a_constructor_of_scalars_is_not_charged_to_the_limit(tmp_path: Path) -> None:
    """packaging's ``Marker("...")``: the blank ``self`` made every constructor call one
    "holding objects", and one test's 2,000 markers spent the budget the rest never got.
    A ``str`` subclass's blank ``self`` holds its text: still charged."""
    root = tmp_path / "markers"
    run = recorded(root, _package_files("object_calls = 5", "markers", MARKERS, MARKER_TEST))
    assert len(rows_of(root / "lockstep/markers.Marker.__init__.ledger.jsonl")) == 30
    assert len(rows_of(root / "lockstep/markers.Marker.evaluate.ledger.jsonl")) == 25
    assert len(rows_of(root / "lockstep/markers.Named.__init__.ledger.jsonl")) == 25
    assert "5 call(s): past the first 5 calls" in run.output, run.output
    assert run_cli("replay", cwd=root).code == 0


COUNTING = """
def count(items):
    return len(items)
"""

COUNTING_TEST = (
    "from counting import count\n\n\n"
    "def test_counts():\n"
    "    class Local:\n"
    "        pass\n\n"
    "    for _ in range(6):\n"
    "        assert count([Local()]) == 1  # a class made inside a function: not frozen\n"
    "    for i in range(3):\n"
    "        assert count(list(range(i))) == i\n"
)


def test_calls_skipped_as_unfreezable_do_not_spend_the_limit(tmp_path: Path) -> None:
    """bidict's ``keys``: its first 2,000 calls, all skipped as unfreezable, spent the
    budget, and the 8,015 after them, which would have frozen, were skipped past it."""
    root = tmp_path / "counting"
    run = recorded(root, _package_files("object_calls = 3", "counting", COUNTING, COUNTING_TEST))
    assert len(rows_of(root / "lockstep/counting.count.ledger.jsonl")) == 3, run.output
    assert "past the first 3 calls" not in run.output


LATE_TEST = TEST + (
    "\n\ndef test_late():\n    s = Stack()\n    assert [s.push(c) for c in 'abc'] == [1, 2, 3]\n"
)


def test_each_test_keeps_its_first_calls_past_the_limit(tmp_path: Path) -> None:
    """arrow's ``dehumanize`` spent its 2,000 before ``TestArrowDehumanize::test_years``:
    the limit counted calls in test order, and a whole late group of tests kept nothing."""
    root = tmp_path / "late"
    files = _files("object_calls = 5")
    files["tests/test_stack.py"] = LATE_TEST
    recorded(root, files)
    rows = rows_of(root / "lockstep/stacks.Stack.push.ledger.jsonl")
    assert len(rows) == 25 + 3, len(rows)
    late = sorted(row.args[1] for row in rows if isinstance(row.args[1], str))
    assert late == ["a", "b", "c"]  # the late test's pushes, past the first test's 25
