"""``python -m lockstep.cli.against_child``: one version's interpreter for ``replay --against``.

Not a user command: :mod:`lockstep.mine.sides` starts one per version, in that
version's tree, and talks to it one JSON line each way.  What the target prints
goes to stderr, so it is never taken for a reply.  A first line says the target
imported; a target that does not import is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from lockstep.config import load_project
from lockstep.errors import LockstepError
from lockstep.mine.sides import READY, answer
from lockstep.oracles import kind_of


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lockstep.cli.against_child")
    parser.add_argument("--config", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("name")
    args = parser.parse_args(argv)
    out = sys.stdout.buffer
    sys.stdout = sys.stderr
    root = Path(args.root).resolve()
    for entry in (root, root / "src"):  # the tree's code first, as root_on_path orders it
        if entry.is_dir():
            sys.path.insert(0, str(entry))
    try:
        loaded = load_project(config_path=Path(args.config))
        project = msgspec.structs.replace(loaded, root=root)  # its surfaces and members kept
        spec = project.oracle(args.name)
        subject = kind_of(spec).mining(project, spec)
    except LockstepError as e:
        sys.stderr.write(f"lockstep: error: {e}\n")
        return 2
    out.write(READY)
    out.flush()
    for line in sys.stdin.buffer:
        out.write(answer(subject, line))
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
