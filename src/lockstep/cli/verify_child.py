"""``python -m lockstep.cli.verify_child``: the fresh interpreter record verifies new cases in.

Not a user command: :mod:`lockstep.oracles.verify` starts it with another hash seed and
reads its JSON lines (one per case that did not reproduce, then a last line).  What the
replayed code prints goes to stderr, so it is never taken for a verdict.  Exit 0 when
the replay ran, 2 with one line when it could not.  With ``--serve TOKEN`` it is a
recording session's server instead (:mod:`lockstep.oracles.verify_session`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lockstep.canon import DEFAULT_STEM
from lockstep.errors import LockstepError
from lockstep.oracles import verify_clock
from lockstep.oracles.verify import verdict_lines

if TYPE_CHECKING:
    from lockstep.config import Project


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["--serve"] and len(given) in (2, 3):
        return _serve(given[1], int(given[2]) if len(given) == 3 and given[2].isdigit() else None)
    verify_clock.shift()  # before any target is imported (a server's fork: already)
    args = _PARSED.get(tuple(argv)) if argv is not None else None
    if args is None:
        args = _parser().parse_args(argv)
    config = Path(args.config) if args.config else None
    folder = args.dir
    if folder == "-":  # started ahead of the recording: the imports above are done while it runs
        folder = sys.stdin.readline().strip()
        if not folder:
            return 0
    out = sys.stdout
    sys.stdout = sys.stderr
    try:
        only = _cases(args.only) if args.only else None
        lines = verdict_lines(config, folder, args.name, args.table or "", args.stem, only)
        for line in lines:
            out.write(line)
    except LockstepError as e:
        sys.stderr.write(f"lockstep: error: {e}\n")
        return 2
    finally:
        sys.stdout = out
    out.flush()
    return 0


def _cases(text: str) -> frozenset[str]:
    """``--only``'s JSON list of case ids (see :func:`~lockstep.oracles.verify.only_argument`)."""
    try:
        ids = json.loads(text)
    except ValueError:
        ids = None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise LockstepError(f"--only: expected a JSON list of case ids, got {text[:80]!r}")
    return frozenset(ids)


@functools.cache
def _parser() -> argparse.ArgumentParser:
    """The command line, built once (a session's server builds it before its forks)."""
    parser = argparse.ArgumentParser(prog="python -m lockstep.cli.verify_child")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--config")
    source.add_argument(
        "--table", help="the oracle's table as JSON, with its kind (@record_io: no configuration)"
    )
    parser.add_argument("--stem", type=int, default=DEFAULT_STEM)
    parser.add_argument(
        "--dir", required=True, help="the candidate's folder; - reads it from stdin"
    )
    parser.add_argument("--only", help="replay only these cases: a JSON list of their ids")
    parser.add_argument("name")
    return parser


_PARSED: dict[tuple[str, ...], argparse.Namespace] = {}
"""Command lines :func:`_warm` parsed in the server, for its forks (parsing is a function
of the command line alone)."""


def _serve(token: str, ready: int | None = None) -> int:
    """A recording session's verifying interpreter (:mod:`lockstep.oracles.verify_session`):
    each candidate replays in a fork of this process, which imports the replay machinery
    once, here (what a fresh child imports before it imports a ledger's target), and never
    a target.  ``ready``: a descriptor closed once those imports are done and the
    packages of the requests sent ahead are imported in their sub-servers, so the
    session starts its next interpreter then, and no two start at once beside the tests
    (no fork of this one inherits it)."""
    import gc

    from lockstep.oracles import kind_named
    from lockstep.oracles.verify_forks import serve
    from lockstep.secrets.detect import read_release

    kind_named("ledger").prepare_replay()  # what every ledger fork's replay imports first
    read_release()
    _parser()
    verify_clock.shift()  # every fork, and every package's sub-server, runs on it
    gc.freeze()  # what is imported stays: a fork's collections need not touch (copy) it
    code = serve(token, main, _warm, _package, ready)
    sys.stdout.flush()
    sys.stderr.flush()
    # Its stdin ended: the session is waiting for it to end, and it has nothing to finalize
    # (no file of its own open, no atexit of a target: it never imported one).
    os._exit(code)


_WARMED: set[str] = set()
"""The configurations :func:`_warm` has read in this server."""


def _warm(argv: list[str]) -> None:
    """In the server, before a candidate's fork: parse its command line, read its
    configuration (:func:`~lockstep.oracles.verify_config.remember`) and the secret policy
    once, as every fork's replay does first, so the caches that builds (the configuration's
    decoder, compiled ``fnmatch`` and ``re`` patterns) are the server's and no fork builds
    them again.  Nothing of the target is imported; each fork still reads the
    configuration's bytes and the environment itself, and parses the configuration again
    unless its bytes are the ones read here, so its verdict does not depend on this."""
    args, rest = _parser().parse_known_args(argv)
    if not rest:
        _PARSED[tuple(argv)] = args
    if not args.config or args.config in _WARMED:
        return
    _WARMED.add(args.config)
    from lockstep.oracles.verify_config import project_at, remember
    from lockstep.secrets import policy_for

    remember(Path(args.config))
    policy_for(project_at(Path(args.config)))


_PROJECTS: dict[str, Project] = {}
"""The configurations :func:`_package` has read in this server."""


def _package(argv: list[str]) -> tuple[str, Callable[[], object]] | None:
    """In the server: the package of a ledger candidate's target (its configuration's
    folder and the module's top-level name) and what imports the target's module, for
    the package's sub-server (:func:`lockstep.oracles.verify_forks.serve`); None for a
    candidate without a configuration (``@record_io``) or of another kind."""
    args = _PARSED.get(tuple(argv))  # (:func:`_warm` parsed it just before)
    if args is None:
        args, _ = _parser().parse_known_args(argv)
    if not args.config:
        return None
    from lockstep.oracles.verify_config import project_at
    from lockstep.targets import resolve_object, split_target

    project = _PROJECTS.get(args.config)
    if project is None:
        project = _PROJECTS[args.config] = project_at(Path(args.config))
    spec = project.oracle(args.name)
    if spec.kind != "ledger":
        return None
    target = str(getattr(spec, "target", ""))
    module, _ = split_target(target, where=args.name)
    root = project.root

    def importer() -> object:
        found = resolve_object(target, root, where=args.name)
        from lockstep import suite_modules

        with contextlib.suppress(Exception):  # each fork imports them again and says why not
            suite_modules.allow(project, importing=True)  # as every fork's replay does first
        return found

    return f"{root}\0{module.partition('.')[0]}", importer


if __name__ == "__main__":
    sys.exit(main())
