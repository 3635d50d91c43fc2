"""A lambda written in a function, holding none of its variables, freezes by its place.

prettytable's ``__init__`` keeps ``self._sort_key = kwargs["sort_key"] or (lambda x:
x)``: every call holding a table was skipped ("cannot freeze function
'PrettyTable.__init__.<locals>.<lambda>'"), 97.8% of its suite's calls, and lockstep
caught three of eight changes its suite caught six of.  Such a lambda is made anew by
each call from the same code, the n-th lambda among the function's constants, so it
freezes as ``{"$lambda": ["pkg.mod:Class.method", n]}`` and thaws to a function of that
code in the module's globals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers import recorded, red_after_change, refused_in_one_line, rows_of, run_cli
from lockstep import canon
from lockstep.errors import CanonError

TABLES = """
class Table:
    def __init__(self, rows, sort_key=None, reverse=False):
        self.rows = list(rows)
        self.sort_key = sort_key or (lambda row: row[0])
        self.show = (lambda text: text.upper()) if reverse else (lambda text: text)

    def render(self):
        return "\\n".join(self.show(",".join(map(str, r))) for r in sorted(self.rows, key=self.sort_key))


def scaled(factor):
    return lambda x: x * factor
"""

TESTS = """
from tables import Table


def test_render():
    assert Table([(2, "b"), (1, "a")]).render() == "1,a\\n2,b"
    assert Table([(2, "b"), (1, "a")], reverse=True).render() == "1,A\\n2,B"
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "tables"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/tables/__init__.py": TABLES,
    "tests/test_tables.py": TESTS,
}


def test_an_object_keeping_a_lambda_of_its_constructor_is_recorded_and_guarded(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "no call skipped" in run.output, run.output
    rendered = rows_of(root / "lockstep/tables.Table.render.ledger.jsonl")
    assert len(rendered) == 2
    state = rendered[0].args[0]["$obj"][1]["state"]  # type: ignore[index,call-overload]
    assert state["sort_key"] == {"$lambda": ["tables:Table.__init__", 0]}
    assert run_cli("replay", cwd=root).code == 0
    # the lambda's own code changed: the thawed table sorts by it, and the rows drift
    red = red_after_change(
        root, "src/tables/__init__.py", "lambda row: row[0]", "lambda row: -row[0]"
    )
    assert "tables.Table.render" in red.stdout


class Holder:
    def __init__(self, reverse: bool = False) -> None:
        self.key = (lambda row: -row) if reverse else (lambda row: row)


def test_each_lambda_of_a_function_thaws_to_its_own_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canon.callables, "_in_scope", lambda name: name.startswith(__name__))
    for reverse, index, sign in ((True, 0, -1), (False, 1, 1)):
        key = Holder(reverse).key
        frozen = canon.encode(key)
        assert frozen == {"$lambda": [f"{__name__}:Holder.__init__", index]}
        thawed = canon.decode(frozen)
        assert thawed(5) == sign * 5
        assert thawed.__qualname__ == "Holder.__init__.<locals>.<lambda>"
        assert canon.encode(Holder(reverse).key) == frozen  # made anew: freezes alike


def test_a_closure_or_a_lambda_with_defaults_is_still_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(canon.callables, "_in_scope", lambda name: name.startswith(__name__))

    def scaled(factor: int) -> Any:
        return lambda x: x * factor

    def pinned(n: int) -> Any:
        return lambda x, n=n: x + n

    for made in (scaled(2), pinned(3)):
        with pytest.raises(CanonError, match="cannot freeze function"):
            canon.encode(made)


@pytest.mark.parametrize(
    "payload",
    [
        {"$lambda": ["tables:Table.__init__", 7]},
        {"$lambda": ["tables:Table.__init__", "0"]},
        {"$lambda": ["os:system", 0]},
        {"$lambda": "tables:Table.__init__"},
    ],
)
def test_a_hostile_or_stale_lambda_is_a_one_line_error(payload: object) -> None:
    message = refused_in_one_line(payload)
    assert "$lambda" in message, message
