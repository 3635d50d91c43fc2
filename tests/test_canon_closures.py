"""A closure written in a function of the project freezes by its code's place and its
variables' values (``$closure``), and thaws to a new function of that code.

mistune's renderers keep each plugin method as ``lambda m, state: func(self, m, state)``:
no call of a parser with a plugin could be frozen (87% of the calls under its suite were
skipped, the CommonMark spec run among them)."""

from __future__ import annotations

import functools
import re
import types
from pathlib import Path
from typing import Any

import pytest

from helpers import GitRepo, recorded, red_after_change, run_cli
from lockstep import canon
from lockstep.errors import CanonError, ThawError


class Renderer:
    def __init__(self) -> None:
        self.methods: dict[str, Any] = {}

    def register(self, name: str, func: Any) -> None:
        self.methods[name] = lambda text: func(self, text)


def emphasis(renderer: Renderer, text: str) -> str:
    return f"<em>{text}</em>"


def counter(start: int) -> Any:
    def bump(by: int) -> int:
        return start + by

    return bump


@pytest.fixture(autouse=True)
def _own_classes() -> None:
    canon.allow_callables_from(__name__)


def test_a_closure_over_its_object_thaws_calling_the_same_code_on_the_thawed_object() -> None:
    renderer = Renderer()
    renderer.register("emphasis", emphasis)
    form = canon.encode(renderer)
    held = form["$obj"][1]["state"]["methods"]["emphasis"]
    assert held["$closure"][:3] == [f"{__name__}:Renderer.register", "<lambda>", 0]
    assert held["$closure"][3]["func"] == {"$fn": f"{__name__}:emphasis"}
    thawed = canon.decode(form)
    method = thawed.methods["emphasis"]
    assert method("hi") == "<em>hi</em>"
    assert method.__closure__[1].cell_contents is thawed  # self: the thawed object itself
    assert canon.encode(thawed) == form


def test_a_nested_function_freezes_by_its_name_and_its_variable() -> None:
    frozen = canon.encode(counter(40))
    assert frozen == {"$closure": [f"{__name__}:counter", "bump", 0, {"start": 40}]}
    assert canon.decode(frozen)(2) == 42
    assert canon.encode(canon.decode(frozen)) == frozen


def test_a_forged_closure_names_only_code_the_project_holds() -> None:
    with pytest.raises(CanonError, match=r"\$closure names code") as refused:
        canon.decode({"$closure": ["os:system", "<lambda>", 0, {}]})
    assert not isinstance(refused.value, ThawError)  # a forged file: refused whole
    # Code the package's function does not hold (or not over these variables) is what a
    # refactor leaves: an error on the rows naming it (ThawError), nothing run either way.
    for payload in (
        [f"{__name__}:counter", "bump", 5, {"start": 1}],
        [f"{__name__}:counter", "other", 0, {"start": 1}],
    ):
        with pytest.raises(ThawError, match=r"no longer holds"):
            canon.decode({"$closure": payload})
    with pytest.raises(ThawError, match=r"closes over \['start'\], not the recorded \['evil'\]"):
        canon.decode({"$closure": [f"{__name__}:counter", "bump", 0, {"evil": 1}]})


def test_a_closure_with_its_own_defaults_stays_refused() -> None:
    def make(n: int) -> Any:
        return lambda x, k=n: x + k + n

    with pytest.raises(CanonError, match="a closure freezes only"):
        canon.encode(make(1))


FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "marks"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/marks/__init__.py": (
        "class Renderer:\n"
        "    def __init__(self):\n"
        "        self.methods = {}\n\n"
        "    def register(self, name, func):\n"
        "        self.methods[name] = lambda text: func(self, text)\n\n"
        "    def render(self, name, text):\n"
        "        return self.methods[name](text)\n\n\n"
        "def strong(renderer, text):\n"
        '    return "<strong>" + text + "</strong>"\n\n\n'
        "def make():\n"
        "    renderer = Renderer()\n"
        '    renderer.register("strong", strong)\n'
        "    return renderer\n"
    ),
    "tests/test_marks.py": (
        "from marks import make\n\n\n"
        "def test_render():\n"
        '    assert make().render("strong", "a") == "<strong>a</strong>"\n'
    ),
}


def test_calls_on_an_object_holding_plugin_closures_record_and_replay(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    run = recorded(repo.root, FILES)
    assert "no call skipped" in run.stdout and "refused (" not in run.stdout, run.output
    repo.commit("recorded")
    assert run_cli("replay", cwd=repo.root).code == 0
    red_after_change(
        repo.root, "src/marks/__init__.py", '+ "</strong>"', '+ "</b>"', "marks.Renderer.render"
    )


def deprecated(func: Any, name: str) -> Any:
    @functools.wraps(func)
    def with_warning(*args: Any) -> Any:
        return func(*args)

    return with_warning


class Coder:
    def __init__(self, salt: str) -> None:
        self.salt = salt
        self.decrypt = deprecated(self.decode, "decrypt")

    def decode(self, text: str) -> str:
        return text.replace(self.salt, "")


def test_a_functools_wraps_closure_over_a_bound_method_thaws_wrapping_it_again() -> None:
    coder = Coder("x")
    form = canon.encode(coder)
    held = form["$obj"][1]["state"]["decrypt"]["$closure"]
    assert held[0] == f"{__name__}:deprecated" and held[1] == "with_warning" and held[4] == "func"
    thawed = canon.decode(form)
    assert thawed.decrypt("axbx") == "ab"
    assert thawed.decrypt.__wrapped__.__self__ is thawed
    assert thawed.decrypt.__qualname__ == "Coder.decode"
    assert canon.encode(thawed) == form


def with_default_namer(namer: Any = None) -> Any:
    if namer is None:

        def namer(index: int) -> str:
            return f"toc_{index + 1}"

    return namer


def test_a_function_written_in_a_function_without_variables_freezes_without_cells() -> None:
    frozen = canon.encode(with_default_namer())
    assert frozen == {"$closure": [f"{__name__}:with_default_namer", "namer", 0, {}]}
    assert canon.decode(frozen)(0) == "toc_1"


def shout(parser: Any, text: str) -> str:
    return text.upper() + parser.mark


class Parser:
    def __init__(self) -> None:
        self.mark = "!"
        self.process = types.MethodType(shout, self)


def test_a_module_function_bound_to_an_object_freezes_as_a_method_of_it() -> None:
    form = canon.encode(Parser())
    assert form["$obj"][1]["state"]["process"] == {
        "$method": [{"$ref": 0}, {"$fn": f"{__name__}:shout"}]
    }
    thawed = canon.decode(form)
    assert thawed.process("a") == "A!" and thawed.process.__self__ is thawed
    with pytest.raises(CanonError, match="not a function"):
        canon.decode({"$method": [1, {"$fn": "builtins:len"}]})


class Word:
    def __init__(self, chars: str) -> None:
        self.pattern = re.compile(f"[{chars}]+")
        self.re_match = self.pattern.match
        self.shout = chars.upper


def test_a_builtin_method_bound_to_a_value_freezes_as_a_method_of_it() -> None:
    """pyparsing keeps ``self.re_match = self.re.match`` in every ``Word``: 533 of 538
    ``Word.__init__`` calls under its suite were skipped."""
    form = canon.encode(Word("ab"))
    state = form["$obj"][1]["state"]
    assert state["re_match"] == {"$method": [{"$re": ["[ab]+", 32]}, "match"]}
    assert state["shout"] == {"$method": ["ab", "upper"]}
    thawed = canon.decode(form)
    assert thawed.re_match("abc").group() == "ab" and thawed.shout() == "AB"
    for name in ("__init__", "_private", "nope"):
        with pytest.raises(CanonError, match="does not hold as a public method"):
            canon.decode({"$method": ["x", name]})
