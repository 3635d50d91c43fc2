"""Which fixture files a corpus renders, and their ids.

Case ids are fixture paths relative to the folder part of the glob, so
``fixtures/transform/*.json`` gives ids like ``basic.json``.
"""

from __future__ import annotations

import fnmatch
import glob as globlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from lockstep.config import CorpusSpec, Project
from lockstep.errors import ConfigError


def glob_base(pattern: str) -> str:
    """The folder part of a glob before its first wildcard."""
    parts = Path(pattern).parts
    fixed: list[str] = []
    for part in parts[:-1]:
        if globlib.has_magic(part):
            break
        fixed.append(part)
    return str(Path(*fixed)) if fixed else "."


def fixtures(project: Project, spec: CorpusSpec) -> dict[str, Path]:
    """Fixture id → path, for every file the glob matches; config errors name the key.

    Each match costs at most one ``lstat`` (none for a one-folder pattern, see
    :func:`_matches`): a regular file resolves to its folder's resolved path
    (looked up once per folder) plus its name, and only a symlink pays a full
    ``realpath``.  Resolving every match outright cost more than rendering a
    ten-thousand-fixture corpus.
    """
    where = project.where(spec)
    base_rel = glob_base(spec.fixtures)
    base = project.resolve(base_rel, key=project.key(spec, "fixtures"))
    if not base.is_dir():
        raise ConfigError(f"{where}.fixtures: folder {base_rel!r} does not exist")
    root = os.path.realpath(project.root)
    inside = root if root.endswith(os.sep) else root + os.sep
    base_dir = project.root / base_rel
    prefix = str(base_dir) + os.sep
    real_folders: dict[str, str] = {}
    found: dict[str, Path] = {}
    for match, regular in _matches(project.root, spec.fixtures, base_rel):
        if regular:
            folder, name = os.path.split(match)
            real_folder = real_folders.get(folder)
            if real_folder is None:
                real_folder = real_folders[folder] = os.path.realpath(folder)
            resolved = os.path.join(real_folder, name)
        elif os.path.isfile(match):
            resolved = os.path.realpath(match)
        else:
            continue
        if not resolved.startswith(inside):
            raise ConfigError(f"{where}.fixtures: {match!r} escapes the project root")
        path = Path(match)
        shown = str(path)
        if shown.startswith(prefix):
            found[shown[len(prefix) :].replace(os.sep, "/")] = path
        else:
            found[path.relative_to(base_dir).as_posix()] = path
    if not found:
        raise ConfigError(f"{where}.fixtures: {spec.fixtures!r} matches no files")
    return dict(sorted(found.items()))


def _matches(root: Path, pattern: str, base_rel: str) -> Iterator[tuple[str, bool]]:
    """Each path the glob matches that is a regular file (True) or a symlink (False).

    A pattern whose wildcards are all in its last part (``fixtures/*.json``, the
    usual shape) lists that one folder with ``os.scandir``, whose entries already
    know their type: no ``lstat`` per file.  It keeps :mod:`glob`'s rules (names
    starting with a dot match only a pattern that starts with one).  Any other
    pattern goes through :func:`glob.iglob`.
    """
    folder_rel, _, last = pattern.rpartition("/")
    if (
        folder_rel == base_rel
        and last
        and last != "**"
        and not globlib.has_magic(folder_rel)
        and os.sep == "/"
    ):
        folder = str(root / folder_rel)
        match_name = re.compile(fnmatch.translate(last)).match
        hidden_ok = last.startswith(".")
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            name = entry.name
            if (hidden_ok or name[0] != ".") and match_name(name):
                if entry.is_file(follow_symlinks=False):
                    yield entry.path, True
                elif entry.is_symlink():
                    yield entry.path, False
        return
    for match in globlib.iglob(str(root / pattern), recursive=True):
        try:
            mode = os.lstat(match).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode):
            yield match, True
        elif stat.S_ISLNK(mode):
            yield match, False
