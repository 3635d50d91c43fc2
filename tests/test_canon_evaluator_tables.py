"""An evaluator's tables freeze: syntax-node classes, a module's own lambdas, static methods.

simpleeval's ``SimpleEval`` keeps ``operators`` keyed by ``ast`` node classes, among them
lambdas written in its module's ``DEFAULT_OPERATORS`` and held by no name, a
``functions`` table holding ``random.random``, and ``nodes``, its own bound methods and
static methods.  None of them froze, so every call of ``SimpleEval.eval`` (243 of its
suite's 449 calls) was skipped and no row guarded the evaluator: lockstep caught 3 of 10
one-line changes its suite caught 8 of.
"""

from __future__ import annotations

import ast
import random
import types
from pathlib import Path

import pytest

from helpers import recorded, red_after_change, refused_in_one_line, rows_of, run_cli
from lockstep import canon
from lockstep.canon.held_lambdas import held_place
from lockstep.errors import CanonError

EVALUATOR = """
import ast
import operator
from random import random

OPERATORS = {
    ast.Add: operator.add,
    ast.Mult: lambda x, y: x * y,
    ast.In: lambda x, y: x in y,
}
FUNCTIONS = {"rand": random, "double": lambda x: 2 * x}


class Evaluator:
    def __init__(self, operators=None, functions=None):
        self.operators = dict(OPERATORS if operators is None else operators)
        self.functions = dict(FUNCTIONS if functions is None else functions)
        self.nodes = {
            ast.Expression: self._eval_expression,
            ast.BinOp: self._eval_binop,
            ast.Compare: self._eval_compare,
            ast.Call: self._eval_call,
            ast.Constant: self._eval_constant,
            ast.List: self._eval_list,
        }

    def eval(self, text):
        return self._eval(ast.parse(text.strip(), mode="eval"))

    def _eval(self, node):
        return self.nodes[type(node)](node)

    def _eval_expression(self, node):
        return self._eval(node.body)

    def _eval_binop(self, node):
        return self.operators[type(node.op)](self._eval(node.left), self._eval(node.right))

    def _eval_compare(self, node):
        op = self.operators[type(node.ops[0])]
        return op(self._eval(node.left), self._eval(node.comparators[0]))

    def _eval_call(self, node):
        return self.functions[node.func.id](*[self._eval(a) for a in node.args])

    def _eval_list(self, node):
        return [self._eval(e) for e in node.elts]

    @staticmethod
    def _eval_constant(node):
        return node.value
"""

TESTS = """
from evaluator import Evaluator


def test_eval():
    e = Evaluator()
    assert e.eval("1 + 2") == 3
    assert e.eval(" 3 * 4 ") == 12
    assert e.eval("2 in [1, 2]") is True
    assert e.eval("double(5)") == 10
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "evaluator"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/evaluator/__init__.py": EVALUATOR,
    "tests/test_evaluator.py": TESTS,
}


def test_an_evaluator_with_its_tables_is_recorded_and_guards_them(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "no call skipped" in run.output, run.output
    rows = rows_of(root / "lockstep/evaluator.Evaluator.eval.ledger.jsonl")
    assert len(rows) == 4
    state = rows[0].args[0]["$obj"][1]["state"]  # type: ignore[index,call-overload]
    operators = dict((k["$fn"], v) for k, v in state["operators"]["$dict"])
    assert operators["ast:In"] == {"$held": ["evaluator:OPERATORS", {"$fn": "ast:In"}]}
    assert operators["ast:Add"] == {"$fn": "_operator:add"}
    assert {"$fn": "random:random"} in [v for _, v in state["functions"].items()]
    nodes = dict((k["$fn"], v) for k, v in state["nodes"]["$dict"])
    assert nodes["ast:Constant"] == {"$fn": "evaluator:Evaluator._eval_constant"}
    assert run_cli("replay", cwd=root).code == 0
    # a module-level lambda's body, read at replay from the module's code
    red = red_after_change(root, "src/evaluator/__init__.py", "x in y", "x not in y")
    assert "evaluator.Evaluator.eval" in red.stdout
    (root / "src/evaluator/__init__.py").write_text(EVALUATOR)
    # the static method in the evaluator's own table
    red = red_after_change(root, "src/evaluator/__init__.py", "return node.value", "return 0")
    assert "evaluator.Evaluator.eval" in red.stdout
    (root / "src/evaluator/__init__.py").write_text(EVALUATOR)
    red = red_after_change(root, "src/evaluator/__init__.py", "text.strip()", "text")
    assert "evaluator.Evaluator.eval" in red.stdout


SQUARE = lambda x: x * x  # noqa: E731 - kept by a name: freezes as $fn already
TABLE = {"cube": lambda x: x**3, "neg": lambda x: -x, ast.Add: lambda x, y: x + y}
STEPS = (lambda x: x + 1, lambda x: x - 1)
EDITED = [lambda x: 0 - x]  # what an edit of the module would put in TABLE["neg"]
LOOSE = types.SimpleNamespace(step=lambda x: x)  # kept in no table


def test_a_lambda_kept_in_a_modules_table_thaws_to_what_the_table_holds_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        canon.callables,
        "_in_scope",
        lambda name: name.startswith(__name__) or name.startswith("ast:"),
    )
    frozen = canon.encode([TABLE["neg"], TABLE[ast.Add], STEPS[1]])
    assert frozen == [
        {"$held": [f"{__name__}:TABLE", "neg"]},
        {"$held": [f"{__name__}:TABLE", {"$fn": "ast:Add"}]},
        {"$held": [f"{__name__}:STEPS", 1]},
    ]
    thawed = canon.decode(frozen)
    assert thawed[0] is TABLE["neg"] and thawed[1] is TABLE[ast.Add] and thawed[2] is STEPS[1]
    # a lambda added before it moves nothing; one changed is read as it is today
    monkeypatch.setitem(TABLE, "neg", EDITED[0])
    assert canon.decode(frozen)[0](3) == -3 and canon.decode(frozen)[0] is TABLE["neg"]
    assert held_place(SQUARE) is None  # kept by a name, not in a table
    with pytest.raises(CanonError, match="cannot freeze"):
        canon.encode(LOOSE.step)


def test_a_forged_held_lambda_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canon.callables, "_in_scope", lambda name: name.startswith(__name__))
    assert "holds no function" in refused_in_one_line({"$held": [f"{__name__}:TABLE", "nope"]})
    assert "holds no function" in refused_in_one_line({"$held": [f"{__name__}:STEPS", 9]})
    assert "holds no function" in refused_in_one_line({"$held": [f"{__name__}:SQUARE", 0]})
    assert "not a module-level name" in refused_in_one_line({"$held": ["os:environ", "HOME"]})
    nested = refused_in_one_line({"$held": [f"{__name__}:Holder.table", 0]})
    assert "not a module-level name" in nested


def test_syntax_node_classes_and_randoms_functions_freeze_by_name_and_nothing_else() -> None:
    assert canon.encode(ast.Add) == {"$fn": "ast:Add"}
    assert canon.decode({"$fn": "ast:Constant"}) is ast.Constant
    assert canon.encode(random.random) == {"$fn": "random:random"}
    assert canon.decode({"$fn": "random:random"}) is random.random
    for name in ("ast:parse", "ast:NodeVisitor", "random:SystemRandom", "random:_inst"):
        assert name in refused_in_one_line({"$fn": name})
    with pytest.raises(CanonError, match="ast:parse"):
        canon.encode(ast.parse)  # a function of ast, not a node class
    with pytest.raises(CanonError):
        canon.encode(random.Random(4).random)  # another generator's: no name reaches it


def test_a_class_as_a_key_is_named_in_the_path_of_what_cannot_freeze() -> None:
    """Every entry of a table keyed by node classes read ``[<builtins.type>]``: which one
    held the value that cannot freeze could not be told."""
    with pytest.raises(CanonError, match=r"value\[<class ast\.Mult>\]: cannot freeze"):
        canon.encode({ast.Add: 1, ast.Mult: (lambda: lambda: 0)()})


class Slotted:
    __slots__ = ("expr", "name")

    def __init__(self) -> None:
        self.expr = map(str, [1])  # an iterator: its items exist only as it is read
        self.name = "x"


def test_a_path_names_the_attribute_not_the_place_in_the_state() -> None:
    """parsimonious's expressions keep their parts in ``__slots__``: a refusal read
    ``args[0] after the call["rules"][1]["expr"]``, the ``[1]`` a place in pickle's
    ``(__dict__, slots)`` pair and the words spliced into the middle."""
    canon.allow_classes_matching(f"{__name__}.Slotted")
    with pytest.raises(CanonError) as caught:
        canon.encode({"rules": Slotted()}, path="args[0] after the call")
    assert str(caught.value).startswith('args[0]["rules"]["expr"] after the call: '), caught.value
