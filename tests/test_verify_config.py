"""A verifying fork takes the server's reading of the configuration only for the same bytes.

The session's server reads each configuration once (:func:`remember`); every fork still
reads the file and takes that reading only when the path and bytes are the ones the server
read.  A changed file, and a configuration whose reading reads other files (a ``package``
ledger reads the package's source), are read by the fork itself, as a fresh interpreter
would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import recording_errors, write_files
from lockstep.config import load_project
from lockstep.errors import ConfigError
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
    assert moved is not kept and moved.config_path == two


def test_a_package_ledger_is_not_kept(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "shop/__init__.py": "def double(x):\n    return x * 2\n",
            "lockstep.toml": '[[ledger]]\npackage = "shop"\n',
        },
    )
    remember(tmp_path / "lockstep.toml")
    assert verify_config._READ == {}
    assert project_at(tmp_path / "lockstep.toml") == load_project(
        config_path=tmp_path / "lockstep.toml"
    )


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
