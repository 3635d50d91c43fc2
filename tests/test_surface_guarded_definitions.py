"""Functions a module defines under ``try``/``except`` or ``if`` at its top level are
members of its surface; one defined only in a block the import did not run records nothing.

natsort's ``compat.locale`` defines ``get_decimal_point``, ``dumb_sort`` and the rest under
``try: import icu`` and again under ``except ImportError``: they were on neither the surface
nor the list of members beyond it, and a change its suite caught replayed green.
"""

from __future__ import annotations

from pathlib import Path

from helpers import recorded, red_after_change, run_cli

COMPAT = """
import locale

try:
    import icu_that_is_not_installed

    def decimal_point():
        return icu_that_is_not_installed.decimal()

    def icu_only():
        return True

except ImportError:

    def decimal_point():
        return locale.localeconv()["decimal_point"]


if __name__ == "__main__":

    def main():
        print(decimal_point())


from typing import TYPE_CHECKING

if TYPE_CHECKING:

    def checked_only() -> str: ...
"""

FILES = {
    "lockstep.toml": '[[ledger]]\npackage = "units"\n',
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/units/__init__.py": "",
    "src/units/compat.py": COMPAT,
    "tests/test_compat.py": (
        "from units.compat import decimal_point\n\n\n"
        "def test_point():\n"
        "    assert decimal_point() == '.'\n"
    ),
}


def test_a_function_defined_under_try_is_recorded_and_guards(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run = recorded(root, FILES)
    assert (root / "lockstep/units.compat.decimal_point.ledger.jsonl").exists(), run.output
    # defined only where the import failed: written empty, said once, no error
    assert "defined in a block this import did not run" in run.output
    assert "units.compat.icu_only" in run.output
    # never run as an import: no member
    assert not (root / "lockstep/units.compat.main.ledger.jsonl").exists()
    assert not (root / "lockstep/units.compat.checked_only.ledger.jsonl").exists()
    assert run_cli("replay", cwd=root).code == 0

    red = red_after_change(
        root,
        "src/units/compat.py",
        'localeconv()["decimal_point"]',
        'localeconv()["thousands_sep"]',
        "units.compat.decimal_point",
    )
    assert "DRIFT units.compat.decimal_point" in red.stdout
