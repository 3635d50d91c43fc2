"""Switching mutants in place gives the module exactly the state a fresh import of the mutant would.

For every mutant of a legacy-style module (rule tables filled by calls at import time,
in-place updates, a class attribute, default values), the live module with the mutant
switched on (code swapped, only the statements :mod:`lockstep.strength.dataflow` picks
re-run) must hold the same data as the mutated source imported from scratch, and switching
it off must give the original state back.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockstep.strength.coverage import FileCoverage
from lockstep.strength.dataflow import ModuleFlow
from lockstep.strength.mutants import MutableFile
from lockstep.strength.switch import MutantBroke, Switchboard

RULES = """
import re

LIMIT = 3
PLURALS = [(r"(?i)(ox)$", r"\\1en"), (r"(?i)s$", "s")]
SINGULARS = [(r"(?i)(ox)en$", r"\\1")]
UNCOUNTABLES = {"sheep", "fish"}
COUNT = 0
COUNT += len(PLURALS)


def _irregular(singular, plural):
    UNCOUNTABLES.discard(singular)
    PLURALS.insert(0, (singular + "$", plural))
    SINGULARS.insert(0, (plural + "$", singular))


class Table:
    size = LIMIT * 2

    def width(self):
        return self.size - 1


def pluralize(word, suffix="s"):
    if word in UNCOUNTABLES:
        return word
    for rule, replacement in PLURALS:
        if re.search(rule, word):
            return re.sub(rule, replacement, word)
    return word + suffix


_irregular("person", "people")
_irregular("child", "children")
PATTERN = "|".join(rule for rule, _ in PLURALS[:LIMIT])
"""


def _data(namespace: dict[str, Any]) -> dict[str, Any]:
    """The module's data: what a case could observe, functions and modules aside."""
    out: dict[str, Any] = {}
    for name, value in namespace.items():
        if name.startswith("__") or isinstance(value, types.ModuleType | types.FunctionType):
            continue
        if isinstance(value, type):  # a class: its data attributes
            value = {k: v for k, v in vars(value).items() if not k.startswith("__")}
            value = {k: v for k, v in value.items() if not callable(v)}
        out[name] = value
    return out


def _call(fn: Any, word: str) -> object:
    try:
        return fn(word)
    except Exception as e:
        return type(e)


@pytest.fixture
def rules(tmp_path: Path) -> Iterator[tuple[Path, types.ModuleType]]:
    path = tmp_path / "legacy_rules.py"
    path.write_text(RULES.lstrip("\n"), encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        yield path, importlib.import_module("legacy_rules")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("legacy_rules", None)


def test_every_import_time_mutant_gives_the_state_of_a_fresh_import(
    rules: tuple[Path, types.ModuleType],
) -> None:
    path, module = rules
    original = _data(vars(module))
    mf = MutableFile(path, main_guard=False)
    empty = FileCoverage(path, frozenset(), {}, frozenset(), ())
    flow = ModuleFlow(path, empty)
    board = Switchboard({path: False})
    checked = 0
    for mutant in mf.mutants():
        also = set() if mutant.module_level else {*flow.function_names(mutant.line), mutant.scope}
        fresh: dict[str, Any] = {"__name__": "legacy_rules"}
        try:
            exec(compile(mf.spliced(mutant), str(path), "exec"), fresh)
        except Exception:
            with (
                pytest.raises(MutantBroke),
                board.active(mutant, rerun=flow.rerun(mutant.line, also)),
            ):
                pass
            continue
        with board.active(mutant, rerun=flow.rerun(mutant.line, also)):
            assert _data(vars(module)) == _data(fresh), (mutant.line, mutant.after)
            for word in ("ox", "person", "fish", "cat"):  # the live functions run the mutant
                assert _call(vars(module)["pluralize"], word) == _call(fresh["pluralize"], word)
        assert _data(vars(module)) == original, ("not switched off", mutant.line, mutant.after)
        checked += 1
    assert checked > 20


def test_a_swapped_function_is_the_object_callers_hold(
    rules: tuple[Path, types.ModuleType],
) -> None:
    path, module = rules
    held = module.pluralize  # what a ledger's replayer holds
    mf = MutableFile(path, main_guard=False)
    board = Switchboard({path: False})
    (mutant,) = [
        m
        for m in mf.mutants()
        if m.scope == "pluralize" and m.operator == "return None" and "re.sub" in m.before
    ]
    assert held("ox") == "oxen"
    with board.active(mutant, rerun=None):
        assert held("ox") is None
    assert held("ox") == "oxen"


NESTED = """
def totals(pairs):
    return dict(sorted(list(pairs)))


def names(rows):
    return sorted(set(r.strip().lower() for r in rows))
"""


def test_a_mutant_inside_another_s_part_is_shown_and_spliced_as_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``dict(sorted(x))`` has a mutant that drops ``dict`` (its part ``sorted(x)`` takes its
    place) and one inside that part.  Moving the part to the dropped call's place moved the
    inner mutant's place too: it was shown and spliced as ``return x`` while the live switch
    ran ``dict(x)``.  Each mutant's source, spliced and imported afresh, now behaves as the
    live switch does, and shows the line it runs."""
    path = tmp_path / "nested_copies.py"
    path.write_text(NESTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("nested_copies")
    mf = MutableFile(path, main_guard=False)
    board = Switchboard({path: False})
    checked = 0
    for mutant in mf.mutants():
        fresh: dict[str, Any] = {"__name__": "nested_copies"}
        exec(compile(mf.spliced(mutant), str(path), "exec"), fresh)
        assert mutant.after.strip() in mf.spliced(mutant)
        with board.active(mutant, rerun=None):
            for name, arg in (("totals", [("b", 1), ("a", 2)]), ("names", [" B", "a ", "b"])):
                assert _call(getattr(module, name), arg) == _call(fresh[name], arg), mutant.after
        checked += 1
    assert checked >= 6
