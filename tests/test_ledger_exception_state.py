"""A row that raised an exception of the target's own package keeps its attributes.

rfc3986's ``UnpermittedComponentError`` names the refused component in
``component_name``; a one-line change that stored the value there instead kept the
exception's type and message: its suite failed (``exc.component_name``), the ledger,
which kept only type and message, replayed green.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import package_project, pytest_in, replayed_after, rows_of, run_cli

URIS = '''
import json


class ValidationError(Exception):
    def __init__(self, component_name, component_value, allowed):
        self.component_name = component_name
        self.component_value = component_value
        self.allowed = sorted(allowed)
        self._cache = object()  # private: not part of what a caller reads
        super().__init__(f"{component_value!r} is not an allowed {component_name}")


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
from uris import Quiet, ValidationError, check_scheme, load, quiet


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
"""


def _recorded(tmp_path: Path) -> Path:
    root = package_project(tmp_path / "uris", "uris", URIS, TESTS)
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.output
    return root


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
    assert "exception's attributes" in red.stdout
    assert "component_name" in red.stdout and "'ftp'" in red.stdout


def test_a_private_attribute_or_a_message_change_is_judged_as_before(tmp_path: Path) -> None:
    root = _recorded(tmp_path)
    green = replayed_after(
        root, "src/uris/__init__.py", "self._cache = object()", "self._cache = None"
    )
    assert green.code == 0, green.output  # not part of what the row keeps
    red = replayed_after(root, "src/uris/__init__.py", "is not an allowed", "is no allowed")
    assert red.code == 1, red.output
    assert "DRIFT" in red.stdout and "is no allowed" in red.stdout


def test_a_ledger_recorded_before_without_attributes_replays_green(tmp_path: Path) -> None:
    """Rows written before kept no ``exc_state``: nothing to compare, as then."""
    root = _recorded(tmp_path)
    path = root / "lockstep" / "uris.check_scheme.ledger.jsonl"
    header, *rows = path.read_text().splitlines()
    stripped = []
    for line in rows:
        row = json.loads(line)
        row.pop("exc_state", None)
        stripped.append(json.dumps(row, separators=(",", ":")))
    body = "".join(line + "\n" for line in stripped)
    import hashlib

    head = json.loads(header)
    head["digest"] = hashlib.sha256(body.encode()).hexdigest()
    path.write_text(json.dumps(head, separators=(",", ":")) + "\n" + body)
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
    path = root / "lockstep" / "uris.check_scheme.ledger.jsonl"
    header, *rows = path.read_text().splitlines()
    forged = []
    for line in rows:
        row = json.loads(line)
        if row["ok"]:
            row["exc_state"] = {"component_name": "x"}
        forged.append(json.dumps(row, separators=(",", ":")))
    body = "".join(line + "\n" for line in forged)
    import hashlib

    head = json.loads(header)
    head["digest"] = hashlib.sha256(body.encode()).hexdigest()
    path.write_text(json.dumps(head, separators=(",", ":")) + "\n" + body)
    result = run_cli("replay", cwd=root)
    assert result.code == 2, result.output
    assert "exc_state" in result.stderr and len(result.stderr.strip().splitlines()) == 1
