"""A row that raised an exception of the target's own package keeps its attributes.

rfc3986's ``UnpermittedComponentError`` names the refused component in
``component_name``; a one-line change that stored the value there instead kept the
exception's type and message: its suite failed (``exc.component_name``), the ledger,
which kept only type and message, replayed green.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers import package_project, pytest_in, replayed_after, rows_of, run_cli

URIS = '''
import json


class ValidationError(Exception):
    def __init__(self, component_name, component_value, allowed):
        self.component_name = component_name
        self.component_value = component_value
        self.allowed = sorted(allowed)
        self._lock = object()  # cannot be frozen: left out, the others kept
        self.seen = repr(object())  # holds an address: left out (it differs each run)
        super().__init__(f"{component_value!r} is not an allowed {component_name}")


class Invalid(Exception):
    def __init__(self, message, path=None):
        super().__init__(message)
        self._path = path or []

    @property
    def path(self):
        return self._path


class MultipleInvalid(Invalid):
    def __init__(self, errors):
        super().__init__(str(errors[0]))
        self.errors = errors


def at_least(value, low):
    """Errors raised, caught and collected, as voluptuous does: one raised while handling
    the interpreter's own TypeError keeps it as its __context__."""
    errors = []
    try:
        try:
            if not value >= low:
                raise Invalid("too small", ["value"])
        except TypeError:
            raise Invalid("not comparable", ["value"])
    except Invalid as e:
        errors.append(e)
    if errors:
        raise MultipleInvalid(errors)
    return value


class Quiet(Exception):
    """No attributes of its own: only its type and message are kept, as before."""


def check_scheme(value, allowed=("http", "https")):
    if value not in allowed:
        raise ValidationError("scheme", value, allowed)
    return value


def load(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError:  # the standard library's own: its message is the contract
        raise


def quiet(value):
    if not value:
        raise Quiet("empty")
    return value
'''

TESTS = """
import pytest
from uris import MultipleInvalid, Quiet, ValidationError, at_least, check_scheme, load, quiet


def test_scheme():
    assert check_scheme("http") == "http"
    with pytest.raises(ValidationError) as caught:
        check_scheme("ftp")
    assert caught.value.component_name == "scheme"


def test_load():
    assert load("[1]") == [1]
    with pytest.raises(ValueError):
        load("[1")


def test_quiet():
    with pytest.raises(Quiet):
        quiet("")


def test_at_least():
    assert at_least(3, 1) == 3
    with pytest.raises(MultipleInvalid) as caught:
        at_least(0, 1)
    assert caught.value.errors[0].path == ["value"]
    with pytest.raises(MultipleInvalid):
        at_least("x", 1)
"""


def _recorded(tmp_path: Path) -> Path:
    root = package_project(tmp_path / "uris", "uris", URIS, TESTS)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    return root


def _rows_rewritten(root: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """The ``check_scheme`` ledger with ``edit`` applied to each row, its digest made to
    match (a hand edit that passes the file's integrity check)."""
    path = root / "lockstep" / "uris.check_scheme.ledger.jsonl"
    header, *rows = path.read_text().splitlines()
    edited = []
    for line in rows:
        row = json.loads(line)
        edit(row)
        edited.append(json.dumps(row, separators=(",", ":")))
    body = "".join(line + "\n" for line in edited)
    head = json.loads(header)
    head["digest"] = hashlib.sha256(body.encode()).hexdigest()
    path.write_text(json.dumps(head, separators=(",", ":")) + "\n" + body)


def test_an_own_exceptions_public_attributes_are_kept_and_guard_the_code(tmp_path: Path) -> None:
    root = _recorded(tmp_path)
    rows = rows_of(root / "lockstep" / "uris.check_scheme.ledger.jsonl")
    raised = [r for r in rows if not r.ok]
    assert len(raised) == 1
    assert raised[0].exc_state == {
        "allowed": ["http", "https"],
        "component_name": "scheme",
        "component_value": "ftp",
    }
    header = json.loads(
        (root / "lockstep" / "uris.check_scheme.ledger.jsonl").read_text().split("\n")[0]
    )
    assert header["lockstep_ledger"] == 7  # a version older lockstep refuses, naming it
    # another package's exception (json's), and one with no attribute: type and message
    for name in ("uris.load", "uris.quiet"):
        lines = (root / "lockstep" / f"{name}.ledger.jsonl").read_text().splitlines()
        assert not [line for line in lines[1:] if "exc_state" in json.loads(line)], name
        assert json.loads(lines[0])["lockstep_ledger"] < 7, name  # their bytes as before
    assert run_cli("replay", cwd=root).code == 0

    red = replayed_after(
        root,
        "src/uris/__init__.py",
        "self.component_name = component_name",
        "self.component_name = component_value",
    )
    assert red.code == 1, red.output
    assert "raised uris.ValidationError with attributes" in red.stdout
    assert "component_name" in red.stdout and "'ftp'" in red.stdout


def test_an_attribute_read_through_a_property_of_a_nested_error_guards_its_code(
    tmp_path: Path,
) -> None:
    """voluptuous keeps an error's path in ``_path``, read through ``path``; the errors a
    ``MultipleInvalid`` holds are compared by class, arguments and attributes."""
    root = _recorded(tmp_path)
    red = replayed_after(
        root, "src/uris/__init__.py", 'Invalid("too small", ["value"])', 'Invalid("too small", [])'
    )
    assert red.code == 1, red.output
    assert "uris.at_least" in red.stdout and "raised uris.MultipleInvalid" in red.stdout


def test_a_refactor_that_changes_only_the_interpreters_own_error_stays_green(
    tmp_path: Path,
) -> None:
    """``not value >= low`` and ``not low <= value`` fail alike on a str, but the
    interpreter's TypeError (the nested error's ``__context__``) words them otherwise: the
    chain is no part of what is compared, so the refactor replays green."""
    root = _recorded(tmp_path)
    green = replayed_after(root, "src/uris/__init__.py", "not value >= low", "not low <= value")
    assert green.code == 0, green.output


def test_a_message_change_is_judged_as_before(tmp_path: Path) -> None:
    root = _recorded(tmp_path)
    red = replayed_after(root, "src/uris/__init__.py", "is not an allowed", "is no allowed")
    assert red.code == 1, red.output
    assert "DRIFT" in red.stdout and "is no allowed" in red.stdout


def test_a_ledger_recorded_before_without_attributes_replays_green(tmp_path: Path) -> None:
    """Rows written before kept no ``exc_state``: nothing to compare, as then."""
    root = _recorded(tmp_path)
    _rows_rewritten(root, lambda row: row.pop("exc_state", None))
    assert run_cli("replay", cwd=root).code == 0
    changed = replayed_after(
        root,
        "src/uris/__init__.py",
        "self.component_name = component_name",
        "self.component_name = component_value",
    )
    assert changed.code == 0, changed.output  # as before: type and message alone


def test_a_forged_state_on_a_returning_row_is_refused(tmp_path: Path) -> None:
    root = _recorded(tmp_path)

    def forge(row: dict[str, Any]) -> None:
        if row["ok"]:
            row["exc_state"] = {"component_name": "x"}

    _rows_rewritten(root, forge)
    result = run_cli("replay", cwd=root)
    assert result.code == 2, result.output
    assert "exc_state" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_an_error_raised_while_handling_one_that_cannot_be_frozen_keeps_its_state(
    tmp_path: Path,
) -> None:
    """voluptuous's ``Number`` raises while handling decimal's ``InvalidOperation``, which
    cannot be frozen: the whole state was dropped, and a change of the error's class with
    it.  The chain is no part of the state: it is kept."""
    from helpers import project_module
    from lockstep.oracles.ledger.exc_state import exception_state

    source = URIS + (
        "\n\ndef number(text):\n"
        "    from decimal import Decimal, InvalidOperation\n"
        "    errors = []\n"
        "    try:\n"
        "        try:\n"
        "            return Decimal(text)\n"
        "        except InvalidOperation:\n"
        "            raise Invalid('not a number', ['n'])\n"
        "    except Invalid as e:\n"
        "        errors.append(e)\n"
        "    raise MultipleInvalid(errors)\n"
    )
    with project_module(tmp_path, "numbers_pkg", source) as module:
        try:
            module.number("x")
        except module.MultipleInvalid as e:
            assert e.errors[0].__context__ is not None
            state = exception_state(e, "numbers_pkg:number")
        else:
            raise AssertionError("number('x') returned")
    assert state is not None
    assert state["errors"] == [
        {"$exc": ["numbers_pkg:Invalid", ["not a number"], {"_path": ["n"]}, None]}
    ]


def test_a_forged_state_on_a_raising_row_is_a_corrupt_line_not_a_drift(tmp_path: Path) -> None:
    root = _recorded(tmp_path)
    for forged_state in ({"allowed": {"$bogus": 1}}, "hello", {"x": {"$obj": ["os:system", {}]}}):

        def forge(row: dict[str, Any], state: object = forged_state) -> None:
            if not row["ok"]:
                row["exc_state"] = state

        _rows_rewritten(root, forge)
        result = run_cli("replay", cwd=root)
        assert result.code == 2, (forged_state, result.output)
        assert "exc_state" in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_an_attribute_holding_a_large_document_is_left_out_and_the_others_kept(
    tmp_path: Path,
) -> None:
    """jsonschema's errors hold the whole ``instance`` and ``schema`` they judged: frozen
    at each raise to be dropped past the size limit, they would cost a suite that expects
    thousands of errors seconds for nothing.  Looked at (a bounded count) and left out;
    the error's own fields stay."""
    from helpers import project_module
    from lockstep.oracles.ledger.exc_state import MOST_ITEMS, exception_state

    source = (
        "class SchemaError(Exception):\n"
        "    def __init__(self, message, path, instance):\n"
        "        super().__init__(message)\n"
        "        self.path = path\n"
        "        self.instance = instance\n"
    )
    document = {"rows": [{"id": n, "name": f"row {n}"} for n in range(50_000)]}
    with project_module(tmp_path, "checker_pkg", source) as module:
        error = module.SchemaError("bad", ["rows", 3], document)
        state = exception_state(error, "checker_pkg:validate")
        small = module.SchemaError("bad", ["rows", 3], {"rows": list(range(MOST_ITEMS // 2))})
        kept = exception_state(small, "checker_pkg:validate")
    assert state == {"path": ["rows", 3]}
    assert kept is not None and set(kept) == {"path", "instance"}
