"""A verifying fork tells the package's sources unchanged by their files' stamps.

The session's server stamps what expanding a ``package`` ledger reads before it reads it
(:mod:`lockstep.source_stamps`); a fork whose stamp is the same takes the server's reading
without reading the modules again.  Any write shows in the stamp; a stamp whose files
were written too recently to be told apart that way is not trusted, and the fork compares
the bytes as before.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import write_files
from lockstep import source_stamps
from lockstep.config import load_project
from lockstep.oracles import verify_config
from lockstep.oracles.verify_config import project_at, remember
from lockstep.source_stamps import settled, source_stamp

PACKAGE = {
    "shop/__init__.py": "def double(x):\n    return x * 2\n",
    "shop/deep/__init__.py": "",
    "shop/deep/calc.py": "def triple(x):\n    return x * 3\n",
    "lockstep.toml": '[[ledger]]\npackage = "shop"\n',
}


@pytest.fixture(autouse=True)
def _forget() -> None:
    verify_config._READ.clear()


@pytest.fixture
def settled_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written a moment ago count as settled (the tests cannot wait two seconds)."""
    monkeypatch.setattr(source_stamps, "SETTLED_NS", -(10**15))


def _sources_not_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    reads: list[int] = []
    real = verify_config._sources

    def counted(*args: object) -> list[object]:
        reads.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(verify_config, "_sources", counted)
    return reads


def _touch_later(path: Path) -> None:
    """Give ``path`` a modification time of its own, whatever the clock's tick."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))


def test_unchanged_sources_are_told_by_their_stamp_without_reading_them(
    tmp_path: Path, settled_now: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_files(tmp_path, PACKAGE)
    config = tmp_path / "lockstep.toml"
    remember(config)
    reads = _sources_not_read(monkeypatch)
    kept = project_at(config)
    assert project_at(config) is kept
    assert reads == []  # the stamp said it: no module was read again
    assert kept == load_project(config_path=config)
    assert sorted(s.name for s in kept.oracles()) == ["shop.deep.calc.triple", "shop.double"]


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(
            lambda root: (
                (root / "shop/deep/calc.py").write_text("def triple(x):\n    return x * 4\n"),
                _touch_later(root / "shop/deep/calc.py"),
            ),
            id="same size, edited below",
        ),
        pytest.param(
            lambda root: (root / "shop/deep/more.py").write_text("def more(x):\n    return x\n"),
            id="a module added below",
        ),
        pytest.param(lambda root: (root / "shop/deep/calc.py").unlink(), id="a module removed"),
        pytest.param(
            lambda root: (root / "shop/deep/calc.py").rename(root / "shop/deep/sums.py"),
            id="a module renamed",
        ),
    ],
)
def test_any_write_shows_in_the_stamp_and_the_package_is_read_again(
    tmp_path: Path, settled_now: None, change: object
) -> None:
    write_files(tmp_path, PACKAGE)
    config = tmp_path / "lockstep.toml"
    remember(config)
    before = source_stamp("shop", tmp_path)
    kept = project_at(config)
    change(tmp_path)  # type: ignore[operator]
    assert source_stamp("shop", tmp_path) != before
    again = project_at(config)
    assert again is not kept
    assert again == load_project(config_path=config)


def test_files_written_just_now_are_compared_by_their_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within a tick of the clock a file rewritten to the same size may keep its stamp:
    the server does not trust a stamp that young, and the forks read the sources."""
    write_files(tmp_path, PACKAGE)
    config = tmp_path / "lockstep.toml"
    remember(config)
    assert verify_config._READ[config.resolve()].stamps is None
    reads = _sources_not_read(monkeypatch)
    kept = project_at(config)
    assert reads == [1] and project_at(config) is kept


def test_a_stamp_is_settled_only_when_every_time_in_it_is_old_enough(tmp_path: Path) -> None:
    write_files(tmp_path, PACKAGE)
    stamp = source_stamp("shop", tmp_path)
    assert stamp is not None
    newest = max(max(entry[4], entry[5]) for entry in stamp[1])
    assert not settled(stamp, newest + source_stamps.SETTLED_NS)
    assert settled(stamp, newest + source_stamps.SETTLED_NS + 1)


def test_what_rglob_does_not_read_is_not_stamped_and_what_it_cannot_is_refused(
    tmp_path: Path,
) -> None:
    write_files(tmp_path, PACKAGE)
    elsewhere = tmp_path / "elsewhere"
    write_files(elsewhere, {"x.py": "X = 1\n"})
    (tmp_path / "shop/linked").symlink_to(elsewhere, target_is_directory=True)
    stamp = source_stamp("shop", tmp_path)
    assert stamp is not None
    assert not any("elsewhere" in entry[0] or "linked/" in entry[0] for entry in stamp[1])
    (tmp_path / "shop/odd.py").mkdir()  # a folder named like a module: read as bytes, fails
    assert source_stamp("shop", tmp_path) is None
    assert source_stamp("nowhere", tmp_path) is None


def test_a_one_module_distribution_is_stamped_as_its_file(tmp_path: Path) -> None:
    write_files(tmp_path, {"single.py": "def one():\n    return 1\n"})
    stamp = source_stamp("single", tmp_path)
    assert stamp is not None
    assert [Path(entry[0]).name for entry in stamp[1]] == ["single.py"]
