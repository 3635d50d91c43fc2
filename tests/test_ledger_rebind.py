"""One walk of ``sys.modules`` for every target's ``from``-imports, with the same result.

``pytest --lockstep-record`` wraps its targets in a *batched* installation: the other
modules' bindings of each wrapped function (``from pkg.mod import func``) are replaced by
one walk for all targets instead of one walk per target.  Each scenario below is wrapped
both ways in a fresh interpreter and every binding of every module of the project is
described (which wrappers, of which function, in which order) after the wraps and after
``undo``: the two descriptions must be equal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import write_files

FILES = {
    "pkg/__init__.py": "from pkg.mod import f, g as alias_g\nfrom pkg import mod\n",
    "pkg/mod.py": (
        "def f(x):\n    return x + 1\n\n"
        "def g(x):\n    return x * 2\n\n"
        "h = f\n\n"
        "class C:\n    def m(self, x):\n        return x\n    n = m\n"
    ),
    "pkg/other.py": "from pkg.mod import f\nfrom pkg import alias_g\nimport pkg.mod as m\n",
    "late.py": "from pkg import f\nfrom pkg.mod import g\nCALLED = f(1)\n",
    "user.py": "from pkg.other import f as uf\nfrom pkg.mod import C\n",
}

DESCRIBE = """
import json, sys
sys.path.insert(0, ".")
from lockstep.oracles.ledger.wrapping import Installation

TARGETS = {targets!r}
BATCHED = {batched!r}
import pkg.other, user

def describe(value):
    inner = getattr(value, "__lockstep_wrapped__", None)
    if inner is not None:
        return "wrap(" + describe(inner) + ")"
    return getattr(value, "__qualname__", type(value).__name__)

def snapshot():
    names = sorted(n for n in sys.modules if n.split(".")[0] in ("pkg", "late", "user"))
    out = {{}}
    for name in names:
        for attr, value in sorted(vars(sys.modules[name]).items()):
            if not attr.startswith("__") and callable(value) and not isinstance(value, type):
                out[name + ":" + attr] = describe(value)
        for cls in [v for v in vars(sys.modules[name]).values() if isinstance(v, type)]:
            for attr, value in sorted(vars(cls).items()):
                if callable(value):
                    out[name + ":" + cls.__qualname__ + "." + attr] = describe(value)
    return out

inst = Installation(batched=BATCHED)
for target in TARGETS:
    inst.wrap(target, __import__("pathlib").Path("."), where="t")
inst.watch_context()
wrapped = snapshot()
inst.undo()
print(json.dumps({{"wrapped": wrapped, "undone": snapshot()}}))
"""

SCENARIOS = {
    "two functions and their aliases": ["pkg.mod:f", "pkg.mod:g"],
    "the same function twice, by two modules": ["pkg.mod:f", "pkg:f", "pkg.mod:g"],
    "the same target twice": ["pkg.mod:f", "pkg.mod:f"],
    "a module imported by a later wrap": ["pkg.mod:f", "late:g", "pkg.mod:g"],
    "a method and a function": ["pkg.mod:C.m", "pkg.mod:f", "pkg.other:f"],
    "an alias first": ["pkg.mod:h", "pkg.mod:f"],
}


def _describe(root: Path, targets: list[str], *, batched: bool) -> dict[str, dict[str, str]]:
    code = DESCRIBE.format(targets=targets, batched=batched)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, dict[str, str]] = json.loads(proc.stdout)
    return out


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_one_walk_binds_what_one_walk_per_target_binds(tmp_path: Path, scenario: str) -> None:
    write_files(tmp_path, FILES)
    targets = SCENARIOS[scenario]
    batched = _describe(tmp_path, targets, batched=True)
    one_by_one = _describe(tmp_path, targets, batched=False)
    assert batched == one_by_one
    assert any("wrap(" in v for v in batched["wrapped"].values())
    # undone everywhere but in a module imported while wrapped (it took the wrapper itself)
    assert not any("wrap(" in v for k, v in batched["undone"].items() if k.startswith("pkg"))


def test_from_imports_elsewhere_are_recorded_under_pytest(tmp_path: Path) -> None:
    """A call through another module's ``from`` import is a recorded row, and every
    target of the run is wrapped there (the batched walk ran)."""
    write_files(
        tmp_path,
        {
            **FILES,
            "lockstep.toml": (
                '[[ledger]]\nname = "f"\ntarget = "pkg.mod:f"\n\n'
                '[[ledger]]\nname = "g"\ntarget = "pkg.mod:g"\n'
            ),
            "tests/test_calls.py": (
                "from pkg.other import f, alias_g\nfrom user import uf\n\n"
                "def test_calls():\n    assert f(1) == 2\n    assert alias_g(3) == 6\n"
                "    assert uf(10) == 11\n"
            ),
        },
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            "--lockstep-record",
            "--rootdir",
            str(tmp_path),
            "tests",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(tmp_path),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    f_rows = (tmp_path / "lockstep" / "f.ledger.jsonl").read_text().splitlines()
    g_rows = (tmp_path / "lockstep" / "g.ledger.jsonl").read_text().splitlines()
    assert len(f_rows) - 1 == 2  # f(1) and f(10), the header first
    assert len(g_rows) - 1 == 1


def _env(root: Path) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "LOCKSTEP_"))}
    env["PYTHONPATH"] = str(root)
    return env


# pyrsistent's shape: a private module binds its function under a second name
# (``pvector = python_pvector``), the package re-exports that name, and its objects
# pickle through it (``__reduce__`` returns ``(pvector, ...)``).  pickle finds a function
# by its ``__qualname__`` and wants the very object there: a home name left on the
# original failed the suite's pickling tests while it recorded.
VECTORS = {
    "vec/__init__.py": (
        "from vec._impl import Vec, vec\n\n\ndef length(v):\n    return len(v.items)\n"
    ),
    "vec/_impl.py": (
        "class Vec:\n"
        "    def __init__(self, items):\n"
        "        self.items = list(items)\n\n"
        "    def __reduce__(self):\n"
        "        return vec, (self.items,)\n\n\n"
        "def python_vec(items=()):\n"
        "    return Vec(items)\n\n\n"
        "vec = python_vec\n"
    ),
    "tests/test_vec.py": (
        "import pickle\n\nfrom vec import length, vec\n\n\n"
        "def test_pickling():\n"
        "    again = pickle.loads(pickle.dumps(vec([1, 2])))\n"
        "    assert again.items == [1, 2]\n"
        "    assert length(again) == 2\n"
    ),
    "lockstep.toml": '[[ledger]]\npackage = "vec"\n',
}


def test_a_function_s_second_name_in_its_own_module_is_wrapped_too(tmp_path: Path) -> None:
    from helpers import recorded, run_cli

    result = recorded(tmp_path, VECTORS)
    assert "1 passed" in result.stdout
    assert run_cli("replay", cwd=tmp_path).code == 0
