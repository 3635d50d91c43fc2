"""Exceptions passed and returned as values: ``{"$exc": [class, [args], {attributes}, chain]}``.

A validator that returns the errors it collected, and a library's exception class with a
property of its own (schema 0.7.7's ``SchemaError.code``, whose ``self`` is the exception):
before, each such call was skipped ("cannot freeze a builtins.ValueError").  Here a small
row validator of that shape is recorded under its suite, replays green unchanged and goes
red for one-line changes seen only through the exceptions; every form round-trips, and the
decoder refuses what names no exception class it may rebuild.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import recorded, red_after_change, refused_in_one_line, rows_of, run_cli
from lockstep import canon
from lockstep.canon.text import value_text
from lockstep.errors import CanonError

ROWS = """
class RowError(ValueError):
    \"\"\"A bad row: what was wrong, and where.\"\"\"

    def __init__(self, field, line):
        super().__init__(f"bad {field}")
        self.field = field
        self.line = line

    @property
    def code(self):
        return f"E{self.line:03d}-{self.field}"


def check(rows):
    \"\"\"The errors of ``rows``, in order; an empty list when all are good.\"\"\"
    errors = []
    for line, row in enumerate(rows, 1):
        if not row.get("sku"):
            errors.append(RowError("sku", line))
        if row.get("qty", 0) < 0:
            errors.append(ValueError(f"negative qty on line {line}"))
    return errors


def worst(errors):
    return max(errors, key=lambda e: getattr(e, "line", 0), default=None)
"""

TESTS = """
from rows import RowError, check, worst


def test_check():
    errors = check([{"sku": "A1", "qty": 1}, {"qty": -2}, {"sku": "B"}])
    assert [str(e) for e in errors] == ["bad sku", "negative qty on line 2"]
    assert worst(errors).line == 2


def test_code():
    assert RowError("qty", 7).code == "E007-qty"
    try:
        try:
            raise KeyError("sku")
        except KeyError as missing:
            raise RowError("sku", 9) from missing
    except RowError as e:
        assert e.code == "E009-sku"
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "rows"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/rows/__init__.py": ROWS,
    "tests/test_rows.py": TESTS,
}


def test_a_validator_returning_its_errors_is_recorded_and_guarded(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "no call skipped" in run.output and "cannot freeze" not in run.output, run.output
    checks = rows_of(root / "lockstep/rows.check.ledger.jsonl")
    assert checks[0].result == [
        {"$exc": ["rows:RowError", ["bad sku"], {"field": "sku", "line": 2}, None]},
        {"$exc": ["ValueError", ["negative qty on line 2"], {}, None]},
    ]
    codes = rows_of(root / "lockstep/rows.RowError.code.ledger.jsonl")
    chained = [row.args[0] for row in codes if row.args[0]["$exc"][3] is not None]
    assert chained and chained[0]["$exc"][3][0] == {"$exc": ["KeyError", ["sku"], {}, None]}
    assert run_cli("replay", cwd=root).code == 0

    source = "src/rows/__init__.py"
    original = (root / source).read_text()
    # the message the caller reads is unchanged; only the kept line moved
    red = red_after_change(root, source, 'RowError("sku", line))', 'RowError("sku", line + 1))')
    assert "DRIFT rows.check" in red.stdout, red.stdout
    assert "RowError('bad sku', field='sku', line=2)" in red.stdout, red.stdout
    (root / source).write_text(original)
    red = red_after_change(root, source, 'return f"E{self.line:03d}', 'return f"E{self.line:02d}')
    assert "DRIFT rows.RowError.code" in red.stdout, red.stdout


class _Slotted(Exception):
    __slots__ = ("where",)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (OSError(2, "gone"), "its base FileNotFoundError keeps fields of its own in C"),
        (StopIteration(3), "its base StopIteration keeps fields of its own in C"),
        (_Slotted(), "declares __slots__"),
        (SystemExit(0), "only an Exception freezes as a value"),
        (KeyboardInterrupt(), "only an Exception freezes as a value"),
    ],
)
def test_an_exception_whose_state_a_rebuild_would_lose_is_refused(value: Any, says: str) -> None:
    canon.allow_classes_matching(f"{__name__}._Slotted")
    with pytest.raises(CanonError, match=says):
        canon.encode([value])


_texts = st.text(max_size=20)
_args = st.lists(
    st.one_of(_texts, st.integers(), st.none(), st.floats(allow_nan=False)), max_size=4
)


@given(
    cls=st.sampled_from([ValueError, KeyError, RuntimeError, LookupError, Exception]),
    args=_args,
    notes=st.lists(_texts, max_size=2),
    cause_args=st.none() | _args,
)
def test_any_plain_exception_round_trips(
    cls: type[Exception], args: list[Any], notes: list[str], cause_args: list[Any] | None
) -> None:
    exc = cls(*args)
    for note in notes:
        exc.add_note(note)
    if cause_args is not None:
        exc.__cause__ = TypeError(*cause_args)
    frozen = canon.encode(exc)
    back = canon.decode(frozen)
    assert type(back) is cls and back.args == exc.args
    assert getattr(back, "__notes__", None) == getattr(exc, "__notes__", None)
    assert canon.encode(back) == frozen
    assert value_text(frozen).startswith(f"{cls.__name__}(")


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ({"$exc": ["os:system", [], {}, None]}, "not an exception class of the project"),
        ({"$exc": ["print", [], {}, None]}, "not a builtin exception"),
        ({"$exc": ["int", [], {}, None]}, "not a builtin exception"),
        ({"$exc": ["OSError", [], {}, None]}, "cannot be rebuilt"),
        ({"$exc": ["ValueError", "x", {}, None]}, "malformed $exc value"),
        ({"$exc": ["ValueError", [], {}, [None, None, False]]}, "null for an empty chain"),
        ({"$exc": ["ValueError", [], {}, [1, None, False]]}, "a chain of exceptions"),
        (
            {"$exc": ["ValueError", [], {}, [None, {"$exc": ["KeyError", [], {}, None]}, True]]},
            "no context kept where it is suppressed",
        ),
        ({"$exc": ["ValueError", [], {}]}, "malformed $exc value"),
        ({"$exc": [3, [], {}, None]}, "a class name"),
        # raised by code that raises what it is handed, it would end the replay
        ({"$exc": ["SystemExit", [0], {}, None]}, "not an Exception"),
        ({"$exc": ["KeyboardInterrupt", [], {}, None]}, "not an Exception"),
        ({"$fn": "builtins:SystemExit"}, "not a function or class of the target"),
    ],
)
def test_a_hostile_exception_is_a_one_line_error(document: Any, says: str) -> None:
    message = refused_in_one_line(document)
    assert says in message, message


def test_a_standard_library_exception_round_trips_with_its_attributes() -> None:
    """``json.JSONDecodeError`` keeps ``msg``, ``pos``, ``lineno`` in its attributes: a
    parser returning the errors of the documents it could not read."""
    import json

    try:
        json.loads('{"sku": }')
    except json.JSONDecodeError as caught:
        error = caught
    frozen = canon.encode([error])
    assert frozen[0]["$exc"][0] == "json.decoder:JSONDecodeError"
    (back,) = canon.decode(frozen)
    assert type(back) is json.JSONDecodeError
    assert (back.args, back.pos, back.lineno, back.msg) == (
        error.args,
        error.pos,
        error.lineno,
        error.msg,
    )


def test_a_standard_library_module_is_never_imported_for_an_exception_named() -> None:
    import sys

    assert "imaplib" not in sys.modules
    with pytest.raises(CanonError, match="of the standard library already imported"):
        canon.decode({"$exc": ["imaplib:IMAP4.error", [], {}, None]})
    assert "imaplib" not in sys.modules


VALIDATORS = """
import functools


class ValidationError(Exception):
    def __init__(self, function, arg_dict, message=""):
        self.func = function
        self.__dict__.update(arg_dict)
        self.reason = message

    def __bool__(self):
        return False


def validator(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return True if func(*args, **kwargs) else ValidationError(func, {"value": args[0]})
        except Exception as e:
            return ValidationError(func, {"value": args[0]}, str(e))

    return wrapper


@validator
def slug(value):
    return value.isidentifier() and value.islower()
"""

VALIDATOR_TESTS = """
from checks import slug


def test_slug():
    assert slug("order_id")
    assert not slug("Order id")
    assert not slug("Order")
    assert slug(3).reason == "'int' object has no attribute 'isidentifier'"
"""


def test_a_validator_returning_an_error_that_holds_its_undecorated_function(
    tmp_path: Path,
) -> None:
    """validators 0.34.0: each validator returns ``True`` or a ``ValidationError`` holding
    the function its decorator wraps.  While the surface was recorded, the module held the
    recorder's wrapper around that decorator, so ``slug.__wrapped__`` did not name the
    function and 54% of its suite's calls were skipped."""
    root = tmp_path / "project"
    files = {
        "lockstep.toml": '[[ledger]]\npackage = "checks"\n',
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        "src/checks/__init__.py": VALIDATORS,
        "tests/test_checks.py": VALIDATOR_TESTS,
    }
    run = recorded(root, files)
    assert "no call skipped" in run.output, run.output
    rows = rows_of(root / "lockstep/checks.slug.ledger.jsonl")
    errors = [row.result["$exc"] for row in rows if isinstance(row.result, dict)]
    assert errors and all(e[2]["func"] == {"$fn": "checks:slug.__wrapped__"} for e in errors)
    assert run_cli("replay", cwd=root).code == 0
    red = red_after_change(
        root,
        "src/checks/__init__.py",
        "value.isidentifier() and value.islower()",
        "value.isidentifier()",
    )
    assert "DRIFT checks.slug" in red.stdout, red.stdout
