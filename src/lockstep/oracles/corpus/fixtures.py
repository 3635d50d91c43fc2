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
from pathlib import Path

from lockstep.config import Project
from lockstep.errors import ConfigError
from lockstep.oracles.corpus.spec import CorpusSpec


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
    :func:`_one_folder`): a regular file is inside the project when its folder's
    resolved path is (looked up once per folder), and only a symlink pays a full
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
    found = _one_folder(base_dir, spec.fixtures, base_rel, inside, where)
    if found is None:
        found = _globbed(project.root, spec.fixtures, base_dir, inside, where)
    if not found:
        raise ConfigError(f"{where}.fixtures: {spec.fixtures!r} matches no files")
    return dict(sorted(found.items()))


def _escapes(where: str, match: str) -> ConfigError:
    return ConfigError(f"{where}.fixtures: {match!r} escapes the project root")


def _one_folder(
    folder: Path, pattern: str, base_rel: str, inside: str, where: str
) -> dict[str, Path] | None:
    """The matches of a pattern whose wildcards are all in its last part, or None.

    That is the usual shape (``fixtures/*.json``): the one folder is listed with
    ``os.scandir``, whose entries already know their type (no ``lstat`` per file),
    and a file's id is its name.  It keeps :mod:`glob`'s rules (names starting with a
    dot match only a pattern that starts with one).  Any other pattern is None here.
    """
    folder_rel, _, last = pattern.rpartition("/")
    if (
        folder_rel != base_rel
        or not last
        or last == "**"
        or globlib.has_magic(folder_rel)
        or os.sep != "/"
    ):
        return None
    match_name = re.compile(fnmatch.translate(last)).match
    hidden_ok = last.startswith(".")
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return {}
    # A name holds no separator, so folder/name is inside the root exactly when the
    # folder's resolved path (plus a separator) is: one realpath for every regular file.
    folder_inside = (os.path.realpath(folder) + os.sep).startswith(inside)
    # Path(entry.path) parses the whole path again; a child of the folder's Path is the
    # same Path, made from the parts already parsed (the private helper glob uses itself).
    child = getattr(folder, "_make_child_relpath", folder.joinpath)
    found: dict[str, Path] = {}
    for entry in entries:
        name = entry.name
        if (hidden_ok or name[0] != ".") and match_name(name):
            if entry.is_file(follow_symlinks=False):
                if not folder_inside:
                    raise _escapes(where, entry.path)
            elif entry.is_symlink() and os.path.isfile(entry.path):
                if not os.path.realpath(entry.path).startswith(inside):
                    raise _escapes(where, entry.path)
            else:
                continue
            found[name] = child(name)
    return found


def _globbed(root: Path, pattern: str, base_dir: Path, inside: str, where: str) -> dict[str, Path]:
    """The matches of any other pattern, through :func:`glob.iglob` (ids relative to the
    folder part of the glob)."""
    prefix = str(base_dir) + os.sep
    real_folders: dict[str, bool] = {}
    found: dict[str, Path] = {}
    for match in globlib.iglob(str(root / pattern), recursive=True):
        try:
            mode = os.lstat(match).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode):
            folder = os.path.dirname(match)
            folder_inside = real_folders.get(folder)
            if folder_inside is None:
                real = os.path.realpath(folder)
                folder_inside = real_folders[folder] = (real + os.sep).startswith(inside)
            if not folder_inside:
                raise _escapes(where, match)
        elif stat.S_ISLNK(mode) and os.path.isfile(match):
            if not os.path.realpath(match).startswith(inside):
                raise _escapes(where, match)
        else:
            continue
        path = Path(match)
        shown = str(path)
        if shown.startswith(prefix):
            found[shown[len(prefix) :].replace(os.sep, "/")] = path
        else:
            found[path.relative_to(base_dir).as_posix()] = path
    return found
