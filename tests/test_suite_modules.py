"""Classes the suite defines, listed in ``[lockstep] test_modules``, freeze and replay.

portion reaches its discrete intervals only through ``IntInterval``, a subclass its test
file defines: every call handed one was skipped ("a class the tests define"), and a
one-line change in the code only those calls run replayed green while the suite failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import pytest_in, rows_of, run_cli, write_files

SPANS = '''
class Span:
    """A run of values from ``low`` to ``high``; a subclass says what one step is."""

    step = None

    def __init__(self, low, high):
        self.low = low
        self.high = high

    def _next(self, value):
        raise NotImplementedError

    def values(self):
        out = [self.low]
        while out[-1] < self.high:
            out.append(self._next(out[-1]))
        return out

    def widen(self):
        return type(self)(self.low - self.step, self.high + self.step)


def spanning(klass, low, high):
    return klass(min(low, high), max(low, high))
'''

TEST_SPANS = """
from spans import Span, spanning
from steps import DAY


class IntSpan(Span):
    step = 1

    def _next(self, value):
        return value + DAY


def test_values():
    assert spanning(IntSpan, 3, 1).values() == [1, 2, 3]


def test_widen():
    wide = IntSpan(1, 2).widen()
    assert (wide.low, wide.high) == (0, 3)
"""

CONFIG = """
[lockstep]
dir = "lockstep"
{extra}

[[ledger]]
name = "spans"
package = "spans"
"""


def _project(tmp_path: Path, extra: str) -> Path:
    write_files(
        tmp_path,
        {
            "spans.py": SPANS,
            "tests/test_spans.py": TEST_SPANS,
            "tests/steps.py": "DAY = 1\n",  # a sibling the test module imports by name
            "lockstep.toml": CONFIG.format(extra=extra),
        },
    )
    return tmp_path


def test_without_the_listing_the_calls_are_skipped_and_the_message_says_how(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path, "")
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    assert "list its module's file in [lockstep] test_modules" in recorded.stdout


def test_listed_test_classes_are_recorded_replayed_and_guard_their_code(tmp_path: Path) -> None:
    root = _project(tmp_path, 'test_modules = ["tests/test_*.py"]')
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    assert "test_modules" not in recorded.stdout  # nothing skipped for want of it
    widen = rows_of(root / "lockstep" / "spans.Span.widen.ledger.jsonl")
    assert widen and "test_spans:IntSpan" in str(widen[0].result)
    assert rows_of(root / "lockstep" / "spans.spanning.ledger.jsonl")

    green = run_cli("replay", cwd=root)
    assert green.code == 0, green.stdout + green.stderr
    as_items = pytest_in(root, "--lockstep", "-q", "-p", "no:randomly", "lockstep")
    assert as_items.code == 0, as_items.stdout + as_items.stderr

    spans = root / "spans.py"
    spans.write_text(
        spans.read_text().replace("self.high + self.step", "self.high - self.step"),
        encoding="utf-8",
    )
    red = run_cli("replay", cwd=root)
    assert red.code == 1, red.stdout + red.stderr
    assert "spans.Span.widen" in red.stdout


def test_a_change_that_breaks_the_package_import_is_named_not_a_missing_package(
    tmp_path: Path,
) -> None:
    """portion with one import typo: replay ended ``No module named 'portion'`` (the test
    module was imported without the root on the path), sending its user to look for a
    package that was there, broken."""
    root = _project(tmp_path, 'test_modules = ["tests/test_*.py"]')
    write_files(  # a second module, which imports whatever happens to spans
        root,
        {
            "units.py": "def double(x):\n    return 2 * x\n",
            "tests/test_units.py": (
                "from units import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
            ),
        },
    )
    config = root / "lockstep.toml"
    config.write_text(config.read_text() + '\n[[ledger]]\npackage = "units"\n')
    recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    spans = root / "spans.py"
    source = spans.read_text()
    spans.write_text("from collections import Missing\n" + source, encoding="utf-8")
    # the console script, as a user runs it: unlike ``python -m``, it puts no folder of
    # the project on sys.path
    script = Path(sys.executable).with_name("lockstep")
    assert script.exists(), script
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    broken = subprocess.run(
        [str(script), "replay"], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    said = broken.stdout + broken.stderr
    assert broken.returncode == 1, said  # red, as the change's failure: no setup error
    assert "cannot import name 'Missing'" in said, said
    assert "No module named" not in said, said
    # a parser's error names the place after a newline: the note keeps it, one line each
    spans.write_text(
        "raise ValueError(\"no match at 'a\\nb' (line 5, column 15)\")\n" + source,
        encoding="utf-8",
    )
    again = subprocess.run(
        [str(script), "replay"], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 1, again.stdout + again.stderr
    notes = [line for line in again.stdout.splitlines() if "cannot run:" in line]
    assert notes and all("(line 5, column 15)" in note for note in notes), again.stdout


def test_a_listing_that_matches_no_file_is_a_configuration_error(tmp_path: Path) -> None:
    root = _project(tmp_path, 'test_modules = ["tests/test_missing.py"]')
    result = run_cli("replay", cwd=root)
    assert result.code == 2
    assert "lockstep.test_modules[0]" in result.stderr and "test_missing.py" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_listing_outside_the_root_is_a_configuration_error(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    write_files(outside, {"test_x.py": "X = 1\n"})
    root = _project(tmp_path / "project", 'test_modules = ["../elsewhere/test_x.py"]')
    result = run_cli("replay", cwd=root)
    assert result.code == 2
    assert "lockstep.test_modules[0]" in result.stderr


def test_a_class_a_doctest_defines_says_no_replay_can_import_it() -> None:
    """portion's README doctest defines its own ``IntInterval`` (pytest runs a doctest in
    ``__main__``): "register an encoder" was the advice, which cannot help."""
    import pytest

    from lockstep import canon
    from lockstep.errors import CanonError

    doctest_class = type("IntInterval", (), {"__module__": "__main__"})
    with pytest.raises(CanonError, match="a doctest or a script defines, which no replay"):
        canon.encode(doctest_class())


def test_init_proposes_the_test_modules_that_subclass_the_package(tmp_path: Path) -> None:
    """Without it a user meets the skipped calls first: init lists the suite's modules
    whose classes extend the package's, and the recording then keeps their calls."""
    write_files(
        tmp_path,
        {
            "spans.py": SPANS,
            "tests/test_spans.py": TEST_SPANS,
            "tests/steps.py": "DAY = 1\n",
            "tests/test_plain.py": "import spans\n\n\ndef test_x():\n    assert spans\n",
        },
    )
    result = run_cli("init", "--yes", "--no-suite", cwd=tmp_path)
    assert result.code == 0, result.stdout + result.stderr
    config = (tmp_path / "lockstep.toml").read_text(encoding="utf-8")
    assert 'test_modules = ["tests/test_spans.py"]' in config
    recorded = pytest_in(tmp_path, "--lockstep-record", "-q", "tests")
    assert recorded.code == 0, recorded.stdout + recorded.stderr
    assert rows_of(tmp_path / "lockstep" / "spans.Span.widen.ledger.jsonl")


def test_a_namedtuple_the_tests_define_says_how_to_record_it() -> None:
    """packaging's tests hand ``format_full_version`` a namedtuple of ``tests/test_markers.py``:
    its rows were refused as not thawing, and nothing said how they would."""
    import pytest

    from lockstep import canon
    from lockstep.errors import CanonError

    frozen = {"$namedtuple": ["tests.test_markers:FakeVersionInfo", [3, 11]]}
    with pytest.raises(CanonError, match=r"list its module's file in \[lockstep\] test_modules"):
        canon.decode(frozen)


def test_init_reads_a_generic_base_and_an_alias_as_the_package(tmp_path: Path) -> None:
    """bidict's test fixtures subclass ``bidict[KT, VT]``; portion's tests ``P.X``."""
    from lockstep.suite_files import proposed_test_modules

    write_files(
        tmp_path,
        {
            "tests/fixtures.py": "from spans import Span\n\n\nclass S(Span[int, str]):\n    pass\n",
            "tests/test_alias.py": "import spans as P\n\n\nclass T(P.Span):\n    pass\n",
            "tests/test_other.py": "import typing as t\n\n\nclass U(t.Generic[int]):\n    pass\n",
            "tests/test_spans_named.py": "# spans are named here, never subclassed\nspans = 1\n",
        },
    )
    assert proposed_test_modules(tmp_path, ["spans"]) == [
        "tests/fixtures.py",
        "tests/test_alias.py",
    ]


def test_init_proposes_a_module_that_hands_the_package_its_own_functions(tmp_path: Path) -> None:
    """schema's tests hand ``Use(ve)`` their module's ``ve``: 1,068 of 1,155 calls of
    ``Schema.validate`` were skipped until the module was listed."""
    from lockstep.suite_files import proposed_test_modules

    write_files(
        tmp_path,
        {
            "tests/test_hands.py": (
                "from schema import Schema, Use\n\n\ndef ve(_):\n    raise ValueError()\n\n\n"
                "def test_use():\n    Schema(Use(ve)).is_valid(1)\n"
            ),
            "tests/test_keyword.py": (
                "import schema as S\n\n\nclass Marker:\n    pass\n\n\n"
                "def test_or():\n    S.Or(int, error=Marker)\n"
            ),
            "tests/test_lambda_only.py": (
                "from schema import Use\n\n\ndef test_use():\n    Use(lambda x: x)\n"
            ),
            "tests/test_own_unused.py": (
                "from schema import Use\n\n\ndef helper(x):\n    return x\n\n\n"
                "def test_use():\n    Use(int)\n    helper(1)\n"
            ),
            "tests/test_other_package.py": (
                "import json\n\n\ndef ve(_):\n    return 1\n\n\n"
                "def test_json():\n    json.loads('1', object_hook=ve)\n"
            ),
        },
    )
    assert proposed_test_modules(tmp_path, ["schema"]) == [
        "tests/test_hands.py",
        "tests/test_keyword.py",
    ]


def test_a_listed_module_that_skips_or_raises_on_import_is_one_line(tmp_path: Path) -> None:
    """``pytest.importorskip`` at a test module's top raises pytest's ``Skipped``, which is
    no ``Exception``: a recording still stops the ledger with one line, and replay is red
    (exit 1), each case naming the module, as for a target that no longer imports: the
    change under test breaks a listed module when it breaks the package it imports
    (parsimonious: a one-line change to the grammar it builds at import ended replay as a
    configuration error, exit 2)."""
    for body in (
        "import pytest\n\npytest.importorskip('no_such_module_here')\n",
        "1 / 0\n",
        "import sys\n\nsys.exit(3)\n",
    ):
        root = tmp_path / str(len(body))
        _project(root, 'test_modules = ["tests/test_spans.py"]')
        recorded = pytest_in(root, "--lockstep-record", "-q", "tests")
        assert recorded.code == 0, recorded.output
        write_files(
            root,
            {
                "tests/test_extra.py": body,
                "lockstep.toml": CONFIG.format(extra='test_modules = ["tests/test_*.py"]'),
            },
        )
        again = pytest_in(
            root, "--lockstep-record", "--lockstep-refresh", "-q", "tests/test_spans.py"
        )
        assert again.code == 1 and "cannot import tests/test_extra.py" in again.output, again.output
        errors = [line for line in again.output.splitlines() if "cannot import" in line]
        assert len(errors) == 1 and " ledgers (spans." in errors[0], again.output  # one line
        result = run_cli("replay", cwd=root)
        assert result.code == 1, result.output
        assert "NOT GREEN" in result.stdout and "Traceback" not in result.output
        notes = [line for line in result.stdout.splitlines() if "cannot run:" in line]
        assert notes and all("lockstep.test_modules" in note for note in notes), result.stdout
        assert all("tests/test_extra.py" in note for note in notes)
        as_items = pytest_in(root, "--lockstep", "-q", "-p", "no:randomly", "lockstep")
        assert as_items.code == 1, as_items.output  # not every case skipped, and green


def test_an_encoders_module_that_exits_on_import_is_one_line(tmp_path: Path) -> None:
    """``[lockstep] encoders`` naming a module that calls ``sys.exit(3)``: replay ended
    silently with exit 3."""
    root = _project(tmp_path, 'test_modules = ["tests/test_spans.py"]')
    assert pytest_in(root, "--lockstep-record", "-q", "tests").code == 0
    write_files(
        root,
        {
            "exits_enc.py": "import sys\n\nsys.exit(3)\n",
            "lockstep.toml": CONFIG.format(
                extra='test_modules = ["tests/test_spans.py"]\nencoders = ["exits_enc"]'
            ),
        },
    )
    result = run_cli("replay", cwd=root)
    assert result.code == 2, result.output
    assert "lockstep.encoders[0]" in result.stderr and "SystemExit" in result.stderr


def test_an_object_of_a_test_module_inside_the_package_says_how_to_record_it() -> None:
    """cssutils' own tests (``cssutils.tests.test_codec``) hand its codecs a queue class
    they define: the class names a module inside the package, so it froze, and every row
    was refused with no word of ``test_modules``."""
    from helpers import refused_in_one_line

    message = refused_in_one_line({"$obj": ["mypkg.tests.test_codec:Queue", {"state": {}}]})
    assert "list its module's file in [lockstep] test_modules" in message, message


def test_a_plain_path_is_looked_up_as_it_is_and_finds_what_the_glob_finds(tmp_path: Path) -> None:
    """``lockstep init`` lists plain paths: each is looked up without wcmatch (whose import
    every verifying interpreter of a recording paid), and finds what the pattern did; a
    folder, a missing file or a link leading out of the root is refused as before."""
    root = _project(tmp_path / "project", "")
    (tmp_path / "outside.py").write_text("X = 1\n", encoding="utf-8")
    (root / "tests" / "away.py").symlink_to(tmp_path / "outside.py")
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from lockstep.config import load_project\n"
        "from lockstep.errors import ConfigError\n"
        "from lockstep.suite_modules import suite_modules\n"
        "def listed(*patterns):\n"
        "    extra = 'test_modules = [' + ', '.join(repr(p) for p in patterns) + ']'\n"
        "    text = Path('lockstep.toml').read_text().replace('[lockstep]', '[lockstep]\\n' + extra)\n"
        "    Path('listed.toml').write_text(text)\n"
        "    try:\n"
        "        return [name for name, _, _ in suite_modules(load_project(config_path=Path('listed.toml')))]\n"
        "    except ConfigError as e:\n"
        "        return str(e)\n"
        "print(listed('tests/test_spans.py', './tests//steps.py'))\n"
        "print('wcmatch' in sys.modules)\n"
        "print(listed('tests/test_s*.py', 'tests/st?ps.py'))\n"
        "print(listed('tests'))\n"
        "print(listed('tests/away.py'))\n"
        "print(listed('TESTS/test_spans.py'))\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert shown.returncode == 0, shown.stderr
    plain, imported, globbed, folder, away, cased = shown.stdout.splitlines()
    assert plain == "['test_spans', 'steps']" == globbed
    assert imported == "False"
    assert "matches no .py file" in folder
    assert "reaches outside the project root" in away
    # spelled otherwise than on disk: wcmatch decides, as before (no match where case counts)
    assert "matches no .py file" in cased or cased == plain.split(",")[0] + "]"
