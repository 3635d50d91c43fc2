"""A fifth oracle kind is its own package plus one line in the registry (issue 22).

The test copies lockstep's source, adds a toy kind ``toy`` (a function's result for each
listed word) as the registry's docstring says -- ``oracles/toy/{__init__,spec,kind}.py``
and ``"toy"`` in ``KINDS`` -- changes nothing else, and uses it through the command line:
its ``[[toy]]`` tables decode strictly with the kind's own checks, and it records,
replays green, and replays a drift when the function changes.
"""

from __future__ import annotations

import difflib
import shutil
import textwrap
from pathlib import Path

import lockstep
from helpers import run_cli, write_files

SRC = Path(lockstep.__file__).parent

TOY_SPEC = '''
"""The ``[[toy]]`` table: a function's result for each listed word."""

from __future__ import annotations

from typing import Final, Literal, Self

from lockstep.errors import ConfigError
from lockstep.tables import OracleSpec


class ToySpec(OracleSpec, frozen=True, kw_only=True):
    """A ``[[toy]]`` oracle."""

    target: str
    words: list[str] = []
    kind: Literal["toy"] = "toy"

    def validated(self, where: str) -> Self:
        if not self.words:
            raise ConfigError(f"{where}.words: give at least one word")
        return self


SPEC: Final = ToySpec
'''

TOY_KIND = '''
"""The toy kind: ``<dir>/<name>.toy.json`` maps each word to ``repr(target(word))``."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterator

from lockstep.config import Project
from lockstep.model import Drift, OracleStatus, Outcome, RecordMode, RecordReport, ReplayOptions, Status
from lockstep.oracles import CaseInput, CaseRunner, OracleKind, StrengthScope, source_scope
from lockstep.oracles.toy.spec import ToySpec
from lockstep.store import atomic_write


def _target(spec: ToySpec) -> Callable[[str], object]:
    module, _, name = spec.target.partition(":")
    fn: Callable[[str], object] = getattr(importlib.import_module(module), name)
    return fn


class ToyKind(OracleKind[ToySpec]):
    name = "toy"
    suffix = ".toy.json"

    def _read(self, project: Project, spec: ToySpec) -> dict[str, str]:
        path = self.oracle_path(project, spec)
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

    def record_cases(
        self, project: Project, spec: ToySpec, mode: RecordMode, only: frozenset[str] | None, /
    ) -> RecordReport:
        fn = _target(spec)
        old = self._read(project, spec)
        new = {word: repr(fn(word)) for word in spec.words}
        path = self.oracle_path(project, spec)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(new, sort_keys=True).encode())
        return RecordReport(spec.name, path, mode, added=[w for w in new if w not in old])

    def replay(self, project: Project, spec: ToySpec, options: ReplayOptions, /) -> Iterator[Outcome]:
        run = self.case_runner(project, spec)
        for word in self._read(project, spec):
            if options.selects(word):
                yield run(word)

    def case_ids(self, project: Project, spec: ToySpec, /) -> Iterator[str]:
        return iter(self._read(project, spec))

    def case_runner(self, project: Project, spec: ToySpec, /) -> CaseRunner:
        fn, recorded = _target(spec), self._read(project, spec)

        def run(word: str) -> Outcome:
            now = repr(fn(word))
            if now == recorded[word]:
                return Outcome(spec.name, word, Status.PASS)
            return Outcome(spec.name, word, Status.DRIFT, (Drift("result", recorded[word], now),))

        return run

    def status(self, project: Project, spec: ToySpec, /) -> OracleStatus:
        path = self.oracle_path(project, spec)
        cases = len(self._read(project, spec))
        return OracleStatus(spec.name, self.name, path, path.exists(), True, cases)

    def strength_scope(self, project: Project, spec: ToySpec, /) -> StrengthScope:
        return source_scope(project, _target(spec))

    def case_inputs(self, project: Project, spec: ToySpec, /) -> Iterator[CaseInput]:
        return (CaseInput(word, word, (word,)) for word in self._read(project, spec))


KIND = ToyKind()
'''


def _with_toy_kind(lib: Path) -> list[str]:
    """lockstep's source copied under ``lib`` with the toy kind added; the lines changed in
    the files that already existed."""
    copy = lib / "lockstep"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    toy = copy / "oracles" / "toy"
    toy.mkdir()
    (toy / "__init__.py").write_text('"""The toy kind."""\n', encoding="utf-8")
    (toy / "spec.py").write_text(TOY_SPEC.lstrip(), encoding="utf-8")
    (toy / "kind.py").write_text(TOY_KIND.lstrip(), encoding="utf-8")
    registry = copy / "kinds.py"
    before = registry.read_text(encoding="utf-8")
    after = before.replace('"pins", "tape")', '"pins", "tape", "toy")')
    registry.write_text(after, encoding="utf-8")
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_a_fifth_kind_is_its_package_and_one_registry_line(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    changed = _with_toy_kind(lib)
    assert len(changed) == 2, changed  # one line out, one line in: the registry's list
    env = {"PYTHONPATH": str(lib)}
    project = tmp_path / "project"
    write_files(
        project,
        {
            "lockstep.toml": textwrap.dedent(
                """
                [[toy]]
                name = "shout"
                target = "shout:shout"
                words = ["hello", "bye"]
                """
            ),
            "shout.py": "def shout(word):\n    return word.upper()\n",
        },
    )
    recorded = run_cli("record", "shout", cwd=project, env=env)
    assert recorded.code == 0, recorded.output
    assert (project / "lockstep" / "shout.toy.json").is_file()

    green = run_cli("replay", "shout", cwd=project, env=env)
    assert green.code == 0, green.output

    (project / "shout.py").write_text("def shout(word):\n    return word.title()\n")
    drift = run_cli("replay", "shout", cwd=project, env=env)
    assert drift.code == 1, drift.output
    assert "'HELLO'" in drift.output and "'Hello'" in drift.output


def test_a_fifth_kinds_tables_decode_strictly_with_its_own_checks(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    _with_toy_kind(lib)
    env = {"PYTHONPATH": str(lib)}
    project = tmp_path / "project"
    bad = {
        'words = []\ntarget = "m:f"': "lockstep.toml: toy[0].words: give at least one word",
        'words = ["a"]\ntarget = "m:f"\nword = "b"': "lockstep.toml: toy[0].word: unknown key",
        'words = ["a"]': "lockstep.toml: toy[0].target: required key is missing",
    }
    for body, message in bad.items():
        write_files(project, {"lockstep.toml": f'[[toy]]\nname = "t"\n{body}\n'})
        result = run_cli("status", cwd=project, env=env)
        assert result.code == 2, result.output
        assert message in result.output
