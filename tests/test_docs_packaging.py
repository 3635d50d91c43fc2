"""What the docs promise about installing lockstep: the pytest plugin is free when unused,
and Hypothesis (the ``mine`` extra) is needed only by the two commands that generate inputs.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from helpers import invoke_cli, write_files

ROOT = Path(__file__).resolve().parent.parent

HEAVY = (
    "lockstep.canon",
    "lockstep.config",
    "lockstep.oracles",
    "lockstep.strength",
    "lockstep.report",
    "lockstep.pytest.items",
    "lockstep.pytest.tape_golden",
    "coverage",
    "rich",
    "jinja2",
)

CONFTEST = """
import json, sys

def pytest_collection_finish(session):
    loaded = sorted(m for m in sys.modules if m.startswith(("lockstep", "coverage", "rich", "jinja2")))
    with open("loaded.json", "w") as out:
        json.dump(loaded, out)
"""


EMPTY_LEDGER = (
    '{"digest":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",'
    '"fn":"m:double","lockstep_ledger":2,"rows":0,'
    '"signature":[{"kind":"positional_or_keyword","name":"x"}],"stem_length":48}\n'
)


def _loaded_by_collection(tmp_path: Path, *args: str) -> list[str]:
    write_files(
        tmp_path,
        {
            "conftest.py": CONFTEST,
            "test_one.py": "def test_one():\n    assert 1 + 1 == 2\n",
            "m.py": "def double(x):\n    return 2 * x\n",
            "lockstep.toml": '[[ledger]]\nname = "double"\ntarget = "m:double"\n',
            "lockstep/double.ledger.jsonl": EMPTY_LEDGER,  # (a configuration names an oracle)
        },
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    loaded: list[str] = json.loads((tmp_path / "loaded.json").read_text())
    return loaded


def test_the_plugin_imports_nothing_heavy_until_a_lockstep_option_is_used(
    tmp_path: Path,
) -> None:
    loaded = _loaded_by_collection(tmp_path / "plain")
    assert "lockstep.pytest.plugin" in loaded  # the plugin did load, through its entry point
    heavy = [m for m in loaded if m.startswith(HEAVY)]
    assert heavy == [], f"a run without --lockstep imported {heavy}"
    # and the same run with the option loads what it needs (the check above can fail)
    used = _loaded_by_collection(tmp_path / "used", "--lockstep")
    assert "lockstep.oracles" in used and "lockstep.config" in used


def test_hypothesis_is_an_extra_that_the_readme_installs() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not any(d.startswith("hypothesis") for d in project["dependencies"])
    assert any(d.startswith("hypothesis") for d in project["optional-dependencies"]["mine"])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install '.[mine]' && lockstep demo" in readme
    assert "pip install -e '.[test]' && python -m pytest" in readme
    assert "Operating System :: POSIX" in project["classifiers"]


@pytest.mark.parametrize(
    ("args", "command"),
    [(("mine", "parse_amount"), "lockstep mine"), (("replay", "--against", "HEAD"), "--against")],
)
def test_without_hypothesis_mine_and_against_say_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], command: str
) -> None:
    write_files(
        tmp_path,
        {
            "lockstep.toml": '[[ledger]]\nname = "parse_amount"\ntarget = "m:parse_amount"\n',
            "m.py": "def parse_amount(raw):\n    return raw\n",
        },
    )
    real = importlib.util.find_spec

    def without_hypothesis(name: str, *rest: object) -> object:
        return None if name == "hypothesis" else real(name, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", without_hypothesis)
    result = invoke_cli(*args, cwd=tmp_path)
    assert result.code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert command in lines[0] and "pip install 'lockstep[mine]'" in lines[0]
