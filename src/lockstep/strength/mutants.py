"""Mutants of a source file: small, plausible bugs, each one change of the parsed tree.

Built on the standard library's ``ast`` (``ast.parse``, in-place node edits,
``compile`` of the edited tree, ``ast.unparse`` for the shown text).  The
maintained mutation tools were weighed: mutmut 3 rewrites source with libcst
into trampolined copies of every function (its operators are internal, not an
API, and its output is meant to be imported from disk); cosmic-ray's operators
are plugins tied to its session database and parso trees.  Neither lets one
*compile a single mutated function* without writing files, which is what the
in-place switch needs (:mod:`.switch`): an ``ast`` node edited, compiled and
reverted costs microseconds and keeps every line number, so coverage by case
tells exactly which cases can see the mutant.  The operator set follows
mutmut's and cosmic-ray's (arithmetic, comparison, boolean, constants, return
values, removed calls) plus the bugs refactors of legacy code actually make:
boundary constants ±1, swapped exception types, rounding modes, dropped
defensive copies, dropped ``strip`` calls and ``casefold``/``lower`` swaps.

A file's mutants are enumerated in one deterministic order, so a worker that
parses the same bytes finds mutant ``n`` at the same node (:class:`MutableFile`).
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

_BINOPS: Final[dict[type[ast.operator], type[ast.operator]]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.BitXor: ast.BitAnd,
}
_CMPOPS: Final[dict[type[ast.cmpop], type[ast.cmpop]]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_EXCEPTIONS: Final = {
    "ValueError": "TypeError",
    "TypeError": "ValueError",
    "KeyError": "IndexError",
    "IndexError": "KeyError",
    "LookupError": "ValueError",
    "ArithmeticError": "ValueError",
    "ZeroDivisionError": "ValueError",
    "AttributeError": "TypeError",
    "RuntimeError": "ValueError",
    "Exception": "ValueError",
}
_ROUNDING: Final = {
    "ROUND_HALF_UP": "ROUND_HALF_EVEN",
    "ROUND_HALF_EVEN": "ROUND_HALF_UP",
    "ROUND_HALF_DOWN": "ROUND_HALF_UP",
    "ROUND_UP": "ROUND_DOWN",
    "ROUND_DOWN": "ROUND_UP",
    "ROUND_CEILING": "ROUND_FLOOR",
    "ROUND_FLOOR": "ROUND_CEILING",
    "ROUND_05UP": "ROUND_DOWN",
    "floor": "ceil",
    "ceil": "floor",
}
_COPIES: Final = frozenset({"list", "dict", "set", "tuple", "sorted", "copy", "deepcopy"})
_TRIMS: Final = frozenset({"strip", "lstrip", "rstrip"})
"""``text.strip()`` dropped: whether surrounding whitespace is accepted (``"12 %"``)."""
_CASES: Final = {"casefold": "lower", "lower": "casefold"}
"""They part on non-ASCII text only (``"Straße"``): a refactor swaps them unseen."""
NO_MUTATE: Final = "pragma: no mutate"
"""A line carrying this comment gets no mutants (mutmut's convention)."""


@dataclass(frozen=True)
class Mutant:
    """One mutant: where it is, what it changes, and how a worker finds it again."""

    file: Path
    index: int
    """Its position in :func:`MutableFile.edits` order (a worker re-parses the same bytes)."""
    scope: str
    """The qualified name of the outermost enclosing function; ``""`` at module level."""
    scope_line: int
    """First line of that function (``0`` at module level)."""
    lines: tuple[int, ...]
    """The statement lines a case must reach to run the mutated code."""
    line: int
    operator: str
    before: str
    """The source lines as they are."""
    after: str
    """The same lines with the mutation."""
    splice: tuple[int, int, int, int, str]
    """``(line, col, end_line, end_col, text)``: the mutation as a textual edit of the file."""
    key: str
    """Stable across edits elsewhere in the file: scope, offset in it, operator, new text."""
    literals: tuple[str, ...] = ()
    """The string constants on the mutated line (a table row's pattern and replacement):
    cases whose input they match are tried first."""

    @property
    def module_level(self) -> bool:
        return not self.scope


@dataclass
class Edit:
    """An in-place change of one field of one node, reversible."""

    parent: ast.AST
    field: str
    index: int | None
    new: object
    operator: str
    node: ast.AST
    """The node shown as changed (for the splice and the diff)."""
    shown: str
    """Its new source text."""
    stmt: ast.stmt
    scope: list[ast.AST]
    """Enclosing class and function nodes, outermost first."""
    _old: object = None

    def apply(self) -> None:
        value = getattr(self.parent, self.field)
        if self.index is None:
            self._old = value
            setattr(self.parent, self.field, self.new)
        else:
            self._old = value[self.index]
            value[self.index] = self.new

    def revert(self) -> None:
        if self.index is None:
            setattr(self.parent, self.field, self._old)
        else:
            getattr(self.parent, self.field)[self.index] = self._old


def _statement_lines(stmt: ast.stmt) -> tuple[int, ...]:
    """A simple statement's lines, or a compound statement's header lines."""
    body = getattr(stmt, "body", None)
    end = stmt.end_lineno or stmt.lineno
    if isinstance(body, list) and body and isinstance(body[0], ast.AST):
        end = max(stmt.lineno, body[0].lineno - 1)  # type: ignore[attr-defined]
    return tuple(range(stmt.lineno, end + 1))


def _is_docstring(stmt: ast.stmt, parent_body: list[ast.stmt]) -> bool:
    return (
        parent_body
        and parent_body[0] is stmt
        and isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    ) is True


def _is_main_guard(stmt: ast.stmt) -> bool:
    test = getattr(stmt, "test", None)
    return (
        isinstance(stmt, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


def _dunder_assignment(stmt: ast.stmt) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else []
    return any(isinstance(t, ast.Name) and t.id.startswith("__") for t in targets)


_SKIPPED_FIELDS: Final = frozenset({"annotation", "returns", "type_comment", "type_params"})

_TYPING_FORMS: Final = frozenset(
    {
        "Annotated",
        "Callable",
        "ClassVar",
        "Concatenate",
        "Dict",
        "Final",
        "FrozenSet",
        "Generic",
        "Iterable",
        "Iterator",
        "List",
        "Literal",
        "Mapping",
        "MutableMapping",
        "MutableSequence",
        "Optional",
        "Protocol",
        "Sequence",
        "Set",
        "Tuple",
        "Type",
        "TypeGuard",
        "Union",
    }
)
"""Subscripted, these only describe types: what is inside them never changes a value."""
_TYPING_CALLS: Final = frozenset({"TypeVar", "NewType", "ParamSpec", "TypeVarTuple"})
"""Calls whose arguments only name types (``TypeVar("T", bound=...)``)."""


def _name_of(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _typing_only(node: ast.AST) -> bool:
    """An expression that only describes types: a mutant inside it is equivalent."""
    if isinstance(node, ast.Subscript):
        return _name_of(node.value) in _TYPING_FORMS
    if isinstance(node, ast.Call):
        return _name_of(node.func) in _TYPING_CALLS
    return False


def _is_cast(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and _name_of(node.func) == "cast"


def _type_only_statement(stmt: ast.stmt) -> bool:
    """A type alias (``type X = ...``, ``X: TypeAlias = ...``, ``X = Union[...]``) or an
    ``if TYPE_CHECKING:`` block without ``else``: no value the code computes depends on it."""
    if type(stmt).__name__ == "TypeAlias":
        return True
    if isinstance(stmt, ast.AnnAssign):
        return _name_of(stmt.annotation) == "TypeAlias"
    if isinstance(stmt, ast.Assign) and stmt.value is not None:
        return _typing_only(stmt.value)
    return False


def _type_checking(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and _name_of(stmt.test) == "TYPE_CHECKING"


class MutableFile:
    """A parsed source file and its mutants, in one deterministic order."""

    def __init__(self, path: Path, *, main_guard: bool) -> None:
        """``main_guard``: whether ``if __name__ == "__main__":`` blocks run (programs, pins)."""
        self.path = path
        self.source = path.read_bytes()
        self.digest = hashlib.sha256(self.source).hexdigest()
        self.text = self.source.decode("utf-8")
        self.lines = self.text.splitlines()
        self.tree = ast.parse(self.source, filename=str(path))
        self.main_guard = main_guard
        self.edits: list[Edit] = list(self._walk_body(self.tree, "body", self.tree.body, []))
        self.literals: dict[int, list[str]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                self.literals.setdefault(node.lineno, []).append(node.value)

    # ------------------------------------------------------------------ enumeration

    def _walk_body(
        self, parent: ast.AST, field: str, body: list[ast.stmt], scope: list[ast.AST]
    ) -> Iterator[Edit]:
        for i, stmt in enumerate(body):
            if _is_docstring(stmt, body) or _dunder_assignment(stmt):
                continue
            if not self.main_guard and _is_main_guard(stmt):
                continue
            if NO_MUTATE in self.lines[stmt.lineno - 1] or _type_only_statement(stmt):
                continue
            if _type_checking(stmt):  # its body never runs; an ``else`` does
                assert isinstance(stmt, ast.If)
                yield from self._walk_body(stmt, "orelse", stmt.orelse, scope)
                continue
            yield from self._statement_edits(parent, field, i, stmt, scope)
            yield from self._walk_node(stmt, stmt, scope)

    def _walk_node(self, node: ast.AST, stmt: ast.stmt, scope: list[ast.AST]) -> Iterator[Edit]:
        inner = scope
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = [*scope, node]
        for field, value in ast.iter_fields(node):
            if field in _SKIPPED_FIELDS:
                continue
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield from self._walk_body(node, field, value, inner)
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if _typing_only(item) or (i == 0 and field == "args" and _is_cast(node)):
                        continue  # ``cast("T", x)``: the type, not the value
                    if isinstance(item, ast.AST):
                        yield from self._node_edits(node, field, i, item, stmt, scope)
                        yield from self._walk_node(item, stmt, scope)
            elif isinstance(value, ast.AST):
                if _typing_only(value):
                    continue
                yield from self._node_edits(node, field, None, value, stmt, scope)
                if not isinstance(value, ast.JoinedStr):
                    yield from self._walk_node(value, stmt, scope)

    def _edit(
        self,
        parent: ast.AST,
        field: str,
        index: int | None,
        new: object,
        operator: str,
        node: ast.AST,
        shown: ast.AST,
        stmt: ast.stmt,
        scope: list[ast.AST],
    ) -> Edit:
        if isinstance(new, ast.AST) and not hasattr(new, "lineno"):
            # a node built here takes the replaced one's place; a part of the replaced
            # node (``dict(sorted(x))`` -> ``sorted(x)``) keeps its own: moving it would
            # misplace every later mutant inside it (shown as ``return x`` for ``dict(x)``)
            ast.copy_location(new, node)
        if isinstance(new, ast.AST):
            ast.fix_missing_locations(new)
        return Edit(parent, field, index, new, operator, node, ast.unparse(shown), stmt, scope)

    def _statement_edits(
        self, parent: ast.AST, field: str, i: int, stmt: ast.stmt, scope: list[ast.AST]
    ) -> Iterator[Edit]:
        removable = (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)) or isinstance(
            stmt, ast.AugAssign
        )
        if isinstance(stmt, ast.AugAssign) and type(stmt.op) in _BINOPS:
            swapped = ast.AugAssign(
                target=stmt.target, op=_BINOPS[type(stmt.op)](), value=stmt.value
            )
            yield Edit(
                stmt,
                "op",
                None,
                swapped.op,
                "arithmetic operator",
                stmt,
                ast.unparse(swapped),
                stmt,
                scope,
            )
        if removable:
            yield self._edit(
                parent, field, i, ast.Pass(), "remove statement", stmt, ast.Pass(), stmt, scope
            )
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            value = stmt.value
            if not (isinstance(value, ast.Constant) and value.value is None):
                new = ast.Return(value=ast.Constant(None))
                yield self._edit(parent, field, i, new, "return None", stmt, new, stmt, scope)
        if isinstance(stmt, ast.If | ast.While):
            negated = ast.UnaryOp(op=ast.Not(), operand=stmt.test)
            yield self._edit(
                stmt, "test", None, negated, "negate condition", stmt.test, negated, stmt, scope
            )

    def _node_edits(  # noqa: C901 - one branch per operator family reads best as a table
        self,
        parent: ast.AST,
        field: str,
        index: int | None,
        node: ast.AST,
        stmt: ast.stmt,
        scope: list[ast.AST],
    ) -> Iterator[Edit]:
        def edit(new: ast.AST, operator: str, shown: ast.AST | None = None) -> Edit:
            return self._edit(parent, field, index, new, operator, node, shown or new, stmt, scope)

        def op_edit(
            holder: ast.AST, attr: str, idx: int | None, new_op: ast.AST, operator: str
        ) -> Edit:
            shown = _replaced(node, attr, idx, new_op)
            return Edit(holder, attr, idx, new_op, operator, node, ast.unparse(shown), stmt, scope)

        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            yield op_edit(node, "op", None, _BINOPS[type(node.op)](), "arithmetic operator")
        elif isinstance(node, ast.Compare):
            for k, op in enumerate(node.ops):
                if type(op) in _CMPOPS:
                    yield op_edit(node, "ops", k, _CMPOPS[type(op)](), "comparison operator")
        elif isinstance(node, ast.BoolOp):
            other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            yield op_edit(node, "op", None, other, "boolean operator")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub | ast.Invert):
            yield edit(node.operand, "drop negation")
        elif isinstance(node, ast.Constant):
            yield from (edit(new, operator) for new, operator in _constant_mutations(node))
        elif isinstance(node, ast.Call):
            yield from (edit(new, operator) for new, operator in _call_mutations(node))
        elif isinstance(node, ast.Subscript) and _whole_slice(node):
            yield edit(node.value, "drop defensive copy")
        elif isinstance(node, ast.Name) and node.id in _ROUNDING and isinstance(node.ctx, ast.Load):
            mode = _ROUNDING[node.id]
            # decimal's modes are their own names as strings: the swap needs no import
            renamed: ast.AST = (
                ast.Constant(mode)
                if mode.startswith("ROUND_")
                else ast.Name(id=mode, ctx=ast.Load())
            )
            yield edit(renamed, "rounding mode")
        elif isinstance(node, ast.Attribute) and node.attr in _ROUNDING:
            attribute = ast.Attribute(value=node.value, attr=_ROUNDING[node.attr], ctx=node.ctx)
            yield edit(attribute, "rounding mode")
        if isinstance(parent, ast.ExceptHandler | ast.Raise) and field in ("type", "exc"):
            name = node.func if isinstance(node, ast.Call) else node
            if isinstance(name, ast.Name) and name.id in _EXCEPTIONS:
                swapped = ast.Name(id=_EXCEPTIONS[name.id], ctx=ast.Load())
                raised: ast.AST = (
                    ast.Call(func=swapped, args=node.args, keywords=node.keywords)
                    if isinstance(node, ast.Call)
                    else swapped
                )
                yield edit(raised, "exception type")

    # ------------------------------------------------------------------ mutants

    def mutants(self) -> list[Mutant]:
        """Every mutant of the file, described for reports, caches and workers."""
        return [self._describe(n, e) for n, e in enumerate(self.edits)]

    def _describe(self, n: int, edit: Edit) -> Mutant:
        funcs = [s for s in edit.scope if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
        outer = funcs[0] if funcs else None
        in_body = outer is not None and _inside_body(outer, edit.stmt)
        if not in_body:
            outer = None
        qual = ""
        if outer is not None:
            names = [s.name for s in edit.scope[: edit.scope.index(outer) + 1]]  # type: ignore[attr-defined]
            qual = ".".join(names)
        node = edit.node
        line, col = node.lineno, node.col_offset  # type: ignore[attr-defined]
        end_line, end_col = node.end_lineno or line, node.end_col_offset or col  # type: ignore[attr-defined]
        before_lines = self.lines[line - 1 : end_line]
        text = edit.shown
        first, last = before_lines[0], before_lines[-1]
        after = first[:col] + text + last[end_col:]
        scope_line = first_line(outer) if outer is not None else 0
        offset = line - scope_line if outer is not None else line
        key = f"{qual}|{offset}|{col}|{edit.operator}|{text}"
        return Mutant(
            file=self.path,
            index=n,
            scope=qual,
            scope_line=scope_line,
            lines=_statement_lines(edit.stmt),
            line=line,
            operator=edit.operator,
            before="\n".join(before_lines),
            after=after,
            splice=(line, col, end_line, end_col, text),
            key=key,
            literals=tuple(self.literals.get(line, ())),
        )

    def scope_source(self, mutant: Mutant) -> str:
        """The source a mutant's verdict depends on: its function, or the whole module."""
        if mutant.module_level:
            return self.text
        edit = self.edits[mutant.index]
        outer = next(s for s in edit.scope if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef))
        return "\n".join(self.lines[first_line(outer) - 1 : outer.end_lineno])

    def spliced(self, mutant: Mutant) -> str:
        """The whole file with the mutant written in (for programs run as processes)."""
        line, col, end_line, end_col, text = mutant.splice
        lines = self.text.splitlines(keepends=True)
        head = "".join(lines[: line - 1]) + lines[line - 1][:col]
        tail = lines[end_line - 1][end_col:] + "".join(lines[end_line:])
        return head + text + tail


def _replaced(node: ast.AST, attr: str, idx: int | None, new: ast.AST) -> ast.AST:
    """A shallow copy of ``node`` with one field changed (only for showing the mutant)."""
    fields = {name: getattr(node, name) for name in node._fields}
    if idx is None:
        fields[attr] = new
    else:
        items = list(fields[attr])
        items[idx] = new
        fields[attr] = items
    return type(node)(**fields)


def first_line(func: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Where a function's code object starts: its first decorator, or ``def``."""
    return min([func.lineno, *(d.lineno for d in func.decorator_list)])


def _inside_body(func: ast.FunctionDef | ast.AsyncFunctionDef, stmt: ast.stmt) -> bool:
    """Whether ``stmt`` runs when the function is called (not its defaults or decorators)."""
    return any(stmt is s for s in ast.walk(ast.Module(body=func.body, type_ignores=[])))


def _constant_mutations(node: ast.Constant) -> Iterator[tuple[ast.AST, str]]:
    value = node.value
    if isinstance(value, bool):
        yield ast.Constant(not value), "boolean constant"
    elif isinstance(value, int):
        yield ast.Constant(value + 1), "boundary constant"
        yield ast.Constant(value - 1), "boundary constant"
    elif isinstance(value, float):
        yield ast.Constant(value + 1.0), "numeric constant"
    elif isinstance(value, str):
        yield ast.Constant(f"XX{value}XX" if value else "XX"), "string constant"


def _call_mutations(node: ast.Call) -> Iterator[tuple[ast.AST, str]]:
    func = node.func
    name = (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else ""
    )
    one_arg = (
        len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred)
    )
    if name in _COPIES and one_arg and (isinstance(func, ast.Name) or name in {"copy", "deepcopy"}):
        yield node.args[0], "drop defensive copy"
    elif isinstance(func, ast.Attribute) and name == "copy" and not node.args and not node.keywords:
        yield func.value, "drop defensive copy"
    elif isinstance(func, ast.Attribute) and not node.args and not node.keywords and name in _TRIMS:
        yield func.value, "drop normalisation"
    elif isinstance(func, ast.Attribute) and not node.args and not node.keywords and name in _CASES:
        folded = ast.Attribute(value=func.value, attr=_CASES[name], ctx=ast.Load())
        yield ast.Call(func=folded, args=[], keywords=[]), "case mapping"
    elif name == "round" and isinstance(func, ast.Name) and node.args:
        yield (
            ast.Call(func=ast.Name(id="int", ctx=ast.Load()), args=node.args[:1], keywords=[]),
            "rounding mode",
        )


def _whole_slice(node: ast.Subscript) -> bool:
    s = node.slice
    return (
        isinstance(s, ast.Slice)
        and s.lower is None
        and s.upper is None
        and s.step is None
        and isinstance(node.ctx, ast.Load)
    )
