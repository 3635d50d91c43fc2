"""Env discovery for Python programs: which environment variables does the program read?

Reads of ``os.environ`` and ``os.getenv`` raise no audit event, so watching
from outside cannot see them.  Instead, the program is started with a
``sitecustomize`` module (in a temporary folder put first on ``PYTHONPATH``)
that, at interpreter start, swaps the class of ``os.environ`` (and
``os.environb``) for a subclass that notes every key looked up.  At exit it
writes the keys to a file lockstep named.

The spy hides itself: it removes its own variables from the environment
before the program runs and restores the case's ``PYTHONPATH``, then imports
any ``sitecustomize`` the program would have had, so the program runs as it
otherwise would.  Enumerating the environment (``dict(os.environ)``, passing it
to a subprocess) is not a *read of a key* and is not reported.

A program started with ``python -I`` or ``-E`` ignores ``PYTHONPATH``; then
nothing is discovered and :func:`discover` returns None.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lockstep.process import ENV_BASE, ENV_INHERIT, run

OUT_VAR: Final = "LOCKSTEP_ENVSPY_OUT"
SAVED_PATH_VAR: Final = "LOCKSTEP_ENVSPY_PYTHONPATH"

SITECUSTOMIZE: Final = r"""
import atexit, os, sys

_out = os.environ.get("LOCKSTEP_ENVSPY_OUT")
_saved = os.environ.get("LOCKSTEP_ENVSPY_PYTHONPATH")
_here = os.path.dirname(os.path.abspath(__file__))
for _key in ("LOCKSTEP_ENVSPY_OUT", "LOCKSTEP_ENVSPY_PYTHONPATH"):
    os.environ.pop(_key, None)
if _saved is None:
    os.environ.pop("PYTHONPATH", None)
else:
    os.environ["PYTHONPATH"] = _saved
_read = set()
import sysconfig as _sysconfig

# Reads made by the interpreter's own library (tempfile asking for TMPDIR, site for
# PYTHONUSERBASE, zoneinfo for PYTHONTZPATH...) are not the program's dependencies.
_stdlib = tuple(
    os.path.join(os.path.realpath(p), "")
    for p in {_sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")}
)
_own_file = os.path.realpath(__file__)
# Frames of the mapping machinery a read passes through on its way here (os.getenv,
# Mapping.get): the caller that counts is the first frame outside them.
_plumbing = {
    _own_file,
    os.path.realpath(os.__file__),
    os.path.realpath(sys.modules["_collections_abc"].__file__),
}


def _from_program():
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<frozen "):  # the interpreter's own frozen modules (os, ...)
            if name[8:-1] not in ("os", "_collections_abc"):
                return False
        elif os.path.realpath(name) not in _plumbing:
            return not os.path.realpath(name).startswith(_stdlib)
        frame = frame.f_back
    return True


def _note(key):
    if isinstance(key, bytes):
        key = key.decode("utf-8", "surrogateescape")
    if isinstance(key, str) and key not in _read and _from_program():
        _read.add(key)


class _SpyEnviron(os.environ.__class__):
    def __getitem__(self, key):
        _note(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        _note(key)
        return super().__contains__(key)


os.environ.__class__ = _SpyEnviron
if hasattr(os, "environb"):
    os.environb.__class__ = _SpyEnviron


def _write():
    if _out:
        with open(_out, "w", encoding="utf-8") as fh:
            fh.write("\n".join(sorted(_read)))


atexit.register(_write)

# Run the sitecustomize the program would have had without the spy.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
del sys.modules["sitecustomize"]
try:
    import sitecustomize  # noqa: F401
except ImportError:
    pass
"""


@dataclass(frozen=True)
class Discovery:
    """The environment keys a run read, and those the oracle does not declare."""

    read: tuple[str, ...]
    undeclared: tuple[str, ...]


def spy_env(env: Mapping[str, str], spy_dir: Path, out: Path) -> dict[str, str]:
    """``env`` plus what starts the spy."""
    spied = dict(env)
    if "PYTHONPATH" in env:
        spied[SAVED_PATH_VAR] = env["PYTHONPATH"]
        spied["PYTHONPATH"] = os.pathsep.join([str(spy_dir), env["PYTHONPATH"]])
    else:
        spied["PYTHONPATH"] = str(spy_dir)
    spied[OUT_VAR] = str(out)
    return spied


def discover(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    stdin: bytes,
    cwd: Path,
    timeout: float,
    declared: Sequence[str],
) -> Discovery | None:
    """Run a Python program once under the spy; None when the spy could not report."""
    with tempfile.TemporaryDirectory(prefix="lockstep-envspy-") as tmp:
        spy_dir = Path(tmp) / "site"
        spy_dir.mkdir()
        (spy_dir / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
        out = Path(tmp) / "read.txt"
        run(argv, env=spy_env(env, spy_dir, out), stdin=stdin, cwd=cwd, timeout=timeout)
        try:
            text = out.read_text(encoding="utf-8")
        except OSError:
            return None
    read = tuple(k for k in text.split("\n") if k)
    ignore = {*declared, *ENV_BASE, *ENV_INHERIT, OUT_VAR, SAVED_PATH_VAR}
    return Discovery(read=read, undeclared=tuple(k for k in read if k not in ignore))
