"""A public name a module or class binds to what a call makes (a camelCase alias made by
a function of the package) is recorded where the tests call it.

pyparsing binds ``parseString = replaced_by_pep8("parseString", parse_string)``: its tests
call the old names 286 times and the new ones 38, and each call through the alias, a
function of the package, was no call from outside: one-line changes the suite caught went
unseen."""

from __future__ import annotations

from pathlib import Path

from helpers import GitRepo, recorded, red_after_change, run_cli

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "grammar"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/grammar/_util.py": (
        "import functools\n\n\n"
        "def renamed(name, fn):\n"
        "    @functools.wraps(fn)\n"
        "    def _inner(self, *args, **kwargs):\n"
        "        return fn(self, *args, **kwargs)\n\n"
        "    _inner.__name__ = name\n"
        "    return _inner\n"
    ),
    "src/grammar/__init__.py": (
        "import functools\nimport re\n\nfrom grammar._util import renamed\n\n"
        "WORD = re.compile(r'[a-z]+')\n\n\n"
        "def _split(text, sep):\n"
        "    return text.split(sep)\n\n\n"
        "class Parser:\n"
        "    split_commas = functools.partial(_split, sep=',')\n\n"
        "    def parse_string(self, text):\n"
        "        return [w.strip() for w in WORD.findall(text)]\n\n"
        "    parseString = renamed('parseString', parse_string)\n"
    ),
    "tests/test_grammar.py": (
        "from grammar import Parser\n\n\n"
        "def test_old_name():\n"
        "    assert Parser().parseString('ab cd') == ['ab', 'cd']\n"
        "    assert Parser.split_commas('a,b') == ['a', 'b']\n"
    ),
}


def test_a_name_bound_to_a_made_function_is_recorded_and_guards(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "project")
    run = recorded(repo.root, FILES)
    assert "refused (" not in run.stdout, run.output
    ledgers = repo.root / "lockstep"
    assert (ledgers / "grammar.Parser.parseString.ledger.jsonl").is_file()
    assert not (ledgers / "grammar.Parser.split_commas.ledger.jsonl").exists()  # a partial
    assert not (ledgers / "grammar.WORD.ledger.jsonl").exists()  # a value
    repo.commit("recorded")
    assert run_cli("replay", cwd=repo.root).code == 0
    red_after_change(repo.root, "src/grammar/__init__.py", "w.strip()", "w.upper()")


NUMBERS = {
    "lockstep.toml": '[[ledger]]\npackage = "numbers_kept"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/numbers_kept/__init__.py": (
        "def wrap_method(original):\n"
        "    def wrapper(self, *args):\n"
        "        return self._new(original(self, *args))\n\n"
        "    return wrapper\n\n\n"
        "class Integer(int):\n"
        "    def __new__(cls, value, raw):\n"
        "        made = super().__new__(cls, value)\n"
        "        made.raw = raw\n"
        "        return made\n\n"
        "    def _new(self, result):\n"
        "        raw = str(result)\n"
        "        if self.raw.startswith('+') and result >= 0:\n"
        "            raw = '+' + raw\n"
        "        return Integer(result, raw)\n\n"
        "    __add__ = wrap_method(int.__add__)\n"
    ),
    "tests/test_numbers.py": (
        "from numbers_kept import Integer\n\n\n"
        "def test_sign_kept():\n"
        "    assert (Integer(1, '+1') + 2).raw == '+3'\n"
    ),
}


def test_a_value_dunder_a_call_makes_is_recorded_and_guards(tmp_path: Path) -> None:
    """tomlkit's ``Integer`` makes its arithmetic so: ``__add__ = wrap_method(int.__add__)``;
    a change to the ``_new`` every operator goes through replayed green, the suite red."""
    repo = GitRepo(tmp_path / "project")
    recorded(repo.root, NUMBERS)
    assert (repo.root / "lockstep" / "numbers_kept.Integer.__add__.ledger.jsonl").is_file()
    repo.commit("recorded")
    assert run_cli("replay", cwd=repo.root).code == 0
    red_after_change(repo.root, "src/numbers_kept/__init__.py", "result >= 0", "result < 0")
