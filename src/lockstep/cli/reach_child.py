"""``python -m lockstep.cli.reach_child``: what the recorded cases run, measured at BASE.

Not a user command: the review (:mod:`lockstep.gates.reach`) starts it in a worktree of
the range's BASE, so that the code measured is BASE's, never what the review's own process
imported at HEAD.  It reads the touched lines (a JSON object, path relative to ``--tree``
→ :class:`~lockstep.gates.reach.Touched`) on stdin and writes one
:class:`~lockstep.gates.reach.Answer` on stdout; what the replayed code prints goes to
stderr.  Nothing is measured when no touched line needs a case (comments, blank lines,
module-level additions).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from lockstep.config import load_project
from lockstep.errors import LockstepError
from lockstep.gates.reach import Answer, Needs, Touched, Unreached, needs_of, unreached
from lockstep.strength.coverage import (
    SourceStructure,
    import_statements,
    measure,
    source_structure,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lockstep.cli.reach_child")
    parser.add_argument("--config", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--tree", required=True)
    args = parser.parse_args(argv)
    out = sys.stdout.buffer
    sys.stdout = sys.stderr
    try:
        answer = _answer(
            Path(args.config), Path(args.root), Path(args.tree), sys.stdin.buffer.read()
        )
    except LockstepError as e:
        answer = Answer(error=str(e))
    out.write(msgspec.json.encode(answer))
    out.flush()
    return 0


def _answer(config: Path, root: Path, tree: Path, request: bytes) -> Answer:
    touched = msgspec.json.decode(request, type=dict[str, Touched])
    root = root.resolve()
    structures: dict[str, SourceStructure] = {}
    needs: dict[str, Needs] = {}
    for rel, part in touched.items():
        path = (tree / rel).resolve()
        try:
            structure = source_structure(path)
        except Exception:  # a file coverage cannot parse: the code rows name it
            continue
        wanted = needs_of(path, part, structure.statements, structure.first_line)
        if len(wanted):
            structures[rel] = structure
            needs[rel] = wanted
    checked = sum(len(n) for n in needs.values())
    if not needs:
        return Answer()
    for entry in (root, root / "src"):  # the tree's code first, as root_on_path orders it
        if entry.is_dir():
            sys.path.insert(0, str(entry))
    loaded = load_project(config_path=config)
    project = msgspec.structs.replace(loaded, root=root)  # its surfaces and members kept
    specs = list(project.oracles())
    if not specs:
        return Answer(error="no oracle is configured at BASE: no recorded case runs the change")
    coverage = measure(project, specs)
    by_path = {path.resolve(): measured for path, measured in coverage.files.items()}
    found: list[Unreached] = []
    for rel, file_needs in needs.items():
        structure = structures[rel]
        measured = by_path.get(structure.path.resolve())
        reached = frozenset(measured.reached_by) if measured else frozenset()
        at_import = measured.at_import if measured else import_statements(structure.path, structure)
        text = structure.path.read_text(encoding="utf-8", errors="replace").splitlines()
        found += unreached(rel, structure.path, file_needs, reached, at_import, text)
    return Answer(found, checked, len(coverage.cases), list(coverage.notes))


if __name__ == "__main__":
    sys.exit(main())
