"""A tree of objects a module keeps (sqlparse's and pygments' token types) freezes as the
path it is kept at, ``{"$kept": ...}``; everything else freezes by structure as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import recorded, red_after_change, rows_of, run_cli, write_files

KINDS = """
class _Kind(tuple):
    parent = None

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        made = _Kind(self + (name,))
        setattr(self, name, made)
        made.parent = self
        return made

    def __repr__(self):
        return "Kind" + ("." if self else "") + ".".join(self)


Kind = _Kind()
Word = Kind.Word
Number = Kind.Number
Space = Kind.Space


class Tok:
    def __init__(self, kind, text):
        self.kind = kind
        self.text = text


def lex(text):
    out = []
    for part in text.split(" "):
        kind = Number if part.isdigit() else Word.Upper if part.isupper() else Word
        out.append(Tok(kind, part))
    return out


def kinds(text):
    return [tok.kind for tok in lex(text)]
"""

PROJECT = {
    "lockstep.toml": '[[ledger]]\nname = "lex"\ntarget = "tokens.kinds:lex"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/tokens/__init__.py": "",
    "src/tokens/kinds.py": KINDS,
    "tests/test_lex.py": (
        "from tokens import kinds\n\n\n"
        "def test_lex():\n"
        "    assert [t.text for t in kinds.lex('a 12 B')] == ['a', '12', 'B']\n\n\n"
        "def test_a_test_that_grows_the_tree():\n"
        "    assert kinds.Kind.Custom.Deep.parent is kinds.Kind.Custom\n"
        "    assert kinds.lex('x')[0].kind is kinds.Word\n"
    ),
}


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    import importlib
    import sys

    from lockstep import canon

    write_files(tmp_path, {"kept_tokens_probe/__init__.py": KINDS})
    monkeypatch.syspath_prepend(str(tmp_path))
    canon.allow_callables_from("kept_tokens_probe")
    module = importlib.import_module("kept_tokens_probe")
    yield module
    sys.modules.pop("kept_tokens_probe", None)


def test_a_kept_tree_node_freezes_as_its_path_and_thaws_to_that_object(module) -> None:  # type: ignore[no-untyped-def]
    from lockstep import canon

    frozen = canon.encode([module.Word.Upper, module.Number])
    assert frozen == [
        {"$kept": "kept_tokens_probe:Word.Upper"},
        {"$kept": "kept_tokens_probe:Number"},  # the global, not Kind.Number: shortest
    ]
    thawed = canon.decode(frozen)
    assert thawed[0] is module.Word.Upper and thawed[1] is module.Number


def test_growing_the_tree_does_not_change_what_a_node_freezes_to(module) -> None:  # type: ignore[no-untyped-def]
    from lockstep import canon

    before = canon.encode(module.lex("a 1"))
    # a test adds types: the tree every node links to grows
    assert module.Kind.Added.More.Still.parent is module.Kind.Added.More
    after = canon.encode(module.lex("a 1"))
    assert before == after
    assert canon.encode(module.Kind.Added.More) == {"$kept": "kept_tokens_probe:Kind.Added.More"}


def test_a_node_made_on_first_use_thaws_through_its_class(module) -> None:  # type: ignore[no-untyped-def]
    from lockstep import canon

    node = canon.decode({"$kept": "kept_tokens_probe:Word.Lower"})  # not made yet here
    assert node is module.Word.Lower and node.parent is module.Word


@pytest.mark.parametrize(
    "payload",
    [
        "kept_tokens_probe:Missing",
        "kept_tokens_probe:Tok",  # a class, not a kept object
        "kept_tokens_probe:lex",
        "no_such_module_here:Word",
        "kept_tokens_probe",
        "kept_tokens_probe:Word.__class__",
        7,
    ],
)
def test_a_path_that_names_no_kept_object_is_a_one_line_error(module, payload: object) -> None:  # type: ignore[no-untyped-def]
    from lockstep import canon
    from lockstep.errors import CanonError

    with pytest.raises(CanonError) as caught:
        canon.decode({"$kept": payload})
    assert "\n" not in str(caught.value)


def test_an_object_without_a_cycle_keeps_freezing_by_structure(module) -> None:  # type: ignore[no-untyped-def]
    from lockstep import canon

    module.DEFAULT = module.Tok(module.Word, "x")  # kept by the module, but a plain value
    frozen = canon.encode(module.DEFAULT)
    assert frozen == {
        "$obj": [
            "kept_tokens_probe:Tok",
            {"state": {"kind": {"$kept": "kept_tokens_probe:Word"}, "text": "x"}},
        ]
    }


def test_a_recording_whose_tests_grow_the_tree_is_kept_and_guards_the_lexer(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    run = recorded(root, PROJECT)
    assert "did not reproduce" not in run.output, run.output
    rows = rows_of(root / "lockstep/lex.ledger.jsonl")
    assert len(rows) == 2
    assert '{"$kept":"tokens.kinds:Word.Upper"}' in (root / "lockstep/lex.ledger.jsonl").read_text()
    assert run_cli("replay", cwd=root).code == 0

    red = red_after_change(root, "src/tokens/kinds.py", "else Word.Upper if", "else Word if")
    assert "Word.Upper" in red.stdout
