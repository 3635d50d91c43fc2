"""``python -m lockstep.cli.verify_child``: the fresh interpreter record verifies new cases in.

Not a user command: :mod:`lockstep.oracles.verify` starts it with another hash seed and
reads its JSON lines (one per case that did not reproduce, then a last line).  What the
replayed code prints goes to stderr, so it is never taken for a verdict.  Exit 0 when
the replay ran, 2 with one line when it could not.  With ``--serve TOKEN`` it is a
recording session's server instead (:mod:`lockstep.oracles.verify_session`).
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from lockstep.canon import DEFAULT_STEM
from lockstep.errors import LockstepError
from lockstep.oracles.verify import verdict_lines


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["--serve"] and len(given) == 2:
        return _serve(given[1])
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
        for line in verdict_lines(config, folder, args.name, args.table or "", args.stem):
            out.write(line)
    except LockstepError as e:
        sys.stderr.write(f"lockstep: error: {e}\n")
        return 2
    finally:
        sys.stdout = out
    out.flush()
    return 0


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
    parser.add_argument("name")
    return parser


def _serve(token: str) -> int:
    """A recording session's verifying interpreter (:mod:`lockstep.oracles.verify_session`):
    each candidate replays in a fork of this process, which imports the replay machinery
    once, here (what a fresh child imports before it imports a ledger's target), and never
    a target."""
    import gc

    from lockstep.oracles import kind_named
    from lockstep.oracles.verify_session import serve

    kind_named("ledger")  # what every ledger fork's replay imports first, through the registry
    _parser()
    gc.freeze()  # what is imported stays: a fork's collections need not touch (copy) it
    return serve(token, main, _warm)


_WARMED: set[str] = set()
"""The configurations :func:`_warm` has read in this server."""


def _warm(argv: list[str]) -> None:
    """In the server, before a candidate's fork: read its configuration and the secret
    policy once, as every fork's replay does first, so the caches that builds (the
    configuration's decoder, compiled ``fnmatch`` and ``re`` patterns) are the server's and
    no fork builds them again.  Nothing of the target is imported; each fork still reads
    the configuration and the environment itself, so its verdict does not depend on this."""
    args, _ = _parser().parse_known_args(argv)
    if not args.config or args.config in _WARMED:
        return
    _WARMED.add(args.config)
    from lockstep.config import load_project
    from lockstep.secrets import policy_for

    policy_for(load_project(config_path=Path(args.config)))


if __name__ == "__main__":
    sys.exit(main())
