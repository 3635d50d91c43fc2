"""A verifying fork takes the server's reading of the configuration only for the same bytes.

The session's server reads each configuration once (:func:`remember`); every fork still
reads the file and takes that reading only when the path and bytes are the ones the server
read, and (for a ``package`` ledger, whose reading reads the package's source) when the
package is found where it was and its modules hold the same bytes.  Any change, and the
fork reads it itself, as a fresh interpreter would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import recording_errors, write_files
from lockstep.config import load_project
from lockstep.errors import ConfigError, UnparsableSource
from lockstep.oracles import verify_config
from lockstep.oracles.verify_config import project_at, remember

CONFIG = '[[ledger]]\nname = "double"\ntarget = "shop.calc:double"\n'


@pytest.fixture(autouse=True)
def _forget() -> None:
    verify_config._READ.clear()


def test_the_same_bytes_give_the_servers_reading_which_is_load_projects(tmp_path: Path) -> None:
    config = tmp_path / "lockstep.toml"
    config.write_text(CONFIG)
    remember(config)
    first = project_at(config)
    assert project_at(tmp_path / "." / "lockstep.toml") is first  # the same reading, kept
    assert first == load_project(config_path=config)


def test_changed_bytes_are_read_again(tmp_path: Path) -> None:
    config = tmp_path / "lockstep.toml"
    config.write_text(CONFIG)
    remember(config)
    config.write_text(CONFIG.replace('"double"', '"twice"'))
    project = project_at(config)
    assert [s.name for s in project.oracles()] == ["twice"]
    assert project == load_project(config_path=config)
    config.write_text("[[ledger]\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        project_at(config)
    config.unlink()
    with pytest.raises(ConfigError, match="config file not found"):
        project_at(config)


def test_a_link_pointing_elsewhere_is_read_there(tmp_path: Path) -> None:
    one, two = tmp_path / "one.toml", tmp_path / "two.toml"
    one.write_text(CONFIG)
    two.write_text(CONFIG)
    link = tmp_path / "lockstep.toml"
    link.symlink_to(one)
    remember(link)
    kept = project_at(link)
    link.unlink()
    link.symlink_to(two)
    moved = project_at(link)
    assert moved is not kept  # the same bytes, but another file: read again
    assert moved.config_path == link and moved.root == tmp_path  # the link's folder's


PACKAGE = {
    "shop/__init__.py": "def double(x):\n    return x * 2\n",
    "shop/_impl.py": "def _half(x):\n    return x // 2\n",
    "lockstep.toml": '[[ledger]]\npackage = "shop"\nprivate = true\n',
}


def _names(project: object) -> list[str]:
    return [s.name for s in project.oracles()]  # type: ignore[attr-defined]


def test_a_package_ledger_is_kept_while_the_package_reads_the_same(tmp_path: Path) -> None:
    write_files(tmp_path, PACKAGE)
    config = tmp_path / "lockstep.toml"
    remember(config)
    kept = project_at(config)
    assert project_at(config) is kept
    assert kept == load_project(config_path=config)
    assert _names(kept) == ["shop.double"]
    assert kept.tested == {"shop._impl._half": "shop._impl._half.ledger.jsonl"}


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(
            lambda root: (root / "shop/__init__.py").write_text(
                "def double(x):\n    return x * 2\n\n\ndef triple(x):\n    return x * 3\n"
            ),
            id="a module edited",
        ),
        pytest.param(
            lambda root: (root / "shop/more.py").write_text("def triple(x):\n    return x * 3\n"),
            id="a module added",
        ),
        pytest.param(lambda root: (root / "shop/_impl.py").unlink(), id="a module removed"),
    ],
)
def test_a_package_read_otherwise_is_expanded_again(tmp_path: Path, change: object) -> None:
    write_files(tmp_path, PACKAGE)
    config = tmp_path / "lockstep.toml"
    remember(config)
    kept = project_at(config)
    change(tmp_path)  # type: ignore[operator]
    again = project_at(config)
    assert again is not kept
    assert again == load_project(config_path=config)


def test_a_package_that_no_longer_parses_is_the_forks_error(tmp_path: Path) -> None:
    write_files(tmp_path, PACKAGE)
    config = tmp_path / "lockstep.toml"
    remember(config)
    (tmp_path / "shop/__init__.py").write_text("def double(x:\n")
    with pytest.raises(UnparsableSource, match="module 'shop' of package 'shop' does not parse"):
        project_at(config)


def test_a_configuration_changed_during_the_run_is_what_each_fork_replays_under(
    tmp_path: Path,
) -> None:
    """A valid configuration rewritten by the last test (the ledger renamed): the server
    read the old one, every fork reads the new one and refuses the rows with its reason."""
    write_files(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/calc.py": "def double(x):\n    return x * 2\n",
            "tests/test_calc.py": "from pathlib import Path\n\nfrom shop import calc\n\n\n"
            "def test_double():\n    assert calc.double(2) == 4\n\n\n"
            "def test_zz_rename_the_ledger():\n"
            "    Path('lockstep.toml').write_text("
            "Path('lockstep.toml').read_text().replace('\"double\"', '\"twice\"', 1))\n",
            "lockstep.toml": CONFIG,
        },
    )
    result, errors = recording_errors(tmp_path)
    assert len(errors) == 1, result.stdout
    assert "double: the fresh interpreter could not replay the new cases" in errors[0]
    assert "lockstep.toml: no oracle named 'double' (known: twice)" in errors[0]
    assert not (tmp_path / "lockstep/double.ledger.jsonl").exists()
