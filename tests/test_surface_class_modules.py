"""Objects of a package's class whose module is no ledger's target.

coloraide 4.0's tests use ``coloraide.everything.ColorAll``, a ``Color`` with every plugin
registered, which defines no method of its own: its module is the target of no ledger.
The verifying interpreter never imported it, so every row holding a ``ColorAll`` did not
thaw and was refused ("$obj names 'coloraide.everything:ColorAll', which is not a class
of the project ... already imported"): 7,000 of its rows.  A configured package surface's
modules that define a class and that the package or its suite imports are now importable
by a value naming one; a module nothing imports (one a pull request planted: see
``test_ledger_own_modules.py``), another package's, or one that defines no class still is
not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import recorded, red_after_change, rows_of, run_cli
from lockstep import canon
from lockstep.errors import CanonError

PAINT = """
class Color:
    SPACES = {"srgb": 1.0}

    def __init__(self, space, value):
        if space not in self.SPACES:
            raise ValueError(f"unknown space {space}")
        self.space = space
        self.value = value

    def mix(self, other, share=0.5):
        return type(self)(self.space, self.value * (1 - share) + other.value * share)

    def luminance(self):
        return round(self.value * self.SPACES[self.space], 4)
"""

EVERYTHING = """
from paint.color import Color


class ColorAll(Color):
    SPACES = {**Color.SPACES, "display-p3": 1.1}
"""

TESTS = """
from paint.everything import ColorAll as Color


def test_mix():
    a, b = Color("srgb", 0.2), Color("display-p3", 0.6)
    assert a.mix(b).value == 0.4
    assert b.luminance() == 0.66
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "paint"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/paint/__init__.py": "",
    "src/paint/color.py": PAINT,
    "src/paint/everything.py": EVERYTHING,
    "src/paint/notes.py": "import os\n\nos.environ['PAINT_NOTES_IMPORTED'] = '1'\n",
    "tests/test_paint.py": TESTS,
}


def test_objects_of_a_class_with_no_member_of_its_own_record_and_replay(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert "refused 0;" in run.output and "not a class of the project" not in run.output, run.output
    mixes = rows_of(root / "lockstep/paint.color.Color.mix.ledger.jsonl")
    assert mixes and mixes[0].args[0]["$obj"][0] == "paint.everything:ColorAll"
    assert run_cli("replay", cwd=root).code == 0
    red = red_after_change(
        root, "src/paint/everything.py", '"display-p3": 1.1', '"display-p3": 1.2'
    )
    assert "DRIFT paint.color.Color.luminance" in red.stdout, red.stdout


def test_a_module_that_defines_no_class_is_not_imported_for_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``paint.notes`` defines no class: a value naming something of it imports nothing."""
    from lockstep.config import load_project
    from lockstep.project_codec import apply

    root = tmp_path / "project"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    monkeypatch.syspath_prepend(str(root / "src"))
    monkeypatch.delenv("PAINT_NOTES_IMPORTED", raising=False)
    project = load_project(root / "lockstep.toml")
    apply(project, "paint.color:Color.mix")
    with pytest.raises(CanonError, match="not a class of the project"):
        canon.decode({"$obj": ["paint.notes:Thing", {"state": {}}]})
    import os

    assert "PAINT_NOTES_IMPORTED" not in os.environ


def test_the_suite_is_read_only_when_a_value_names_a_module_the_targets_do_not_cover(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding a surface's class modules reads the suite's source: every process that
    verified or replayed a ledger did so at start (138 times, 34 ms each, in one recording
    of semver's suite).  Now only a value naming a module the targets' do not cover asks."""
    from lockstep import project_codec
    from lockstep.config import load_project

    root = tmp_path / "project"
    for rel, text in FILES.items():  # a package of its own: no other test imported it
        (root / rel.replace("paint", "tint")).parent.mkdir(parents=True, exist_ok=True)
        (root / rel.replace("paint", "tint")).write_text(text.replace("paint", "tint"))
    monkeypatch.syspath_prepend(str(root / "src"))
    asked: list[tuple[str, ...]] = []
    real = project_codec._class_modules

    def counting(project: object, surfaces: tuple[str, ...]) -> set[str]:
        asked.append(surfaces)
        return real(project, surfaces)  # type: ignore[arg-type]

    monkeypatch.setattr(project_codec, "_class_modules", counting)
    # finders other projects left in this process (a CLI test run in it) are not this one's
    from lockstep.canon import registry

    monkeypatch.setattr(registry, "_IMPORTABLE_LATER", [])
    project = load_project(root / "lockstep.toml")
    for _ in range(3):  # replay applies the codec once per ledger
        project_codec.apply(project, "tint.color:Color.mix")
    canon.decode({"$obj": ["tint.color:Color", {"state": {"space": "srgb", "value": 1}}]})
    assert asked == []
    canon.decode({"$obj": ["tint.everything:ColorAll", {"state": {"space": "srgb", "value": 1}}]})
    assert asked == [("tint",)]
